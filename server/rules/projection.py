"""What each viewer may see: every outgoing room state is built here and nowhere else.

boardgame.io once leaked a shuffled deck because its first message skipped the
player projection (bug #1159). So the `joined` snapshot, the resync snapshot,
acks, and the spectator boards all come from these functions; the room
document itself (seed, salt, token hashes) is never sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solrace.engine import replay
from solrace.server.rules.room import (
    COUNTDOWN,
    FINISHED,
    LOBBY,
    RACING,
    Room,
    SeatRace,
    public_options,
)


@dataclass(frozen=True)
class Viewer:
    role: str  # "player" or "spectator"
    seat: int | None = None
    #: the key of the viewer's client address (`room.addr_hash`); None: unknown, and a
    #: spectator of unknown address is taken for a racer (no boards during a race)
    addr: str | None = None


def own_view(room: Room, seat: int) -> dict[str, Any] | None:
    """A player's own board: the engine view (which never holds a hidden card); none before the start."""
    race = room.races.get(seat)
    if race is None or room.state in (LOBBY, COUNTDOWN):
        return None
    return race.view()


def delayed_view(race: SeatRace, cutoff: int | None) -> dict[str, Any]:
    """A board as it was at server time `cutoff` (None: now)."""
    if cutoff is None:
        return race.view()
    k = sum(1 for e in race.entries if e.at <= cutoff)
    if k == len(race.entries):
        return race.view()
    past = replay(race.game_name, race.seed, race.game_options, [e.move for e in race.entries[:k]])
    return past.view()


def spectator_cutoff(room: Room, now: int) -> int | None:
    delay: int = room.options["spectator_delay"]
    if room.state == FINISHED or not delay:
        return None
    return now - delay * 1000


def spectator_boards(room: Room, now: int, addr: str | None) -> dict[str, dict[str, Any]] | None:
    """Boards for spectators as the room allows: live, delayed, or none (progress only; and
    none to the address of a seat still racing, `Room.watching_own_race`)."""
    if room.options["spectator_view"] != "boards" or room.state not in (RACING, FINISHED):
        return None
    if room.watching_own_race(addr):
        return None
    cutoff = spectator_cutoff(room, now)
    return {str(seat): delayed_view(race, cutoff) for seat, race in sorted(room.races.items())}


def board_from_view(seat: int, view: dict[str, Any]) -> dict[str, Any]:
    """The one `board` builder: a seat's board as a spectator gets it (live or delayed)."""
    return {"type": "board", "seat": seat, "moves": view["moves"], "view": view}


def board_message(room: Room, seat: int) -> dict[str, Any]:
    """The board a move just made, for spectators watching live (or with the room's delay)."""
    return board_from_view(seat, room.races[seat].view())


def spectator_board_messages(room: Room, now: int, addr: str | None) -> list[dict[str, Any]]:
    """Every board a spectator (who resumed, or whose race just ended) may see now, one
    `board` message each."""
    boards = spectator_boards(room, now, addr) or {}
    return [board_from_view(int(seat), view) for seat, view in boards.items()]


def player_row(room: Room, seat: dict[str, Any], connected: dict[str, int]) -> dict[str, Any]:
    n = seat["seat"]
    return {
        "seat": n,
        "name": seat["name"],
        "player": seat.get("player"),  # the public player id (None: no player key)
        "bot": bool(seat.get("bot")),  # a marked bot (hello `bot: true`)
        "ready": seat["ready"],
        "connected": connected.get(str(n), 0) > 0,
        "status": room.status(n),
        **room.stats(n),
    }


def snapshot(
    room: Room, viewer: Viewer, now: int, connected: dict[str, int], event: int
) -> dict[str, Any]:
    d = room.doc
    you = None
    if viewer.role == "player" and viewer.seat is not None:
        you = {"seat": viewer.seat, "view": own_view(room, viewer.seat)}
    boards = spectator_boards(room, now, viewer.addr) if viewer.role == "spectator" else None
    return {
        "room": room.code,
        "state": room.state,
        "round": d["round"],
        "event": event,
        "options": public_options(room.options),
        "host_seat": d["host_seat"],
        "commitment": d["commitment"],
        "starts_at": d["starts_at"],
        "ends_at": d["ends_at"],
        "now": now,
        "players": [player_row(room, s, connected) for s in room.seats()],
        "spectators": connected.get("spectators", 0),
        "you": you,
        "boards": boards,
        "results": d["results"] if room.state == FINISHED else None,
        "daily": daily_info(d),
        "series": room.series_view(),
    }


def daily_info(doc: dict[str, Any]) -> dict[str, Any] | None:
    """A daily attempt's description (server/league/daily.py) as its racer may see it (None: not one)."""
    daily = doc.get("daily")
    return None if daily is None else {k: v for k, v in daily.items() if k != "player"}


def lobby_row(doc: dict[str, Any], connected: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "room": doc["code"],
        "game": doc["options"]["game"],
        "state": doc["state"],
        "players": sum(1 for s in doc["seats"] if s),
        "max_players": doc["options"]["max_players"],
        "spectators": (connected or {}).get("spectators", 0),
        "deal": doc["options"].get("deal", "any"),
        "rated": bool(doc["options"].get("rated")),
    }
