"""`solrace bench replay`: how big `/api/replay/ID` is and how long it takes to build.

Races as `solrace bench records` plays them (the room rules, bots with noise, human-like
pauses; 8 seats of Klondike by default). For each: the replay's JSON and gzip sizes, and the
CPU time of building it (protocol/replay.py: every seat replayed with a view after each
move), beside a baseline measured in the same run: replaying the same moves with no views.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import time
from typing import Any

from solrace.bench.records import race
from solrace.engine import new_game
from solrace.protocol.replay import build_replay
from solrace.server.league.records import build_record


def plain_replay(record: dict[str, Any]) -> None:
    for moves in record["moves"].values():
        game = new_game(record["game"], record["seed"], record["game_options"])
        for move in moves:
            game.play(move)


def best_ms(fn: Any, arg: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t)
    return best * 1000


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench replay", description=__doc__)
    parser.add_argument("--game", default="klondike")
    parser.add_argument("--seats", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5, help="timings per race (best kept)")
    args = parser.parse_args(argv)
    options = {"draw": 1, "moves": "top"} if args.game == "klondike" else {}
    print(f"{args.seats}-seat {args.game} {options}; load average {os.getloadavg()[0]:.2f}")
    sizes, zipped, ratios = [], [], []
    for seed in range(1, args.seeds + 1):
        record = build_record(race(args.game, options, seed, args.seats, 0.1, 1.5))
        body = json.dumps(build_replay(record), separators=(",", ":")).encode()
        gz = len(gzip.compress(body, 6))
        build = best_ms(build_replay, record, args.repeat)
        base = best_ms(plain_replay, record, args.repeat)
        moves = sum(len(m) for m in record["moves"].values())
        sizes.append(len(body))
        zipped.append(gz)
        ratios.append(build / base)
        print(
            f"  seed {seed}: {moves} moves, JSON {len(body)} B ({len(body) / moves:.0f} B a move), "
            f"gzip {gz} B; build {build:.1f} ms, plain replay {base:.1f} ms (x{build / base:.1f})",
            flush=True,
        )
    print(
        f"median: JSON {statistics.median(sizes):.0f} B, gzip {statistics.median(zipped):.0f} B, "
        f"build / plain replay x{statistics.median(ratios):.1f}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    return 0
