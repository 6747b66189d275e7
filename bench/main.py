"""`solrace bench KIND`: dispatch to one benchmark module.

Benchmarks print figures (and ratios against a baseline measured in the same
run); they never assert, so they are not tests.
"""

from __future__ import annotations

import argparse
import importlib

KINDS = {
    "black-hole": "solrace.bench.black_hole",
    "engine": "solrace.bench.engine_bench",
    "load": "solrace.bench.load",
    "peer": "solrace.bench.peer",
    "winnable": "solrace.bench.winnable",
    "daily-start": "solrace.bench.daily_start",
    "hint-starvation": "solrace.bench.hint_starvation",
    "verdict-wait": "solrace.bench.verdict_wait",
    "records": "solrace.bench.records",
    "replay": "solrace.bench.replay",
    "leaderboards": "solrace.bench.leaderboards",
    "quick": "solrace.bench.quick_match",
    "arena": "solrace.bench.arena",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=sorted(KINDS), help="which benchmark")
    parser.add_argument(
        "rest", nargs=argparse.REMAINDER, help="the benchmark's own options (see KIND --help)"
    )


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(KINDS[args.kind])
    return int(module.main(list(args.rest)) or 0)
