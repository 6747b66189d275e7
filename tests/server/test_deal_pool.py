"""Shipped pools of winnable deals (server/solver/deal_pool.py, issue 24).

A pool is every seed of a range solved offline at a large budget, the won ones shipped as
package data; the dailies and winnable rooms draw from it as `--deal-pool` says. Checked
here: the files are installed and read back as written, their deals replay to a win at the
budget they were decided at, a day's pick is the same in two processes, a daily asked before
it was drawn is dealt from the pool at once (the pre-draw searches, and agrees), and a rule
set without a pool still draws by the solver's search. Real solver processes, a real Redis.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from helpers.deals import TEST_SECRET
from helpers.race import until
from helpers.timing import scaled
from solrace.cli import main
from solrace.engine import new_game
from solrace.engine.solve import solve_deal
from solrace.engine.solve_leapyear import C_SEARCH as LEAPYEAR_C_SEARCH
from solrace.protocol.records import day_end_ms
from solrace.server.league.boards import Boards
from solrace.server.league.daily import (
    POOLED,
    Dailies,
    candidate_seed,
    daily_id,
    default_options,
    next_date,
)
from solrace.server.solver import deal_pool
from solrace.server.solver.deal_pool import DealPool, PoolSeed, daily_pick
from solrace.server.solver.solver_jobs import DRAW
from solrace.server.solver.solving import Budgets, SolverPool
from solrace.server.store.redis_conn import Client, connect

POOLS = Path(__file__).resolve().parents[2] / "server" / "solver" / "pools"
NAMES = sorted(p.name for p in POOLS.glob("*.csv"))
DAY = "2026-12-02"


def test_every_game_with_a_pool_ships_it_as_written() -> None:
    """Package data, as the Lua scripts are (tests/server/test_store_scripts.py): the strict
    editable install, like a wheel, holds only what pyproject's package-data names."""
    assert {"klondike.csv", "puttputt.csv", "tabbycat.csv", "manx.csv"} <= set(NAMES)
    for name in NAMES:
        shipped = files("solrace.server.solver").joinpath("pools", name).read_text()
        assert shipped == (POOLS / name).read_text(), name
    assert len(deal_pool.shipped()) == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_pool_is_small_and_decided_at_least_at_the_draw_budget(name: str) -> None:
    text = (POOLS / name).read_text()
    pool = deal_pool.parse(text)
    assert len(text) < 8_000  # a few KB: a file per rule set in the package
    assert deal_pool.render(pool) == text  # as `solrace solve --pool` writes it
    assert pool.options == default_options(pool.game)
    assert pool.budget >= Budgets().for_draw(pool.game)
    assert len(pool.seeds) >= 10
    for s in pool.seeds:
        assert any(s.seed in r for r in pool.tried)
        assert s.budget == pool.budget and 0 < s.positions <= pool.budget and s.length > 0


def compiled_only(game: str) -> None:
    """Leap Year's pool was decided by its compiled search, whose counts are its own (not a
    port of the Python search's): without the extension only SOLRACE_NO_C_SOLVER=1 lets its
    replay be skipped (a skip, not a pass); else the check runs and fails."""
    if (
        game == "leapyear"
        and not LEAPYEAR_C_SEARCH
        and os.environ.get("SOLRACE_NO_C_SOLVER") == "1"
    ):
        pytest.skip("SOLRACE_NO_C_SOLVER=1: Leap Year's pool needs its compiled search")


@pytest.mark.parametrize("name", NAMES)
def test_pooled_deals_replay_to_a_win(name: str) -> None:
    """The solver is deterministic: at the pool's budget it finds the pool's win again (the
    quickest three of each pool, to stay cheap: the slow lane checks them all), and the engine
    plays it to the end."""
    pool = deal_pool.parse((POOLS / name).read_text())
    compiled_only(pool.game)
    for s in sorted(pool.seeds, key=lambda s: s.positions)[:3]:
        r = solve_deal(pool.game, s.seed, pool.options, pool.budget)
        assert (r.verdict, r.nodes, len(r.moves)) == ("won", s.positions, s.length)
        game = new_game(pool.game, s.seed, pool.options)
        for move in r.moves:
            game.play(move)
        assert game.is_won()


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_pooled_deal_replays_to_a_win(name: str) -> None:
    """The slow lane's whole check of the test above: every deal of every pool, not only the
    quickest three (a pool is what dailies are dealt from, so one stale entry is a daily the
    solver can no longer show is winnable)."""
    pool = deal_pool.parse((POOLS / name).read_text())
    compiled_only(pool.game)
    for s in pool.seeds:
        r = solve_deal(pool.game, s.seed, pool.options, pool.budget)
        assert (r.verdict, r.nodes, len(r.moves)) == ("won", s.positions, s.length), s.seed
        game = new_game(pool.game, s.seed, pool.options)
        for move in r.moves:
            game.play(move)
        assert game.is_won(), s.seed


