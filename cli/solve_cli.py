"""`solrace solve GAME --seed S | --seeds A-B`: judge deals with the engine's solver.

One JSON object per deal on stdout, in seed order::

    {"game": "puttputt", "seed": 7, "options": {}, "verdict": "won",
     "moves": ["t3-f1", ...], "nodes": 412, "seconds": 0.004}

With ``--seeds A-B`` a summary line goes to stderr: won / lost / unknown counts
with a 95% Wilson interval for each share, and the mean, median, p99 and max
seconds (wall clock, and CPU time, which a busy shared machine disturbs less),
which is how docs/SOLVABILITY.md was measured. ``--jobs N`` solves in N worker
processes (the output order stays the seed order).

``--pool FILE`` (with ``--seeds``) also writes the won seeds into a deal pool file, made or
extended (server/solver/deal_pool.py: the shipped pools of winnable deals, one per rule
set, decided at one budget); the pools shipped in server/solver/pools/ were made so (then
Klondike's extended with --seeds 161-400; docs/SOLVABILITY.md, "Shipped deal pools")::

    solrace solve klondike --seeds 1-160 --budget 100000 --jobs 2 --no-moves \
        --pool server/solver/pools/klondike.csv
    solrace solve puttputt --seeds 1-200 --budget 2000000 ...   # tabbycat, manx: 200000
    solrace solve leapyear --seeds 1-200 --budget 1000000 ...  # its compiled search (2026-12-05)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from solrace.engine import GAMES, new_game
from solrace.engine.solve import DEFAULT_BUDGET, solve

VERDICTS = ("won", "lost", "unknown")


def _seed(text: str) -> int | str:
    """An all-digit seed is the u64 itself; any other text is a text seed (as `solrace deal`)."""
    return int(text) if text.isdigit() else text


def _seed_range(text: str) -> range:
    first, dash, last = text.partition("-")
    if not dash or not first.isdigit() or not last.isdigit() or int(last) < int(first):
        raise argparse.ArgumentTypeError(f"--seeds takes A-B with integers A <= B, not {text!r}")
    return range(int(first), int(last) + 1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=GAMES, help="which game")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--seed", type=_seed, help="one deal: a u64, or any other text seed")
    group.add_argument(
        "--seeds", type=_seed_range, metavar="A-B", help="every integer seed from A to B"
    )
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="K=V",
        help="a game option, repeatable (klondike: draw=1|3, moves=top|build, passes=0|N)",
    )
    parser.add_argument(
        "--budget",
        type=int,
        default=DEFAULT_BUDGET,
        help=f"positions a search may expand before it answers 'unknown' (default {DEFAULT_BUDGET})",
    )
    parser.add_argument("--jobs", "-j", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--pool",
        metavar="FILE",
        help="with --seeds: write the won seeds into this deal pool file (made, or extended "
        "when it holds the same game, options and budget; server/solver/pools/ ships them)",
    )
    parser.add_argument(
        "--no-moves",
        action="store_true",
        help="print 'moves' as null (the solution length stays in 'length')",
    )


def solve_one(job: tuple[str, int | str, dict[str, str], int]) -> dict[str, Any]:
    """Deal and solve one seed; the timing covers the solve only (module level: picklable)."""
    game, seed, options, budget = job
    g = new_game(game, seed, options)
    start = time.perf_counter()
    cpu = time.process_time()
    result = solve(g, budget)
    cpu = time.process_time() - cpu
    seconds = time.perf_counter() - start
    return {
        "game": game,
        "seed": seed,
        "options": g.options,
        "verdict": result.verdict,
        "moves": result.moves,
        "length": len(result.moves),
        "nodes": result.nodes,
        "seconds": round(seconds, 6),
        "cpu_seconds": round(cpu, 6),
    }


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a share k/n (good near 0 and 1, unlike k/n +- 2 sd)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: list[float], q: float) -> float:
    """The q-quantile by the nearest-rank method (p99 of 2000 deals is the 1980th fastest)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def summary(rows: list[dict[str, Any]], label: str) -> str:
    n = len(rows)
    parts = []
    for v in VERDICTS:
        k = sum(1 for r in rows if r["verdict"] == v)
        lo, hi = wilson(k, n)
        parts.append(f"{v} {k} ({100 * k / n:.1f}%, 95% CI {100 * lo:.1f}-{100 * hi:.1f}%)")
    secs = [r["seconds"] for r in rows]
    cpus = [r["cpu_seconds"] for r in rows]
    nodes = sum(r["nodes"] for r in rows)
    rate = nodes / sum(cpus) if sum(cpus) > 0 else 0.0
    return (
        f"{label}: {n} deals: {', '.join(parts)}; seconds mean {sum(secs) / n:.4f} "
        f"median {percentile(secs, 0.5):.4f} p99 {percentile(secs, 0.99):.4f} max {max(secs):.4f}; "
        f"cpu seconds mean {sum(cpus) / n:.4f} p99 {percentile(cpus, 0.99):.4f}; "
        f"nodes per cpu second {rate:.0f}"
    )


