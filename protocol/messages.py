"""Every message of the solrace wire protocol, defined once: shape, encode, decode, validate.

The server, the Python client, the tests and the benchmarks all go through this
module so a message can never mean one thing on one side and another on the
other. PROTOCOL.md is the human contract; the tables below are its machine form.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, overload

import msgpack
import solrace.engine as engine
from solrace.protocol.series import BadSeries
from solrace.protocol.series import check_option as check_series

#: the protocol version this package speaks; the web page gets it injected (server/net/http.py)
VERSION = 1
#: every version a server accepts in `hello`
VERSIONS = (1,)
MAX_FRAME = 8192

#: every error code the server may send, with its one-line meaning (PROTOCOL.md shows this table
#: and a test keeps the two equal); clients may rely on these strings
ERROR_CODES: dict[str, str] = {
    "bad_frame": "a text frame, or bytes that are not one msgpack map (3 of them close the connection)",
    "frame_too_large": "a frame over the 8 KiB limit (then close 1009)",
    "bad_message": "a required field is missing or has the wrong type (`field` names it)",
    "unknown_type": "a message `type` the server does not know",
    "hello_required": "the first message was not `hello`",
    "unsupported_version": "the server does not speak that version (`versions` lists those it does; then close 1002)",
    "rate_limited": "over a rate limit or cap (`limit` names it; `retry_after` ms when waiting helps): the message was dropped",
    "no_room": "no room has that code",
    "no_arena": "no arena has that id (or its results have expired)",
    "room_full": "every seat of the room is taken",
    "bad_token": "that token holds no seat in this room",
    "not_host": "a host action without the room's host token",
    "not_player": "a seat's action from a connection that holds no seat, or about a seat that does not exist",
    "not_allowed": (
        "the room does not allow it (e.g. spectators are off, the host removed this address, "
        "this address holds its limit of seats there)"
    ),
    "bad_state": "not now: the room or the seat is not in a state for it",
    "bad_options": "an unknown room or game option, or a value out of range",
    "player_key_required": (
        "a rated room seats only players whose hello carried a player key (marked bots too)"
    ),
    "illegal_move": "the game's rules refuse the move (the message says why)",
    "out_of_sync": "`n` is not the move number the server expects (`expected` is)",
    "undo_refused": "undo is off, there is nothing to take back, or the move revealed a card",
    "code_taken": (
        "a room has the code `create` or `daily` proposed: draw another and send it again "
        "(on a connection naming it)"
    ),
    "daily_played": "the player's scored attempt at that daily is taken; `practice: true` (a past day's daily) is allowed",
    "busy": "the server could not do it now; send the same request again after a short pause",
    "internal": "a server fault",
}

#: game ids, as the engine (the only judge of games) deals them
GAME_NAMES: tuple[str, ...] = tuple(engine.GAMES)


def check_code(code: str) -> None:
    """A real check (not an assert): an unlisted code would be a contract no client knows."""
    if code not in ERROR_CODES:
        raise ValueError(f"unknown error code {code!r}")


class ProtocolError(Exception):
    """A refusal that becomes an `error` message; raising it must never change state.

    The base of the protocol layer's errors: anything raised as one reaches the client as
    its `code`, so the code is checked here, also under `python -O`.
    """

    def __init__(self, code: str, message: str, **extra: Any) -> None:
        check_code(code)
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def to_message(self, ref: int | None = None) -> dict[str, Any]:
        return error(self.code, self.message, ref=ref, **self.extra)


# --- field types -------------------------------------------------------------------------

Num = (int, float)


def _is(value: Any, kind: Any) -> bool:
    """isinstance, except that a bool is never accepted as a number (msgpack keeps them apart)."""
    if (
        isinstance(value, bool)
        and kind is not bool
        and not (isinstance(kind, tuple) and bool in kind)
    ):
        return False
    return isinstance(value, kind)


@dataclass(frozen=True)
class F:
    """One field of a message: its type, whether it is required, and a size bound for strings."""

    kind: Any
    required: bool = True
    max_len: int | None = None


#: a name's bound on the wire, in code points (its rule, 1 to 24 user-perceived characters,
#: is names.py's: a joined emoji is several code points, at most 16)
NAME_CODE_POINTS = 384

#: client -> server messages: type -> fields
CLIENT: dict[str, dict[str, F]] = {
    "hello": {
        "version": F(int),
        "client": F(str, False, 64),
        "player_key": F(str, False, 128),  # the client's secret player key (Identity)
        "bot": F(bool, False),  # this client is a program (Identity: bots)
    },
    "create": {
        "name": F(str, True, NAME_CODE_POINTS),
        "options": F(dict, False),
        "play": F(bool, False),
        "code": F(str, False, 32),  # the room's code, drawn by the client (Room codes)
    },
    "join": {"room": F(str, True, 32), "name": F(str, True, NAME_CODE_POINTS)},
    "spectate": {"room": F(str, True, 32), "last_event": F(int, False)},
    "resume": {"room": F(str, True, 32), "token": F(str, True, 128), "last_event": F(int, False)},
    "leave": {},
    "ready": {"ready": F(bool)},
    "configure": {"host_token": F(str, True, 128), "options": F(dict)},
    "start": {"host_token": F(str, True, 128)},
    "kick": {"host_token": F(str, True, 128), "seat": F(int)},
    "rematch": {"host_token": F(str, True, 128)},
    # the host ends the room's series between races (PROTOCOL.md, Series)
    "end_series": {"host_token": F(str, True, 128)},
    "move": {"move": F(str, True, 32), "n": F(int, False)},
    "undo": {"n": F(int, False)},
    "resign": {},
    "lobby": {"after": F(str, False, 32)},
    "ping": {"t": F(object, False)},
    "hint": {},
    # a daily race: the day's deal for `game` (default rules), started at once, alone
    "daily": {
        "game": F(str, True, 32),
        "name": F(str, True, NAME_CODE_POINTS),
        "game_options": F(dict, False),
        "practice": F(bool, False),
        "date": F(str, False, 10),  # practice a past day's daily (YYYY-MM-DD, in the archive)
        "code": F(str, False, 32),  # the attempt's room code, drawn by the client (Room codes)
    },
    # quick match: race whoever is waiting for `game` now (rated unless `rated: false`)
    "quick": {"game": F(str, True, 32), "name": F(str, True, 24), "rated": F(bool, False)},
    "quick_cancel": {},
    # arenas (PROTOCOL.md, Arena): a timed event, its members paired by score as they are free
    "arena_create": {
        "game": F(str, True, 32),
        "minutes": F(Num),
        "max_players": F(int, False),
        "title": F(str, False, NAME_CODE_POINTS),
        "name": F(str, False, NAME_CODE_POINTS),
    },
    "arena_join": {"arena": F(str, True, 32), "name": F(str, True, NAME_CODE_POINTS)},
    "arena_leave": {"arena": F(str, True, 32)},
    "arena_watch": {"arena": F(str, True, 32)},
    # an operator's request (Admin): off unless the server has an admin token
    "admin": {
        "token": F(str, True, 128),
        "op": F(str, True, 16),
        "room": F(str, False, 32),
        "seat": F(int, False),
    },
}

#: server -> client messages: type -> fields (used by tests and clients to check what they get)
SERVER: dict[str, dict[str, F]] = {
    "welcome": {
        "version": F(int),
        "server": F(str),
        "limits": F(dict),
        "games": F(list),
        "player": F((str, type(None)), False),  # the public player id of the hello's key
        "ref": F(int, False),
    },
    "error": {"code": F(str), "message": F(str), "ref": F(int, False)},
    "ok": {"ref": F(int, False)},
    "pong": {"ref": F(int, False), "t": F(object, False)},
    "joined": {
        "room": F(str),
        "role": F(str),
        "seat": F((int, type(None)), False),
        "token": F(str, False),
        "host_token": F(str, False),
        "snapshot": F(dict, False),
        "you": F(dict, False),
        "event": F(int, False),
        "daily": F(dict, False),  # a daily attempt: its id, date, game, scored, reveal_at
        "ref": F(int, False),
    },
    "snapshot": {"snapshot": F(dict)},
    "ack": {
        "n": F(int),
        # the mover's board: what the move changed (`change`), or the whole view
        "view": F(dict, False),
        "change": F(dict, False),
        "status": F(str),
        "move": F(str, False),
        "undone": F(str, False),
        "revealed": F(list, False),
        "ref": F(int, False),
        # the mover's own progress event, folded in: its room event number and fields
        "event": F(int, False),
        "at": F(int, False),
        "home": F(int, False),
        "progress": F(Num, False),
        "time": F((int, type(None)), False),
    },
    "event": {"n": F(int), "kind": F(str), "at": F(int)},
    # room events `from`..`n`, all progress of racing seats, coalesced: each seat's latest line
    "progress": {"from": F(int), "n": F(int), "at": F(int), "seats": F(list)},
    "board": {"seat": F(int), "moves": F(int), "view": F(dict)},
    # a spectator's tick: the messages of one tick in one frame (each an event, progress or
    # board, in the order a client applies them; never a batch)
    "batch": {"messages": F(list)},
    "lobby": {"rooms": F(list), "next": F((str, type(None)), False), "ref": F(int, False)},
    # quick match: in the queue (the reply to `quick`), then the room it found
    "queued": {"game": F(str), "rated": F(bool), "rating": F(Num), "ref": F(int, False)},
    "matched": {
        "game": F(str),
        "rated": F(bool),
        "room": F(str),
        "seat": F(int),
        "token": F(str),
        "starts_at": F(int),
        "players": F(list),
        "here": F(bool, False),  # the room is served by this connection's process
    },
    # an arena's settings, state and leaderboard: the reply to arena_*, and pushed to its
    # members and watchers when it changes (PROTOCOL.md, Arena)
    "arena": {"arena": F(dict), "ref": F(int, False)},
    # an arena member's next race: take the seat as after `matched`
    "arena_paired": {
        "arena": F(str),
        "room": F(str),
        "seat": F(int),
        "token": F(str),
        "starts_at": F(int),
        "players": F(list),
        "here": F(bool, False),
    },
    # the answer to `admin`: `procs` (op rooms), `room` (room, kick, close) or `errors`
    "admin": {
        "op": F(str),
        "procs": F(list, False),
        "room": F(dict, False),
        "proc": F(str, False),
        "errors": F(list, False),
        "ref": F(int, False),
    },
    "hint": {
        "verdict": F(str),
        "move": F((str, type(None)), False),
        "n": F(int, False),
        "ref": F(int, False),
    },
}

#: event kind -> fields beyond n/kind/at
EVENT_KINDS: dict[str, dict[str, F]] = {
    "player_joined": {
        "seat": F(int),
        "name": F(str),
        "player": F((str, type(None)), False),  # the public player id (Identity)
        "bot": F(bool, False),  # present (true) for a seat taken by a marked bot
    },
    "player_left": {"seat": F(int)},
    "connected": {"seat": F(int), "connected": F(bool)},
    "ready": {"seat": F(int), "ready": F(bool)},
    "options": {"options": F(dict)},
    "kicked": {"seat": F(int)},
    "watchers": {"count": F(int)},
    "countdown": {
        "starts_at": F(int),
        "commitment": F(str),
        "players": F(list),
        "series": F(dict, False),  # a series' round: its id, round and rounds
    },
    "start": {"starts_at": F(int), "ends_at": F((int, type(None)))},
    "progress": {
        "seat": F(int),
        "moves": F(int),
        "home": F(int),
        "progress": F(Num),
        "status": F(str),
        "time": F((int, type(None))),
    },
    "results": {
        "ranking": F(list),
        # null in a daily race's results until its day is over (`reveal_at`, ms)
        "seed": F((int, type(None))),
        "salt": F((str, type(None))),
        "reveal_at": F(int, False),
        "daily": F(str, False),
        "game": F(str),
        "game_options": F(dict),
        "moves": F(dict),
        "record": F(str, False),  # the race record's id (/api/record/ID)
        "series": F(dict, False),  # a series' standings after this race (PROTOCOL.md, Series)
    },
    "rematch": {"options": F(dict), "series": F(dict, False)},
    "series_end": {"series": F(dict)},
    "solved": {"deal": F(str), "deal_moves": F((int, type(None))), "seats": F(dict)},
}


#: plain msgpack values: what a field of any type may hold, at any depth
PLAIN = (type(None), bool, int, float, str, bytes)


def plain(value: Any, depth: int = 0) -> bool:
    """Whether a decoded value holds only plain msgpack data: no extension type (msgpack's
    ExtType, Timestamp), which the server would otherwise keep or echo back as it came (a
    ping's `t`). Depth is bounded by the frame size; 32 levels is more than any message has."""
    if isinstance(value, PLAIN):
        return True
    if depth >= 32:
        return False
    if type(value) in (list, tuple):  # not isinstance: msgpack's ExtType is a namedtuple
        return all(plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in value.items())
    return False


def _check_fields(msg: dict[str, Any], fields: dict[str, F], what: str) -> None:
    for name, spec in fields.items():
        if name not in msg:
            if spec.required:
                raise ProtocolError("bad_message", f"{what}: missing field {name!r}", field=name)
            continue
        value = msg[name]
        if spec.kind is not object and not _is(value, spec.kind):
            raise ProtocolError(
                "bad_message", f"{what}: field {name!r} has the wrong type", field=name
            )
        if (isinstance(value, (dict, list)) or spec.kind is object) and not plain(value):
            raise ProtocolError(
                "bad_message",
                f"{what}: field {name!r} holds a value that is not plain msgpack data "
                "(nil, bool, number, string, bytes, array, map; no extension types)",
                field=name,
            )
        if spec.max_len is not None and isinstance(value, str) and len(value) > spec.max_len:
            raise ProtocolError(
                "bad_message", f"{what}: field {name!r} is longer than {spec.max_len}", field=name
            )


# --- encode / decode ---------------------------------------------------------------------


def encode(msg: dict[str, Any]) -> bytes:
    """One msgpack map; str stays str and bytes stay bin so every language reads it the same.

    The server also stores and publishes with this (room documents, events), so what it
    keeps in Redis and what it sends are one format; `decode_trusted` reads them back.
    """
    packed: bytes = msgpack.packb(msg, use_bin_type=True)
    return packed


def decode_trusted(data: bytes) -> Any:
    """Bytes this server wrote itself (Redis, pub/sub) -> data, without the wire checks."""
    return msgpack.unpackb(data, raw=False, strict_map_key=False)


def decode(frame: bytes | str, max_size: int = MAX_FRAME) -> dict[str, Any]:
    """Bytes off the wire -> a map with a string `type`, or a ProtocolError saying why not."""
    if isinstance(frame, str):
        raise ProtocolError(
            "bad_frame", "text frames are not accepted; send msgpack in a binary frame"
        )
    if len(frame) > max_size:
        raise ProtocolError(
            "frame_too_large", f"frame of {len(frame)} bytes is over the {max_size} byte limit"
        )
    try:
        msg = msgpack.unpackb(frame, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises many kinds for garbage; all mean the same here
        raise ProtocolError("bad_frame", f"not a msgpack message: {type(exc).__name__}") from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad_frame", "a message must be a msgpack map")
    if "type" not in msg:
        raise ProtocolError("bad_message", "missing field 'type'", field="type")
    if not isinstance(msg["type"], str):
        raise ProtocolError("bad_message", "field 'type' must be a string", field="type")
    return msg


def validate_client(msg: dict[str, Any]) -> dict[str, Any]:
    """Check a client message's shape; unknown keys pass (forward compatibility)."""
    kind = msg.get("type")
    if kind not in CLIENT:
        raise ProtocolError("unknown_type", f"unknown message type {kind!r}")
    if "id" in msg and not _is(msg["id"], int):
        raise ProtocolError("bad_message", f"{kind}: field 'id' has the wrong type", field="id")
    _check_fields(msg, CLIENT[kind], kind)
    return msg


def validate_server(msg: dict[str, Any]) -> dict[str, Any]:
    """Check a server message's shape (clients and tests use this on what they receive)."""
    kind = msg.get("type")
    if kind not in SERVER:
        raise ProtocolError("unknown_type", f"unknown server message type {kind!r}")
    _check_fields(msg, SERVER[kind], kind)
    if kind == "event":
        ek = msg["kind"]
        if ek not in EVENT_KINDS:
            raise ProtocolError("unknown_type", f"unknown event kind {ek!r}")
        _check_fields(msg, EVENT_KINDS[ek], f"event {ek}")
    if kind == "error" and msg["code"] not in ERROR_CODES:
        raise ProtocolError("bad_message", f"unknown error code {msg['code']!r}", field="code")
    if kind == "batch":
        for item in msg["messages"]:
            if not isinstance(item, dict) or item.get("type") not in BATCHED:
                raise ProtocolError(
                    "bad_message",
                    "batch: each message is an event, progress or board",
                    field="messages",
                )
            validate_server(item)
    return msg


#: the message types a `batch` may hold
BATCHED = frozenset({"event", "progress", "board"})
#: `{"type": "batch", "messages": ` as msgpack: a fixmap of 2, then the two keys' strings
_BATCH_HEAD = b"\x82\xa4type\xa5batch\xa8messages"


def batch_frame(frames: list[bytes]) -> bytes:
    """Encoded messages (each from `encode`) as one `batch` frame, without decoding them: the
    array's items are the encoded maps themselves, so a frame encoded once for a room is
    copied, never packed again. One message alone is sent as itself."""
    if len(frames) == 1:
        return frames[0]
    count = len(frames)
    if count <= 0x0F:
        header = bytes([0x90 | count])
    elif count <= 0xFFFF:
        header = b"\xdc" + count.to_bytes(2, "big")
    else:
        header = b"\xdd" + count.to_bytes(4, "big")
    return b"".join((_BATCH_HEAD, header, *frames))


def unbatch(msg: dict[str, Any]) -> list[dict[str, Any]]:
    """A decoded server message as the messages it stands for: a `batch`'s, in order, or
    itself (what every client does first with each frame)."""
    if msg.get("type") == "batch":
        items = msg.get("messages")
        return [x for x in items if isinstance(x, dict)] if isinstance(items, list) else []
    return [msg]


def parse_client(frame: bytes | str, max_size: int = MAX_FRAME) -> dict[str, Any]:
    return validate_client(decode(frame, max_size))


def ref_of(msg: dict[str, Any] | None) -> int | None:
    """The id a reply should echo, if the request carried a usable one."""
    if isinstance(msg, dict):
        rid = msg.get("id")
        if _is(rid, int):
            return rid
    return None


#: fields of client messages that hold a secret: a log line shows them as REDACTED
SECRET_FIELDS = frozenset({"token", "host_token", "player_key"})
REDACTED = "<redacted>"


#: characters of a room code a log shows (a public room's code is this long: shown whole)
CODE_SHOWN = 5


def _cut_code(code: Any) -> Any:
    """A room code as a log may show it (server/common/codes.py `shown`): a private room's code is
    its link's only key, so only its first characters."""
    if isinstance(code, str) and len(code) > CODE_SHOWN:
        return code[:CODE_SHOWN] + "…"
    return redacted(code)


def redacted(msg: Any) -> Any:
    """A client message fit for a log: seat and host tokens, the player key, and a text seed
    (the deal before the results), replaced by REDACTED, and a room code cut to its first
    characters, at any depth. Logs outlive races and reach people who must not take a seat
    (or enter a private room); the message itself is left unchanged."""
    if isinstance(msg, dict):
        return {
            k: REDACTED
            if k in SECRET_FIELDS or k == "seed"
            else _cut_code(v)
            if k == "room"
            else redacted(v)
            for k, v in msg.items()
        }
    if isinstance(msg, list):
        return [redacted(v) for v in msg]
    return msg


# --- builders for server messages --------------------------------------------------------


@overload
def with_ref(msg: dict[str, Any], ref: int | None) -> dict[str, Any]: ...
@overload
def with_ref(msg: bytes, ref: int | None) -> bytes: ...
def with_ref(msg: dict[str, Any] | bytes, ref: int | None) -> dict[str, Any] | bytes:
    """`msg` answering the request whose id was `ref`, if it had one.

    A map is changed in place. An encoded map (bytes from `encode`, without a `ref` key) gets
    `ref` as one more entry without being decoded: a reply encoded once for every asker (a
    lobby page, server/race/lobby.py) costs each asker only these few bytes."""
    if ref is None:
        return msg
    if isinstance(msg, dict):
        msg["ref"] = ref
        return msg
    head = msg[0] if msg else -1
    if 0x80 <= head <= 0x8F:  # fixmap: the count is in the first byte
        count, body = head & 0x0F, msg[1:]
    elif head == 0xDE:  # map 16
        count, body = int.from_bytes(msg[1:3], "big"), msg[3:]
    elif head == 0xDF:  # map 32
        count, body = int.from_bytes(msg[1:5], "big"), msg[5:]
    else:
        raise ValueError("with_ref: the bytes are not an encoded map")
    count += 1
    if count <= 0x0F:
        header = bytes([0x80 | count])
    elif count <= 0xFFFF:
        header = b"\xde" + count.to_bytes(2, "big")
    else:
        header = b"\xdf" + count.to_bytes(4, "big")
    return header + body + encode({"ref": ref})[1:]  # the one entry of a fixmap, unwrapped


def error(code: str, message: str, ref: int | None = None, **extra: Any) -> dict[str, Any]:
    check_code(code)
    return with_ref({"type": "error", "code": code, "message": message, **extra}, ref)


def ok(ref: int | None = None, **extra: Any) -> dict[str, Any]:
    return with_ref({"type": "ok", **extra}, ref)


def welcome(
    server: str, limits: dict[str, int | float], player: str | None = None
) -> dict[str, Any]:
    """The handshake reply: what a client needs to know before anything else, so that no
    client keeps its own copy of the protocol version or of the games; and, when the hello
    carried a player key, the public player id it stands for (null: anonymous)."""
    return {
        "type": "welcome",
        "version": VERSION,
        "server": server,
        "limits": limits,
        "games": games(),
        "player": player,
    }


def games() -> list[dict[str, Any]]:
    """Every game the server deals, in the engine's order: id, title and rule options.

    An option is `{"default": d, "choices": [...]}`; `choices` null means any count >= 0.
    """
    titles = engine.game_titles()
    out = []
    for game in GAME_NAMES:
        options = {
            name: {"default": default, "choices": None if choices is None else list(choices)}
            for name, (default, choices) in engine.game_class(game).OPTIONS.items()
        }
        out.append({"id": game, "title": titles[game], "options": options})
    return out


def pong(ref: int | None, t: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "pong"}
    if t is not None:
        msg["t"] = t
    return with_ref(msg, ref)


def event(n: int, kind: str, at: int, **fields: Any) -> dict[str, Any]:
    return {"type": "event", "n": n, "kind": kind, "at": at, **fields}


# --- an ack's change: what one move did to the mover's board -------------------------------

#: view fields a change never carries: fixed for the race, or (`moves`) the ack's `n`
_FIXED_VIEW_FIELDS = ("game", "options", "piles", "moves")


def view_change(
    before: dict[str, Any], after: dict[str, Any], names: Iterable[str] | None = None
) -> dict[str, Any]:
    """What turns engine view `before` into `after` (PROTOCOL.md, `ack`): `piles`, each pile
    that changed as `[keep, *items]` (keep the first `keep` items, then add `items`), and
    `fields`, the view's other fields that changed (omitted when none did). `names`, when
    given, holds every pile that may differ (the others are not compared)."""
    old = before["piles"]
    new = after["piles"]
    piles: dict[str, list[Any]] = {}
    for name in new if names is None else names:
        pile = new[name]
        was = old.get(name)
        if was is pile or was == pile:
            continue
        was = was or []
        keep, limit = 0, min(len(was), len(pile))
        while keep < limit and was[keep] == pile[keep]:
            keep += 1
        piles[name] = [keep, *pile[keep:]]
    change: dict[str, Any] = {"piles": piles}
    # one loop, not two comprehensions (each a call of its own in Python 3.11): the fields
    # that changed, then those new to the view, each in the view's order
    fields: dict[str, Any] = {}
    added: dict[str, Any] | None = None
    for k, v in after.items():
        if k in before:
            if k not in _FIXED_VIEW_FIELDS and before[k] != v:
                fields[k] = v
        elif k != "moves":
            if added is None:
                added = {}
            added[k] = v
    if added:
        fields.update(added)
    if fields:
        change["fields"] = fields
    return change


def apply_change(view: dict[str, Any], change: dict[str, Any], moves: int) -> dict[str, Any]:
    """The view after an ack's `change` (a new dict; unchanged piles are shared): `moves` is
    the ack's `n`."""
    piles = dict(view["piles"])
    for name, (keep, *items) in change["piles"].items():
        piles[name] = [*piles.get(name, [])[:keep], *items]
    return {**view, **change.get("fields", {}), "piles": piles, "moves": moves}


def ack_base(ack: dict[str, Any]) -> int:
    """The move count of the board an ack's `change` applies to: one before its `n` for a
    move, one after it for an undo."""
    n: int = ack["n"]
    return n + 1 if "undone" in ack else n - 1


def acked_view(view: dict[str, Any] | None, ack: dict[str, Any]) -> dict[str, Any] | None:
    """The mover's board after an ack: its `view`, or `change` applied to `view` (the board
    the client had); None when the client's board is not the one the change applies to (a
    move made from another connection of the seat): it asks for a snapshot then."""
    if ack.get("view") is not None:
        full: dict[str, Any] = ack["view"]
        return full
    change = ack.get("change")
    if change is None or view is None or view.get("moves") != ack_base(ack):
        return None
    return apply_change(view, change, ack["n"])


# --- room options ------------------------------------------------------------------------

DEFAULT_OPTIONS: dict[str, Any] = {
    "game": "klondike",
    "game_options": {},
    "max_players": 8,
    "time_limit": 0,
    "undo": "none",
    "spectators": True,
    "spectator_view": "boards",
    # boards reach spectators 3 minutes late unless the host says otherwise: as esports
    # broadcasts are (PROTOCOL.md, Fairness: what a racer can see)
    "spectator_delay": 180,
    "public": False,
    "countdown": 3,
    "deal": "any",
    "hints": False,
    # rated races move the players' ratings (docs/LEADERBOARDS.md); every seat needs a key
    "rated": False,
    # a rated room rates bots and humans apart unless it says so (docs/LEADERBOARDS.md)
    "rated_bots": False,
}

_OPTION_TYPES: dict[str, Any] = {
    "game": str,
    "game_options": dict,
    "max_players": int,
    "time_limit": int,
    "undo": str,
    "spectators": bool,
    "spectator_view": str,
    "spectator_delay": int,
    "public": bool,
    "seed": str,
    "countdown": int,
    "deal": str,
    "hints": bool,
    "rated": bool,
    "rated_bots": bool,
    # a series of races with standings (protocol/series.py); absent: one race at a time
    "series": dict,
}

_INT_RANGES = {
    "max_players": (1, 64),
    "time_limit": (0, 86400),
    "spectator_delay": (0, 3600),
    "countdown": (0, 60),
}
_CHOICES = {
    "game": GAME_NAMES,
    "undo": ("none", "safe"),
    "spectator_view": ("boards", "progress"),
    "deal": ("any", "winnable"),
}


def merge_options(current: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """Room options after applying `change`; unknown keys or bad values are `bad_options`.

    Game rule options are checked by the engine (the only judge of them) by the caller.
    `seed` may be set to a text, or to None/"" to go back to a fresh secret seed.
    """
    out = dict(current)
    for key, value in change.items():
        if key not in _OPTION_TYPES:
            raise ProtocolError("bad_options", f"unknown option {key!r}")
        if key in ("seed", "series") and (value is None or value == ""):
            out.pop(key, None)
            continue
        if not _is(value, _OPTION_TYPES[key]):
            raise ProtocolError("bad_options", f"option {key!r} has the wrong type")
        if key in _INT_RANGES:
            lo, hi = _INT_RANGES[key]
            if not lo <= value <= hi:
                raise ProtocolError("bad_options", f"option {key!r} must be between {lo} and {hi}")
        if key in _CHOICES and value not in _CHOICES[key]:
            raise ProtocolError(
                "bad_options", f"option {key!r} must be one of {', '.join(_CHOICES[key])}"
            )
        if key == "seed" and len(value) > 64:
            raise ProtocolError("bad_options", "a text seed is at most 64 characters")
        if key == "game_options":
            for k, v in value.items():
                if not isinstance(k, str) or not (_is(v, (int, str)) or isinstance(v, bool)):
                    raise ProtocolError("bad_options", "game_options maps names to ints or strings")
        if key == "series":
            try:
                value = check_series(value)
            except BadSeries as exc:
                raise ProtocolError("bad_options", str(exc), field="series") from None
        if key == "game" and value != out.get("game") and "game_options" not in change:
            out["game_options"] = {}
        out[key] = value
    if out.get("deal") == "winnable" and out.get("seed"):
        # a text seed fixes the deal; the solver cannot choose another one
        raise ProtocolError("bad_options", "a text seed and deal 'winnable' cannot go together")
    if out.get("rated") and out.get("hints"):
        # hints are the solver's help: a rated race is played unaided
        raise ProtocolError("bad_options", "a rated room cannot have hints")
    if out.get("series") and out.get("seed"):
        # every round of a series is a fresh deal; a text seed would deal the same one again
        raise ProtocolError("bad_options", "a series deals a fresh seed every round: no text seed")
    if out.get("rated") and out.get("seed"):
        # whoever chose a text seed knows the deal before the race
        raise ProtocolError("bad_options", "a rated room cannot have a text seed")
    return out
