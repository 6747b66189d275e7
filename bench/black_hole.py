"""`solrace bench black-hole`: our Putt Putt solver against black-hole-solver, deal by deal.

black-hole-solver is Shlomi Fish's C solver for Golf, Black Hole and All in a Row
(https://github.com/shlomif/black-hole-solitaire, MIT). Its ``--game golf --wrap-ranks``
plays exactly Putt Putt (RULES.md 5.2): one card from a tableau top onto the foundation
when one rank above or below it, K and A neighbours both ways, the talon dealt onto the
foundation one card at a time at any moment, won when the tableau is empty whatever is
left in the talon. It is not part of this project and nothing of it is vendored: build it
outside the repository and give its ``black-hole-solve`` binary with ``--bin`` or
``$BLACK_HOLE_SOLVE``. The steps used on 2026-11-23 (its CMake needs Shlomi Fish's own
CMake modules, so the binary is compiled by hand from the c-solver directory, with
Debian's libxxhash-dev and libpath-tiny-perl, and rinutils, header-only, from its repo)::

    cd $BUILD && perl $SRC/scripts/gen-c-lookup-files.pl \\
        && python3 $SRC/scripts/source_filter.py --process=no_max_num_played
    # config.h: FCS_IA_PACK_SIZE 64, USE_SYSTEM_XXHASH 1, BHS_STATE_STORAGE 0 (internal
    # hash, and the three BHS_STATE_STORAGE_* constants 0/1/2), SIZEOF_VOID_P 8, VERSION
    gcc -O2 -DNDEBUG -DXXH_CPU_LITTLE_ENDIAN=1 -I. -Igenerated -Igenerated/include \\
        -I$SRC/include -I$SRC -I$RINUTILS/rinutils/include -o black-hole-solve \\
        $SRC/single_board_main.c can_move.c generated/lib.c $SRC/meta_alloc.c \\
        $SRC/rank_reach_prune.c $SRC/fcs_hash.c -lxxhash

For every seed the deal is written in its board format straight from the shuffled deck
(RULES.md 2 and 5.2, not from the engine), checked against the engine's own position,
and solved by both solvers in the same worker, one after the other. A "won" from the C
solver is replayed with the engine; ours is replayed by ``solve`` itself. Any verdict
that differs is listed with the evidence. CPU seconds: ours by ``time.process_time``
around ``solve``; theirs by the child's rusage (user + system), which includes starting
the process (measured alone on a one-move deal and printed as "start-up").
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import time
from collections.abc import Sequence
from multiprocessing import Pool
from typing import Any

from solrace.engine import new_game, replay
from solrace.engine.cards import TEXT
from solrace.engine.deal import shuffled_deck
from solrace.engine.solve import solve

ARGS = ("--game", "golf", "--wrap-ranks", "-")
MOVE_PREFIX = "Move a card from stack "


def board_text(seed: int) -> str:
    """The Putt Putt deal of ``seed`` in black-hole-solver's Golf board format.

    RULES.md 5.2: ``cards[0..34]`` are dealt in rows of seven, bottom row first, so pile
    ``tX`` is ``cards[X-1], cards[X+6], ...`` bottom to top (its board line lists a column
    bottom to top too: the last card is the one that plays); ``cards[35]`` is the
    foundation; the talon line lists ``cards[36..51]`` first dealt first.
    """
    cards = [TEXT[c] for c in shuffled_deck(seed)]
    lines = ["Talon: " + " ".join(cards[36:]), "Foundations: " + cards[35]]
    lines += [" ".join(cards[x:35:7]) for x in range(7)]
    return "\n".join(lines) + "\n"


def engine_board_text(seed: int) -> str:
    """The same board written from the engine's position text (to check ``board_text``)."""
    piles = {
        name: items
        for name, *items in (ln.split() for ln in new_game("puttputt", seed).to_text().splitlines())
        if name != "game"
    }
    lines = ["Talon: " + " ".join(piles["s"]), "Foundations: " + piles["f1"][-1]]
    lines += [" ".join(piles[f"t{x}"]) for x in range(1, 8)]
    return "\n".join(lines) + "\n"


def parse_output(out: str) -> tuple[str, list[str], int]:
    """(verdict, moves in our notation, states checked) from black-hole-solve's output.

    Its columns are numbered from 0 ("stack 6" is t7); "Deal talon" is our ``deal``.
    """
    lines = out.splitlines()
    head = lines[0].strip() if lines else ""
    verdict = {"Solved!": "won", "Unsolved!": "lost", "Intractable!": "unknown"}.get(head)
    if verdict is None:
        raise ValueError(f"unexpected black-hole-solve output: {head!r}")
    moves = []
    states = 0
    for ln in lines:
        if ln.startswith(MOVE_PREFIX):
            moves.append(f"t{int(ln[len(MOVE_PREFIX) :].split()[0]) + 1}-f1")
        elif ln.startswith("Deal talon"):
            moves.append("deal")
        elif ln.startswith("Total number of states checked is "):
            states = int(ln.rsplit(" ", 1)[1].rstrip("."))
    return verdict, moves, states


