"""Arena events over the wire (server/race/arena.py): marked bots paired by score as they
become free, every race scored, the end on a Redis deadline, and the final standings checked
against the race records."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from helpers.race import until
from helpers.servers import in_loop
from helpers.timing import scaled
from solrace.client.bot import run_arena_bot
from solrace.client.connection import Client, ErrorReply
from solrace.client.player_key import new_key
from solrace.protocol import messages as m
from solrace.server.race import arena as arena_service
from solrace.server.rules import arena as rules


async def keyed(url: str, key: str | None = None, **kw: Any) -> Client:
    c = Client(url, player_key=key or new_key(), **kw)
    await c.connect()
    return c


@pytest.mark.timing
async def test_twelve_bots_are_paired_without_idle_waits_and_the_standings_match_the_records(
    redis_url: str, key_prefix: str
) -> None:
    async with in_loop(redis_url, key_prefix) as (transport, url):
        arenas = transport.arena
        assert arenas is not None
        arenas.min_minutes = 0.1
        host = await keyed(url)
        created = (await host.arena_create("puttputt", 0.6, 3, title="Club night")).arena
        aid = created["id"]
        assert created["state"] == "running" and created["max_players"] == 3
        assert created["ends_at"] - created["starts_at"] == 36_000
        # the end is a deadline in Redis: whichever process is alive fires it
        assert await transport.store.deadline_at(f"arena|{aid}") == created["ends_at"]
        # a spectator of the leaderboard gets its pushes
        watcher = await keyed(url, record=True)
        await watcher.arena_watch(aid)

        waits: list[float] = []
        stop = asyncio.Event()
        bots = [
            asyncio.create_task(
                run_arena_bot(url, aid, f"bot{i}", 0.0, stop, seed=i, on_wait=waits.append)
            )
            for i in range(12)
        ]
        try:

            async def ended() -> bool:
                v = await arenas.view(aid)
                return bool(v["state"] == "ended" and v["running"] == 0)

            await until(ended, "the arena ends and its last races are scored", scaled(90))
        finally:
            stop.set()
            results = await asyncio.gather(*bots, return_exceptions=True)
        for r in results:
            assert not isinstance(r, BaseException), r
        final = await arenas.view(aid, rows=None, races=True)
        races = final["race_list"]
        assert len(races) >= 8, len(races)  # 12 bots in rooms of 3, two waves at least
        # nobody waited for a pairing longer than 5 s (the arena's window: a few seconds)
        assert waits and max(waits) < scaled(5.0), sorted(waits)[-5:]
        # every member raced; every room had 2 to 4 seats, all of them members
        assert len(final["standings"]) == 12 and all(s["races"] >= 1 for s in final["standings"])
        assert all(2 <= len(r["ranking"]) <= 3 for r in races)
        # the standings are what the race records say, replayed in the order they were scored
        rankings = []
        for race in races:
            record = await transport.records.get(race["record"])
            assert record is not None, race["record"]
            assert record["game"] == "puttputt"
            assert record["starts_at"] < final["ends_at"] + 5_000  # paired before the end
            rankings.append(record["players"])
            assert race["points"] == {
                pid: got
                for pid, (got, _st) in rules.score_race(
                    record["players"], rules.replay(rankings[:-1])
                ).items()
            }
        table = rules.replay(rankings)
        for row in final["standings"]:
            st = table[row["player"]]
            assert (row["score"], row["wins"], row["races"], row["streak"]) == (
                st.score,
                st.wins,
                st.races,
                st.streak,
            ), row
            assert row["bot"] is True
        ranks = [row["score"] for row in final["standings"]]
        assert ranks == sorted(ranks, reverse=True)

        # the spectator saw the leaderboard move, and its last push is the final one's
        def pushes() -> list[dict[str, Any]]:
            return [x["arena"] for x in watcher.received or [] if x["type"] == "arena"]

        def final_pushed() -> bool:
            last = pushes()[-1]
            return bool(last["races"] == len(races) and last["state"] == "ended")

        # the last race may be scored before the end: a push says so while the arena still
        # runs, and the end's own push comes at the next push interval
        await until(final_pushed, "the final standings pushed, the arena ended", scaled(10))
        assert len(pushes()) >= 3
        assert [r["score"] for r in pushes()[-1]["standings"]] == ranks
        # nothing is paired after the end: the arena's queue is gone from the matcher
        assert arena_service.ArenaService.queue(aid) not in await arenas.queues()
        await host.close()
        await watcher.close()


async def test_arena_requests_are_checked_and_bounded(redis_url: str, key_prefix: str) -> None:
    async with in_loop(redis_url, key_prefix) as (transport, url):
        arenas = transport.arena
        assert arenas is not None
        anon = Client(url)
        await anon.connect()
        with pytest.raises(ErrorReply) as err:
            await anon.arena_create("puttputt", 5, 4)
        assert err.value.code == "player_key_required"
        host = await keyed(url)
        for bad in ({"minutes": 0.5}, {"minutes": 1000}, {"max_players": 9}, {"game": "chess"}):
            msg = {"type": "arena_create", "game": "puttputt", "minutes": 5, "max_players": 4}
            with pytest.raises(ErrorReply) as err:
                await host.request({**msg, **bad})
            assert err.value.code == "bad_options", bad
        with pytest.raises(ErrorReply) as err:
            await host.arena_join("nosuchid", "ann")
        assert err.value.code == "no_arena"
        aid = (await host.arena_create("puttputt", 5, 2)).arena["id"]
        with pytest.raises(ErrorReply) as err:
            await anon.arena_join(aid, "anon")
        assert err.value.code == "player_key_required"
        # a member cap: a join over it is refused, and the hash never grows past it
        arenas_cap = arena_service.MEMBERS_CAP
        try:
            arena_service.MEMBERS_CAP = 2
            a, b, c = [await keyed(url) for _ in range(3)]
            await a.arena_join(aid, "a")
            await b.arena_join(aid, "b")
            with pytest.raises(ErrorReply) as err:
                await c.request({"type": "arena_join", "arena": aid, "name": "c"}, retry=False)
            assert err.value.code == "rate_limited"
            # a member who paused may come back (not a new member)
            left = (await a.arena_leave(aid)).arena
            assert [s["paused"] for s in left["standings"] if s["name"] == "a"] == [True]
            back = (await a.arena_join(aid, "a")).arena
            assert back["members"] == 2
        finally:
            arena_service.MEMBERS_CAP = arenas_cap
        # every key of the arena expires (KEEP_MS after its end)
        for k in arenas._keys(aid)[:2]:
            assert 0 < await transport.store.redis.pttl(k) <= 5 * 60_000 + arena_service.KEEP_MS
        assert "arena_join" in m.CLIENT and "arena_paired" in m.SERVER


async def test_an_arena_ends_on_time_after_its_process_is_gone(
    redis_url: str, key_prefix: str
) -> None:
    """The end is a deadline in Redis: a process that starts after the one that made the
    arena stopped ends it (no process of the first is needed)."""
    async with in_loop(redis_url, key_prefix) as (transport, url):
        assert transport.arena is not None
        transport.arena.min_minutes = 0.01
        host = await keyed(url)
        created = (await host.arena_create("puttputt", 0.02, 2)).arena
        await host.close()
    async with in_loop(redis_url, key_prefix) as (transport, url):
        arenas = transport.arena
        assert arenas is not None

        async def ended() -> bool:
            return (await arenas.view(created["id"]))["state"] == "ended"

        await until(ended, "the arena's end deadline fires in the new process", scaled(20))
        assert time.time() * 1000 >= created["ends_at"]
