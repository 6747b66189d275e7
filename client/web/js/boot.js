// The entry of the pages with their own address (page.html, which the server answers for
// /replay/ID, /player/ID, /broadcast/CODE, /leaderboard[/GAME[/KIND]], /daily/DATE/GAME,
// /dailies and /ratings): only the page the path names (the broadcast view is a spectator of
// its room; the others need no socket). The racing app (index.html) starts from app.js.

const path = location.pathname.replace(/\/$/, "");
const root = document.getElementById("app");
const page = path.match(/\/(replay|player|broadcast)\/([A-Za-z0-9_-]+)$/);
const event = path.match(/\/(broadcast\/)?event\/([A-Za-z0-9_-]+)$/);
if (event) {
  const { startEventPage } = await import("./arena.js");
  await startEventPage(root, event[2], { broadcast: Boolean(event[1]) });
} else if (page && page[1] === "broadcast") {
  const { start } = await import("./broadcast.js");
  await start(root, page[2]);
} else if (page && page[1] === "replay") {
  const { start } = await import("./replay.js");
  await start(root, page[2]);
} else if (page) {
  const { start } = await import("./player.js");
  await start(root, page[2]);
} else if (/\/leaderboard(\/|$)/.test(path)) {
  const [, game, kind] = path.match(/\/leaderboard(?:\/([a-z]+)(?:\/([a-z]+))?)?$/) || [];
  const { start } = await import("./boards-page.js");
  await start(root, game || null, kind || null);
} else if (/\/daily\/\d{4}-\d{2}-\d{2}\/[a-z]+$/.test(path)) {
  const [, date, game] = path.match(/\/daily\/(\d{4}-\d{2}-\d{2})\/([a-z]+)$/);
  const { startDaily } = await import("./boards-page.js");
  await startDaily(root, date, game);
} else if (path.endsWith("/dailies")) {
  const { startArchive } = await import("./boards-page.js");
  await startArchive(root);
} else if (path.endsWith("/ratings")) {
  const { startRatingsHelp } = await import("./boards-page.js");
  startRatingsHelp(root);
}
