"""Issue 10 item 14: seat and host tokens (and the server secret) never reach the logs.

A server at --log-level DEBUG is made to fail on messages that carry real tokens: a request
that faults inside the server (logged with the message), and every kind of token-carrying
request while its Redis is away (logged with the Redis error). Its whole output must hold no
token, in plain text or as the hex a frame dump would show, and not the secret."""

from __future__ import annotations

import asyncio
import logging
import os
import signal

from helpers.race import current_view, play, start_race
from helpers.views import putt_move
from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m
from solrace.server.common.codes import PRIVATE_CODE_LENGTH, shown
from solrace.server.common.redact import SecretFilter
from solrace.server.store.redis_process import RedisProcess

SECRET = "log-test-secret-do-not-print"


def forms(secret: str) -> list[str]:
    """A secret as a log might show it: the text, its hex, and hex spaced as in a frame dump."""
    raw = secret.encode().hex()
    return [secret, raw, " ".join(raw[i : i + 2] for i in range(0, len(raw), 2))]


async def test_tokens_and_secret_are_not_in_the_server_output(wire, tmp_path) -> None:
    redis = RedisProcess(data_dir=str(tmp_path))
    redis.start()
    server = ServerProcess(
        redis.url, "logs:", extra_args=["--log-level", "DEBUG"], env={"SOLRACE_SECRET": SECRET}
    )
    try:
        server.start()
        ann = await wire(server.ws_url)
        created = await ann.request(
            {"type": "create", "name": "ann", "options": {"game": "puttputt", "seed": "day"}}
        )
        code, token, host = created["room"], created["token"], created["host_token"]
        bob = await wire(server.ws_url)
        token2 = (await bob.request({"type": "join", "room": code, "name": "bob"}))["token"]
        # faults inside the server, logged with the message that caused them
        for last_event in (-5, 2**63):
            await bob.request(
                {"type": "resume", "room": code, "token": token2, "last_event": last_event}
            )
        # every token-carrying request while Redis is away: busy or internal, each logged
        redis.stop()
        with_tokens = [
            {"type": "configure", "host_token": host, "options": {"time_limit": 60}},
            {"type": "start", "host_token": host},
            {"type": "kick", "host_token": host, "seat": 1},
            {"type": "rematch", "host_token": host},
            {"type": "resume", "room": code, "token": token, "last_event": 1},
            {"type": "resume", "room": code, "token": token2},
        ]
        codes = [(await ann.request(msg, timeout=20))["code"] for msg in with_tokens]
        assert set(codes) <= {"busy", "internal"}, codes
        await asyncio.sleep(0.5)
    finally:
        server.stop()
        redis.stop()
    out = server.log()
    assert "redis unavailable while handling" in out or "handling" in out, out[-2000:]
    for secret in (token, token2, host, SECRET):
        for form in forms(secret):
            assert form not in out, f"a secret is in the server's output as {form[:12]}..."


def test_redacted_blanks_tokens_and_text_seed_at_any_depth() -> None:
    msg = {
        "type": "configure",
        "host_token": "h" * 43,
        "options": {"seed": "2026-11-23", "time_limit": 60},
        "id": 4,
    }
    out = m.redacted(msg)
    assert out == {
        "type": "configure",
        "host_token": m.REDACTED,
        "options": {"seed": m.REDACTED, "time_limit": 60},
        "id": 4,
    }
    assert msg["host_token"] == "h" * 43  # the message itself is unchanged
    code = "ABCDEFGHJKLMNPQRSTUV"  # a private room's: cut to what `codes.shown` shows
    joined = m.redacted({"type": "join", "room": code, "name": "x"})
    assert joined == {"type": "join", "room": shown(code), "name": "x"}
    assert m.redacted({"type": "join", "room": "KX7QF"})["room"] == "KX7QF"  # public: whole


def test_secret_filter_blanks_token_shapes_and_known_secrets() -> None:
    scrub = SecretFilter()
    scrub.add(b"the-secret")
    token = "Zx9_-" * 8 + "abc"  # 43 url-safe characters, as token_urlsafe(32) makes
    record = logging.LogRecord(
        "solrace.server",
        logging.ERROR,
        __file__,
        1,
        "resume %s with %r",
        (token, "the-secret"),
        None,
    )
    assert scrub.filter(record)
    text = record.getMessage()
    assert token not in text and "the-secret" not in text and text.count(m.REDACTED) == 2
    # a commitment (64 hex characters) and a room code are not token-shaped
    hexed = "ab" * 32
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "room KX7QF %s", (hexed,), None)
    scrub.filter(record)
    assert record.getMessage() == f"room KX7QF {hexed}"
    # a private room's code, wherever it appears (a channel name, an error's text), is cut
    code = "ABCDEFGHJKLMNPQRSTUV"
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "lost %r", (f"p:room:{{{code}}}:ch",), None
    )
    scrub.filter(record)
    assert record.getMessage() == f"lost 'p:room:{{{shown(code)}}}:ch'"


