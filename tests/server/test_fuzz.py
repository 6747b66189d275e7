"""Fuzz targets: the frame decoder, message validation and the server's dispatch.

Every input gets a documented error or is a valid message, never an exception:

* `test_any_bytes_*`, `test_any_msgpack_*`: `protocol.messages.decode` + `validate_client` on
  random bytes, random msgpack values and messages shaped after the protocol's own table with
  random (often wrong) values; the room options check (`merge_options`) likewise.
* `test_the_server_answers_every_message_*`: such messages sent over a real WebSocket to a
  server in this loop (real Redis), in a connection that made a room, so they reach the room
  rules: each is answered (`validate_server`), no error is `internal`, nothing is logged as an
  error.

A short run is part of the suite. A longer one by hand sets the example count:

    SOLRACE_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest -n 0 tests/server/test_fuzz.py

(the dispatch target runs a tenth of that, each of its examples being a conversation).
"""

from __future__ import annotations

import logging
import os
import string
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from helpers.race import current_view
from helpers.servers import in_loop
from helpers.views import putt_move
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solrace.protocol import messages as m
from solrace.protocol.messages import ProtocolError
from solrace.server.net.conn import Limits
from solrace.server.solver.solving import Budgets

EXAMPLES = int(os.environ.get("SOLRACE_FUZZ_EXAMPLES", "150"))
CONVERSATIONS = max(5, EXAMPLES // 10)

# --- strategies ---------------------------------------------------------------------------

INT64 = st.integers(-(2**63), 2**64 - 1)
SMALL_INT = st.integers(-3, 70)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    INT64,
    SMALL_INT,
    st.floats(),
    st.text(max_size=40),
    st.binary(max_size=40),
)
ANY = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=20,
)
OPTION_VALUES = st.one_of(
    st.sampled_from([*m.GAME_NAMES, "none", "safe", "boards", "progress", "any", "winnable", ""]),
    SMALL_INT,
    st.booleans(),
    st.dictionaries(
        st.sampled_from(["redeals", "draw", "x"]), st.one_of(SMALL_INT, ANY), max_size=2
    ),
    ANY,
)
OPTIONS = st.dictionaries(
    st.one_of(st.sampled_from([*m.DEFAULT_OPTIONS, "seed"]), st.text(max_size=8)),
    OPTION_VALUES,
    max_size=5,
)
MOVES = st.one_of(
    st.sampled_from(["deal", "t1-f1", "t2-f1", "w-f1", "s-w", "t1-t2", "f1-t1", "undo"]),
    st.text(string.ascii_letters + string.digits + "-:", max_size=34),
)


def value_of(spec: m.F, known: dict[str, list[Any]], name: str) -> st.SearchStrategy[Any]:
    """A value for a field: mostly of its type (a known room code or token when there is
    one), sometimes anything at all."""
    right: st.SearchStrategy[Any]
    if known.get(name):
        right = st.one_of(st.sampled_from(known[name]), st.text(max_size=20))
    elif name == "move":
        right = MOVES
    elif name == "options":
        right = OPTIONS
    elif spec.kind is int:
        right = st.one_of(SMALL_INT, INT64)
    elif spec.kind is str:
        right = st.text(max_size=(spec.max_len or 20) + 4)
    elif spec.kind is bool:
        right = st.booleans()
    elif spec.kind is dict:
        right = st.dictionaries(st.text(max_size=8), ANY, max_size=4)
    else:
        right = ANY
    return st.one_of(right, right, right, ANY)


