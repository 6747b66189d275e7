"""Winnable rooms deal from a stock drawn ahead at the dailies' budget (issue 24).

A room's on-demand draw searches at the small `draw` budget (a host waits), which favours the
deals the solver wins soonest; a stock, refilled in the background, is searched at the
dailies' budget, so its deals are any deal won there. Real solver processes, a real Redis,
and one real `solrace serve` with a stock.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import pytest
from helpers.race import until
from helpers.servers import serving
from solrace.engine.solve import solve_deal
from solrace.server.league.daily import default_options
from solrace.server.league.deal_stock import DealStock, stock_key, stocked_rules
from solrace.server.solver.solving import Budgets, SolverPool
from solrace.server.store.redis_conn import Client, connect

#: Tabby Cat seed 2 is won at 4,298 positions, seed 1 at 300 (solve_deal, default options)
SLOW, QUICK = 2, 1
TABBY = {"game": "tabbycat", "game_options": default_options("tabbycat")}


def feed(*seeds: int) -> Iterator[int]:
    """The draws' candidates in this order, then more seeds."""
    yield from seeds
    yield from range(10, 10_000)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Client]:
    client = connect(redis_url, max_connections=4, pool_timeout=5)
    yield client
    await client.aclose()


@pytest.fixture
async def stocked(redis: Client, key_prefix: str) -> AsyncIterator[DealStock]:
    """A stock of 2 Tabby Cat deals searched at 30,000 positions, while a room's draw would
    search at 1,000 (which wins QUICK, not SLOW)."""
    seeds = feed(SLOW, QUICK)
    budgets = Budgets(draw={"tabbycat": 1_000}, daily={"tabbycat": 30_000})
    pool = SolverPool(workers=2, budgets=budgets, seeds=lambda: next(seeds))
    stock = DealStock(redis, key_prefix, pool, size=2)
    yield stock
    stock.close()
    pool.close()


async def entries(redis: Client, key: str) -> list[dict[str, int]]:
    return [json.loads(raw) for raw in await redis.lrange(key, 0, -1)]


async def test_a_stock_holds_deals_won_at_the_daily_budget_each_taken_once(
    stocked: DealStock, redis: Client, key_prefix: str
) -> None:
    key = stock_key(key_prefix, TABBY)
    assert await stocked.take(TABBY) is None  # empty: the room draws on demand; refill starts

    async def full() -> bool:
        return int(await redis.llen(key)) == 2

    await until(full, "the stock filled to 2", timeout=60)
    kept = await entries(redis, key)
    # SLOW was drawn first and is won at the stock's budget, though not at the draw's
    assert kept[0]["seed"] == SLOW and kept[0]["budget"] == 30_000
    assert solve_deal("tabbycat", SLOW, {}, 1_000).verdict == "unknown"
    assert kept[0]["solution"] == len(solve_deal("tabbycat", SLOW, {}, 30_000).moves)

    first = await stocked.take(TABBY)
    assert first is not None and (first.seed, first.solution) == (SLOW, kept[0]["solution"])
    assert first.game == "tabbycat" and first.game_options == TABBY["game_options"]
    second = await stocked.take(TABBY)
    assert second is not None and second.seed == kept[1]["seed"] != SLOW
    await until(full, "the stock filled again after two were taken", timeout=60)
    assert {e["seed"] for e in await entries(redis, key)}.isdisjoint({first.seed, second.seed})


async def test_a_deal_drawn_at_a_smaller_budget_than_todays_is_passed_over(
    stocked: DealStock, redis: Client, key_prefix: str
) -> None:
    key = stock_key(key_prefix, TABBY)
    await redis.rpush(key, json.dumps({"seed": QUICK, "solution": 1, "tried": 1, "budget": 500}))
    await redis.rpush(key, json.dumps({"seed": SLOW, "solution": 9, "tried": 1, "budget": 30_000}))
    taken = await stocked.take(TABBY)
    assert taken is not None and taken.seed == SLOW


