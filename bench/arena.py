"""`solrace bench arena`: an arena of `--bots` marked bots (1,000 by default) for `--minutes`
(5 by default) against a real server, beside a plain race of the same bots (issue 25).

* **arena**: a host creates the arena (`--game`, rooms of up to `--size`), every bot joins
  (`solrace bot --arena`: a connection each, a player key each) and races at `--pace` seconds
  a move; the server pairs them in waves as they become free. Figures: the **pairing wait**
  (each bot's time from its join, or from its race's results, to its `arena_paired`; p50,
  p99, max; the first waits, from the join, apart), races and moves, and the server's **CPU
  per move** over the arena's whole window (pairing, scoring, leaderboard pushes, room
  creation included), read from /proc.
* **plain**: the same number of bots in plain rooms of `--size` (a bot creates each room and
  starts it when all are ready: `solrace bot --create`), one race each at the same pace: the
  server's CPU per move of a plain race, the baseline.

The server runs in a session of its own (bench/load_procs.py `RaceServer`, 127.0.0.1 exempt
from the per-address caps: every bot connects from it); the load average is printed with each
figure: the machine may be shared, and the bots (this process) take CPU beside the server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from solrace.bench.load_procs import RaceServer, cpu_seconds
from solrace.client.bot import BotResult, run_arena_bot, run_bot
from solrace.client.connection import Client
from solrace.client.player_key import new_key
from solrace.server.store.redis_process import RedisProcess

#: bots starting per second (the ramp is measured: it is the first wave's wait)
RAMP = 50


def quantile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def _cpu(server: RaceServer) -> float:
    return sum(cpu_seconds(p) for p in server.pids().values())


def _moves(server: RaceServer) -> float:
    """The moves the server has acknowledged so far (its /metrics): every bot's, a bot that
    failed later included."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=10) as res:
        for line in res.read().decode().splitlines():
            if line.startswith("solrace_moves_acked_total "):
                return float(line.split()[1])
    return float("nan")


async def arena(url: str, server: RaceServer, args: argparse.Namespace) -> None:
    host = Client(url, player_key=new_key(), client_name="solrace-bench")
    await host.connect()
    view = (await host.arena_create(args.game, args.minutes, args.size, title="bench arena")).arena
    aid = view["id"]
    first: list[float] = []
    later: list[float] = []
    stop = asyncio.Event()

    async def bot(i: int) -> BotResult:
        count = 0

        def waited(s: float) -> None:
            nonlocal count
            (first if count == 0 else later).append(s)
            count += 1

        await asyncio.sleep(i / RAMP)  # the crowd joins RAMP a second
        return await run_arena_bot(
            url,
            aid,
            f"b{i}",
            args.pace,
            stop,
            seed=i,
            on_wait=waited,
            player_key=new_key(),
            race_moves=args.race_moves,
        )

    cpu0, t0, load0, moves0 = _cpu(server), time.monotonic(), _load(), _moves(server)
    tasks = [asyncio.create_task(bot(i)) for i in range(args.bots)]
    await host.arena_watch(aid)
    while True:
        await asyncio.sleep(2.0)
        view = (await host.arena_watch(aid)).arena
        if view["state"] == "ended" and view["running"] == 0:
            break
        if all(t.done() for t in tasks):
            break
    cpu, wall = _cpu(server) - cpu0, time.monotonic() - t0
    load1 = _load()
    acked = _moves(server) - moves0
    stop.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    await host.close()
    failed = [r for r in results if isinstance(r, BaseException)]
    moves = acked
    races = view["races"]
    print(
        f"arena: {args.bots} bots, {args.game}, rooms of up to {args.size}, {args.minutes:g} min "
        f"(window {wall:.0f} s to the last race scored), pace {args.pace} s/move"
        + (f", each race resigned after {args.race_moves} moves" if args.race_moves else "")
    )
    print(
        f"  races scored {races}, members {view['members']}, moves acked {moves:.0f}, "
        f"bot failures {len(failed)}" + (f" (first: {failed[0]!r})" if failed else "")
    )
    print(
        f"  pairing wait after a race: p50 {quantile(later, 0.5):.2f} s, "
        f"p99 {quantile(later, 0.99):.2f} s, max {max(later, default=float('nan')):.2f} s "
        f"({len(later)} waits)"
    )
    print(
        f"  pairing wait from the join: p50 {quantile(first, 0.5):.2f} s, "
        f"p99 {quantile(first, 0.99):.2f} s ({len(first)} waits)"
    )
    per_move = cpu / moves * 1000 if moves else float("nan")
    print(
        f"  server CPU {cpu:.1f} s over {wall:.0f} s ({cpu / wall:.2f} cores): "
        f"{per_move:.3f} ms per move; load average {load0} -> {load1}"
    )


