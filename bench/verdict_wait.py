"""`solrace bench verdict-wait`: how soon a race's verdicts come, without and with deeper ones.

After a race the server sends a `solved` event: was the deal winnable, and each unfinished
seat's final position? Searched at 1,000,000 positions, a fifth of default Klondike deals
stay "unknown"; `--deep-verdicts` searches those again at 10,000,000 in a solver worker of
its own at nice 19 and sends a second `solved` (server/solver/solving.py, issue 24). This
measures what that costs and gives: one Redis, one key prefix (so one server secret), and
for each way (`--no-deep-verdicts`, the baseline, then `--deep-verdicts`) a `solrace serve`
of its own that plays the same `--races` solo Klondike races one after another (text seeds
bench-1..N: the same deals both ways), each resigned after two deals. Per way it prints the
wait from the resign to the first `solved` (mean, p50, max), how many first verdicts were
"unknown", how many a second `solved` decided and after how long (waited for until the
server and its solver processes spend no CPU for 3 s, at most `--deep-cap` seconds after
the last race), and the CPU they spent.

`--winnable` asks instead what the deal stock (server/league/deal_stock.py) costs the first
verdicts: before each race a winnable Klondike room is started, which takes a stocked deal and
has the stock refilled in the background at 10,000,000 positions a candidate. The two ways are
then the stock off (`SOLRACE_DEAL_STOCK=0`: the room's deal is drawn on demand while it
starts, the baseline) and a stock of one deal (`SOLRACE_DEAL_STOCK=1`: each room's take
starts the refill of one deal, as a full stock of the default 4 does), both without deeper
verdicts.
It prints figures; it asserts nothing.

    solrace bench verdict-wait --races 16 [--winnable] [--pace SECONDS]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from solrace.bench.hint_starvation import Client, solo
from solrace.bench.load_scale import cpu_or_zero, descendants
from solrace.bench.server_process import ServerProcess
from solrace.server.league.daily import default_options
from solrace.server.league.deal_stock import stock_key
from solrace.server.store.redis_process import RedisProcess

WAYS = (("no deeper verdicts", "--no-deep-verdicts"), ("deeper verdicts", "--deep-verdicts"))
#: `--winnable`'s ways: the deal stock off, then a stock of one deal (`SOLRACE_DEAL_STOCK` is
#: its size): each room's take starts the refill of one deal, as a full stock of 4 does
STOCK_WAYS = (("no deal stock", "0"), ("deal stock", "1"))
PREFIX = "bench:"
#: the rules of `--winnable`'s rooms: Klondike's defaults, a stocked rule set
RULES = default_options("klondike")
#: seconds without solver CPU after which no second `solved` is coming (the search is over)
QUIET = 3.0


@dataclass
class Race:
    """One race's verdicts as they came: the first `solved`, then any later one."""

    resigned: float
    first_wait: float = 0.0
    solved: list[dict[str, Any]] = field(default_factory=list)
    later: list[float] = field(default_factory=list)


