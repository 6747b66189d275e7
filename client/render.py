"""Drawing rooms and boards as text: pure functions from data to strings.

Kept apart from all I/O so the terminal client and the spectator share it
and tests can check the output without a terminal. `color=False` gives
plain text (pipes, tests); `color=True` adds ANSI colours: red suits red,
face-down cards dim `##`.
"""

from __future__ import annotations

import time
from typing import Any

from .room import RoomModel

RESET = "\x1b[0m"
RED = "\x1b[31;1m"
BLACK = "\x1b[37;1m"
DIM = "\x1b[2m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
BOLD = "\x1b[1m"

SUIT_SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
GAME_TITLES = {
    "tabbycat": "Tabby Cat",
    "manx": "Manx",
    "puttputt": "Putt Putt",
    "klondike": "Klondike",
    "leapyear": "Leap Year",
}


def paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color else text


def card_text(card: str, color: bool = True) -> str:
    """One visible card: `TH` in plain text, red/white rank + suit symbol in colour."""
    if not color:
        return card
    suit = card[-1]
    code = RED if suit in "DH" else BLACK
    return paint(card[:-1] + SUIT_SYMBOLS.get(suit, suit), code, True)


def hidden_text(count: int, color: bool = True, limit: int = 3) -> str:
    """Face-down cards: `##` each, folded as `##x7` beyond `limit`."""
    shown = " ".join(["##"] * count) if count <= limit else f"##x{count}"
    return paint(shown, DIM, color)


def pile_text(items: list[Any], color: bool = True) -> str:
    parts = []
    for item in items:
        if isinstance(item, dict):
            parts.append(hidden_text(int(item.get("hidden", 0)), color))
        else:
            parts.append(card_text(item, color))
    return " ".join(parts) if parts else paint("--", DIM, color)


def _top_text(items: list[Any], color: bool) -> str:
    """A foundation: its top card and how many cards it holds."""
    count = sum(int(i.get("hidden", 0)) if isinstance(i, dict) else 1 for i in items)
    if not items:
        return paint("--", DIM, color)
    top = items[-1]
    top_s = hidden_text(1, color) if isinstance(top, dict) else card_text(top, color)
    return f"{top_s}({count})" if count > 1 else top_s


def _count(items: list[Any]) -> int:
    return sum(int(i.get("hidden", 0)) if isinstance(i, dict) else 1 for i in items)


def view_summary(view: dict[str, Any]) -> str:
    """The one-line status of a board: game, options, moves, home, progress, deals/passes."""
    game = view.get("game", "?")
    opts = view.get("options") or {}
    opt_s = " ".join(f"{k}={v}" for k, v in opts.items())
    parts = [
        GAME_TITLES.get(game, game) + (f" ({opt_s})" if opt_s else ""),
        f"moves {view.get('moves', 0)}",
        f"home {view.get('home', 0)}",
        f"{round(100 * float(view.get('progress', 0)))}%",
        f"stock {view.get('stock', 0)}",
    ]
    if view.get("deals_left") is not None:
        parts.append(f"deals left {view['deals_left']}")
    if view.get("passes_left") is not None:
        parts.append(f"passes left {view['passes_left']}")
    if view.get("won"):
        parts.append("WON")
    elif view.get("dead"):
        parts.append("DEAD (no move left)")
    return "  ".join(parts)


def render_view(view: dict[str, Any], color: bool = True) -> str:
    """A whole board: every pile labelled (t1.. f1.. r s w), face-down cards as ##."""
    piles: dict[str, list[Any]] = view.get("piles") or {}
    lines = [paint(view_summary(view), BOLD, color)]
    founds = [n for n in piles if n.startswith("f")]
    if founds:
        per_line = 8
        for i in range(0, len(founds), per_line):
            chunk = founds[i : i + per_line]
            lines.append("  ".join(f"{n:>3} {_top_text(piles[n], color)}" for n in chunk))
    for name, items in piles.items():
        if name.startswith("f"):
            continue
        if name == "s":
            lines.append(
                f"{name:>3} {hidden_text(_count(items), color, limit=0) if items else paint('--', DIM, color)}"
                f"  ({_count(items)} in stock)"
            )
            continue
        lines.append(f"{name:>3} {pile_text(items, color)}")
    return "\n".join(lines)