def _results(
    jobs: list[tuple[str, int | str, dict[str, str], int]], workers: int
) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(jobs) <= 1:
        yield from map(solve_one, jobs)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(solve_one, jobs, chunksize=1)


def run(args: argparse.Namespace) -> int:
    options: dict[str, str] = {}
    for kv in args.option:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            print(f"solrace solve: --option takes K=V, not {kv!r}", file=sys.stderr)
            return 2
        options[key] = value
    if args.budget < 0 or args.jobs < 1:
        print("solrace solve: --budget must be >= 0 and --jobs >= 1", file=sys.stderr)
        return 2
    try:
        new_game(args.game, 0, options)
    except ValueError as exc:
        print(f"solrace solve: {exc}", file=sys.stderr)
        return 2
    if args.pool is not None and args.seeds is None:
        print("solrace solve: --pool needs --seeds A-B", file=sys.stderr)
        return 2
    if args.pool is not None:
        try:  # refused before any solve: the pool holds another rule set or budget
            write_pool(args.pool, args.game, new_game(args.game, 0, options).options, args, [])
        except ValueError as exc:
            print(f"solrace solve: --pool {args.pool}: {exc}", file=sys.stderr)
            return 2
    seeds: list[int | str] = list(args.seeds) if args.seeds is not None else [args.seed]
    jobs = [(args.game, s, options, args.budget) for s in seeds]
    rows = []
    for row in _results(jobs, args.jobs):
        rows.append({k: v for k, v in row.items() if k != "moves"})
        if args.no_moves:
            row["moves"] = None
        print(json.dumps(row, separators=(", ", ": ")), flush=True)
    if args.seeds is not None:
        opts = " ".join(f"{k}={v}" for k, v in sorted(options.items()))
        label = f"{args.game}{' ' + opts if opts else ''} seeds {seeds[0]}-{seeds[-1]}"
        print(summary(rows, f"{label} budget {args.budget}"), file=sys.stderr)
    if args.pool is not None:
        write_pool(args.pool, args.game, new_game(args.game, 0, options).options, args, rows)
    return 0


def write_pool(
    path: str,
    game: str,
    options: dict[str, Any],
    args: argparse.Namespace,
    rows: list[dict[str, Any]],
) -> None:
    """Make or extend the deal pool file at `path` with these rows' won seeds."""
    from solrace.server.solver import deal_pool

    try:
        with open(path) as f:
            old: deal_pool.DealPool | None = deal_pool.parse(f.read())
    except FileNotFoundError:
        old = None
    tried = args.seeds if rows else range(0)
    pool = deal_pool.merged(old, game, options, args.budget, tried, rows)
    if not rows:
        return  # a check only, before solving: the pool may take these seeds
    with open(path, "w") as f:
        f.write(deal_pool.render(pool))
    print(
        f"{path}: {len(pool.seeds)} won of {pool.tried_count()} seeds tried at {pool.budget}",
        file=sys.stderr,
    )
