"""protocol.messages: every message shape encodes, decodes and validates; bad input -> the right code."""

from __future__ import annotations

import re
from pathlib import Path

import msgpack
import pytest
import solrace.engine as engine
from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError

PROTOCOL_MD = Path(__file__).resolve().parents[2] / "protocol" / "PROTOCOL.md"

CLIENT_EXAMPLES = {
    "hello": {"version": 1, "client": "solrace-web/0.1", "player_key": "k" * 43},
    "create": {"name": "ann", "options": {"game": "puttputt"}, "play": True},
    "join": {"room": "KX7QF", "name": "bob"},
    "daily": {"game": "klondike", "name": "ann", "practice": False},
    "spectate": {"room": "KX7QF", "last_event": 4},
    "resume": {"room": "KX7QF", "token": "abc", "last_event": 12},
    "leave": {},
    "ready": {"ready": True},
    "configure": {"host_token": "h", "options": {"time_limit": 60}},
    "start": {"host_token": "h"},
    "kick": {"host_token": "h", "seat": 2},
    "rematch": {"host_token": "h"},
    "end_series": {"host_token": "h"},
    "move": {"move": "t1-f1", "n": 3},
    "undo": {"n": 3},
    "resign": {},
    "lobby": {},
    "ping": {"t": 123},
    "hint": {},
    "quick": {"game": "klondike", "name": "ann", "rated": True},
    "quick_cancel": {},
    "arena_create": {"game": "klondike", "minutes": 60, "max_players": 4, "title": "Club night"},
    "arena_join": {"arena": "k3v9qz2m8a", "name": "ann"},
    "arena_leave": {"arena": "k3v9qz2m8a"},
    "arena_watch": {"arena": "k3v9qz2m8a"},
    "admin": {"token": "t" * 20, "op": "kick", "room": "KX7QF", "seat": 1},
}


def test_every_client_type_has_an_example() -> None:
    assert set(CLIENT_EXAMPLES) == set(m.CLIENT)


@pytest.mark.parametrize("kind", sorted(CLIENT_EXAMPLES))
def test_client_roundtrip(kind: str) -> None:
    msg = {"type": kind, "id": 7, **CLIENT_EXAMPLES[kind]}
    assert m.parse_client(m.encode(msg)) == msg


@pytest.mark.parametrize(
    "kind", sorted(k for k, v in m.CLIENT.items() if any(f.required for f in v.values()))
)
def test_missing_required_field_is_bad_message(kind: str) -> None:
    fields = m.CLIENT[kind]
    required = next(name for name, f in fields.items() if f.required)
    msg = {"type": kind, **CLIENT_EXAMPLES[kind]}
    del msg[required]
    with pytest.raises(ProtocolError) as exc:
        m.parse_client(m.encode(msg))
    assert exc.value.code == "bad_message" and exc.value.extra["field"] == required


@pytest.mark.parametrize(
    "kind,field,value",
    [
        ("hello", "version", "1"),
        ("hello", "version", True),
        ("move", "move", 5),
        ("move", "n", "3"),
        ("ready", "ready", 1),
        ("kick", "seat", 1.5),
        ("create", "options", [1]),
        ("join", "name", None),
    ],
)
def test_wrong_type_is_bad_message(kind: str, field: str, value: object) -> None:
    msg = {"type": kind, **CLIENT_EXAMPLES[kind], field: value}
    with pytest.raises(ProtocolError) as exc:
        m.parse_client(m.encode(msg))
    assert exc.value.code == "bad_message" and exc.value.extra["field"] == field


def test_unknown_type_and_unknown_keys() -> None:
    with pytest.raises(ProtocolError) as exc:
        m.parse_client(m.encode({"type": "teleport"}))
    assert exc.value.code == "unknown_type"
    # unknown keys are ignored (forward compatibility)
    assert m.parse_client(m.encode({"type": "lobby", "future": 1}))["future"] == 1


