"""`solrace bench winnable`: how long a host waits for a winnable deal, per game.

Runs the server's own draw (`SolverPool.winnable`, the same pool size and budgets as
`solrace serve`) several times per game, from fresh secret seeds as at `start`, and prints
per game: draws, mean / p50 / p99 / max seconds to a winnable deal, mean candidates tried,
and how many times the cap was hit (`busy`). Seeds are random, so runs differ; use --runs
to tighten the tail.

    solrace bench winnable --runs 30 --games puttputt,tabbycat
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import time
from typing import Any

from solrace.engine import GAMES
from solrace.protocol.messages import ProtocolError
from solrace.server.solver.solving import Budgets, SolverPool


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench winnable", description=__doc__)
    parser.add_argument("--runs", type=int, default=20, help="winnable deals drawn per game")
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated game ids")
    parser.add_argument("--workers", type=int, default=None, help="pool size (default: serve's)")
    parser.add_argument("--budget", type=int, default=None, help="draw budget for every game")
    args = parser.parse_args(argv)
    for game in args.games.split(","):
        row = asyncio.run(measure(game, args.runs, args.workers, args.budget))
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
