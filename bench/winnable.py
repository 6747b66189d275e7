"""`solrace bench winnable`: how long a host waits for a winnable deal, per game.

Runs the server's own draw (`SolverPool.winnable`, the same pool size and budgets as
`solrace serve`) several times per game, from fresh secret seeds as at `start`, and prints
per game: draws, mean / p50 / p99 / max seconds to a winnable deal, mean candidates tried,
and how many times the cap was hit (`busy`). Seeds are random, so runs differ; use --runs
to tighten the tail.

    solrace bench winnable --runs 30 --games puttputt,tabbycat

`--daily N`: the time to draw a daily's deal with nothing drawn before (a cold start: no
deal in Redis or in memory), N days per game: the server's `daily_seed` at serve's pool
size and budgets, wall seconds and the solver workers' CPU seconds (from /proc) per draw.

`--difficulty ...`: the difficulty of the drawn deals against all winnable ones
(bench/draw_difficulty.py says how; its flags follow).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import secrets
import sys
import time
from typing import Any

from solrace.bench import draw_difficulty
from solrace.bench.load_procs import cpu_seconds
from solrace.engine import GAMES
from solrace.protocol.messages import ProtocolError
from solrace.server.league.daily import daily_seed, default_options, next_date
from solrace.server.solver.solving import Budgets, SolverPool


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def quantile(xs: list[float], q: float) -> float:
    """Nearest-rank quantile (p99 of 30 runs is the largest: say how many runs there were)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


async def measure(game: str, runs: int, workers: int | None, budget: int | None) -> dict[str, Any]:
    budgets = Budgets() if budget is None else Budgets(draw=dict.fromkeys(GAMES, budget))
    pool = SolverPool(workers=workers, budgets=budgets)
    try:
        await pool.winnable({"game": "puttputt", "game_options": {}})  # start the workers
        times: list[float] = []
        tried: list[int] = []
        busy = 0
        for _ in range(runs):
            t0 = time.perf_counter()
            try:
                dealt = await pool.winnable({"game": game, "game_options": {}})
            except ProtocolError:
                busy += 1
                times.append(time.perf_counter() - t0)
                continue
            times.append(time.perf_counter() - t0)
            tried.append(dealt.tried)
    finally:
        pool.close()
    return {
        "game": game,
        "runs": runs,
        "workers": pool.workers,
        "draw_budget": budgets.for_draw(game),
        "mean_s": round(sum(times) / len(times), 3),
        "p50_s": round(quantile(times, 0.5), 3),
        "p99_s": round(quantile(times, 0.99), 3),
        "max_s": round(max(times), 3),
        "mean_tried": round(sum(tried) / len(tried), 1) if tried else None,
        "busy": busy,
    }


def worker_cpu(pool: SolverPool) -> float:
    """CPU seconds (user + system) the pool's worker processes have used so far."""
    return sum(cpu_seconds(pid) for pid in getattr(pool.jobs._pool, "_processes", None) or {})


async def daily_cold(game: str, days: int, workers: int | None) -> dict[str, Any]:
    """`days` dailies of `game` drawn one after another from nothing, as a cold start does."""
    pool = SolverPool(workers=workers)
    secret = secrets.token_bytes(32)  # a fresh deployment's: no deal drawn before
    options = default_options(game)
    walls: list[float] = []
    cpus: list[float] = []
    candidates: list[int] = []
    try:
        await pool.winnable({"game": "puttputt", "game_options": {}})  # start the workers
        date = "2026-12-01"
        for _ in range(days):
            t0, c0 = time.perf_counter(), worker_cpu(pool)
            deal = await daily_seed(pool, secret, date, game, options)
            walls.append(time.perf_counter() - t0)
            cpus.append(worker_cpu(pool) - c0)
            candidates.append(deal.n + 1)
            date = next_date(date)
    finally:
        pool.close()
    return {
        "game": game,
        "daily_draws": days,
        "workers": pool.workers,
        "draw_budget": pool.budgets.for_daily(game),
        "wall_s_mean": round(sum(walls) / days, 2),
        "wall_s_p50": round(quantile(walls, 0.5), 2),
        "wall_s_p90": round(quantile(walls, 0.9), 2),
        "wall_s_max": round(max(walls), 2),
        "cpu_s_mean": round(sum(cpus) / days, 2),
        "candidates_mean": round(sum(candidates) / days, 1),
        "within_5s": sum(w <= 5 for w in walls),
    }


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--difficulty" in argv:
        argv.remove("--difficulty")
        return draw_difficulty.main(argv)
    parser = argparse.ArgumentParser(prog="solrace bench winnable", description=__doc__)
    parser.add_argument("--runs", type=int, default=20, help="winnable deals drawn per game")
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated game ids")
    parser.add_argument("--workers", type=int, default=None, help="pool size (default: serve's)")
    parser.add_argument("--budget", type=int, default=None, help="draw budget for every game")
    parser.add_argument("--daily", type=int, default=0, help="time N cold daily draws per game")
    args = parser.parse_args(argv)
    for game in args.games.split(","):
        if args.daily:
            started = _load()
            row = asyncio.run(daily_cold(game, args.daily, args.workers))
            print(json.dumps({**row, "load": f"{started} / {_load()}"}), flush=True)
            continue
        row = asyncio.run(measure(game, args.runs, args.workers, args.budget))
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