def progress_bar(fraction: float, width: int = 20, color: bool = True) -> str:
    fraction = min(1.0, max(0.0, float(fraction)))
    filled = round(fraction * width)
    bar = "#" * filled + "." * (width - filled)
    return "[" + paint(bar, GREEN, color and filled > 0) + "]" if color else f"[{bar}]"


def clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def player_line(p: dict[str, Any], you: bool = False, color: bool = True) -> str:
    """One player's progress bar with name, status, moves and time."""
    name = (p.get("name") or f"seat {p.get('seat')}")[:12]
    marks = ("*" if you else " ") + ("R" if p.get("ready") else " ")
    conn = "" if p.get("connected", True) else " (away)"
    t = p.get("time")
    t_s = f" {clock_text(t / 1000)}" if t is not None else ""
    status = p.get("status", "")
    if color and status == "won":
        status = paint(status, GREEN, True)
    return (
        f"{marks} {name:<12} {progress_bar(p.get('progress', 0.0), color=color)} "
        f"{round(100 * float(p.get('progress', 0.0))):>3}% {status:<8} "
        f"{p.get('moves', 0):>4} moves{t_s}{conn}"
    )


def race_length(room: RoomModel) -> float | None:
    """Seconds the finished race lasted (its last ranked time), None before the end."""
    if room.state != "finished":
        return None
    rows = (room.results or {}).get("ranking") or list(room.players.values())
    times = [r["time"] for r in rows if r.get("time") is not None]
    return max(times) / 1000 if times else 0.0


def header(room: RoomModel, now_ms: float | None = None, color: bool = True) -> str:
    """Room code, state, countdown or race clock, game and spectators."""
    game = (room.options or {}).get("game", "")
    parts = [paint(f"room {room.room or '?'}", BOLD, color), room.state]
    if game:
        parts.append(GAME_TITLES.get(game, game))
    left = room.countdown_left(now_ms)
    if left is not None:
        parts.append(paint(f"starts in {left:.1f}s", YELLOW, color))
    final = race_length(room)
    elapsed = room.elapsed(now_ms)
    if final is not None:
        parts.append(f"finished {clock_text(final)}")  # the clock stops with the race
    elif elapsed is not None:
        parts.append(f"clock {clock_text(elapsed)}")
    remaining = room.time_left(now_ms)
    # a race with no time limit of its own ends too, at the server's longest race (hours): no
    # clock counts that down
    if remaining is not None and room.options.get("time_limit"):
        parts.append(f"time left {clock_text(remaining)}")
    parts.append(f"{room.spectators} watching")
    return "  ".join(parts)


def render_players(room: RoomModel, color: bool = True, skip_seat: int | None = None) -> str:
    lines = [
        player_line(p, you=(seat == room.seat), color=color)
        for seat, p in sorted(room.players.items())
        if seat != skip_seat
    ]
    return "\n".join(lines)


def render_results(room: RoomModel) -> str:
    results = room.results or {}
    lines = ["results:"]
    for r in results.get("ranking", []):
        t = r.get("time")
        lines.append(
            f"  {r.get('place')}. {r.get('name', '')} {r.get('status')} "
            f"{round(100 * float(r.get('progress', 0)))}% {r.get('moves')} moves"
            + (f" {clock_text(t / 1000)}" if t is not None else "")
        )
    if results.get("seed") is None and results.get("reveal_at"):
        at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(results["reveal_at"] / 1000))
        lines.append(f"  the daily's seed and salt are revealed at {at}")
    elif "seed" in results:
        lines.append(f"  seed {results['seed']} salt {results.get('salt')}")
    if results.get("series"):
        # the room's copy is the newer one once the host ended the series after this race
        newer = (
            room.series if (room.series or {}).get("id") == results["series"].get("id") else None
        )
        lines.append(render_standings(newer or results["series"]))
    return "\n".join(lines)


