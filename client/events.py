"""Typed server messages: one dataclass per message type and per event kind.

The wire carries plain maps; a client that passes maps around ends up
spelling keys in every corner. `parse_message` turns each map into one of
these classes once, keeping the original map in `raw` so nothing the server
adds later (unknown keys are allowed by the protocol) is lost.

The protocol's tables (`solrace.protocol.messages.SERVER` and `EVENT_KINDS`) are the one
schema: every message type and event kind they define has a class here with exactly their
fields (tests/client/test_client_events_schema.py fails on any drift). A field whose wire
name is a Python keyword is renamed by WIRE_NAMES.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(kw_only=True)
class Message:
    """Base of every server message; `ref` is set on replies."""

    type: str
    ref: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(kw_only=True)
class Welcome(Message):
    version: int
    server: str = ""
    limits: dict[str, Any] = field(default_factory=dict)
    #: the games this server deals: id, title and each rule option's default and choices
    games: list[dict[str, Any]] = field(default_factory=list)
    #: the public player id of the hello's player key (None: the hello had none)
    player: str | None = None


@dataclass(kw_only=True)
class Joined(Message):
    room: str
    role: str
    seat: int | None = None
    token: str | None = None
    host_token: str | None = None
    snapshot: dict[str, Any] = field(default_factory=dict)
    #: a resume within the kept history (no snapshot): the player's own seat and board
    you: dict[str, Any] | None = None
    #: the room's last event number when the reply was made
    event: int | None = None
    #: a daily attempt: its id, date, game, whether it is scored, when its deal is revealed
    daily: dict[str, Any] | None = None


@dataclass(kw_only=True)
class Snapshot(Message):
    snapshot: dict[str, Any]


@dataclass(kw_only=True)
class Ack(Message):
    n: int
    move: str | None = None
    undone: str | None = None
    revealed: list[str] = field(default_factory=list)
    #: the mover's board after the move: sent whole, or derived by `Room.apply_ack` from
    #: `change` (what the move did to the board before it) and the board the client had
    view: dict[str, Any] | None = None
    change: dict[str, Any] | None = None
    status: str | None = None
    #: the mover's own `progress` event, folded into its ack: the event's room number and
    #: fields (None from a server that still sends that event on its own)
    event: int | None = None
    at: int | None = None
    home: int | None = None
    progress: float | None = None
    time: int | None = None


@dataclass(kw_only=True)
class Ok(Message):
    pass


@dataclass(kw_only=True)
class Error(Message):
    code: str
    message: str = ""


@dataclass(kw_only=True)
class Board(Message):
    seat: int
    moves: int = 0
    view: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Batch(Message):
    """A spectator's tick: several messages in one frame, in order (the connection hands
    each on by itself: `codec.messages`; this class is for whoever parses a frame whole)."""

    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(kw_only=True)
class ProgressFrame(Message):
    """Room events `first`..`n` (the wire's `from`..`n`), all progress of racing seats,
    coalesced by the server into one frame: each seat's latest line."""

    n: int
    first: int
    at: int | None = None
    seats: list[dict[str, Any]] = field(default_factory=list)


@dataclass(kw_only=True)
class Hint(Message):
    """The solver's answer to `hint`: its verdict, and the next move of a solution when won."""

    verdict: str
    move: str | None = None
    n: int | None = None


@dataclass(kw_only=True)
class Admin(Message):
    """The answer to an operator's `admin` request (only one of its parts, by `op`)."""

    op: str
    procs: list[dict[str, Any]] | None = None
    room: dict[str, Any] | None = None
    proc: str | None = None
    errors: list[dict[str, Any]] | None = None


@dataclass(kw_only=True)
class Lobby(Message):
    rooms: list[dict[str, Any]] = field(default_factory=list)
    #: the cursor of the next page (`lobby(after=next)`), None on the last page
    next: str | None = None


@dataclass(kw_only=True)
class Pong(Message):
    t: Any = None


@dataclass(kw_only=True)
class Queued(Message):
    """The reply to `quick`: in the queue, paired by `rating` (PROTOCOL.md, Quick match)."""

    game: str
    rated: bool
    rating: float


@dataclass(kw_only=True)
class Matched(Message):
    """Quick match found a race: take `seat` of `room` with `resume` (`token`)."""

    game: str
    rated: bool
    room: str
    seat: int
    token: str
    starts_at: int
    players: list[str] = field(default_factory=list)
    #: the room is served by the process of the connection that queued: resume on it
    here: bool = False


@dataclass(kw_only=True)
class Arena(Message):
    """An arena's settings, state and leaderboard (PROTOCOL.md, Arena): the reply to the
    `arena_*` requests, and pushed while it changes."""

    arena: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class ArenaPaired(Message):
    """An arena member's next race: take `seat` of `room` with `resume` (`token`)."""

    arena: str
    room: str
    seat: int
    token: str
    starts_at: int
    players: list[str] = field(default_factory=list)
    here: bool = False


@dataclass(kw_only=True)
class Unknown(Message):
    """A message type this client does not know (a newer server)."""


# ---- numbered room events -------------------------------------------------


@dataclass(kw_only=True)
class Event(Message):
    """A numbered room event; subclasses carry the fields of each kind."""

    n: int
    kind: str
    at: int | None = None


@dataclass(kw_only=True)
class PlayerJoined(Event):
    seat: int
    name: str = ""
    #: the public player id (None: joined without a player key)
    player: str | None = None
    #: the seat is taken by a marked bot
    bot: bool = False


@dataclass(kw_only=True)
class PlayerLeft(Event):
    seat: int


@dataclass(kw_only=True)
class Connected(Event):
    seat: int
    connected: bool


@dataclass(kw_only=True)
class Watchers(Event):
    count: int = 0


@dataclass(kw_only=True)
class ReadyChanged(Event):
    seat: int
    ready: bool


@dataclass(kw_only=True)
class OptionsChanged(Event):
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Kicked(Event):
    seat: int


@dataclass(kw_only=True)
class Countdown(Event):
    starts_at: int | None = None
    commitment: str | None = None
    players: list[int] = field(default_factory=list)
    #: in a series: its id, this race's round and the rounds (0: until the host ends it)
    series: dict[str, Any] | None = None


@dataclass(kw_only=True)
class Start(Event):
    starts_at: int | None = None
    ends_at: int | None = None


@dataclass(kw_only=True)
class Progress(Event):
    seat: int
    moves: int = 0
    home: int = 0
    progress: float = 0.0
    status: str = "racing"
    time: int | None = None


@dataclass(kw_only=True)
class Results(Event):
    ranking: list[dict[str, Any]] = field(default_factory=list)
    seed: int | None = None  # None in a daily race's results until its day is over
    salt: str | None = None
    reveal_at: int | None = None
    #: the daily's id, in a daily race's results
    daily: str | None = None
    game: str | None = None
    game_options: dict[str, Any] = field(default_factory=dict)
    moves: dict[str, list[str]] = field(default_factory=dict)
    #: the race record's id (/api/record/ID)
    record: str | None = None
    #: in a series: the series and its standings after this race (PROTOCOL.md, Series)
    series: dict[str, Any] | None = None


@dataclass(kw_only=True)
class Rematch(Event):
    options: dict[str, Any] = field(default_factory=dict)
    series: dict[str, Any] | None = None


@dataclass(kw_only=True)
class SeriesEnd(Event):
    """The room's series ended: its final standings (PROTOCOL.md, Series)."""

    series: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Solved(Event):
    """The solver's verdicts after a race: the deal's, and each unfinished seat's position."""

    deal: str = ""
    deal_moves: int | None = None
    seats: dict[Any, Any] = field(default_factory=dict)


EVENT_KINDS: dict[str, type[Event]] = {
    "player_joined": PlayerJoined,
    "player_left": PlayerLeft,
    "connected": Connected,
    "watchers": Watchers,
    "ready": ReadyChanged,
    "options": OptionsChanged,
    "kicked": Kicked,
    "countdown": Countdown,
    "start": Start,
    "progress": Progress,
    "results": Results,
    "rematch": Rematch,
    "series_end": SeriesEnd,
    "solved": Solved,
}

MESSAGE_TYPES: dict[str, type[Message]] = {
    "welcome": Welcome,
    "joined": Joined,
    "snapshot": Snapshot,
    "ack": Ack,
    "ok": Ok,
    "error": Error,
    "board": Board,
    "progress": ProgressFrame,
    "batch": Batch,
    "lobby": Lobby,
    "pong": Pong,
    "hint": Hint,
    "queued": Queued,
    "matched": Matched,
    "arena": Arena,
    "arena_paired": ArenaPaired,
    "admin": Admin,
}

#: client field name -> wire key, where the wire's is a Python keyword
WIRE_NAMES: dict[str, str] = {"first": "from"}


_FIELDS: dict[type[Message], frozenset[str]] = {}


def _fields_of(cls: type[Message]) -> frozenset[str]:
    """Field names of a message class (cached: every server message passes here)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = frozenset(f.name for f in fields(cls))
    return names


def _build(cls: type[Message], msg: dict[str, Any]) -> Message:
    names = _fields_of(cls) - {"raw"}
    kwargs = {k: v for k, v in msg.items() if k in names}
    if "moves" in kwargs and cls is Results and isinstance(kwargs["moves"], dict):
        kwargs["moves"] = {str(k): v for k, v in kwargs["moves"].items()}
    return cls(raw=msg, **kwargs)


def parse_message(msg: dict[str, Any]) -> Message:
    """Typed form of one decoded server message (never raises on a new type or kind).

    A message whose required fields are missing raises TypeError: that is a
    server bug worth seeing, not something to paper over.
    """
    mtype = msg.get("type")
    if mtype == "event":
        cls: type[Message] = EVENT_KINDS.get(str(msg.get("kind")), Event)
        return _build(cls, msg)
    cls = MESSAGE_TYPES.get(str(mtype), Unknown)
    if cls is ProgressFrame:  # `from` is a Python keyword: the field is `first`
        return _build(cls, {**msg, "first": msg.get(WIRE_NAMES["first"], msg.get("n"))})
    return _build(cls, msg)
