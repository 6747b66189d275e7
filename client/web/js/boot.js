// The entry of the pages with their own address (page.html, which the server answers for
// /replay/ID, /player/ID and /broadcast/CODE): only the page the path names (the broadcast
// view is a spectator of its room; the others need no socket). The racing app (index.html)
// starts from app.js.

const page = location.pathname.match(/\/(replay|player|broadcast)\/([A-Za-z0-9_-]+)$/);
const root = document.getElementById("app");
if (page && page[1] === "broadcast") {
  const { start } = await import("./broadcast.js");
  await start(root, page[2]);
} else if (page && page[1] === "replay") {
  const { start } = await import("./replay.js");
  await start(root, page[2]);
} else if (page) {
  const { start } = await import("./player.js");
  await start(root, page[2]);
}
