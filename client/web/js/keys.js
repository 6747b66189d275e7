// The keyboard at the table: a key press becomes an intent that app.js carries out with the
// same functions as clicks. Kept free of the DOM so the map can be tested in Node.

/**
 * @param {string} key KeyboardEvent.key
 * @param {{ctrl?: boolean, meta?: boolean, alt?: boolean}} mods
 * @param {boolean} inField the key went to a text field or a select (typing, not playing)
 * @returns {{type: string, pile?: string} | null}
 */
export function keyIntent(key, mods = {}, inField = false) {
  if (key === "Escape") return { type: "escape" };
  if (inField || mods.alt) return null;
  if ((mods.ctrl || mods.meta) && key.toLowerCase() === "z") return { type: "undo" };
  if (mods.ctrl || mods.meta) return null;
  if (key === " " || key === "Spacebar") return { type: "deal" };
  if (/^[1-9]$/.test(key)) return { type: "pile", pile: `t${key}` };
  const k = key.toLowerCase();
  if (k === "0" || k === "f" || k === "h") return { type: "home" };
  if (k === "w") return { type: "pile", pile: "w" };
  if (k === "r") return { type: "pile", pile: "r" };
  if (key === "?") return { type: "help" };
  return null;
}
