"""`solrace bench daily-start`: how long the day's first player waits for a daily after a
server starts (issue 24: a Klondike daily on a cold start within 5 s).

Two cold starts, each a real `solrace serve` on its own Redis, one scored `daily` request
sent as soon as the server listens, timed to its answer (the attempt's room, dealt):

* *new deployment*: an empty Redis; the server pre-draws (`--predraw-daily`, its default)
  and a scored daily is asked as soon as it listens, timed to its answer: with the shipped
  deal pools (`--deal-pool cold`, the default) the pool answers it; with `--deal-pool off`
  (as before the pools) the player waits for the search at the solver's large budget
  (docs/SOLVABILITY.md, "Winnable deals: difficulty of the draw");
* *restart*: the same Redis after that server has drawn today's and the next days' deals
  and stopped; a new server (`--no-predraw-daily`: nothing drawn by itself) answers from
  Redis. This is every start of a deployment that has run before, and every first player
  of a day the pre-draw reached.

Prints one JSON line per start: seconds from spawn to listening, from the request to its
answer, and the load average.

    solrace bench daily-start --game klondike --restarts 3 [--deal-pool off]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import time
from typing import Any

import redis
from solrace.bench.hint_starvation import Client
from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m
from solrace.server.league.daily import PREDRAW_DAYS, next_date, utc_date
from solrace.server.store.redis_process import RedisProcess
from websockets.asyncio.client import connect

PREFIX = "bench:"


async def first_player(url: str, game: str) -> tuple[float, dict[str, Any]]:
    """Seconds from a scored daily request (a fresh player key) to its answer."""
    c = Client(await connect(url, max_size=1 << 22))
    hello = {"type": "hello", "version": m.VERSION, "client": "bench"}
    await c.request({**hello, "player_key": secrets.token_urlsafe(24)})
    t0 = time.perf_counter()
    daily = {"type": "daily", "game": game, "name": "first", "practice": False}
    reply = await c.request(daily, timeout=3600)  # a cold draw on a loaded machine: minutes
    waited = time.perf_counter() - t0
    await c.close()
    return waited, reply


async def first_of_all(
    url: str, game: str, r: redis.Redis, key: str
) -> tuple[float, dict[str, Any], float]:
    """A new deployment's first player: (seconds to the answer, the answer, seconds until
    today's deal is in Redis). A request waiting minutes on a loaded machine may be closed as
    idle: its wait is then the deal's time to Redis, as this bench measured before."""
    t0 = time.perf_counter()

    async def dealt() -> float:
        while True:
            if r.exists(key):
                return time.perf_counter() - t0
            await asyncio.sleep(0.05)

    poll = asyncio.ensure_future(dealt())
    try:
        waited, reply = await first_player(url, game)
    except Exception as exc:
        waited, reply = float("nan"), {"type": f"failed: {exc!r}"}
    return waited, reply, await poll


def deal_keys(game: str) -> list[str]:
    date = utc_date(int(time.time() * 1000))
    out = []
    for _ in range(PREDRAW_DAYS + 1):
        out.append(f"{PREFIX}daily:{{{date}/{game}}}:deal")
        date = next_date(date)
    return out


def start(url: str, predraw: bool, pool: str, extra: list[str]) -> tuple[ServerProcess, float]:
    flag = "--predraw-daily" if predraw else "--no-predraw-daily"
    server = ServerProcess(url, PREFIX, extra_args=[flag, f"--deal-pool={pool}", *extra])
    t0 = time.perf_counter()
    server.start(timeout=120)
    return server, time.perf_counter() - t0


def row(kind: str, listening: float, waited: float, reply: dict[str, Any]) -> str:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    return json.dumps(
        {
            "start": kind,
            "spawn_to_listening_s": round(listening, 2),
            "daily_answer_s": round(waited, 3),
            "answer": reply.get("type"),
            "load": load,
        }
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench daily-start", description=__doc__)
    parser.add_argument("--game", default="klondike")
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument(
        "--deal-pool",
        default="cold",
        help="solrace serve's --deal-pool (off: the search only, as before the pools)",
    )
    parser.add_argument(
        "--serve",
        action="append",
        default=[],
        metavar="ARG",
        help="another solrace serve argument, repeatable (main before the pools: --deal-pool "
        "off --serve=--draw-budget=klondike=30000)",
    )
    args = parser.parse_args(argv)
    with RedisProcess() as store:
        r = redis.Redis.from_url(store.url)
        server, listening = start(store.url, predraw=True, pool=args.deal_pool, extra=args.serve)
        try:
            # the day's first player of a new deployment, asking at once
            keys = deal_keys(args.game)
            waited, reply, dealt = asyncio.run(first_of_all(server.ws_url, args.game, r, keys[0]))
            out = row("new deployment", listening, waited, reply)
            print(out[:-1] + f', "deal_in_redis_s": {dealt:.3f}}}', flush=True)
            give_up = time.monotonic() + (3600 if args.restarts else 0)  # restarts need them
            while r.exists(*keys) < len(keys) and time.monotonic() < give_up:
                time.sleep(0.5)  # the pre-draw's days ahead
        finally:
            server.stop()
        for _ in range(args.restarts):
            server, listening = start(
                store.url, predraw=False, pool=args.deal_pool, extra=args.serve
            )
            try:
                waited, reply = asyncio.run(first_player(server.ws_url, args.game))
                print(row("restart", listening, waited, reply), flush=True)
            finally:
                server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