def render_standings(series: dict[str, Any] | None) -> str:
    """A series' standings as `solrace play` prints them (PROTOCOL.md, Series)."""
    if not series:
        return ""
    played, rounds = series.get("played", 0), series.get("rounds", 0)
    if series.get("ended"):
        title = f"final standings ({played} rounds):"
    else:
        title = f"standings after round {played}" + (f" of {rounds}" if rounds else "") + ":"
    lines = [title]
    for r in series.get("standings", []):
        if series.get("scoring") == "time":
            score = f"{r.get('wins', 0)} won" + (
                f", {clock_text(r['time'] / 1000)}" if r.get("wins") else ""
            )
        else:
            score = f"{r.get('points', 0)} pts"
        marks = (" [bot]" if r.get("bot") else "") + (" (left)" if r.get("left") else "")
        rounds_text = " ".join("-" if x is None else str(x) for x in r.get("rounds", []))
        lines.append(f"  {r.get('place')}. {r.get('name', '')}{marks} {score}  [{rounds_text}]")
    return "\n".join(lines)


def render_player_screen(
    room: RoomModel, color: bool = True, now_ms: float | None = None, moves: list[str] | None = None
) -> str:
    """What `solrace play` shows: header, own board, everyone's progress, numbered moves."""
    out = [header(room, now_ms, color)]
    if room.view is not None:
        out.append(render_view(room.view, color))
    if room.players:
        out.append(render_players(room, color))
    if room.state == "finished" and room.results:
        out.append(render_results(room))
    elif room.series:  # the standings so far, in the lobby and while racing
        out.append(render_standings(room.series))
    if moves:
        out.append("moves: " + "  ".join(f"{i}){m}" for i, m in enumerate(moves, 1)))
    return "\n".join(out)


def render_spectator_screen(
    room: RoomModel, color: bool = True, now_ms: float | None = None
) -> str:
    """What `solrace watch` shows: header, progress of all, and every board the room allows."""
    out = [header(room, now_ms, color), render_players(room, color)]
    for seat, view in sorted(room.boards.items()):
        name = (room.players.get(seat) or {}).get("name") or f"seat {seat}"
        out.append(paint(f"--- {name} (seat {seat}) ---", BOLD, color))
        out.append(render_view(view, color))
    if room.state == "finished" and room.results:
        out.append(render_results(room))
    elif room.series:
        out.append(render_standings(room.series))
    return "\n".join(out)


def now_ms() -> float:
    return time.time() * 1000


def _who(room: RoomModel, seat: int, names: dict[int, str] | None = None) -> str:
    name = (names or {}).get(seat) or room.players.get(seat, {}).get("name")
    return str(name) if name else f"seat {seat}"


def event_line(
    kind: str,
    raw: dict[str, Any],
    room: RoomModel,
    grace: float | None = None,
    names: dict[int, str] | None = None,
) -> str:
    """A room event as a sentence for the log ("Bob is ready", "Bob disconnected: resigns in
    30 s unless back"), never the raw fields. `names`: seat -> name from before the event (a
    player who left the lobby is gone from the model by then)."""
    seat = raw.get("seat")
    who = _who(room, seat, names) if isinstance(seat, int) else ""
    mine = seat is not None and seat == room.seat
    if kind == "player_joined":
        return f"* {raw.get('name') or who} joined{' (a bot)' if raw.get('bot') else ''}"
    if kind == "player_left":
        return f"* {who} left"
    if kind == "kicked":
        return "* you were removed from the room" if mine else f"* {who} was removed"
    if kind == "ready":
        return f"* {who} is {'ready' if raw.get('ready') else 'not ready'}"
    if kind == "connected":
        if raw.get("connected"):
            return f"* {who} connected"
        if room.state == "racing" and grace:
            return f"* {who} disconnected: resigns in {round(grace)} s unless back"
        return f"* {who} disconnected"
    if kind == "options":
        opts = raw.get("options") or {}
        shown = ", ".join(f"{k} {v}" for k, v in opts.items() if k not in ("seed", "text_seed"))
        return f"* the host changed the rules{': ' + shown if shown else ''}"
    if kind == "rematch":
        return "* rematch: a new race in this room, same players"
    return f"* {kind.replace('_', ' ')}"
