// An optional sound (off unless the player turns it on): a soft tick for each of one's own
// moves, a chime for a win, a lower one when an opponent finishes. Synthesised with Web Audio,
// so there are no sound files; the browser allows audio only after a click or key press,
// which a player who turned sound on has made.

const TONES = {
  move: [[660, 0.05]],
  won: [[523, 0.12], [659, 0.12], [784, 0.22]],
  finish: [[440, 0.1], [330, 0.16]],
  refused: [[180, 0.12]],
};

let ctx = null;
/** Sounds played, newest last (for the page's tests and debugging). */
export const played = [];

export function playSound(kind) {
  const tones = TONES[kind];
  if (!tones) return;
  played.push(kind);
  if (played.length > 50) played.shift();
  const Ctx = globalThis.AudioContext || globalThis.webkitAudioContext;
  if (!Ctx) return;
  try {
    ctx = ctx || new Ctx();
    let t = ctx.currentTime;
    for (const [freq, dur] of tones) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.12, t);
      gain.gain.exponentialRampToValueAtTime(0.001, t + dur);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t);
      osc.stop(t + dur);
      t += dur * 0.8;
    }
  } catch {
    /* no audio device: the game goes on silently */
  }
}
