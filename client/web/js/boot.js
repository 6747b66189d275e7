// The page's entry: /replay/ID and /player/ID are pages of their own (no room, no socket);
// every other address is the racing app.

const page = location.pathname.match(/\/(replay|player)\/([A-Za-z0-9_-]+)$/);
const root = document.getElementById("app");
if (page && page[1] === "replay") {
  import("./replay.js").then((m) => m.start(root, page[2]).then((viewer) => { window.solraceReplay = viewer; }));
} else if (page) {
  import("./player.js").then((m) => m.start(root, page[2]));
} else {
  import("./app.js");
}
