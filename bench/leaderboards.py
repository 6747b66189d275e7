"""`solrace bench leaderboards`: a leaderboard page read with 100,000 entries (issue 13: p99
<= 5 ms), and the Redis memory a board of that size takes.

A board (server/league/boards.py) is filled with `--entries` players, each with a best-time row as
the server writes it (server/league/standings.py), in a Redis of its own (an embedded redis-server;
or `--redis-url`, under a unique key prefix deleted afterwards). Then, `--rounds` times, each
of three reads is timed `--reads` times, one request at a time (the latency a single reader
sees, not a throughput):

* `page`: `Boards.page` at a random start, `--count` entries (the Lua script: range, rows and
  total in one round trip), what `/api/leaderboard` does;
* `zrange`: a plain `ZRANGE start stop WITHSCORES` of as many entries (no rows): the cost of the
  range alone;
* `ping`: a bare `PING`: the round trip of this client and this machine.

For each: p50 and p99 latency, the client's CPU per read (`time.process_time`) and Redis's
(INFO commandstats `usec_per_call` over the phase's calls of its command), and the page's p99
as a ratio to PING's, measured in the same run. The load average is printed: the machine may
be shared. Memory: INFO memory's `used_memory` before and after the fill.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from solrace.server.league.boards import Boards
from solrace.server.league.standings import time_score
from solrace.server.store.redis_conn import Client, connect
from solrace.server.store.redis_process import RedisProcess

BOARD = "time:klondike:draw=1,moves=top,passes=0"
FILL_BATCH = 2_000


def player_id(i: int) -> str:
    """A 16-character id in the player ids' alphabet, as `server/league/players.py` makes them."""
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    out = []
    for _ in range(16):
        i, r = divmod(i, 32)
        out.append(alphabet[r])
    return "".join(reversed(out))


async def fill(boards: Boards, entries: int, rng: random.Random) -> None:
    """`entries` best-time entries, written as `Boards.submit` leaves them (zset + rows), in
    pipelines (a submit per entry would only make the fill slower)."""
    zset, rows = boards.keys(BOARD)
    for base in range(0, entries, FILL_BATCH):
        pipe = boards.redis.pipeline(transaction=False)
        scores: dict[Any, Any] = {}
        texts: dict[Any, Any] = {}
        for i in range(base, min(entries, base + FILL_BATCH)):
            pid = player_id(i)
            ms, moves = rng.randint(60_000, 900_000), rng.randint(90, 400)
            row = {"name": f"player {i}", "bot": False, "time": ms, "moves": moves}
            row["record"] = f"{rng.getrandbits(64):016x}"
            scores[pid] = time_score(ms, moves)
            texts[pid] = json.dumps(row, separators=(",", ":"))
        pipe.zadd(zset, scores)
        pipe.hset(rows, mapping=texts)
        await pipe.execute()


async def commandstats(redis: Client) -> dict[str, tuple[int, float]]:
    """INFO commandstats: command -> (calls, usec)."""
    info = await redis.info("commandstats")
    return {
        k.removeprefix("cmdstat_"): (int(v["calls"]), float(v["usec"]))
        for k, v in info.items()
        if k.startswith("cmdstat_")
    }


async def timed(
    redis: Client, reads: int, command: str, one: Callable[[int], Awaitable[Any]], top: int
) -> dict[str, float]:
    """`reads` calls of `one(start)` at random starts below `top`, one at a time."""
    rng = random.Random(reads)
    starts = [rng.randrange(top) for _ in range(reads)]
    before = await commandstats(redis)
    cpu0 = time.process_time()
    lat = []
    for start in starts:
        t0 = time.perf_counter()
        await one(start)
        lat.append(time.perf_counter() - t0)
    cpu = time.process_time() - cpu0
    after = await commandstats(redis)
    calls = after.get(command, (0, 0.0))[0] - before.get(command, (0, 0.0))[0]
    usec = after.get(command, (0, 0.0))[1] - before.get(command, (0, 0.0))[1]
    lat.sort()
    return {
        "p50": statistics.median(lat) * 1000,
        "p99": lat[int(len(lat) * 0.99) - 1] * 1000,
        "cpu_us": cpu / reads * 1e6,
        "redis_us": usec / calls if calls else float("nan"),
    }


async def run(url: str, prefix: str, entries: int, reads: int, count: int, rounds: int) -> None:
    redis = connect(url, max_connections=4, pool_timeout=5)
    boards = Boards(redis, prefix)
    try:
        mem0 = int((await redis.info("memory"))["used_memory"])
        t0 = time.perf_counter()
        await fill(boards, entries, random.Random(1))
        mem1 = int((await redis.info("memory"))["used_memory"])
        print(
            f"filled {await boards.size(BOARD):,} entries in {time.perf_counter() - t0:.1f} s; "
            f"Redis used_memory +{(mem1 - mem0) / 2**20:.1f} MiB "
            f"({(mem1 - mem0) / entries:.0f} B an entry, "
            f"{(mem1 - mem0) * 100_000 / entries / 2**20:.1f} MiB per 100,000)"
        )
        zset = boards.keys(BOARD)[0]
        await boards.page(BOARD, 0, count)  # the script loaded
        phases: dict[str, tuple[str, Callable[[int], Awaitable[Any]]]] = {
            "page": ("evalsha", lambda s: boards.page(BOARD, s, count)),
            "zrange": ("zrange", lambda s: redis.zrange(zset, s, s + count - 1, withscores=True)),
            "ping": ("ping", lambda s: redis.ping()),
        }
        top = max(1, entries - count)
        for r in range(1, rounds + 1):
            got = {
                name: await timed(redis, reads, cmd, one, top)
                for name, (cmd, one) in phases.items()
            }
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"round {r} ({reads:,} reads each, count {count}; load average {load}):")
            for name, f in got.items():
                print(
                    f"  {name:7s} p50 {f['p50']:.3f} ms  p99 {f['p99']:.3f} ms  "
                    f"client CPU {f['cpu_us']:.0f} us/read  Redis {f['redis_us']:.1f} us/call"
                )
            print(f"  page p99 / ping p99 = {got['page']['p99'] / got['ping']['p99']:.2f}")
    finally:
        keys = [k async for k in redis.scan_iter(match=f"{prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench leaderboards", description=__doc__)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--reads", type=int, default=10_000, help="reads of each kind a round")
    parser.add_argument("--count", type=int, default=50, help="entries a page")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--redis-url",
        help="a Redis to use (keys under a unique prefix, deleted after); default: one of its own",
    )
    args = parser.parse_args(argv)
    prefix = f"bench-{uuid.uuid4().hex[:8]}:"
    if args.redis_url:
        asyncio.run(run(args.redis_url, prefix, args.entries, args.reads, args.count, args.rounds))
        return 0
    with RedisProcess() as proc:
        asyncio.run(run(proc.url, prefix, args.entries, args.reads, args.count, args.rounds))
    return 0
