"""A winnable draw takes any deal its budget decides is won, not the deals won soonest (issue 24).

Which deal a draw takes must depend only on the candidates' seeds and their verdicts at the
draw budget: a room's draw takes the first candidate *drawn* that is won (never the first
whose solve ended), and the budget is large, so a deal the old draw budget (2,500 Tabby Cat
positions) could not win is dealt. A daily stays the first candidate n won, the same in every
process, and is drawn days ahead into Redis. Real solver processes and a real Redis.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from helpers.deals import TEST_SECRET
from helpers.race import until
from solrace.engine.solve import solve_deal
from solrace.protocol.records import day_end_ms
from solrace.server.league.boards import Boards
from solrace.server.league.daily import (
    PREDRAW_DAYS,
    Dailies,
    candidate_seed,
    default_options,
    next_date,
)
from solrace.server.solver.solver_jobs import Jobs
from solrace.server.solver.solving import Budgets, SolverPool
from solrace.server.store.redis_conn import Client, connect

#: Tabby Cat's draw budget until 2026-11-26: a deal it could not win was never drawn
OLD_DRAW_BUDGET = 2_500
#: Tabby Cat seed 2 is won at 4,298 positions, seed 1 at 300 (solve_deal, default options)
SLOW, QUICK = 2, 1
#: candidate 0 of this day's Tabby Cat daily under TEST_SECRET is won at 7,639 positions
DAY = "2026-12-02"


def feed(*seeds: int) -> Iterator[int]:
    """The draw's candidates in this order, then more seeds (never reached in these tests)."""
    yield from seeds
    yield from range(10, 10_000)


async def test_a_room_draw_takes_the_first_won_candidate_drawn_not_the_first_solved() -> None:
    seeds = feed(SLOW, QUICK)
    budgets = Budgets(draw={"tabbycat": 30_000})
    pool = SolverPool(workers=2, budgets=budgets, seeds=lambda: next(seeds))
    try:
        # both run at once; the quick one's solve ends first, the slow one was drawn first
        dealt = await pool.winnable({"game": "tabbycat", "game_options": {}})
    finally:
        pool.close()
    solved = solve_deal("tabbycat", SLOW, {}, 30_000)
    assert dealt.seed == SLOW and dealt.solution == len(solved.moves)
    assert solved.nodes > OLD_DRAW_BUDGET
    assert solve_deal("tabbycat", SLOW, {}, OLD_DRAW_BUDGET).verdict == "unknown"


async def test_a_candidate_not_won_within_the_budget_is_passed_over() -> None:
    seeds = feed(SLOW, QUICK)
    pool = SolverPool(
        workers=2, budgets=Budgets(draw={"tabbycat": 1_000}), seeds=lambda: next(seeds)
    )
    try:
        dealt = await pool.winnable({"game": "tabbycat", "game_options": {}})
    finally:
        pool.close()
    assert dealt.seed == QUICK and dealt.tried >= 2


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Client]:
    client = connect(redis_url, max_connections=4, pool_timeout=5)
    yield client
    await client.aclose()


def dailies(redis: Client, prefix: str, pool: SolverPool | None, today: str) -> Dailies:
    now = day_end_ms(today) - 43_200_000  # noon of that day
    secret = TEST_SECRET.encode()
    return Dailies(
        redis, prefix, Boards(redis, prefix), clock=lambda: now, solver=pool, secret=lambda: secret
    )


async def test_a_daily_is_the_first_candidate_won_at_the_servers_budget(
    redis: Client, key_prefix: str
) -> None:
    """Candidate 0 of the day needs 7,639 positions: the old budget passed it over for a
    later one; the server's budget deals it, and every process finds the same deal."""
    options = default_options("tabbycat")
    first = candidate_seed(TEST_SECRET.encode(), DAY, "tabbycat", options, 0)
    assert solve_deal("tabbycat", first, options, OLD_DRAW_BUDGET).verdict == "unknown"
    deals = []
    for prefix in (key_prefix, key_prefix + "other:"):  # two deployments' Redis keys
        pool = SolverPool(workers=1, pool_mode="off")  # serve's budgets, the search only
        d = dailies(redis, prefix, pool, next_date(next_date(DAY)))  # a past day: no draw ahead
        try:
            deals.append(await d.deal(DAY, "tabbycat"))
            kept = json.loads(await redis.get(d.key(DAY, "tabbycat", "deal")))
        finally:
            await d.flush()
            pool.close()
            await redis.delete(d.key(DAY, "tabbycat", "deal"))
        assert kept == {"seed": first, "solution": deals[-1].solution, "n": 0}
    assert deals[0] == deals[1] and deals[0].n == 0 and deals[0].seed == first
    assert deals[0].solution == len(solve_deal("tabbycat", first, options, 200_000).moves)


