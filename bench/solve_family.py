"""Measure a family solver on a seed range: verdicts, CPU per deal, load average.

    python -m solrace.bench.solve_family GAME FIRST LAST BUDGET

One process, one deal after another; CPU seconds are ``time.process_time`` around
each solve. Every "won" is replayed by ``solve`` itself. Prints one line per deal
(seed, verdict, positions, CPU s, solution length: 0 unless won) and a summary with 95%
Wilson intervals and /proc/loadavg at start and end. The per-deal lines are what
`solrace bench winnable --difficulty --from FILE` reads to compare the server's draw with
all winnable deals.
"""

from __future__ import annotations

import math
import sys
import time

from solrace.engine.solve import solve_deal


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    z = 1.96
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return 100 * max(0.0, c - h), 100 * min(1.0, c + h)


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    game, first, last, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(f"# {game} seeds {first}-{last} budget {budget} load {load()}", flush=True)
    counts = {"won": 0, "lost": 0, "unknown": 0}
    cpus: list[float] = []
    for seed in range(first, last + 1):
        t = time.process_time()
        r = solve_deal(game, seed, budget=budget)
        dt = time.process_time() - t
        cpus.append(dt)
        counts[r.verdict] += 1
        print(f"{seed} {r.verdict} {r.nodes} {dt:.3f} {len(r.moves)}", flush=True)
    n = len(cpus)
    cpus.sort()
    p99 = cpus[min(n - 1, int(0.99 * n))]
    cells = []
    for v in ("won", "lost", "unknown"):
        lo, hi = wilson(counts[v], n)
        cells.append(f"{counts[v]} = {100 * counts[v] / n:.1f}% [{lo:.1f}, {hi:.1f}]")
    print(f"# {game} {first}-{last} budget {budget}: " + " | ".join(cells))
    print(f"# CPU s per deal mean {sum(cpus) / n:.3f} p99 {p99:.3f} max {cpus[-1]:.3f}")
    print(f"# load at end {load()}", flush=True)


if __name__ == "__main__":
    main()
