"""What a SIGKILLed process leaves behind, tidied by a live one: the rooms it served get the
lifetime their last connection leaving would have given them, and a finished race whose
solver verdicts it had not stored yet gets them where the room is loaded next."""

from __future__ import annotations

import os
import signal
from typing import Any

import redis.asyncio as aioredis
from helpers.race import seated_room, start_race, until
from helpers.servers import serving
from solrace.protocol.messages import decode_trusted, encode

LOBBY_TTL, FINISHED_TTL = 60, 120
ARGS = ["--heartbeat", "0.2", "--grace", "1"]
ARGS += ["--lobby-ttl", str(LOBBY_TTL), "--finished-ttl", str(FINISHED_TTL)]


async def lifetimes(r: aioredis.Redis, prefix: str, code: str) -> dict[str, int]:
    """PTTL of every key of the room (-1: no expiry)."""
    keys = [k async for k in r.scan_iter(match=f"{prefix}room:{{{code}}}:*")]
    return {k.decode(): await r.pttl(k) for k in keys}


def within(ttls: dict[str, int], limit_s: int) -> bool:
    return bool(ttls) and all(0 < t <= limit_s * 1000 for t in ttls.values())


async def test_a_dead_processs_idle_rooms_get_the_idle_lifetime_and_a_room_rejoined_lives_on(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    r = aioredis.from_url(redis_url)
    async with serving(redis_url, key_prefix, count=2, extra_args=ARGS) as (sa, sb):
        _, _, lobby, _ = await seated_room(sa.ws_url, wire)
        _, back_tokens, rejoined, _ = await seated_room(sa.ws_url, wire)
        (solo,), _, finished, _ = await start_race(sa.ws_url, wire, 1)
        assert (await solo.request({"type": "resign"}))["type"] == "ok"
        await solo.wait_event("results")
        for code in (lobby, rejoined):  # a day while someone is connected
            assert not within(await lifetimes(r, key_prefix, code), LOBBY_TTL)
        sa.kill()
        # the janitor tidies the dead process's rooms one after another: wait for each
        for code, limit, what in (
            (lobby, LOBBY_TTL, "the lobby's lifetime"),
            (rejoined, LOBBY_TTL, "the second lobby's"),
            (finished, FINISHED_TTL, "the finished room's"),
        ):
            try:
                await until(lambda c=code, s=limit: _shortened(r, key_prefix, c, s), what, 30)
            except AssertionError as exc:  # what the survivor did instead (seen once, loaded)
                ttls = await lifetimes(r, key_prefix, code)
                raise AssertionError(
                    f"{exc}; PTTLs now {ttls}; survivor's log:\n{sb.log()}"
                ) from None
        # a player comes back to the other process: the room works and lives a day again
        again = await wire(sb.ws_url)
        joined = await again.request({"type": "resume", "room": rejoined, "token": back_tokens[0]})
        assert joined["type"] == "joined", joined
        assert (await again.request({"type": "ready", "ready": True}))["type"] == "ok"
        await until(lambda: _longer(r, key_prefix, rejoined, LOBBY_TTL), "a day again", 10)
    await r.aclose()


async def _shortened(r: aioredis.Redis, prefix: str, code: str, limit_s: int) -> bool:
    return within(await lifetimes(r, prefix, code), limit_s)


async def _longer(r: aioredis.Redis, prefix: str, code: str, limit_s: int) -> bool:
    return await r.pttl(f"{prefix}room:{{{code}}}:meta") > limit_s * 1000


async def test_verdicts_a_dead_process_owed_are_computed_where_its_room_is_loaded(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """The results are stored, then the solver's verdicts; a crash in between loses no
    `solved` event: the room's next loader (the janitor counting the process out, or the
    player resuming) computes and stores it. The crash is made deterministic by letting the
    verdicts land, killing the process, and taking them out of the stored results again
    before a live process loads the room: exactly what a crash between the two writes leaves
    (a kill timed against the solver pool's start only usually came first)."""
    r = aioredis.from_url(redis_url)
    async with serving(redis_url, key_prefix, count=2, extra_args=ARGS) as (sa, sb):
        # played to its time limit (a race given up with no move played gets no verdicts)
        (solo,), tokens, code, _ = await start_race(sa.ws_url, wire, 1, time_limit=1)
        await solo.wait_event("results")
        first = await solo.wait_event("solved", timeout=60)
        sa.kill()
        meta = f"{key_prefix}room:{{{code}}}:meta"
        doc = await stored_doc(r, key_prefix, code)
        del doc["results"]["solved"]  # the state a crash before the verdicts' write leaves
        await r.hset(meta, "doc", encode(doc))
        again = await wire(sb.ws_url)
        joined = await again.request({"type": "resume", "room": code, "token": tokens[0]})
        assert joined["type"] == "joined", joined
        solved = joined["snapshot"]["results"].get("solved")
        if solved is None:
            event = await again.wait_event("solved", timeout=60)
            solved = {k: event[k] for k in ("deal", "deal_moves", "seats")}
        assert set(solved["seats"]) == {"0"}  # the timed-out seat's final position judged
        # the same verdicts as the dead process found (the solver is deterministic), stored
        assert solved == {k: first[k] for k in ("deal", "deal_moves", "seats")}
        assert (await stored_doc(r, key_prefix, code))["results"]["solved"] == solved
    await r.aclose()


async def stored_doc(r: aioredis.Redis, prefix: str, code: str) -> dict[str, Any]:
    raw = await r.hget(f"{prefix}room:{{{code}}}:meta", "doc")
    assert raw is not None
    return decode_trusted(raw)


async def test_a_paused_process_back_gives_its_lobby_a_day_again(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """Paused (SIGSTOP) past the liveness window, a process is counted out and its lobby,
    with nobody connected elsewhere, gets the idle lifetime; back, it counts its open
    connections in and the room lives a day again (it would expire under its players)."""
    r = aioredis.from_url(redis_url)
    async with serving(redis_url, key_prefix, count=2, extra_args=ARGS) as (sa, _sb):
        _, _, code, _ = await seated_room(sa.ws_url, wire)
        assert sa.proc is not None
        os.kill(sa.proc.pid, signal.SIGSTOP)
        try:
            await until(lambda: _shortened(r, key_prefix, code, LOBBY_TTL), "counted out", 30)
        finally:
            os.kill(sa.proc.pid, signal.SIGCONT)
        await until(lambda: _longer(r, key_prefix, code, LOBBY_TTL), "a day again", 30)
    await r.aclose()
