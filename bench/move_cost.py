"""A move's CPU in one process, without sockets: `RoomService.move` under the lease, as fast
as acks return, against a private redis-server.

    setsid python -m solrace.bench.move_cost [--rooms 8] [--players 8] [--moves 4000] [--repeats 3]
                                      [--only direct,pipeline,...] [--profile FILE]

Each variant plays fresh rooms (Klondike, the load bench's seed and bots' policy) through the
server's own service and store, the lease held, so every move is the lease holder's lean
append; bots are coroutines in this process. Printed per variant: this process's CPU per
move with the bots' own move choice (the policy) measured and taken out, Redis's CPU per move
(INFO cpu) and its commands per move (INFO commandstats). Variants run in rotation within
each repeat, so a change in the machine's load hits them all; the medians are printed.

Variants:
* `direct`: the server as it is (the batcher's own connection on one Redis);
* `streams`: `direct` with the batcher's own connections read through redis-py's stream
  reader, a task a turn, as before its links (`Batcher.links`);
* `pipeline`: the batcher sending each turn as redis-py's pipeline (as before);
* `setreads`: `direct` with the room's fence stripped of who listens and watches (`here`,
  `watching`), so the lease holder's append reads the `here` set and the spectators' count
  itself, as it did before the fence kept them (two more commands a move);
* `perreply`: `direct` reading a turn's replies with one redis-py `read_response` each, as
  before the batcher parsed them with hiredis in one loop;
* `gc`: `direct` with the collector's young generation collected less often
  (`gc.freeze()` of the start-up's objects and a threshold of 50,000 instead of 700);
  `freeze`, `threshold`: each of the two alone.

`--profile FILE` runs the bots of every trial under cProfile and writes the stats of the last
(`python -m pstats FILE`): what a move is made of in Python, the bots' policy included (its
own functions, `load_policy`, are easy to leave out); the CPU figures of a profiled run are
the profiler's, not the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import statistics
import tempfile
import time
from typing import Any

from solrace.bench.load_policy import next_move
from solrace.bench.server_process import favour_autogroup
from solrace.server.race.service import RoomService
from solrace.server.store import batch as batch_mod
from solrace.server.store.batch import Batcher
from solrace.server.store.lease import Leases
from solrace.server.store.redis_process import RedisProcess
from solrace.server.store.store import Store

VARIANTS = ("direct", "streams", "pipeline", "setreads", "perreply", "gc", "freeze", "threshold")


class PerReplyBatcher(Batcher):
    """The batcher reading each reply with redis-py's `read_response` (as before)."""

    links = False

    async def _direct(self, batch: list[Any]) -> list[Any]:
        real = batch_mod._hiredis_reader
        batch_mod._hiredis_reader = lambda conn: None
        try:
            return await super()._direct(batch)
        finally:
            batch_mod._hiredis_reader = real


class StreamsBatcher(Batcher):
    """The batcher's own connections read through redis-py's streams, a task a turn (as
    before its links, 2026-12-05)."""

    links = False


class PipelineBatcher(Batcher):
    """The batcher as it was: every turn a redis-py pipeline, one Redis or not."""

    async def _execute(self, batch: list[Any]) -> list[Any]:
        return await self._pipeline(batch)


async def _rooms(
    service: RoomService, leases: Leases, rooms: int, players: int, strip_fence: bool = False
) -> list[str]:
    options = {"game": "klondike", "seed": "solrace-bench", "max_players": players}
    options |= {"time_limit": 0, "countdown": 0}
    codes = []
    for _ in range(rooms):
        made = await service.create("p0", options, True)
        code = made["room"]
        for i in range(1, players):
            await service.join(code, f"p{i}")
        await service.start(code, made["host_token"])
        await service.tick(code)
        await leases.acquire(code)
        if strip_fence:
            await service.store.redis.hdel(service.store.key(code, "fence"), "here", "watching")
        await service.load(code)
        codes.append(code)
    return codes


