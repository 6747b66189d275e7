"""`solrace bench records`: how many bytes a race record takes (issue 13: <= 2 KiB for an
8-player Klondike race).

Each race is played by the room rules themselves (server/room.py, no network): N seats on one
deal, each a bot (client/strategy.py, its own tie-break generator, and a share `--noise` of
its moves a random legal move instead, so that the seats play apart as people do), each move
timed a human-like pause after the last (log-normal, median `--pause` seconds). The record is
built and packed exactly as the server stores it (server/records.py), so the figures are the
stored value's length; the text file's length is printed beside it.
"""

from __future__ import annotations

import argparse
import random
import statistics
from typing import Any

from solrace.client.moves import Board
from solrace.client.strategy import choose_move
from solrace.protocol.record_text import export
from solrace.protocol.records import pack
from solrace.server.records import build_record
from solrace.server.room import Room, token_hash

T0 = 1_795_350_000_000
MOVE_CAP = 400


def race(
    game: str, options: dict[str, Any], seed: int, seats: int, noise: float, pause: float
) -> Room:
    room = Room.new("BENCH", token_hash("host"), {"game": game, "game_options": options}, T0)
    for i in range(seats):
        room.join(f"player{i}", token_hash(f"t{i}"), T0, player=f"{i:016d}")
    room.start(T0, seed, random.Random(seed).randbytes(16))
    now = room.doc["starts_at"]
    room.tick(now)
    for seat in range(seats):
        rng = random.Random(seed * 100 + seat)
        game_ = room.races[seat].game
        at = now  # each seat starts at the start
        history: list[str] = []
        seen: set[tuple[Any, ...]] = set()
        while room.status(seat) == "racing" and len(history) < MOVE_CAP:
            view = game_.view()
            if rng.random() < noise:
                move: str | None = str(rng.choice(game_.legal_moves()))
            else:
                move = choose_move(view, history, seen, rng=rng)
            if move is None:
                break
            seen.add(Board.from_view(view).key())
            at += max(80, int(rng.lognormvariate(0, 0.7) * pause * 1000))
            room.play(seat, move, None, at)
            history.append(move)
        if room.status(seat) == "racing":
            room.resign(seat, at)
    room.finish_if_done(max([now] + [e.at for r in room.races.values() for e in r.entries]))
    return room


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench records", description=__doc__)
    parser.add_argument("--game", default="klondike")
    parser.add_argument("--seats", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5, help="races per option set (seeds 1..N)")
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--pause", type=float, default=1.5, help="median seconds between moves")
    args = parser.parse_args(argv)
    option_sets = (
        [{"draw": 1, "moves": "top"}, {"draw": 1, "moves": "build"}, {"draw": 3, "moves": "build"}]
        if args.game == "klondike"
        else [{}]
    )
    print(f"{args.seats}-player {args.game} races, noise {args.noise}, median pause {args.pause} s")
    for options in option_sets:
        sizes, texts, per_move = [], [], []
        for seed in range(1, args.seeds + 1):
            record = build_record(
                race(args.game, options, seed, args.seats, args.noise, args.pause)
            )
            moves = sum(len(m) for m in record["moves"].values())
            size = len(pack(record))
            sizes.append(size)
            texts.append(len(export(record)))
            per_move.append(size / max(1, moves))
            print(
                f"  {options} seed {seed}: {moves} moves, record {size} B, text {texts[-1]} B",
                flush=True,
            )
        print(
            f"{options}: record median {statistics.median(sizes):.0f} B (min {min(sizes)}, "
            f"max {max(sizes)}), {statistics.median(per_move):.2f} B a move; "
            f"text median {statistics.median(texts):.0f} B",
            flush=True,
        )
    return 0
