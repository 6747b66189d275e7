"""Decided share and CPU per deal of a solver on a seed sample, with a per-deal CPU cap.

    python -m solrace.bench.solve_sample klondike --seeds 1-100 --cap 10 [-o draw=3 ...]
        [--engine PACKAGE] [--budget N] [--python-search] [--after FILE]

Each deal is solved in this process; the cap is process CPU time (``ITIMER_PROF``: user
plus system time of this process), so a deal that is not decided within ``--cap`` CPU
seconds counts as "unknown" at the cap, whatever the machine's load. ``--engine`` names
another importable copy of the engine package (e.g. an older one put on PYTHONPATH) to
measure before and after on the same seeds; ``--python-search`` runs Klondike's Python
search instead of its compiled port (``solve_klondike.C_SEARCH``). One JSON line per deal on stdout, a summary
on stderr. Run it niced in its own session on a shared machine, e.g.
``setsid sh -c 'echo 19 > /proc/self/autogroup; exec nice -n 19 python -m ...'``.

A sweep in stages (docs/SOLVABILITY.md, fourteenth pass): the search does not depend on the
cap, so a deal decided under a small cap is decided the same way under a larger one, and only
the deals still unknown need the larger cap. ``--after FILE`` takes an earlier sweep's lines
(its stdout, at a smaller cap), solves the deals it left unknown (or ``--seeds``), and also
prints the staged summary: every deal of FILE, each with the verdict and CPU of the last run
that solved it, as one run at the largest cap would have given them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import signal
import sys
import time
from types import FrameType
from typing import Any


class CapReached(Exception):
    """The deal's CPU cap ran out."""


def _on_cap(signum: int, frame: FrameType | None) -> None:
    raise CapReached


def _load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def _seeds(text: str) -> list[int]:
    """Seeds from ranges and single seeds, comma separated: ``1-100`` or ``1,4,7-9``."""
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def tally(counts: dict[str, int], cpus: list[float]) -> tuple[str, str]:
    """A sweep's verdicts ("won W lost L unknown U of N") and its CPU seconds a deal ("CPU s
    mean M median D max X"), as this sweep and bench/solvitaire.py's print them."""
    n = len(cpus)
    spread = sorted(cpus)
    verdicts = f"won {counts['won']} lost {counts['lost']} unknown {counts['unknown']} of {n}"
    cpu = f"CPU s mean {sum(spread) / n:.3f} median {spread[n // 2]:.3f} max {spread[-1]:.3f}"
    return verdicts, cpu


def staged(earlier: list[dict[str, Any]], later: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An earlier sweep's rows, each replaced by the later sweep's row for the same seed."""
    now = {r["seed"]: r for r in later}
    return [now.get(r["seed"], r) for r in earlier]


def staged_summary(earlier: list[dict[str, Any]], later: list[dict[str, Any]]) -> str:
    """The verdicts, decided share and CPU of the sweeps staged (`staged`), as one line."""
    rows = staged(earlier, later)
    counts = {"won": 0, "lost": 0, "unknown": 0}
    for r in rows:
        counts[r["verdict"]] += 1
    verdicts, spread = tally(counts, [r["cpu"] for r in rows])
    decided = 100 * (len(rows) - counts["unknown"]) / len(rows)
    return f"{verdicts}; decided {decided:.1f}%; {spread}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="solve_sample")
    ap.add_argument("game")
    ap.add_argument("--seeds", help="seeds to solve (default with --after: its unknown ones)")
    ap.add_argument(
        "--after",
        metavar="FILE",
        help="an earlier sweep's lines: solve the deals it left unknown, then print both staged",
    )
    ap.add_argument("-o", "--option", action="append", default=[])
    ap.add_argument("--cap", type=float, default=10.0, help="CPU seconds per deal")
    ap.add_argument("--budget", type=int, default=10**9, help="positions per deal")
    ap.add_argument("--engine", default="solrace.engine")
    ap.add_argument(
        "--python-search", action="store_true", help="Klondike: the Python search, not the C port"
    )
    args = ap.parse_args(argv)
    earlier: list[dict[str, Any]] = []
    if args.after:
        with open(args.after) as f:
            earlier = [json.loads(line) for line in f if line.strip()]
    if args.seeds:
        seeds = _seeds(args.seeds)
    elif args.after:
        seeds = [r["seed"] for r in earlier if r["verdict"] == "unknown"]
    else:
        ap.error("--seeds is required without --after")
    if not seeds:
        print(f"solve_sample: no deal to solve ({args.after} has none unknown)", file=sys.stderr)
        return 0
    if args.python_search:
        search: Any = importlib.import_module(args.engine + ".solve_klondike")
        search.C_SEARCH = False
    options: dict[str, Any] = dict(kv.split("=", 1) for kv in args.option)
    solve_mod = importlib.import_module(args.engine + ".solve")
    signal.signal(signal.SIGPROF, _on_cap)
    counts = {"won": 0, "lost": 0, "unknown": 0}
    cpus: list[float] = []
    positions = 0  # of the deals decided or stopped by the budget (not those cut by the cap)
    positions_cpu = 0.0
    load0 = _load()
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        t0 = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, args.cap)
        try:
            r = solve_mod.solve_deal(args.game, seed, options, args.budget)
            verdict, nodes = r.verdict, r.nodes
        except CapReached:
            verdict, nodes = "unknown", -1
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        cpu = min(time.process_time() - t0, args.cap)
        counts[verdict] += 1
        cpus.append(cpu)
        if nodes >= 0:
            positions += nodes
            positions_cpu += cpu
        # the process's peak RSS so far (KiB on Linux): a search frees its table when it ends, so
        # the deal that raises it is the largest yet
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        row = {
            "seed": seed,
            "verdict": verdict,
            "nodes": nodes,
            "cpu": round(cpu, 3),
            "maxrss_kib": rss,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    n = len(cpus)
    verdicts, spread = tally(counts, cpus)
    load1 = _load()
    print(
        f"{args.game} {' '.join(args.option)} seeds {args.seeds or 'unknown in ' + args.after} "
        f"cap {args.cap}s: {verdicts}; "
        f"decided {100 * (n - counts['unknown']) / n:.1f}%; {spread}; positions {positions} in "
        f"{positions_cpu:.2f} CPU s ({positions / max(positions_cpu, 1e-9):,.0f} a CPU s) "
        f"outside the cap; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB; "
        f"load avg {load0} / {load1}",
        file=sys.stderr,
    )
    if earlier:
        summary = staged_summary(earlier, rows)
        print(f"staged ({args.after}, then cap {args.cap}s): {summary}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
