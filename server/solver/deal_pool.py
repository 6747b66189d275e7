"""Shipped pools of winnable deals: seeds decided offline at a large budget, per rule set.

A winnable draw (a daily, a `deal: winnable` room) searched at request time can only afford
a budget that keeps the wait short, and so it leans toward the deals the solver wins soonest
(Klondike at 30,000 positions draws 19 of the 27 deals of seeds 1-100 that 100,000 wins),
and a new deployment's first Klondike daily waited ~34 s for its search (issue 24). A pool
is the search done once, offline, at a budget no request could wait for: every seed of a
range is solved, and the won ones are shipped as package data (pools/*.csv, read with
importlib.resources), each with its verdict, the budget it was decided at, the positions
the solver expanded and its solution's length. Drawing from it costs nothing, and since
the pool holds *every* deal of its range won at that budget, its deals are as hard as all
winnable ones there (`solrace bench winnable --difficulty --pool`).

A pool's seeds are public (anyone with the package can read them, recognise a deal from
its first cards and look up its solution), where a searched seed is secret (a daily's is
derived from the server's secret; a room's is random and committed). So the server uses a
pool as `--deal-pool` says (`MODES`): by default (`cold`) only for a daily asked before it
was drawn (a new deployment's first minutes), never for a day the pre-draw reached;
`always` for every daily and winnable room (unbiased and instant, but public deals).

A file, made and extended by `solrace solve GAME --seeds A-B --budget N --pool FILE`::

    # solrace deal pool: every seed tried, the won ones listed
    # game: klondike
    # options: {"draw":1,"moves":"top","passes":0}
    # budget: 1000000
    # tried: 1-160
    seed,verdict,budget,positions,length
    6,won,1000000,6598,234
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from solrace.server.common.derive import DAILY_POOL, derive

#: where pools are drawn from (`solrace serve --deal-pool`): `cold` a daily not yet drawn
#: when asked; `always` every daily and winnable room of a rule set with a pool; `off` none
MODES = ("cold", "always", "off")
DEFAULT_MODE = "cold"
#: the package holding pools/*.csv
PACKAGE = "solrace.server.solver"
HEADER = "seed,verdict,budget,positions,length"
#: day 0 of the daily cycles (`daily_pick`)
EPOCH = datetime.date(2026, 1, 1)


@dataclass(frozen=True)
class PoolSeed:
    """One pooled deal: won within `budget` positions after `positions`, in `length` moves."""

    seed: int
    budget: int
    positions: int
    length: int


@dataclass(frozen=True)
class DealPool:
    """The won seeds of a rule set, and the seed ranges tried to find them."""

    game: str
    options: dict[str, Any]
    budget: int
    seeds: tuple[PoolSeed, ...]
    tried: tuple[range, ...]

    @property
    def key(self) -> str:
        return pool_key(self.game, self.options)

    def tried_count(self) -> int:
        return sum(len(r) for r in self.tried)


def pool_key(game: str, options: dict[str, Any]) -> str:
    """A rule set's name: its game and every option filled in (as a room holds them)."""
    return json.dumps([game, options], sort_keys=True, separators=(",", ":"))


def _ranges(text: str) -> tuple[range, ...]:
    out = []
    for part in text.replace(" ", "").split(","):
        if part:
            first, _, last = part.partition("-")
            out.append(range(int(first), int(last or first) + 1))
    return tuple(out)


def _range_text(tried: tuple[range, ...]) -> str:
    return ",".join(f"{r.start}-{r.stop - 1}" for r in tried)


def merge_ranges(ranges: list[range]) -> tuple[range, ...]:
    """Overlapping or touching ranges as one (the `tried` line stays short)."""
    out: list[range] = []
    for r in sorted((r for r in ranges if len(r)), key=lambda r: r.start):
        if out and r.start <= out[-1].stop:
            out[-1] = range(out[-1].start, max(out[-1].stop, r.stop))
        else:
            out.append(r)
    return tuple(out)