def test_the_days_pick_is_the_same_in_another_process_and_never_twice_in_a_cycle() -> None:
    pool = deal_pool.pool_for("klondike", default_options("klondike"))
    assert pool is not None
    secret = TEST_SECRET.encode()
    code = (
        "import sys; from solrace.server.solver import deal_pool as p; "
        "pool = p.pool_for('klondike', {'draw': 1, 'moves': 'top', 'passes': 0}); "
        f"print(p.daily_pick(pool, {secret!r}, '{DAY}').seed)"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(other.stdout) == daily_pick(pool, secret, DAY).seed
    n = len(pool.seeds)
    days = [(deal_pool.EPOCH + datetime.timedelta(days=i)).isoformat() for i in range(3 * n)]
    picks = [daily_pick(pool, secret, d).seed for d in days]  # three cycles from 2026-01-01
    for c in range(3):
        assert sorted(picks[c * n : (c + 1) * n]) == sorted(s.seed for s in pool.seeds)
    assert all(a != b for a, b in itertools.pairwise(picks))  # not even across cycles
    assert picks[:n] != picks[n : 2 * n]  # each cycle its own order
    # another secret, another order
    assert [daily_pick(pool, b"another", d).seed for d in days[:n]] != picks[:n]


def test_solve_makes_and_extends_a_pool_of_one_rule_set_and_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "p.csv")
    base = ["solve", "puttputt", "--budget", "100000", "--no-moves", "--pool", path]
    assert main([*base[:2], "--seeds", "1-4", *base[2:]]) == 0
    assert main([*base[:2], "--seeds", "3-8", *base[2:]]) == 0
    pool = deal_pool.parse(Path(path).read_text())
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    won = sorted({r["seed"] for r in rows if r["verdict"] == "won"})
    assert [s.seed for s in pool.seeds] == won and pool.tried == (range(1, 9),)
    assert pool.game == "puttputt" and pool.budget == 100_000
    before = Path(path).read_text()
    # another budget is another pool: refused before anything is solved
    assert main(["solve", "puttputt", "--seeds", "9-9", "--budget", "5", "--pool", path]) == 2
    assert Path(path).read_text() == before


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Client]:
    client = connect(redis_url, max_connections=4, pool_timeout=5)
    yield client
    await client.aclose()


async def wipe(redis: Client, prefix: str) -> None:
    found = await redis.keys(prefix + "*")
    if found:
        await redis.delete(*found)


def dailies(redis: Client, prefix: str, pool: SolverPool | None, today: str) -> Dailies:
    now = day_end_ms(today) - 43_200_000  # noon of that day
    secret = TEST_SECRET.encode()
    return Dailies(
        redis, prefix, Boards(redis, prefix), clock=lambda: now, solver=pool, secret=lambda: secret
    )


