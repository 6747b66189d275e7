// A series in a room (PROTOCOL.md, Series): the host's controls, the standings the lobby,
// the race panel and the results show, and the broadcast view's table. Pure functions of the
// room snapshot (state.snap.series, kept current by state.js): the server scores, the page shows.

import { h } from "./dom.js";
import { formatTime } from "./text.js";

export const DEFAULT_POINTS = [10, 7, 5, 3, 2, 1];

/** The series under way (not ended), if any. */
export function seriesActive(snap) {
  return snap?.series && !snap.series.ended ? snap.series : null;
}

/** "Round 2 of 3", "Round 4" (until the host stops), for the round racing or about to. */
export function roundText(series, round) {
  return series.rounds ? `Round ${round} of ${series.rounds}` : `Round ${round}`;
}

/** A number of points as the page writes it: 7, 6.5, 7.33. */
export function pointsText(p) {
  return p == null ? "–" : String(p);
}

/** The host's series controls: off, a number of rounds, or until the host ends it. */
export function seriesControls(options, off, optionControl) {
  const s = options.series || null;
  const mode = !s ? "off" : s.rounds ? "rounds" : "open";
  const controls = [
    optionControl("Series", "series.mode", h("select", { dataset: { option: "series.mode" }, disabled: off },
      [["off", "one race at a time"], ["rounds", "a number of rounds"], ["open", "until I end it"]]
        .map(([v, t]) => h("option", { value: v, selected: v === mode }, t)))),
  ];
  if (s) {
    if (s.rounds) {
      controls.push(optionControl("Rounds", "series.rounds",
        h("input", { type: "number", min: "1", max: "100", value: String(s.rounds), dataset: { option: "series.rounds" }, disabled: off })));
    }
    controls.push(
      optionControl("Scoring", "series.scoring", h("select", { dataset: { option: "series.scoring" }, disabled: off },
        [["places", "points by place"], ["time", "total time"]].map(([v, t]) => h("option", { value: v, selected: v === s.scoring }, t)))),
      s.scoring === "places" ? optionControl("Points (1st, 2nd, …)", "series.points",
        h("input", { value: (s.points || DEFAULT_POINTS).join(", "), dataset: { option: "series.points" }, disabled: off,
          inputmode: "numeric" })) : null);
  }
  return controls;
}

/** The `series` option after the control `key` changed to `value` (null: no series). */
export function seriesChange(current, key, value) {
  const s = { rounds: 3, scoring: "places", points: DEFAULT_POINTS, ...(current || {}) };
  if (key === "series.mode") {
    if (value === "off") return null;
    return { ...s, rounds: value === "open" ? 0 : (current?.rounds || 3) };
  }
  if (key === "series.rounds") return { ...s, rounds: Math.max(1, Number(value) || 1) };
  if (key === "series.scoring") return { ...s, scoring: value };
  if (key === "series.points") {
    const points = String(value).split(/[\s,;/]+/).filter(Boolean).map(Number);
    return { ...s, points };
  }
  return s;
}

/** The heading of the standings: where the series is. */
export function standingsTitle(series) {
  if (series.ended) return `Final standings (${series.played} ${series.played === 1 ? "round" : "rounds"})`;
  if (!series.played) return "Series standings: no round played yet";
  return `Standings after ${series.rounds ? `round ${series.played} of ${series.rounds}` : `round ${series.played}`}`;
}

function scoreCells(series, row) {
  if (series.scoring === "time") return [h("td.num", String(row.wins)), h("td.num", row.wins ? formatTime(row.time) : "–")];
  return [h("td.num.points", pointsText(row.points))];
}

/** The standings table. `opts.compact`: the race panel's (no per-round columns). */
export function standingsTable(state, opts = {}) {
  const series = state.snap?.series;
  if (!series) return null;
  const rows = series.standings || [];
  const rounds = opts.compact ? 0 : series.played;
  const scoreHeads = series.scoring === "time"
    ? [h("th.num", { scope: "col" }, "Won"), h("th.num", { scope: "col" }, "Total time")]
    : [h("th.num", { scope: "col" }, "Points")];
  const roundHeads = Array.from({ length: rounds }, (_, i) => h("th.num.round-col", { scope: "col" }, `R${i + 1}`));
  return h(`section.panel.standings${opts.compact ? ".compact" : ""}`, { dataset: { testid: "standings", played: String(series.played), ended: String(series.ended) }, "aria-label": "Series standings" },
    h("h2", standingsTitle(series)),
    h("table.standings-table",
      h("thead", h("tr", h("th.num", { scope: "col" }, "#"), h("th", { scope: "col" }, "Name"), scoreHeads, roundHeads)),
      h("tbody", rows.map((r) => h(`tr${r.seat === state.seat && state.role === "player" ? ".me" : ""}`,
        { dataset: { seat: String(r.seat), points: String(r.points), place: String(r.place) } },
        h("td.num", String(r.place)),
        h("td.name", r.name || `seat ${r.seat}`, r.bot ? h("span.chip", "bot") : null, r.left ? h("span.chip", "left") : null),
        scoreCells(series, r),
        Array.from({ length: rounds }, (_, i) => h("td.num.round-col",
          series.scoring === "time" ? (r.rounds[i] == null ? "–" : formatTime(r.rounds[i])) : pointsText(r.rounds[i]))))))),
    opts.links && series.ended ? h("p.record-links", h("a", { href: `/api/series/${series.id}`, download: `solrace-series-${series.id}.json`, dataset: { testid: "series-record" } },
      "Download the series record")) : null,
    opts.actions || null);
}

/** A standings row for a seat that joined between rounds: 0 points, no rounds. */
export function zeroRow(series, seat, name, bot = false) {
  return { seat, name, player: null, bot, place: 0, points: 0, wins: 0, time: 0,
    rounds: Array.from({ length: series.played || 0 }, () => null), left: false };
}
