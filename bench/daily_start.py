"""`solrace bench daily-start`: how long the day's first player waits for a daily after a
server starts (issue 24: a Klondike daily on a cold start within 5 s).

Two cold starts, each a real `solrace serve` on its own Redis, one scored `daily` request
sent as soon as the server listens, timed to its answer (the attempt's room, dealt):

* *new deployment*: an empty Redis; the server pre-draws (`--predraw-daily`, its default);
  timed from listening until today's deal is in Redis, which is what a player asking at
  once waits for (a draw at the solver's large budget: docs/SOLVABILITY.md, "Winnable
  deals: difficulty of the draw");
* *restart*: the same Redis after that server has drawn today's and the next days' deals
  and stopped; a new server (`--no-predraw-daily`: nothing drawn by itself) answers from
  Redis. This is every start of a deployment that has run before, and every first player
  of a day the pre-draw reached.

Prints one JSON line per start: seconds from spawn to listening, from the request to its
answer, and the load average.

    solrace bench daily-start --game klondike --restarts 3
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


def deal_keys(game: str) -> list[str]:
    date = utc_date(int(time.time() * 1000))
    out = []
    for _ in range(PREDRAW_DAYS + 1):
        out.append(f"{PREFIX}daily:{{{date}/{game}}}:deal")
        date = next_date(date)
    return out


def start(url: str, predraw: bool) -> tuple[ServerProcess, float]:
    flag = "--predraw-daily" if predraw else "--no-predraw-daily"
    server = ServerProcess(url, PREFIX, extra_args=[flag])
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
    args = parser.parse_args(argv)
    with RedisProcess() as store:
        r = redis.Redis.from_url(store.url)
        server, listening = start(store.url, predraw=True)
        try:
            # today's deal in Redis: what the day's first player of a new deployment waits
            # for (a request waiting minutes on a loaded machine is closed as idle first)
            keys = deal_keys(args.game)
            t0 = time.perf_counter()
            while not r.exists(keys[0]):
                time.sleep(0.05)
            print(row("new deployment", listening, time.perf_counter() - t0, {}), flush=True)
            give_up = time.monotonic() + 3600
            while r.exists(*keys) < len(keys) and time.monotonic() < give_up:
                time.sleep(0.5)  # the pre-draw's days ahead
        finally:
            server.stop()
        for _ in range(args.restarts):
            server, listening = start(store.url, predraw=False)
            try:
                waited, reply = asyncio.run(first_player(server.ws_url, args.game))
                print(row("restart", listening, waited, reply), flush=True)
            finally:
                server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