class HeldDraws(SolverPool):
    """A solver whose draws wait until the test lets them go: a search still under way."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(workers=1, **kw)
        self.go = asyncio.Event()
        self.draws = 0

    async def draw(self, fn: Any, *args: Any, kind: str = DRAW) -> Any:
        self.draws += 1
        await self.go.wait()
        return await super().draw(fn, *args, kind=kind)


async def test_a_daily_asked_before_it_was_drawn_comes_from_the_pool_at_once(
    redis: Client, key_prefix: str
) -> None:
    """A new deployment: the pre-draw is searching today's deal when the first player asks;
    the pool answers (the same deal in a second deployment with the same secret), and the
    search, once done, finds the day dealt and gives that deal too."""
    pool = deal_pool.pool_for("puttputt", {})
    assert pool is not None
    want = daily_pick(pool, TEST_SECRET.encode(), DAY)
    solver = HeldDraws()
    d = dailies(redis, key_prefix, solver, DAY)
    key = d.key(DAY, "puttputt", "deal")
    try:
        d.predraw(["puttputt"])
        await until(lambda: solver.draws > 0, "the pre-draw's search waits on the solver")
        dealt = await asyncio.wait_for(d.deal(DAY, "puttputt"), timeout=scaled(30))
        assert (dealt.seed, dealt.solution, dealt.n) == (want.seed, want.length, POOLED)
        assert json.loads(await redis.get(key)) == {
            "seed": want.seed,
            "solution": want.length,
            "n": POOLED,
        }
        second = SolverPool(workers=1)
        other = dailies(redis, key_prefix + "other:", second, DAY)
        try:
            assert await other.deal(DAY, "puttputt") == dealt
        finally:
            await other.flush()
            second.close()
        solver.go.set()  # the search goes on (today's, then the next days')
        days = (next_date(DAY), next_date(next_date(DAY)))
        ahead = [d.key(day, "puttputt", "deal") for day in days]

        async def all_drawn() -> bool:
            return int(await redis.exists(*ahead)) == len(ahead)

        await until(all_drawn, "the pre-draw's next days", timeout=120)
        assert d.deals.kept.get(daily_id(DAY, "puttputt")) is not None  # today's search ended
        assert await d.deal(DAY, "puttputt") == dealt
        assert json.loads(await redis.get(key))["n"] == POOLED
    finally:
        await d.flush()
        solver.close()
        await wipe(redis, key_prefix)


async def test_the_predraw_searches_a_secret_deal_by_default(
    redis: Client, key_prefix: str
) -> None:
    """`cold`: the pre-draw (nobody waiting) deals the day by search, candidate n, as before."""
    solver = SolverPool(workers=1)
    d = dailies(redis, key_prefix, solver, DAY)
    opts = default_options("puttputt")
    try:
        d.predraw(["puttputt"])

        async def drawn() -> bool:
            return bool(await redis.exists(d.key(DAY, "puttputt", "deal")))

        await until(drawn, "the pre-draw's deal", timeout=120)
        dealt = await d.deal(DAY, "puttputt")
        assert dealt.n >= 0
        assert dealt.seed == candidate_seed(TEST_SECRET.encode(), DAY, "puttputt", opts, dealt.n)
    finally:
        await d.flush()
        solver.close()
        await wipe(redis, key_prefix)


def only(pool: DealPool) -> Any:
    return lambda game, options: pool if game == pool.game else None


async def test_always_deals_rooms_and_dailies_from_the_pool_and_a_rule_set_without_one_by_search(
    redis: Client, key_prefix: str
) -> None:
    """`always`: a winnable room and a daily of a game with a pool come from it; a game
    without one (Tabby Cat here) still draws by the solver's search."""
    pool = DealPool("puttputt", {}, 2_000_000, (PoolSeed(7, 2_000_000, 4417, 51),), (range(7, 8),))
    seeds = iter([2, 1, *range(10, 10_000)])  # Tabby Cat seed 2 won at 4,298 positions
    solver = SolverPool(
        workers=1,
        budgets=Budgets(draw={"tabbycat": 30_000}),
        seeds=lambda: next(seeds),
        pool_mode="always",
        pools=only(pool),
    )
    d = dailies(redis, key_prefix, solver, DAY)
    try:
        room = await solver.winnable({"game": "puttputt", "game_options": {}})
        assert (room.seed, room.solution, room.tried) == (7, 51, 0)
        searched = await solver.winnable({"game": "tabbycat", "game_options": {}})
        assert searched.seed == 2 and searched.tried >= 1
        assert searched.solution == len(solve_deal("tabbycat", 2, {}, 30_000).moves)
        assert (await d.deal(DAY, "puttputt")).seed == 7
        tabby = await d.deal(DAY, "tabbycat")  # the first candidate won at 30,000
        opts = default_options("tabbycat")
        assert tabby.n >= 0
        assert tabby.seed == candidate_seed(TEST_SECRET.encode(), DAY, "tabbycat", opts, tabby.n)
        # a hint from a pooled deal gets at least the pools' budget
        text = new_game("klondike", 1, {}).to_text()
        assert solver.hint_budget(text) >= deal_pool.budget_for("klondike") > 50_000
    finally:
        await d.flush()
        solver.close()
        await wipe(redis, key_prefix)


async def test_off_never_draws_from_a_pool(redis: Client, key_prefix: str) -> None:
    pool = DealPool("puttputt", {}, 2_000_000, (PoolSeed(7, 2_000_000, 4417, 51),), (range(7, 8),))
    solver = SolverPool(workers=1, pool_mode="off", pools=only(pool))
    d = dailies(redis, key_prefix, solver, DAY)
    try:
        assert solver.pool("puttputt", {}) is None
        assert (await d.deal(DAY, "puttputt")).n >= 0  # searched
    finally:
        await d.flush()
        solver.close()
        await wipe(redis, key_prefix)


def test_a_background_draw_is_decided_at_the_pools_budget() -> None:
    """A searched daily or stocked deal (a background draw, `for_daily`) is any deal won at
    the shipped pool's budget, as a pooled one is. With the compiled searches that is past a
    room's on-demand draw: Klondike 10,000,000 positions against 1,000,000, Leap Year
    30,000,000 against 1,000,000; without them the Klondike pre-draw searches 100,000, more
    than a room's 30,000. Tabby Cat and Manx 1,000,000 against 200,000. Putt Putt, always
    decided, searches at its draw budget."""
    from solrace.engine.solve_klondike import C_SEARCH
    from solrace.engine.solve_leapyear import C_SEARCH as LEAPYEAR_C_SEARCH

    b = Budgets()
    klondike = deal_pool.pool_for("klondike", default_options("klondike"))
    leapyear = deal_pool.pool_for("leapyear", default_options("leapyear"))
    assert klondike is not None and leapyear is not None
    if C_SEARCH:
        assert b.for_daily("klondike") == klondike.budget == 10_000_000
        assert b.for_draw("klondike") == 1_000_000
    else:
        assert klondike.budget >= b.for_daily("klondike") == 100_000 > b.for_draw("klondike")
    if LEAPYEAR_C_SEARCH:
        assert b.for_daily("leapyear") == leapyear.budget == 30_000_000
        assert b.for_draw("leapyear") == 1_000_000
    else:
        assert leapyear.budget >= b.for_daily("leapyear") == b.for_draw("leapyear")
    for game in ("tabbycat", "manx"):  # past a room's 200,000: the deals won only later
        pool = deal_pool.pool_for(game, default_options(game))
        assert pool is not None
        assert b.for_daily(game) == pool.budget == 1_000_000 > b.for_draw(game) == 200_000
    assert b.for_daily("puttputt") == b.for_draw("puttputt")