@st.composite
def client_messages(draw: Any, known: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """A message shaped after the protocol's table: a known type (or not), its fields present
    or missing, of the right type or not, plus stray keys."""
    known = known or {}
    unknown = draw(st.integers(0, 9)) == 0
    kind = draw(st.text(max_size=10) if unknown else st.sampled_from(sorted(m.CLIENT)))
    msg: dict[str, Any] = {"type": kind}
    for name, spec in m.CLIENT.get(kind, {}).items():
        if draw(st.integers(0, 9)) < (9 if spec.required else 6):
            msg[name] = draw(value_of(spec, known, name))
    msg.update(draw(st.dictionaries(st.text(max_size=6), ANY, max_size=2)))
    msg["type"] = kind
    return msg


def legal_move(client: Any, game: str) -> str | None:
    """A Putt Putt move that the player's last view allows (other games: None)."""
    if game != "puttputt":
        return None
    try:
        return putt_move(current_view(client))
    except (AssertionError, KeyError, IndexError, TypeError):
        return None  # no board yet


def packed(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def check_decoding(frame: bytes | str) -> None:
    """A valid client message, or a documented refusal that the server can send."""
    try:
        msg = m.parse_client(frame)
    except ProtocolError as exc:
        assert exc.code in m.ERROR_CODES
        reply = exc.to_message(None)
        assert m.validate_server(m.decode(m.encode(reply), 1 << 20)) == reply
        return
    assert msg["type"] in m.CLIENT
    for name, spec in m.CLIENT[msg["type"]].items():
        assert name in msg or not spec.required


# --- the decoder and validation ------------------------------------------------------------

FAST = settings(max_examples=EXAMPLES, deadline=None)


@FAST
@given(st.one_of(st.binary(max_size=600), st.text(max_size=50)))
def test_any_bytes_decode_or_get_a_documented_error(frame: bytes | str) -> None:
    check_decoding(frame)


@FAST
@given(ANY)
def test_any_msgpack_value_decodes_or_gets_a_documented_error(value: Any) -> None:
    check_decoding(packed(value))


@FAST
@given(client_messages(), st.binary(max_size=3))
def test_protocol_shaped_messages_and_their_corruptions(msg: dict[str, Any], tail: bytes) -> None:
    frame = packed(msg)
    check_decoding(frame)
    check_decoding(frame[: len(frame) // 2])  # cut short
    check_decoding(frame + tail)  # trailing bytes


@FAST
@given(OPTIONS)
def test_room_options_merge_or_get_bad_options(change: dict[str, Any]) -> None:
    try:
        out = m.merge_options(m.DEFAULT_OPTIONS, change)
    except ProtocolError as exc:
        assert exc.code == "bad_options"
        return
    assert set(out) <= {*m.DEFAULT_OPTIONS, "seed"}


# --- the server's dispatch --------------------------------------------------------------------


@pytest.fixture
async def server_url(redis_url: str, key_prefix: str) -> AsyncIterator[str]:
    limits = Limits(burst=1_000_000, rate=1_000_000.0, spectator_burst=1_000_000)
    async with in_loop(redis_url, key_prefix, limits) as (transport, url):
        assert transport.service.solver is not None
        # a winnable deal or a hint answers within a moment (`busy` when the budget runs out)
        transport.service.solver.budgets = Budgets(
            draw=dict.fromkeys(m.GAME_NAMES, 200),
            verdict=500,
            hint=500,
            verdicts={},
            hints={},
            max_draws=8,
            max_seconds=2,
        )
        yield url


#: errors after which the server closes the connection (PROTOCOL.md)
CLOSING = {"unsupported_version", "frame_too_large", "bad_frame"}


@settings(
    max_examples=CONVERSATIONS,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    data=st.data(),
    game=st.one_of(st.just("puttputt"), st.sampled_from(m.GAME_NAMES)),
    countdown=st.integers(0, 1),
)
async def test_the_server_answers_every_message_with_a_message_or_a_documented_error(
    server_url: str,
    wire: Any,
    caplog: pytest.LogCaptureFixture,
    data: Any,
    game: str,
    countdown: int,
) -> None:
    caplog.set_level(logging.ERROR, logger="solrace")
    c = await wire(server_url)
    made = await c.request(
        {"type": "create", "name": "fuzz", "options": {"game": game, "countdown": countdown}}
    )
    assert made["type"] == "joined", made
    known = {
        "room": [made["room"], made["room"].lower(), "ZZZZZ"],
        "token": [made["token"]],
        "host_token": [made["host_token"]],
    }
    if data.draw(st.booleans(), label="start first"):  # so that moves meet a race
        await c.request_once({"type": "start", "host_token": made["host_token"]})
    try:
        for _ in range(data.draw(st.integers(1, 8), label="count")):
            msg = data.draw(client_messages(known), label="message")
            if msg["type"] == "move" and data.draw(st.booleans(), label="legal"):
                msg = {"type": "move", "move": legal_move(c, game) or "deal"}
            reply = await c.request_once(msg)
            assert m.validate_server(reply) is reply
            assert reply.get("code") != "internal", (msg, reply)
            if reply.get("code") in CLOSING:
                c = await wire(server_url)
        assert c.failure is None
    finally:
        await c.close()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