async def _trial(url: str, prefix: str, variant: str, args: argparse.Namespace) -> dict[str, Any]:
    store = Store.from_url(url, prefix)
    if variant == "pipeline":
        store.batcher = PipelineBatcher(store.redis)
    if variant == "perreply":
        store.batcher = PerReplyBatcher(store.redis)
    if variant == "streams":
        store.batcher = StreamsBatcher(store.redis)
    service = RoomService(store)
    leases = Leases(store, f"bench-{variant}", 600)
    codes = await _rooms(service, leases, args.rooms, args.players, variant == "setreads")
    per_seat = max(1, args.moves // (args.rooms * args.players))
    policy_cpu = 0.0
    moves = 0

    async def bot(code: str, seat: int) -> None:
        nonlocal policy_cpu, moves
        view: dict[str, Any] | None = service.cache[code].room.races[seat].view()
        for _ in range(per_seat):
            t = time.thread_time()
            text = next_move("klondike", view)
            policy_cpu += time.thread_time() - t
            try:
                ack = await service.move(code, seat, text, None)
            except Exception:
                return  # a dead or finished seat: it stops
            moves += 1
            if ack.get("status") != "racing":
                return
            view = service.cache[code].room.races[seat].view()

    info0 = await store.redis.info("cpu")
    stats0 = await store.redis.info("commandstats")
    if variant in ("gc", "freeze"):
        gc.collect()
        gc.freeze()
    if variant in ("gc", "threshold"):
        gc.set_threshold(50_000, 10, 10)
    profiler = cProfile.Profile() if args.profile else None
    cpu0 = time.process_time()
    if profiler is not None:
        profiler.enable()
    await asyncio.gather(*(bot(c, s) for c in codes for s in range(args.players)))
    cpu = time.process_time() - cpu0
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    gc.set_threshold(700, 10, 10)
    gc.unfreeze()
    info1 = await store.redis.info("cpu")
    stats1 = await store.redis.info("commandstats")
    redis_cpu = sum(
        float(info1[k]) - float(info0[k])
        for k in ("used_cpu_sys_main_thread", "used_cpu_user_main_thread")
        if k in info1
    ) or sum(float(info1[k]) - float(info0[k]) for k in ("used_cpu_sys", "used_cpu_user"))
    calls = sum(v["calls"] for v in stats1.values()) - sum(v["calls"] for v in stats0.values())
    await leases.close()
    await store.close()
    n = max(moves, 1)
    return {
        "server": (cpu - policy_cpu) / n * 1e6,
        "redis": redis_cpu / n * 1e6,
        "commands": (calls - 2) / n,  # the two INFO calls themselves
        "moves": moves,
    }


async def _main(args: argparse.Namespace) -> None:
    variants = args.only.split(",") if args.only else list(VARIANTS)
    figures: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as data, RedisProcess(data_dir=data) as redis:
        for r in range(args.repeats):
            for v in variants:
                out = await _trial(redis.url, f"mc{r}{v}:", v, args)
                figures[v].append(out)
                print(
                    f"  repeat {r + 1} {v:9s} server {out['server']:6.1f} us/move  "
                    f"redis {out['redis']:5.1f} us/move  {out['commands']:.2f} commands/move  "
                    f"({out['moves']} moves; load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
    print(
        f"medians of {args.repeats} (load average now {' '.join(f'{x:.1f}' for x in os.getloadavg())}):"
    )
    for v, rows in figures.items():
        print(
            f"  {v:9s} server {statistics.median(r['server'] for r in rows):6.1f} us/move  "
            f"redis {statistics.median(r['redis'] for r in rows):5.1f} us/move"
        )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m solrace.bench.move_cost", description=__doc__)
    p.add_argument("--rooms", type=int, default=8)
    p.add_argument("--players", type=int, default=8)
    p.add_argument("--moves", type=int, default=4000, help="moves per trial (about)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", help="variants to run, comma-separated: " + ",".join(VARIANTS))
    p.add_argument("--profile", metavar="FILE", help="cProfile the bots, stats of the last trial")
    args = p.parse_args(argv)
    if os.getsid(0) == os.getpid():  # run under `setsid`: this session's autogroup favoured
        favour_autogroup(os.getpid())
    asyncio.run(_main(args))


if __name__ == "__main__":
    main()