@pytest.mark.parametrize(
    "frame,code",
    [
        (b"\xc1", "bad_frame"),  # never-used msgpack byte
        (b"\x93\x01\x02\x03", "bad_frame"),  # an array, not a map
        (msgpack.packb({1: 2}), "bad_frame"),  # non-string key
        (msgpack.packb({"kind": "x"}), "bad_message"),  # no type
        (msgpack.packb({"type": 3}), "bad_message"),
        ("text frame", "bad_frame"),
        (m.encode({"type": "ping", "t": "x" * 9000}), "frame_too_large"),
    ],
)
def test_bad_frames(frame: bytes | str, code: str) -> None:
    with pytest.raises(ProtocolError) as exc:
        m.parse_client(frame)
    assert exc.value.code == code


def test_a_type_that_is_not_a_string_is_named_so() -> None:
    """Issue 20 item 10: `{"type": 5}` was reported as a missing `type`."""
    with pytest.raises(ProtocolError) as exc:
        m.parse_client(msgpack.packb({"type": 5}))
    assert exc.value.code == "bad_message" and exc.value.extra["field"] == "type"
    assert exc.value.message == "field 'type' must be a string"
    with pytest.raises(ProtocolError) as exc:
        m.parse_client(msgpack.packb({"kind": "ping"}))
    assert exc.value.message == "missing field 'type'"