async def test_a_private_room_code_is_never_logged_whole(wire, tmp_path) -> None:
    """Issue 20 item 7: a private room's 20-character code is its link's only key, and lines
    naming the room logged it whole. On a server at --log-level DEBUG: a private race is
    created, raced to its end and its record written; a second private race is under way when
    its Redis freezes, and a move (logged as unanswered, then as never settled) and requests
    naming the rooms are made. The whole output holds the codes' first characters (the log
    still follows each room), never a whole code."""
    redis = RedisProcess(data_dir=str(tmp_path))
    redis.start()
    # a short read timeout: a frozen Redis is "no answer" in 1 s (server/store/redis_conn.py)
    url = f"{redis.url}?socket_timeout=1"
    server = ServerProcess(url, "codes:", extra_args=["--log-level", "DEBUG"])
    # the whole output, not the last 64 KiB a child's tail keeps: DEBUG is verbose
    server.log_path = tmp_path / "server.log"
    try:
        server.start()
        clients, tokens, code, _ = await start_race(server.ws_url, wire, players=2)
        assert len(code) == PRIVATE_CODE_LENGTH  # a private room
        await play(clients[0], 3)
        for c in clients:
            assert (await c.request({"type": "resign"}))["type"] in ("ok", "ack")
        await clients[0].wait_event("results", timeout=20)
        spectator = await wire(server.ws_url)
        assert (await spectator.request({"type": "spectate", "room": code}))["type"] == "joined"
        racing, _, code2, _ = await start_race(server.ws_url, wire, players=2)
        await play(racing[0], 2)
        assert redis.proc is not None
        os.kill(redis.proc.pid, signal.SIGSTOP)  # frozen: commands get no answer
        view = current_view(racing[0])
        move = {"type": "move", "move": putt_move(view), "n": view["moves"] + 1}
        assert (await racing[0].request(move, timeout=30))["code"] in ("busy", "internal")
        for msg in (
            {"type": "spectate", "room": code},
            {"type": "join", "room": code2, "name": "eve"},
            {"type": "resume", "room": code, "token": tokens[0]},
        ):
            other = await wire(server.ws_url)
            assert (await other.request(msg, timeout=20))["code"] in ("busy", "internal")
    finally:
        if redis.proc is not None:
            os.kill(redis.proc.pid, signal.SIGCONT)
        server.stop()
        redis.stop()
    out = server.log_path.read_text(errors="replace")
    for room in (code, code2):
        assert shown(room) in out, out[-3000:]  # the room is in the log, cut...
        whole = [line for line in out.splitlines() if room.lower() in line.lower()]
        assert not whole, whole[:5]  # ...never whole
        for form in forms(room)[1:]:
            assert form not in out
    assert "a move's append got no answer" in out  # the line that named the room whole


async def test_the_signing_key_is_blanked_in_logs_in_every_form(caplog) -> None:
    """The record-signing key (server/league/signing.py) is a secret too: once loaded, a log line
    holding its seed as hex or base64 shows neither."""
    import base64

    from solrace.server.common.redact import SECRETS
    from solrace.server.league.signing import ENV, signing_key

    seed = bytes(range(100, 132))
    given = base64.urlsafe_b64encode(seed).decode().rstrip("=")  # a form an operator may use
    key = await signing_key(None, "", env={ENV: given})
    assert key.public_key() is not None
    logger = logging.getLogger("solrace.test.signing")
    handler = logging.Handler()
    handler.addFilter(SECRETS)
    seen: list[str] = []
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        for form in (given, seed.hex(), base64.b64encode(seed).decode()):
            logger.warning("the key is %s!", form)
    finally:
        logger.removeHandler(handler)
    assert len(seen) == 3 and all(m.REDACTED in line for line in seen), seen
    assert not any(seed.hex() in line or given in line for line in seen), seen
