"""Issue 10 item 14: seat and host tokens (and the server secret) never reach the logs.

A server at --log-level DEBUG is made to fail on messages that carry real tokens: a request
that faults inside the server (logged with the message), and every kind of token-carrying
request while its Redis is away (logged with the Redis error). Its whole output must hold no
token, in plain text or as the hex a frame dump would show, and not the secret."""

from __future__ import annotations

import asyncio
import logging

from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m
from solrace.server.redact import SecretFilter
from solrace.server.redis_process import RedisProcess

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