@pytest.mark.parametrize(
    "value",
    [
        msgpack.ExtType(5, b"\x01\x02"),
        [1, {"x": msgpack.ExtType(1, b"")}],
        {"deep": [[msgpack.ExtType(100, b"zz")]]},
        msgpack.Timestamp(1, 0),
    ],
)
def test_extension_types_are_refused_in_any_field(value: object) -> None:
    """Issue 20 item 10: a ping's `t` holding a msgpack ExtType was echoed back as it came;
    a value of any field must be plain msgpack data, at any depth."""
    for msg in (
        {"type": "ping", "t": value},
        {"type": "configure", "host_token": "h", "options": {"time_limit": value}},
    ):
        frame = msgpack.packb(msg, use_bin_type=True, datetime=False)
        with pytest.raises(ProtocolError) as exc:
            m.parse_client(frame)
        assert exc.value.code == "bad_message", msg
        assert "not plain msgpack data" in exc.value.message
        assert exc.value.extra["field"] in ("t", "options")
    # plain values still pass, at any depth
    ok = {"type": "ping", "t": [None, True, 1, 2.5, "s", b"b", {"k": [1]}]}
    assert m.parse_client(m.encode(ok))["t"] == ok["t"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_garbage_never_crashes(data: bytes) -> None:
    try:
        m.parse_client(data)
    except ProtocolError as exc:
        assert exc.code in m.ERROR_CODES


SERVER_EXAMPLES = [
    {"type": "arena", "ref": 20, "arena": {"id": "k3v9qz2m8a", "state": "running"}},
    {
        "type": "arena_paired",
        "arena": "k3v9qz2m8a",
        "room": "Q7K2",
        "seat": 0,
        "token": "q3Zw",
        "starts_at": 1795350895000,
        "players": ["ann", "bob"],
        "here": True,
    },
    m.welcome("solrace/0.1.0", {"max_frame": 8192, "burst": 60, "rate": 20}),
    m.error("illegal_move", "t1-f1: 5C is not next to 9H", ref=7),
    m.ok(3),
    m.pong(4, 99),
    {
        "type": "joined",
        "ref": 2,
        "room": "KX7QF",
        "role": "player",
        "seat": 0,
        "token": "t",
        "snapshot": {},
    },
    {"type": "snapshot", "snapshot": {"room": "KX7QF"}},
    {
        "type": "ack",
        "ref": 9,
        "n": 13,
        "move": "t1-f1",
        "revealed": [],
        "view": {},
        "status": "racing",
        "event": 42,
        "at": 5,
        "home": 5,
        "progress": 0.1,
        "time": 2000,
    },
    {"type": "ack", "n": 12, "undone": "t1-f1", "view": {}, "status": "racing", "event": 43},
    {"type": "board", "seat": 0, "moves": 13, "view": {}},
    {
        "type": "progress",
        "from": 41,
        "n": 47,
        "at": 5,
        "seats": [
            {"seat": 1, "moves": 13, "home": 5, "progress": 0.1, "status": "racing", "time": 9}
        ],
    },
    {
        "type": "batch",
        "messages": [
            {"type": "progress", "from": 41, "n": 42, "at": 5, "seats": []},
            m.event(
                43,
                "results",
                5,
                ranking=[],
                seed=1,
                salt="00",
                game="puttputt",
                game_options={},
                moves={"0": []},
            ),
            {"type": "board", "seat": 0, "moves": 13, "view": {}},
        ],
    },
    {"type": "lobby", "ref": 3, "rooms": []},
    {"type": "hint", "ref": 4, "verdict": "won", "move": "t3-f1", "n": 7},
    {"type": "hint", "ref": 5, "verdict": "lost", "n": 7},
    {"type": "admin", "ref": 6, "op": "rooms", "procs": [{"proc": "a1", "rooms": []}]},
    m.event(1, "player_joined", 5, seat=0, name="ann"),
    m.event(2, "player_left", 5, seat=0),
    m.event(3, "connected", 5, seat=0, connected=False),
    m.event(4, "ready", 5, seat=0, ready=True),
    m.event(5, "options", 5, options={}),
    m.event(6, "kicked", 5, seat=1),
    m.event(6, "watchers", 5, count=3),
    m.event(7, "countdown", 5, starts_at=8, commitment="ab", players=[0, 1]),
    m.event(8, "start", 5, starts_at=8, ends_at=None),
    m.event(9, "progress", 5, seat=0, moves=1, home=1, progress=0.03, status="racing", time=100),
    m.event(
        10,
        "results",
        5,
        ranking=[],
        seed=1,
        salt="00",
        game="puttputt",
        game_options={},
        moves={"0": []},
    ),
    m.event(11, "rematch", 5, options={}),
    m.event(11, "series_end", 5, series={"id": "ab", "ended": True, "standings": []}),
    m.event(12, "solved", 5, deal="won", deal_moves=51, seats={"1": "lost"}),
]


@pytest.mark.parametrize("msg", SERVER_EXAMPLES, ids=lambda x: x.get("kind", x["type"]))
def test_server_messages_validate(msg: dict) -> None:
    assert m.validate_server(m.decode(m.encode(msg), 1 << 20)) == msg


def test_every_event_kind_has_an_example() -> None:
    assert {x["kind"] for x in SERVER_EXAMPLES if x["type"] == "event"} == set(m.EVENT_KINDS)


def test_options_merge_and_refusals() -> None:
    opts = m.merge_options(
        m.DEFAULT_OPTIONS, {"game": "puttputt", "time_limit": 60, "seed": "2026-11-22"}
    )
    assert opts["game"] == "puttputt" and opts["time_limit"] == 60 and opts["seed"] == "2026-11-22"
    assert "seed" not in m.merge_options(opts, {"seed": None})
    for bad in (
        {"game": "chess"},
        {"max_players": 0},
        {"max_players": 65},
        {"undo": "all"},
        {"public": 1},
        {"nonsense": 1},
        {"spectator_view": "x"},
        {"time_limit": -1},
        {"deal": "easy"},
        {"hints": 1},
        {"deal": "winnable", "seed": "2026-11-22"},
    ):
        with pytest.raises(ProtocolError) as exc:
            m.merge_options(m.DEFAULT_OPTIONS, bad)
        assert exc.value.code == "bad_options"


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_protocol_md_error_table_is_the_code_table() -> None:
    """PROTOCOL.md lists the same codes, with the same meanings and order, as ERROR_CODES."""
    section = _section(PROTOCOL_MD.read_text(), "Error codes")
    rows = re.findall(r"^\| `([a-z_]+)` \| (.+?) \|$", section, re.M)
    assert rows, "no error code table in PROTOCOL.md"
    assert dict(rows) == m.ERROR_CODES
    assert [code for code, _ in rows] == list(m.ERROR_CODES)


def test_protocol_md_is_about_this_version() -> None:
    assert PROTOCOL_MD.read_text().splitlines()[0].endswith(f"version {m.VERSION}")
    assert m.VERSION in m.VERSIONS


def test_unknown_error_code_is_refused_even_under_python_O() -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        ProtocolError("no_such_code", "x")
    with pytest.raises(ValueError, match="unknown error code"):
        m.error("no_such_code", "x")
    assert ProtocolError("busy", "later").to_message(5) == {
        "type": "error",
        "code": "busy",
        "message": "later",
        "ref": 5,
    }


def test_games_come_from_the_engine() -> None:
    assert m.GAME_NAMES == engine.GAMES
    games = m.games()
    assert [g["id"] for g in games] == list(engine.GAMES)
    assert {g["id"]: g["title"] for g in games} == engine.game_titles()
    klondike = next(g for g in games if g["id"] == "klondike")
    for name, (default, choices) in engine.game_class("klondike").OPTIONS.items():
        spec = klondike["options"][name]
        assert spec["default"] == default
        assert spec["choices"] == (None if choices is None else list(choices))
    # every game's defaults are options the engine accepts
    for g in games:
        defaults = {name: spec["default"] for name, spec in g["options"].items()}
        assert engine.new_game(g["id"], seed=1, options=defaults).options == defaults


def test_welcome_carries_version_and_games() -> None:
    w = m.welcome("solrace/9", {"max_frame": m.MAX_FRAME})
    assert w["version"] == m.VERSION and w["games"] == m.games()
    assert m.validate_server(m.decode(m.encode(w), 1 << 20)) == w


def test_an_unknown_game_is_bad_options() -> None:
    with pytest.raises(ProtocolError) as exc:
        m.merge_options(m.DEFAULT_OPTIONS, {"game": "chess"})
    assert exc.value.code == "bad_options" and "klondike" in exc.value.message


def test_stored_data_round_trips() -> None:
    doc = {"code": "KX7QF", "seats": [None, {"seat": 1}], "salt": None, "n": 2**63}
    assert m.decode_trusted(m.encode(doc)) == doc


@pytest.mark.parametrize("size", [0, 3, 14, 15, 16, 65535, 65536])
def test_with_ref_on_an_encoded_map_equals_with_ref_on_the_map(size: int) -> None:
    """One with_ref for maps and for maps encoded once (a lobby page for every asker): the
    bytes gain `ref` whatever the map's size, across the fixmap, map 16 and map 32 headers
    (a fixmap of 15 entries must become a map 16)."""
    msg = {"type": "lobby", **{f"k{i}": i for i in range(size)}}
    frame = m.encode(msg)
    assert m.with_ref(frame, None) is frame
    assert msgpack.unpackb(m.with_ref(frame, 12345), raw=False) == m.with_ref(dict(msg), 12345)
    with pytest.raises(ValueError):
        m.with_ref(msgpack.packb([1, 2]), 1)  # a frame that is not a map


def test_a_batch_frame_is_its_encoded_messages_without_packing_them_again() -> None:
    """The hub encodes each message once for a room and joins the bytes (`batch_frame`): the
    frame decodes as a `batch` of exactly those messages; one message alone is itself."""
    msgs = [{"type": "board", "seat": i, "moves": i, "view": {"moves": i}} for i in range(20)]
    frames = [m.encode(x) for x in msgs]
    for count in (2, 15, 16, 20):
        got = m.validate_server(m.decode(m.batch_frame(frames[:count]), 1 << 20))
        assert got == {"type": "batch", "messages": msgs[:count]}
        assert m.unbatch(got) == msgs[:count]
    assert m.batch_frame(frames[:1]) == frames[0]
    assert m.unbatch(msgs[0]) == [msgs[0]]


@pytest.mark.parametrize(
    "item",
    [{"type": "ack", "n": 1, "view": {}, "status": "racing"}, {"type": "batch", "messages": []}],
)
def test_a_batch_holds_only_events_progress_and_boards(item: dict) -> None:
    with pytest.raises(ProtocolError):
        m.validate_server({"type": "batch", "messages": [item]})