async def test_a_fixed_list_of_rule_sets_is_stocked(
    stocked: DealStock, redis: Client, key_prefix: str
) -> None:
    """Each game's defaults and Klondike's four unlimited-pass variants; any other rule set
    (a pass limit) draws on demand: a client choosing rules never sets a stock up."""
    klondike = default_options("klondike")
    for game in ("tabbycat", "manx", "puttputt", "klondike", "leapyear"):
        assert stocked.stocked({"game": game, "game_options": default_options(game)})
    for variant in ({"draw": 3}, {"moves": "build"}, {"draw": 3, "moves": "build"}):
        assert stocked.stocked({"game": "klondike", "game_options": {**klondike, **variant}})
    for variant in ({"passes": 3}, {"draw": 3, "moves": "build", "passes": 1}):
        options = {"game": "klondike", "game_options": {**klondike, **variant}}
        assert not stocked.stocked(options)
        assert await stocked.take(options) is None
        stocked.refill(options)
        assert not await redis.exists(stock_key(key_prefix, options))
    assert len(stocked_rules("klondike")) == 4 and stocked_rules("manx") == [{}]


async def test_standard_klondike_is_stocked_with_deals_won_under_its_own_rules(
    redis: Client, key_prefix: str
) -> None:
    """Draw three with runs: the stock's deal is one the solver wins under those rules at the
    stock's budget, and a room of the default rules takes none of it."""
    standard = {**default_options("klondike"), "draw": 3, "moves": "build"}
    options = {"game": "klondike", "game_options": standard}
    budgets = Budgets(draw={"klondike": 1_000}, daily={"klondike": 200_000})
    pool = SolverPool(workers=2, budgets=budgets)
    stock = DealStock(redis, key_prefix, pool, size=1)
    try:
        assert await stock.take(options) is None  # empty: its refill starts
        key = stock_key(key_prefix, options)

        async def full() -> bool:
            return int(await redis.llen(key)) == 1

        await until(full, "the standard Klondike stock filled", timeout=120)
        (entry,) = await entries(redis, key)
        assert entry["budget"] == 200_000
        plain = {"game": "klondike", "game_options": default_options("klondike")}
        assert key != stock_key(key_prefix, plain) and not await redis.exists(
            stock_key(key_prefix, plain)
        )
        taken = await stock.take(options)
        assert taken is not None and taken.game_options == standard
        solved = solve_deal("klondike", taken.seed, standard, 200_000)
        assert solved.verdict == "won" and len(solved.moves) == taken.solution
    finally:
        stock.close()
        pool.close()


async def test_a_servers_winnable_room_starts_on_a_deal_of_its_stock(
    redis_url: str, key_prefix: str, redis: Client, wire
) -> None:
    options = {"game": "puttputt", "countdown": 0, "deal": "winnable", "time_limit": 1}
    key = stock_key(key_prefix, {"game": "puttputt", "game_options": default_options("puttputt")})
    async with serving(redis_url, key_prefix, extra_args=["--deal-stock", "2"]) as (server,):

        async def race() -> dict:
            host = await wire(server.ws_url)
            created = await host.request({"type": "create", "name": "p0", "options": options})
            assert created["type"] == "joined", created
            ok = await host.request({"type": "start", "host_token": created["host_token"]})
            assert ok["type"] == "ok", ok
            return await host.wait_event("results", timeout=60)

        await race()  # the first winnable room: its stock starts filling

        async def full() -> bool:
            return int(await redis.llen(key)) == 2

        await until(full, "the Putt Putt stock filled to 2", timeout=120)
        head = (await entries(redis, key))[0]
        results = await race()
        assert (results["seed"], results["solution_moves"]) == (head["seed"], head["solution"])
        assert head["budget"] == Budgets().for_daily("puttputt")
        await until(full, "the stock filled again", timeout=120)
        assert head["seed"] not in {e["seed"] for e in await entries(redis, key)}