class Watcher(Client):
    """A client that also keeps every `solved` event with the time it came."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.race: Race | None = None
        self.first = asyncio.Event()

    def pushed(self, msg: dict[str, Any]) -> None:
        if msg["type"] != "event" or msg.get("kind") != "solved" or self.race is None:
            super().pushed(msg)
            return
        self.race.solved.append(msg)
        wait = time.monotonic() - self.race.resigned
        if len(self.race.solved) == 1:
            self.race.first_wait = wait
            self.first.set()
        else:
            self.race.later.append(wait)


async def race(url: str, seed: str) -> tuple[Watcher, Race]:
    """A solo Klondike race on a text seed, two deals, resigned; its first `solved` waited for."""
    c, _ = await solo(url, Watcher, seed=seed)
    assert isinstance(c, Watcher)
    for n in (1, 2):
        await c.request({"type": "move", "move": "deal", "n": n})
    c.race = done = Race(time.monotonic())
    await c.request({"type": "resign"})
    await asyncio.wait_for(c.first.wait(), 600)
    return c, done


async def winnable_room(url: str, redis: Redis) -> bool:
    """A winnable Klondike room started (its deal stocked or drawn) and resigned at once (its
    verdicts are known: the drawn deal is won, and so is a seat at its start); True when the
    stock held a deal as it started."""
    stocked = bool(await redis.llen(stock_key(PREFIX, {"game": "klondike", "game_options": RULES})))
    c, _ = await solo(url, deal="winnable")
    await c.request({"type": "resign"})
    await c.close()
    return stocked


def tree_cpu(root: int) -> float:
    """CPU seconds of `root` and the live processes below it (the solver workers)."""
    return sum(cpu_or_zero(pid) for pid in [root, *descendants(root)])


async def one_way(url: str, pid: int, redis: Redis, args: argparse.Namespace) -> dict[str, Any]:
    cpu0 = tree_cpu(pid)
    clients, races, stocked = [], [], 0
    loop = asyncio.get_running_loop()
    begun = loop.time()
    for i in range(1, args.races + 1):
        # `--pace`: the races start at most one per that many seconds, the same in each way
        await asyncio.sleep(max(0.0, begun + (i - 1) * args.pace - loop.time()))
        if args.winnable:
            stocked += await winnable_room(url, redis)
        c, r = await race(url, f"bench-{i}")
        clients.append(c)
        races.append(r)
    unknown = [r for r in races if "unknown" in _verdicts(r.solved[0])]
    give_up = time.monotonic() + args.deep_cap
    last, quiet_since = tree_cpu(pid), time.monotonic()
    while time.monotonic() < give_up and any(not r.later for r in unknown):
        await asyncio.sleep(0.5)
        now = tree_cpu(pid)
        if now - last > 0.05:  # the solver still searching
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since > QUIET:
            break  # nothing searched for a while: every deeper search is over
    cpu = tree_cpu(pid) - cpu0
    for c in clients:
        await c.close()
    waits = sorted(r.first_wait for r in races)
    later = [w for r in races for w in r.later]
    decided = [r for r in unknown if r.later and "unknown" not in _verdicts(r.solved[-1])]
    return {
        "first": (statistics.mean(waits), waits[len(waits) // 2], waits[-1]),
        "unknown": len(unknown),
        "seconds": len([r for r in unknown if r.later]),
        "decided": len(decided),
        "later": later,
        "cpu": cpu,
        "stocked": stocked if args.winnable else None,
    }


async def _way(url: str, pid: int, redis_url: str, args: argparse.Namespace) -> dict[str, Any]:
    redis = Redis.from_url(redis_url)
    try:
        return await one_way(url, pid, redis, args)
    finally:
        await redis.aclose()


def _verdicts(solved: dict[str, Any]) -> list[str]:
    return [solved["deal"], *solved["seats"].values()]


def show(label: str, out: dict[str, Any], races: int) -> None:
    mean, p50, top = out["first"]
    later = out["later"]
    stock = (
        "" if out["stocked"] is None else f"{out['stocked']} of {races} winnable rooms stocked; "
    )
    second = (
        f"after mean {statistics.mean(later):.1f} s, max {max(later):.1f} s" if later else "none"
    )
    print(
        f"{label:>20}: {stock}first solved after mean {mean:.2f} s, p50 {p50:.2f} s, max {top:.2f} s;"
        f" {out['unknown']} of {races} races with an unknown verdict, {out['seconds']} got a "
        f"second solved ({second}), {out['decided']} fully decided; server and solver CPU "
        f"{out['cpu']:.1f} s",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="solrace bench verdict-wait", description=__doc__)
    p.add_argument("--races", type=int, default=16)
    p.add_argument(
        "--deep-cap", type=float, default=300.0, help="seconds the second solved is waited for"
    )
    p.add_argument(
        "--pace",
        type=float,
        default=0.0,
        help="seconds from one race's start to the next's at least (default: none)",
    )
    p.add_argument(
        "--winnable",
        action="store_true",
        help="start a winnable room before each race, the deal stock off then on",
    )
    args = p.parse_args(argv)
    print("load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)
    ways = (
        [(label, "--no-deep-verdicts", stock) for label, stock in STOCK_WAYS]
        if args.winnable
        else [(label, flag, "0") for label, flag in WAYS]
    )
    with RedisProcess() as redis:
        for label, flag, stock in ways:
            server = ServerProcess(
                redis.url,
                PREFIX,
                extra_args=[flag, "--solver-workers", "2"],
                env={"SOLRACE_PREDRAW_DAILY": "0", "SOLRACE_DEAL_STOCK": stock},
            )
            with server:
                out = asyncio.run(_way(server.ws_url, server.pid, redis.url, args))
            show(label, out, args.races)
    print("load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
