"""A race record as a browser replays it: each seat's first board and what each move changed.

The web client has no engine, so `/api/replay/ID` (server/league/replay.py) sends what the engine
computes: for every seat, in ranking order, the engine view at the start (the same view a
racer's own board is drawn from, so a face-down card stays face-down) and one frame per
stored move, `[t, move, piles]` or `[t, move, piles, fields]`:

* `t`: ms from the start when the server stored the move (the record's `times`);
* `piles`: each pile the move changed as `[keep, *items]`: the first `keep` items of the
  pile as it was, then `items` (a card pushed on a foundation is `[k, "AH"]`);
* `fields`: the view's other fields that changed (`home`, `progress`, `stock`, `won`, ...);
  `moves` is never sent: after frame k it is k.

Applying a seat's frames in order (`apply_frame`) gives exactly the engine's view after each
move; docs/RECORDS.md describes the shape. Sending only the changed piles, and of those only
the new tail, keeps an 8-seat Klondike race small (measured there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from solrace.engine import game_titles, new_game

REPLAY_VERSION = 1
#: view fields a frame never carries: fixed for the race, or (`moves`) the frame's number
FIXED_FIELDS = ("game", "options", "piles", "moves")
#: a seat's row fields copied from the record's ranking
SEAT_FIELDS = ("seat", "name", "player", "place", "status", "progress", "moves", "time")

Frame = list[Any]


def pile_change(before: Sequence[Any], after: Sequence[Any]) -> list[Any]:
    """`[keep, *items]`: keep the first `keep` items of `before`, then add `items`."""
    keep = 0
    limit = min(len(before), len(after))
    while keep < limit and before[keep] == after[keep]:
        keep += 1
    return [keep, *after[keep:]]


def view_frame(t: int, move: str, before: dict[str, Any], after: dict[str, Any]) -> Frame:
    """The frame that turns view `before` into view `after` (the move `move`, at `t` ms)."""
    old = before["piles"]
    piles = {
        name: pile_change(old.get(name, []), pile)
        for name, pile in after["piles"].items()
        if old.get(name) != pile
    }
    fields = {
        k: v
        for k, v in after.items()
        if k not in FIXED_FIELDS and (k not in before or before[k] != v)
    }
    return [t, move, piles, fields] if fields else [t, move, piles]


def apply_frame(view: dict[str, Any], frame: Frame) -> dict[str, Any]:
    """The view after `frame`, as a new dict (`view` is not changed; unchanged piles are shared)."""
    piles = dict(view["piles"])
    for name, (keep, *items) in frame[2].items():
        piles[name] = [*piles.get(name, [])[:keep], *items]
    fields = frame[3] if len(frame) > 3 else {}
    return {**view, **fields, "piles": piles, "moves": view["moves"] + 1}


def seat_frames(record: dict[str, Any], seat: str) -> tuple[dict[str, Any], list[Frame]]:
    """A seat's first view and its frames, by playing its moves on the record's deal.

    A move the engine refuses (a record that does not replay) raises the engine's
    IllegalMove: records are the server's own, so that is a bug to see, not to hide."""
    game = new_game(record["game"], record["seed"], record["game_options"])
    first = game.view()
    before = first
    frames = []
    for move, t in zip(record["moves"].get(seat, []), record["times"].get(seat, []), strict=True):
        game.play(move)
        after = game.view()
        frames.append(view_frame(t, move, before, after))
        before = after
    return first, frames


def build_replay(record: dict[str, Any]) -> dict[str, Any]:
    """The replay document of a record (the body of `/api/replay/ID`)."""
    seats = []
    for p in record["players"]:
        view, frames = seat_frames(record, str(p["seat"]))
        seats.append({**{f: p.get(f) for f in SEAT_FIELDS}, "view": view, "frames": frames})
    ends = [s["frames"][-1][0] for s in seats if s["frames"]]
    return {
        "v": REPLAY_VERSION,
        "id": record["id"],
        "game": record["game"],
        "title": game_titles().get(record["game"], record["game"]),
        "game_options": record["game_options"],
        "options": record["options"],
        "room": record["room"],
        "round": record["round"],
        "starts_at": record["starts_at"],
        "finished_at": record["finished_at"],
        #: ms from the start to the last move of any seat: the replay's length
        "duration": max(ends, default=0),
        "seats": seats,
    }
