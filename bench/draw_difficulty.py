"""`solrace bench winnable --difficulty`: how hard are the deals a winnable draw picks?

A winnable draw (a daily, a `deal: winnable` room) takes a seed the solver wins within the
draw budget. Seeds are random, so the drawn deals are spread evenly over the deals won
within that budget. This bench solves every deal of a seed range at a large budget ("all
winnable": every deal won there) and at the draw budget ("drawn": the deals the draw can
take), and prints the difficulty of both sets side by side: the solver's solution length,
the positions it needed at the large budget, and (`--bot N`, on the first N deals of each
set) the share the bot of client/strategy.py wins and its mean progress, a human-like
player's view of hardness. With a small draw budget (the server's until 2026-11-26: 500
Klondike positions, 2,500 Tabby Cat or Manx) the drawn set is the easy end of the
winnable one; with the server's budget now the two are the same set, and what stays out
is the share still "unknown" at that budget, printed with each game.

    solrace bench winnable --difficulty --games tabbycat --seeds 1-200 --draw-budget 2500
    solrace bench winnable --difficulty --games tabbycat --from tabbycat=FILE

`--pool` describes the shipped deal pools instead (server/solver/pools: every seed of a range
solved at a large budget offline, the won ones kept): each pool's deals (all winnable deals
of its seeds at its budget) beside the part of them a search at the server's draw budget
could draw (those won within that many positions: `--infer`'s rule), read from the pool
files, no solving.

    solrace bench winnable --difficulty --pool

`--from GAME=FILE` reads the large-budget verdicts from `python -m solrace.bench.solve_family`
output (seed, verdict, positions, CPU s, solution length per line) instead of solving again.
One JSON line per game and set.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from solrace.client.moves import Board
from solrace.client.strategy import choose_move
from solrace.engine import new_game
from solrace.engine.solve import WON, solve_deal

#: the bot's moves per deal at most (as the strategy's tests)
BOT_MOVES = 600


@dataclass(frozen=True)
class Solved:
    """One deal's verdict at a budget: positions expanded, CPU seconds, solution length."""

    seed: int
    verdict: str
    nodes: int
    cpu: float
    moves: int


def solve_one(game: str, seed: int, budget: int) -> Solved:
    """In a worker: one deal at one budget, its CPU measured around the solve."""
    t = time.process_time()
    r = solve_deal(game, seed, {}, budget)
    return Solved(seed, r.verdict, r.nodes, time.process_time() - t, len(r.moves))


def solve_range(game: str, seeds: range, budget: int, jobs: int) -> dict[int, Solved]:
    with ProcessPoolExecutor(jobs) as pool:
        out = pool.map(solve_one, [game] * len(seeds), seeds, [budget] * len(seeds))
        return {s.seed: s for s in out}


def family_budget(path: str) -> int:
    """The budget a `solve_family` run was made at (its first line names it)."""
    with open(path) as f:
        words = f.readline().split()
    return int(words[words.index("budget") + 1])


def read_family(path: str, seeds: range) -> dict[int, Solved]:
    """The per-deal lines of a `solve_family` run (comment lines skipped)."""
    out: dict[int, Solved] = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or len(line.split()) != 5:
                continue
            seed, verdict, nodes, cpu, moves = line.split()
            if int(seed) in seeds:
                out[int(seed)] = Solved(int(seed), verdict, int(nodes), float(cpu), int(moves))
    return out


def play_bot(game: str, seed: int) -> tuple[bool, float]:
    """The strategy bot on one deal, from its own views only: (won, progress)."""
    g = new_game(game, seed=seed, options={})
    history: list[str] = []
    seen: set[Any] = set()
    for _ in range(BOT_MOVES):
        view = g.view()
        seen.add(Board.from_view(view).key())
        move = choose_move(view, history, seen)
        if move is None:
            break
        g.play(move)
        history.append(move)
    return g.is_won(), g.progress()


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))] if s else float("nan")


def describe(deals: list[Solved]) -> dict[str, Any]:
    """Solution length and positions (at the large budget) of a set of won deals."""
    lengths = [float(d.moves) for d in deals]
    nodes = [float(d.nodes) for d in deals]

    def spread(xs: list[float]) -> dict[str, float]:
        mean = sum(xs) / len(xs) if xs else float("nan")
        return {
            "mean": round(mean, 1),
            "p10": quantile(xs, 0.1),
            "p50": quantile(xs, 0.5),
            "p90": quantile(xs, 0.9),
        }

    return {"deals": len(deals), "solution": spread(lengths), "positions": spread(nodes)}