def parse(text: str) -> DealPool:
    """A pool file's contents (ValueError when a line is not what `render` writes)."""
    meta: dict[str, str] = {}
    seeds: list[PoolSeed] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            name, colon, value = line[1:].partition(":")
            if colon and name.strip() in ("game", "options", "budget", "tried"):
                meta[name.strip()] = value.strip()
            continue
        if line == HEADER:
            continue
        seed, verdict, budget, positions, length = line.split(",")
        if verdict != "won":
            raise ValueError(f"a pool lists won deals only, not {line!r}")
        seeds.append(PoolSeed(int(seed), int(budget), int(positions), int(length)))
    missing = {"game", "options", "budget", "tried"} - set(meta)
    if missing:
        raise ValueError(f"a pool file names its {', '.join(sorted(missing))}")
    return DealPool(
        meta["game"],
        json.loads(meta["options"]),
        int(meta["budget"]),
        tuple(sorted(seeds, key=lambda s: s.seed)),
        _ranges(meta["tried"]),
    )


def render(pool: DealPool) -> str:
    """The file text of a pool (what `parse` reads back)."""
    won = len(pool.seeds)
    tried = pool.tried_count()
    lines = [
        "# solrace deal pool: every seed of `tried` solved, the won ones listed (server/solver/deal_pool.py)",
        f"# game: {pool.game}",
        f"# options: {json.dumps(pool.options, sort_keys=True, separators=(',', ':'))}",
        f"# budget: {pool.budget}",
        f"# tried: {_range_text(pool.tried)}",
        f"# won {won} of {tried} seeds tried; extend with: solrace solve {pool.game} "
        f"--seeds A-B --budget {pool.budget} --pool FILE",
        HEADER,
    ]
    lines += [f"{s.seed},won,{s.budget},{s.positions},{s.length}" for s in pool.seeds]
    return "\n".join(lines) + "\n"


def merged(
    old: DealPool | None,
    game: str,
    options: dict[str, Any],
    budget: int,
    tried: range,
    rows: list[dict[str, Any]],
) -> DealPool:
    """`old` (None: a new pool) with the seeds of `tried` solved as `rows` say (`solrace
    solve` rows: seed, verdict, nodes, length). A pool holds one rule set at one budget:
    merging another is refused, so every deal in it was decided the same way."""
    if old is not None and (old.key != pool_key(game, options) or old.budget != budget):
        raise ValueError(
            f"the pool is {old.key} at {old.budget} positions, not {pool_key(game, options)} "
            f"at {budget}"
        )
    seeds = {s.seed: s for s in (old.seeds if old else ())}
    for row in rows:
        if row["verdict"] == "won":
            seed = int(row["seed"])
            seeds[seed] = PoolSeed(seed, budget, int(row["nodes"]), int(row["length"]))
    ranges = merge_ranges([*(old.tried if old else ()), tried])
    return DealPool(
        game, dict(options), budget, tuple(sorted(seeds.values(), key=lambda s: s.seed)), ranges
    )


@cache
def shipped() -> dict[str, DealPool]:
    """Every pool shipped with the package, by rule set (read once per process)."""
    out: dict[str, DealPool] = {}
    folder = files(PACKAGE).joinpath("pools")
    if not folder.is_dir():
        return out
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".csv"):
            pool = parse(entry.read_text())
            if pool.seeds:
                out[pool.key] = pool
    return out


def pool_for(game: str, options: dict[str, Any]) -> DealPool | None:
    """The shipped pool of a rule set (the options filled in, as a room holds them), if any."""
    return shipped().get(pool_key(game, options))


def budget_for(game: str) -> int:
    """The largest budget a shipped pool of `game` was decided at (0: none): a hint from
    a pooled deal's start needs that much to find the win the pool found."""
    return max((p.budget for p in shipped().values() if p.game == game), default=0)


def daily_pick(pool: DealPool, secret: bytes, date: str) -> PoolSeed:
    """A day's deal from a pool: the same in every process of a deployment (it depends on
    the server's secret, the date and the pool only), and no deal twice within a cycle of
    len(pool) days, nor on two days running: day d of cycle c is the d-th seed in an order
    keyed by the secret and c. Without the secret the order is unknown, so nobody can tell
    the day's deal before seeing its cards (its cards give it away: a pool is public)."""
    day = (datetime.date.fromisoformat(date) - EPOCH).days
    cycle, place = divmod(day, len(pool.seeds))
    order = _cycle_order(pool, secret, cycle)
    if len(order) > 1 and place < 2 and order[0] == _cycle_order(pool, secret, cycle - 1)[-1]:
        order[0], order[1] = order[1], order[0]  # the last day of a cycle, again the next day
    return order[place]


def _cycle_order(pool: DealPool, secret: bytes, cycle: int) -> list[PoolSeed]:
    return sorted(pool.seeds, key=lambda s: derive(secret, DAILY_POOL, pool.key, cycle, s.seed))