async def test_predraw_keeps_the_next_days_deals_in_redis(redis: Client, key_prefix: str) -> None:
    pool = SolverPool(workers=1)
    d = dailies(redis, key_prefix, pool, DAY)
    days = [DAY]
    for _ in range(PREDRAW_DAYS):
        days.append(next_date(days[-1]))
    keys = [d.key(day, "puttputt", "deal") for day in days]
    try:
        d.predraw(["puttputt"])

        async def all_drawn() -> bool:
            return int(await redis.exists(*keys)) == len(keys)

        await until(all_drawn, f"the puttputt deals of {days} in Redis", timeout=120)
        # a process started now (nothing in its memory) deals them from Redis
        fresh = dailies(redis, key_prefix, None, DAY)  # with no solver at all
        for day in days:
            assert await fresh.deal(day, "puttputt") == await d.deal(day, "puttputt")
        await fresh.flush()
    finally:
        await d.flush()
        pool.close()
        await redis.delete(*keys)


async def test_a_daily_drawn_ahead_leaves_the_workers_free(redis: Client, key_prefix: str) -> None:
    """Nobody waits for a pre-draw, and a candidate at the daily budget runs up to ~25 s (Leap
    Year at 30,000,000 positions), so a pre-draw's candidates are `stock` jobs, run in the
    stock's worker of its own: its batch of two runs there, and a hint, a room's draw or a
    race's verdicts find the shared workers free. A daily someone asks for is a draw, on
    every shared worker, as before."""
    pool = SolverPool(workers=2, pool_mode="off", budgets=Budgets(draw={"puttputt": 20_000}))
    #: each candidate's kind, and the shared workers busy after it
    submitted: list[tuple[str, int]] = []

    def watch(jobs: Jobs) -> None:
        submit = jobs.submit

        def watched(kind: str, fn: Any, *args: Any) -> Any:
            job = submit(kind, fn, *args)
            submitted.append((kind, pool.jobs.running))
            return job

        jobs.submit = watched  # type: ignore[method-assign]

    watch(pool.jobs)
    watch(pool.stock_jobs)
    d = dailies(redis, key_prefix, pool, DAY)
    keys = [d.key(DAY, "puttputt", "deal")]
    try:
        d.predraw(["puttputt"])

        async def drawn() -> bool:
            return bool(await redis.exists(*keys))

        await until(drawn, "today's puttputt deal drawn ahead", timeout=60)
        ahead = submitted[:2]  # today's first batch
        assert [k for k, _ in ahead] == ["stock", "stock"]
        assert max(busy for _, busy in ahead) == 0  # the shared workers left free
        assert pool.stock_jobs.started[0] == "stock"  # run in the stock's own worker
        await d.flush()
        submitted.clear()
        past = "2026-11-20"  # nobody drew it ahead: drawn while its player waits
        keys.append(d.key(past, "puttputt", "deal"))
        await d.deal(past, "puttputt")
        # the pre-draw goes on with the next days meanwhile, in the stock's worker
        asked = [(kind, busy) for kind, busy in submitted if kind != "stock"][:2]
        assert [k for k, _ in asked] == ["draw", "draw"]
        assert max(busy for _, busy in asked) == 2  # the whole pool
    finally:
        await d.flush()
        pool.close()
        ahead_days = [next_date(DAY), next_date(next_date(DAY))]
        await redis.delete(*keys, *(d.key(day, "puttputt", "deal") for day in ahead_days))