def bot_share(game: str, deals: list[Solved], n: int, jobs: int) -> dict[str, Any]:
    """The bot on the first n deals of a set: wins and mean progress."""
    seeds = [d.seed for d in deals[:n]]
    if not seeds:
        return {}
    with ProcessPoolExecutor(jobs) as pool:
        played = list(pool.map(play_bot, [game] * len(seeds), seeds))
    wins = sum(won for won, _ in played)
    return {
        "bot_deals": len(seeds),
        "bot_won": wins,
        "bot_progress": round(sum(p for _, p in played) / len(played), 3),
    }


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def compare(
    game: str,
    seeds: range,
    big: int,
    draw: int,
    jobs: int,
    family: str | None,
    bot: int,
    dump: str | None = None,
    infer: bool = False,
) -> list[dict[str, Any]]:
    """The rows for one game: all deals won at `big`, and those won at `draw` (the draw's)."""
    start = load()
    every = read_family(family, seeds) if family else solve_range(game, seeds, big, jobs)
    if not family and dump:
        with open(dump, "w") as f:  # solve_family's format, for --from next time
            print(f"# {game} seeds {seeds[0]}-{seeds[-1]} budget {big} load {start}", file=f)
            for d in every.values():
                print(f"{d.seed} {d.verdict} {d.nodes} {d.cpu:.3f} {d.moves}", file=f)
    if infer:  # won within the draw budget: a deal won at the large one in as few positions
        quick = {s: d for s, d in every.items() if d.verdict == WON and d.nodes <= draw}
    else:
        quick = solve_range(game, seeds, draw, jobs) if draw < big else every
    winnable = [every[s] for s in seeds if s in every and every[s].verdict == WON]
    drawn = [every[s] for s in seeds if s in quick and quick[s].verdict == WON and s in every]
    unknown = sum(d.verdict == "unknown" for d in every.values())
    rows = []
    for name, budget, deals in (("all winnable", big, winnable), ("drawn", draw, drawn)):
        row = {"game": game, "set": name, "budget": budget, "seeds": f"{seeds[0]}-{seeds[-1]}"}
        row["drawn_by"] = "positions at the large budget" if infer else "solved at the budget"
        row |= {"solved": len(every), "unknown_at_big": unknown, **describe(deals)}
        row["cpu_s_per_deal_at_big"] = round(sum(d.cpu for d in every.values()) / len(every), 3)
        if bot:
            row |= bot_share(game, deals, bot, jobs)
        row["load"] = f"{start} / {load()}"
        rows.append(row)
    return rows


#: games whose search at a smaller budget is not the larger one's run cut short (Leap Year's
#: compiled search gives a share of its budget to the depth-first search and the rest to
#: beams), so the deals won within a budget cannot be read off a larger budget's positions
NOT_A_CUT = frozenset({"leapyear"})


def pool_rows() -> list[dict[str, Any]]:
    """Each shipped pool against the part of it the search at the draw budget could take
    (`inferred_exactly` False: an estimate, see `NOT_A_CUT`)."""
    from solrace.server.solver import deal_pool
    from solrace.server.solver.solving import Budgets

    rows = []
    for pool in deal_pool.shipped().values():
        draw = Budgets().for_draw(pool.game)
        deals = [Solved(s.seed, WON, s.positions, 0.0, s.length) for s in pool.seeds]
        tried = ",".join(f"{r.start}-{r.stop - 1}" for r in pool.tried)
        sets = (
            ("pool", pool.budget, deals),
            ("search draw", draw, [d for d in deals if d.nodes <= draw]),
        )
        for name, budget, chosen in sets:
            row = {"game": pool.game, "options": pool.options, "set": name, "budget": budget}
            if name == "search draw":
                row["inferred_exactly"] = pool.game not in NOT_A_CUT or budget >= pool.budget
            row |= {"seeds": tried, "tried": pool.tried_count(), **describe(chosen)}
            rows.append(row)
    return rows


def parse_range(text: str) -> range:
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def main(argv: list[str] | None = None) -> int:
    from solrace.server.solver.solving import Budgets

    parser = argparse.ArgumentParser(prog="solrace bench winnable --difficulty")
    parser.add_argument("--games", default="tabbycat,manx,klondike")
    parser.add_argument("--seeds", default="1-200", help="seed range A-B")
    parser.add_argument(
        "--big", type=int, default=None, help="the large budget (default: 10x the draw's)"
    )
    parser.add_argument(
        "--draw-budget", type=int, default=None, help="the draw's budget (default: the server's)"
    )
    parser.add_argument("--from", dest="family", action="append", default=[], metavar="GAME=FILE")
    parser.add_argument("--bot", type=int, default=0, help="bot games on the first N of each set")
    parser.add_argument("--dump", default=None, help="write the large-budget verdicts to FILE")
    parser.add_argument(
        "--infer",
        action="store_true",
        help="take the drawn set as the deals won at the large budget within the draw budget's "
        "positions instead of solving each again (the solvers' runs are the same up to where "
        "a budget cuts them; the default mode checks it)",
    )
    parser.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument(
        "--pool", action="store_true", help="describe the shipped deal pools (no solving)"
    )
    args = parser.parse_args(argv)
    if args.pool:
        for row in pool_rows():
            print(json.dumps(row), flush=True)
        return 0
    files = dict(f.split("=", 1) for f in args.family)
    seeds = parse_range(args.seeds)
    for game in args.games.split(","):
        draw = args.draw_budget or Budgets().for_draw(game)
        family = files.get(game)
        big = family_budget(family) if family else (args.big or 10 * draw)
        rows = compare(game, seeds, big, draw, args.jobs, family, args.bot, args.dump, args.infer)
        for row in rows:
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