async def plain(url: str, server: RaceServer, args: argparse.Namespace) -> None:
    """The baseline: the same bots in plain rooms of `--size`, one race each."""
    groups = max(1, args.bots // args.size)
    stop = asyncio.Event()
    cpu0, t0, load0, moves0 = _cpu(server), time.monotonic(), _load(), _moves(server)

    async def group(g: int) -> list[BotResult | BaseException]:
        made: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        creator = asyncio.create_task(
            run_bot(
                url,
                None,
                f"h{g}",
                args.pace,
                stop,
                races=1,
                create_options={"game": args.game, "countdown": 2, "max_players": args.size},
                start_when=args.size,
                on_joined=lambda j: made.set_result(j.room),
                seed=g,
            )
        )
        room = await asyncio.wait_for(asyncio.shield(made), 120)
        joiners = [
            run_bot(url, room, f"p{g}-{i}", args.pace, stop, races=1, seed=g * 10 + i)
            for i in range(1, args.size)
        ]
        out: list[BotResult | BaseException] = list(
            await asyncio.gather(creator, *joiners, return_exceptions=True)
        )
        return out

    async def gated(g: int) -> list[BotResult | BaseException]:
        await asyncio.sleep(g * args.size / RAMP)
        return await group(g)

    results = [r for rs in await asyncio.gather(*(gated(g) for g in range(groups))) for r in rs]
    cpu, wall = _cpu(server) - cpu0, time.monotonic() - t0
    done = [r for r in results if isinstance(r, BotResult)]
    moves = _moves(server) - moves0
    per_move = cpu / moves * 1000 if moves else float("nan")
    print(
        f"plain: {groups} rooms of {args.size} bots, one race each: moves acked {moves:.0f}, "
        f"failures {len(results) - len(done)}"
    )
    print(
        f"  server CPU {cpu:.1f} s over {wall:.0f} s: {per_move:.3f} ms per move; "
        f"load average {load0} -> {_load()}"
    )


async def run(args: argparse.Namespace, server: RaceServer) -> None:
    url = server.ws_url
    print(f"server: solrace serve {' '.join(server.extra)}; load average {_load()}")
    if "plain" in args.scenario:
        await plain(url, server, args)
    if "arena" in args.scenario:
        await arena(url, server, args)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench arena", description=__doc__)
    parser.add_argument("--bots", type=int, default=1000, help="the arena's bots")
    parser.add_argument("--minutes", type=float, default=5.0, help="the arena's length (>= 1)")
    parser.add_argument("--game", default="puttputt")
    parser.add_argument("--size", type=int, default=4, help="the arena's room size N (2-8)")
    parser.add_argument("--pace", type=float, default=0.5, help="seconds between a bot's moves")
    parser.add_argument(
        "--race-moves",
        type=int,
        default=0,
        help="arena bots resign each race after this many moves (0: play it out): short races, "
        "so a crowd on a small machine is paired again and again within the arena",
    )
    parser.add_argument(
        "--scenario", nargs="+", choices=["arena", "plain"], default=["plain", "arena"]
    )
    parser.add_argument(
        "--redis-url", help="a Redis to use (a unique key prefix); default: one of its own"
    )
    args = parser.parse_args(argv)
    prefix = f"bench-arena-{uuid.uuid4().hex[:8]}:"
    extra = ["--exempt", "127.0.0.1"]
    with tempfile.TemporaryDirectory() as work:
        if args.redis_url:
            with RaceServer(Path(work), args.redis_url, prefix, extra) as server:
                asyncio.run(run(args, server))
            return 0
        with RedisProcess() as redis, RaceServer(Path(work), redis.url, prefix, extra) as server:
            asyncio.run(run(args, server))
    return 0