def run_binary(binary: str, board: str) -> tuple[str, float]:
    """Run black-hole-solve on one board: (stdout, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([binary, *ARGS], input=board, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if not proc.stdout:  # it exits 0 when solved and 255 when not: the text says which
        raise RuntimeError(f"black-hole-solve failed ({proc.returncode}): {proc.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.stdout, cpu


def replays_to_win(seed: int, moves: list[str]) -> bool:
    """Whether ``moves`` are legal from the deal of ``seed`` and end in a win (engine's play)."""
    try:
        return replay("puttputt", seed, {}, moves).is_won()
    except ValueError:
        return False


def compare_seed(job: tuple[str, int]) -> dict[str, Any]:
    """Both solvers on one deal (module level: picklable for the pool)."""
    binary, seed = job
    board = board_text(seed)
    if board != engine_board_text(seed):
        raise RuntimeError(f"seed {seed}: board from the deck differs from the engine's position")
    g = new_game("puttputt", seed)
    cpu = time.process_time()
    ours = solve(g)
    ours_cpu = time.process_time() - cpu
    out, theirs_cpu = run_binary(binary, board)
    verdict, moves, states = parse_output(out)
    return {
        "seed": seed,
        "ours": ours.verdict,
        "ours_cpu": ours_cpu,
        "ours_nodes": ours.nodes,
        "theirs": verdict,
        "theirs_cpu": theirs_cpu,
        "theirs_states": states,
        "theirs_replays": replays_to_win(seed, moves) if verdict == "won" else None,
    }


def startup_cpu(binary: str, repeat: int = 20) -> float:
    """Median CPU seconds of black-hole-solve on a deal won in one move (process start-up)."""
    board = "Foundations: 2S\n" + "AH\n" + "\n" * 6
    return statistics.median(run_binary(binary, board)[1] for _ in range(repeat))


def _seeds(text: str) -> range:
    a, _, b = text.partition("-")
    return range(int(a), int(b or a) + 1)


def _stats(xs: Sequence[float]) -> str:
    if not xs:
        return "n 0"
    return f"n {len(xs)} mean {statistics.fmean(xs):.4f} median {statistics.median(xs):.4f}"


def report(rows: list[dict[str, Any]], start_up: float) -> list[str]:
    """The comparison as printable lines: agreement, disagreements, CPU per deal both ways."""
    n = len(rows)
    agree = sum(1 for r in rows if r["ours"] == r["theirs"])
    bad_replays = [r["seed"] for r in rows if r["theirs_replays"] is False]
    out = [
        f"deals {n}: verdicts agree on {agree}; ours won {sum(r['ours'] == 'won' for r in rows)}"
        f" lost {sum(r['ours'] == 'lost' for r in rows)}"
        f" unknown {sum(r['ours'] == 'unknown' for r in rows)};"
        f" black-hole-solver won {sum(r['theirs'] == 'won' for r in rows)}"
        f" lost {sum(r['theirs'] == 'lost' for r in rows)}"
        f" unknown {sum(r['theirs'] == 'unknown' for r in rows)}",
        f"black-hole-solver solutions that do not replay to a win with our engine: {bad_replays}",
    ]
    for r in rows:
        if r["ours"] != r["theirs"]:
            out.append(
                f"DISAGREE seed {r['seed']}: ours {r['ours']}, black-hole-solver {r['theirs']}"
            )
    for who in ("ours", "theirs"):
        cpu = [r[f"{who}_cpu"] for r in rows]
        won = [r[f"{who}_cpu"] for r in rows if r[who] == "won"]
        lost = [r[f"{who}_cpu"] for r in rows if r[who] == "lost"]
        name = "ours" if who == "ours" else "black-hole-solver"
        out.append(
            f"{name} CPU s per deal: all {_stats(cpu)} max {max(cpu):.3f};"
            f" winnable {_stats(won)}; unwinnable {_stats(lost)}"
        )
    ours = sum(r["ours_cpu"] for r in rows)
    theirs = sum(r["theirs_cpu"] for r in rows)
    out.append(
        f"black-hole-solver start-up CPU per run (in its figures): {start_up:.4f} s;"
        f" states checked {sum(r['theirs_states'] for r in rows)},"
        f" ours positions {sum(r['ours_nodes'] for r in rows)}"
    )
    out.append(
        f"ratio of mean CPU per deal, ours / black-hole-solver: {ours / theirs:.2f}"
        f" (goal <= 5): {'MET' if ours <= 5 * theirs else 'MISSED'}"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench black-hole", description=__doc__)
    parser.add_argument(
        "--bin",
        default=os.environ.get("BLACK_HOLE_SOLVE"),
        help="path of black-hole-solve (default $BLACK_HOLE_SOLVE)",
    )
    parser.add_argument("--seeds", default="1-2000", help="seed range A-B (default 1-2000)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args(argv)
    if not args.bin:
        parser.error("give black-hole-solve's path with --bin or $BLACK_HOLE_SOLVE")
    seeds = _seeds(args.seeds)
    load0 = os.getloadavg()
    start_up = startup_cpu(args.bin)
    wall = time.perf_counter()
    with Pool(args.jobs) as pool:
        rows = list(pool.imap(compare_seed, [(args.bin, s) for s in seeds], chunksize=4))
    wall = time.perf_counter() - wall
    load1 = os.getloadavg()
    for line in report(rows, start_up):
        print(line)
    print(
        f"seeds {args.seeds}, {args.jobs} worker(s), wall {wall:.1f} s;"
        f" load average {load0[0]:.2f} at the start, {load1[0]:.2f} at the end"
    )
    return 0
