// A race replay's model: the server's replay document (GET /api/replay/ID) turned into each
// seat's board at any time. Pure and free of the DOM, so it is tested in Node.
//
// A seat's frames are [t, move, piles, fields?]; each changed pile is [keep, ...items]: the
// first `keep` items of the pile as it was, then the items (protocol/replay.py). The server
// computed every board with its engine; the page only applies the changes it was sent.

/** The view after one frame: a new object, unchanged piles shared with the old view. */
export function applyFrame(view, frame) {
  const piles = { ...view.piles };
  for (const [name, [keep, ...items]] of Object.entries(frame[2])) {
    piles[name] = [...(piles[name] || []).slice(0, keep), ...items];
  }
  return { ...view, ...(frame[3] || {}), piles, moves: view.moves + 1 };
}

/** Every view of a seat: views[k] is its board after k moves. */
export function seatViews(seat) {
  const views = [seat.view];
  for (const frame of seat.frames) views.push(applyFrame(views[views.length - 1], frame));
  return views;
}

/** How many items of a list sorted by time have a time <= t: a binary search. */
function countBy(list, t, timeOf) {
  let lo = 0, hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (timeOf(list[mid]) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many of a seat's frames were played by time t (ms from the start). */
export function movesAt(frames, t) {
  return countBy(frames, t, (f) => f[0]);
}

/** Every seat's move times on one timeline, sorted and without repeats. */
export function timeline(doc) {
  const times = new Set();
  for (const seat of doc.seats) for (const f of seat.frames) times.add(f[0]);
  return [...times].sort((a, b) => a - b);
}

/** The time of the next move of any seat after t (the end when none is left). */
export function nextTime(times, t, end) {
  const i = countBy(times, t, (x) => x);
  return i < times.length ? times[i] : end;
}

/** The time of the move before the last one played by time t (0 for none): one move undone. */
export function prevTime(times, t) {
  const i = countBy(times, t, (x) => x);
  return i > 1 ? times[i - 2] : 0;
}

/** A prepared replay: views of every seat, its timeline, and each seat's state at time t. */
export function prepare(doc) {
  const seats = doc.seats.map((seat) => ({ ...seat, views: seatViews(seat) }));
  return { doc, seats, times: timeline(doc), end: doc.duration };
}

/** Seat i at time t: its board, its move count and the last move it made (or null). */
export function seatAt(replay, i, t) {
  const seat = replay.seats[i];
  const k = movesAt(seat.frames, t);
  return { view: seat.views[k], k, last: k ? seat.frames[k - 1][1] : null, done: k === seat.frames.length };
}
