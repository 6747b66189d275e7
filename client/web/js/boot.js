// The entry of the pages with their own address (page.html, which the server answers for
// /replay/ID and /player/ID): no room and no socket, only the page the path names. The
// racing app (index.html) starts from app.js.

const page = location.pathname.match(/\/(replay|player)\/([A-Za-z0-9_-]+)$/);
const root = document.getElementById("app");
if (page && page[1] === "replay") {
  const { start } = await import("./replay.js");
  await start(root, page[2]);
} else if (page) {
  const { start } = await import("./player.js");
  await start(root, page[2]);
}
