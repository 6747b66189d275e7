"""Resuming players and spectators, two server processes on one Redis, and a SIGKILL mid-race."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from helpers.race import current_view, play, reached, seated_room, sent_to, start_race, until
from helpers.servers import serving
from helpers.timing import scaled
from helpers.views import ELSEWHERE, putt_move
from solrace.protocol.messages import decode_trusted as decode


def progress(msg: dict, seat: int, moves: int) -> bool:
    """Whether msg shows `seat` at `moves` moves or more (an event, or a coalesced frame)."""
    return reached(msg, seat, moves)


async def test_player_resumes_same_seat_same_game_and_missed_events(shared_server, wire) -> None:
    (a, b), (ta, _tb), code, _ = await start_race(shared_server.ws_url, wire)
    await play(a, 3)
    view_before = current_view(a)
    seen = a.last_event
    await a.close()
    await play(b, 4)  # events a misses
    a2 = await wire(shared_server.ws_url)
    j = await a2.request({"type": "resume", "room": code, "token": ta, "last_event": seen})
    assert j["seat"] == 0 and j["role"] == "player" and "snapshot" not in j
    assert j["you"]["view"] == view_before  # same game, same position
    missed = []
    while not missed or not (
        missed[-1]["kind"] == "progress" and missed[-1]["seat"] == 1 and missed[-1]["moves"] == 4
    ):
        missed.append(await a2.next_push())
    assert missed[0]["n"] == seen + 1 and all(m["type"] == "event" for m in missed)
    assert any(m["kind"] == "connected" and m["seat"] == 0 and not m["connected"] for m in missed)
    ns = [m["n"] for m in missed]
    assert ns == sorted(ns) and len(set(ns)) == len(ns)
    # and it plays on from there
    acks = await play(a2, 1)
    assert acks[0]["n"] == view_before["moves"] + 1
    # a resume with no last_event gets a full snapshot with the own board
    a3 = await wire(shared_server.ws_url)
    j3 = await a3.request({"type": "resume", "room": code, "token": ta})
    assert j3["snapshot"]["you"]["view"] == acks[0]["view"]
    bad = await a3.request({"type": "resume", "room": code, "token": "not-a-token"})
    assert bad["code"] == "bad_token"


async def test_spectator_catches_up_or_resyncs(redis_url, key_prefix, wire) -> None:
    async with serving(redis_url, key_prefix, extra_args=["--max-events", "6"]) as (srv,):
        (a, b), _, code, _ = await start_race(srv.ws_url, wire)
        eve = await wire(srv.ws_url, source=ELSEWHERE)
        j = await eve.request({"type": "spectate", "room": code})
        assert j["snapshot"]["boards"] is not None
        seen = j["snapshot"]["event"]
        await eve.close()
        await play(a, 2)  # 2 events: still kept
        eve2 = await wire(srv.ws_url, source=ELSEWHERE)
        j2 = await eve2.request({"type": "spectate", "room": code, "last_event": seen})
        assert "snapshot" not in j2
        pushes = [await eve2.wait_for(lambda x: x["type"] == "event") for _ in range(2)]
        assert [p["n"] for p in pushes] == [seen + 1, seen + 2]
        boards = [x for x in eve2.received if x["type"] == "board"]
        assert {b["seat"] for b in boards} == {0, 1} and max(b["moves"] for b in boards) == 2
        seen = pushes[-1]["n"]
        await eve2.close()
        await play(b, 10)  # more than the kept history
        eve3 = await wire(srv.ws_url, source=ELSEWHERE)
        j3 = await eve3.request({"type": "spectate", "room": code, "last_event": seen})
        snap = j3["snapshot"]  # gap too old: a full resync
        assert snap["event"] > seen + 6
        assert snap["players"][1]["moves"] == 10 or snap["players"][1]["status"] != "racing"
        assert snap["boards"]["1"]["moves"] == snap["players"][1]["moves"]


async def test_two_processes_share_a_room(redis_url, key_prefix, wire) -> None:
    # Every wait here reads the clients' whole history (`sent_to`), never takes pushes off a queue:
    # a spectator's board and the progress event of the same move take separate paths on the
    # spectator's process (an event waits while the connection catches up, a board does not),
    # so under load the board can come first, and a queue wait for the event would drop it.
    async with serving(redis_url, key_prefix, count=2) as (sa, sb):
        host = await wire(sa.ws_url)
        created = await host.request(
            {
                "type": "create",
                "name": "on-a",
                "options": {"game": "puttputt", "countdown": 0, "spectator_delay": 0},
            }
        )
        code = created["room"]
        pb = await wire(sb.ws_url)
        jb = await pb.request({"type": "join", "room": code, "name": "on-b"})
        eve = await wire(sb.ws_url, source=ELSEWHERE)
        await eve.request({"type": "spectate", "room": code})
        await sent_to(host, lambda x: x.get("kind") == "player_joined" and x["seat"] == 1)
        await host.request({"type": "start", "host_token": created["host_token"]})
        for c in (host, pb):
            await sent_to(c, lambda x: x["type"] == "snapshot")
        acks = await play(host, 3)
        await sent_to(eve, lambda x: progress(x, seat=0, moves=3))
        board = await sent_to(eve, lambda x: x["type"] == "board" and x["moves"] == 3)
        assert board["seat"] == 0 and board["view"] == acks[-1]["view"]
        await play(pb, 2)
        await sent_to(host, lambda x: progress(x, seat=1, moves=2))

        # the same seat on two connections (one per process) sends move 3 at once: stored once
        pb2 = await wire(sa.ws_url)
        await pb2.request({"type": "resume", "room": code, "token": jb["token"]})
        view = current_view(pb)
        mv = putt_move(view)
        r1, r2 = await asyncio.gather(
            pb.request({"type": "move", "move": mv, "n": 3}),
            pb2.request({"type": "move", "move": mv, "n": 3}),
        )
        kinds = sorted([r1["type"], r2["type"]])
        assert kinds == ["ack", "error"], (r1, r2)
        err = r1 if r1["type"] == "error" else r2
        assert err["code"] in ("out_of_sync", "illegal_move")
        # without n both may be judged; still, each stored move is acked exactly once
        view = (r1 if r1["type"] == "ack" else r2)["view"]
        mv = putt_move(view)
        r1, r2 = await asyncio.gather(
            pb.request({"type": "move", "move": mv}), pb2.request({"type": "move", "move": mv})
        )
        acked = [r for r in (r1, r2) if r["type"] == "ack"]
        late = await wire(sb.ws_url, source=ELSEWHERE)
        snap = (await late.request({"type": "spectate", "room": code}))["snapshot"]
        assert snap["players"][1]["moves"] == 3 + len(acked)
        assert sorted(a["n"] for a in acked) == list(range(4, 4 + len(acked)))


async def test_sigkill_mid_race_keeps_every_acked_move(race_server, wire) -> None:
    (a, b), (ta, tb), code, _ = await start_race(race_server.ws_url, wire)
    acks_a = await play(a, 5)
    acks_b = await play(b, 3)
    race_server.kill()
    for c in (a, b):
        code_reason = await asyncio.wait_for(c.closed, scaled(5))
        assert code_reason[0] != 1000
    race_server.start()
    a2 = await wire(race_server.ws_url)
    ja = await a2.request({"type": "resume", "room": code, "token": ta})
    b2 = await wire(race_server.ws_url)
    jb = await b2.request({"type": "resume", "room": code, "token": tb})
    assert ja["snapshot"]["you"]["view"] == acks_a[-1]["view"]
    assert jb["snapshot"]["you"]["view"] == acks_b[-1]["view"]
    assert ja["snapshot"]["players"][1]["moves"] == len(acks_b)
    more = await play(a2, 2)  # the race goes on
    assert more[0]["n"] == len(acks_a) + 1


async def test_a_dead_process_is_counted_out_and_its_racers_resign_after_grace(
    redis_url, key_prefix, wire
) -> None:
    """Presence and grace periods live in Redis: a SIGKILLed process's players are marked
    disconnected by a surviving process, which also resigns them when the grace period ends."""
    args = ["--heartbeat", "0.2", "--grace", "1"]
    async with serving(redis_url, key_prefix, count=2, extra_args=args) as (sa, sb):
        (_a, _b), _, code, _ = await start_race(sa.ws_url, wire)
        eve = await wire(sb.ws_url, source=ELSEWHERE)
        j = await eve.request({"type": "spectate", "room": code})
        assert [p["connected"] for p in j["snapshot"]["players"]] == [True, True]
        sa.kill()
        gone = set()
        while gone != {0, 1}:
            ev = await eve.wait_event("connected", connected=False, timeout=10)
            gone.add(ev["seat"])
        results = await eve.wait_event("results", timeout=10)
        assert {r["status"] for r in results["ranking"]} == {"resigned"}
        await eve.close()


async def test_sigterm_closes_with_1001(race_server, wire) -> None:
    c = await wire(race_server.ws_url)
    await c.request({"type": "create", "name": "x"})
    # a clean exit (0), not the SIGKILL that follows a shutdown slower than the bound
    assert await asyncio.to_thread(race_server.stop, scaled(10)) == 0
    code, _ = await asyncio.wait_for(c.closed, scaled(5))
    assert code == 1001


@pytest.mark.timing
async def test_a_dead_processs_race_ends_by_its_clock_though_its_deadline_was_lost(
    redis_url, key_prefix, wire
) -> None:
    """Issue 22, the longest race as a backstop: a race nobody finishes on a process that is
    SIGKILLed, with its clock's deadline lost from Redis and grace periods far off, still
    ends at `ends_at` (here the server's longest race, 3 s): the process that counts the dead
    one out sets the clock's deadline again. Without that the race stayed racing until the
    grace periods (600 s) ended."""
    args = ["--heartbeat", "0.2", "--grace", "600", "--max-race", "3"]
    async with serving(redis_url, key_prefix, count=2, extra_args=args) as (sa, _sb):
        (a,), _, code, host_token = await seated_room(sa.ws_url, wire, players=1)
        assert (await a.request({"type": "start", "host_token": host_token}))["type"] == "ok"
        await a.wait_event("start")
        direct = aioredis.Redis.from_url(redis_url)
        try:
            tick = f"tick|{code}"
            buckets = [f"{key_prefix}deadlines:{{dl{i}}}" for i in range(8)]

            async def clock_pending() -> bool:
                return any([await direct.zscore(b, tick) is not None for b in buckets])

            await until(clock_pending, "the race's clock deadline in Redis")
            sa.kill()
            for b in buckets:  # the deadline is lost, with the process that armed its timer
                await direct.zrem(b, tick)

            async def finished() -> bool:
                raw = await direct.hget(f"{key_prefix}room:{{{code}}}:meta", "doc")
                return decode(raw)["state"] == "finished"

            await until(finished, "the race over by its clock", timeout=30)
            doc = decode(await direct.hget(f"{key_prefix}room:{{{code}}}:meta", "doc"))
            assert [s["status"] for s in doc["seats"] if s] == ["timeout"]
        finally:
            await direct.aclose()
