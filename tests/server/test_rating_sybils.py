"""Rating farming with fresh keys (issue 20, item 3), on a real Redis through the Ratings API:
the sybil script (a fresh farmer wins 8 rated races against 7 fresh keys each who resign at
once) leaves the farmer provisional, off the board and below every established player, and
adds no row to the board; a beaten provisional opponent counts for nothing, an established
player in a field of fresh keys moves by at most FIELD_BOUND, a player is established after
PROVISIONAL_RACES races against ESTABLISHED_OPPONENTS distinct established opponents, bots
and humans are rated apart unless the room says `rated_bots`, and provisional ratings are
bounded in number. (One such race over sockets: test_ratings_e2e.py.)"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence

import pytest
from solrace.server.league.boards import Boards
from solrace.server.league.ratings import (
    ESTABLISHED_OPPONENTS,
    FIELD_BOUND,
    PROVISIONAL_RACES,
    Ratings,
    Seat,
    rating_view,
)
from solrace.server.store.redis_conn import connect

GAME = "puttputt"
NOW = int(time.time() * 1000)
BOARD = "rating:puttputt"
#: the established players the tests seed (a deployment past its bootstrap)
CORE = [f"core{i:012d}" for i in range(6)]


@pytest.fixture
async def ratings(redis_url: str, key_prefix: str) -> AsyncIterator[Ratings]:
    redis = connect(redis_url, max_connections=8, pool_timeout=5)
    yield Ratings(Boards(redis, key_prefix))
    keys = [k async for k in redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await redis.delete(*keys)
    await redis.aclose()


class Races:
    """Race ids and finish times, one after another."""

    def __init__(self) -> None:
        self.n = 0

    async def run(
        self, ratings: Ratings, order: Sequence[tuple[str, int]], *, bots: Sequence[str] = ()
    ) -> str:
        """One rated race: (player, place) pairs."""
        self.n += 1
        seats = [Seat(p, p[:6], p in bots, place) for p, place in order]
        return await ratings.apply(f"{self.n:016x}", GAME, NOW - 100_000 + self.n, seats)


async def seed_core(ratings: Ratings, races: Races) -> None:
    """The core's first PROVISIONAL_RACES races among themselves (the bootstrap: every
    opponent counts), the order rotating: all six established at the last one."""
    for r in range(PROVISIONAL_RACES):
        order = CORE[r % 6 :] + CORE[: r % 6]
        assert await races.run(ratings, [(p, i + 1) for i, p in enumerate(order)]) == "applied"
    page = await ratings.boards.page(BOARD)
    assert page["total"] == len(CORE)


async def sybil_script(ratings: Ratings, races: Races, farmer: str) -> None:
    """8 rated races, each the farmer against 7 fresh keys who resign at once (tied last)."""
    for r in range(8):
        junk = [(f"junk{r:02d}{i:010d}", 2) for i in range(7)]
        assert await races.run(ratings, [(farmer, 1), *junk]) == "applied"


async def test_the_sybil_script_leaves_the_farmer_provisional_last_and_off_the_board(
    ratings: Ratings,
) -> None:
    races = Races()
    await seed_core(ratings, races)
    before = await ratings.boards.page(BOARD)
    farmer = "farmer0000000000"
    await sybil_script(ratings, races, farmer)

    after = await ratings.boards.page(BOARD)
    assert after == before  # no row added, nobody moved
    assert await ratings.boards.entry(BOARD, farmer) is None
    row = await ratings.get(GAME, farmer)
    assert row is not None and row["rated"] == 8 and row["provisional"] is True
    assert row["mu"] == pytest.approx(25.0)  # beaten fresh keys count for nothing
    assert row["ordinal"] < min(e["ordinal"] for e in before["entries"])
    assert rating_view(row)["provisional"] is True
    # the fresh keys lost: their own ratings moved down, and they are not on the board either
    junk = await ratings.get(GAME, "junk00" + "0" * 10)
    assert junk is not None and junk["mu"] < 25.0 and junk["provisional"] is True
    core = await ratings.get(GAME, CORE[0])
    assert core is not None and rating_view(core)["provisional"] is False


async def test_an_established_player_barely_moves_in_a_field_of_fresh_keys(
    ratings: Ratings,
) -> None:
    races = Races()
    await seed_core(ratings, races)
    star = await ratings.get(GAME, CORE[0])
    assert star is not None
    for r in range(8):  # wins over fresh keys: nothing
        junk = [(f"win{r:02d}{i:011d}", 2) for i in range(7)]
        await races.run(ratings, [(CORE[0], 1), *junk])
    won = await ratings.get(GAME, CORE[0])
    assert won is not None and won["mu"] == star["mu"] and won["sigma"] == star["sigma"]
    assert won["rated"] == star["rated"] + 8
    # a loss to fresh keys costs at most FIELD_BOUND, and teaches nothing (sigma stays)
    await races.run(ratings, [*((f"beat{i:012d}", 1) for i in range(7)), (CORE[0], 8)])
    lost = await ratings.get(GAME, CORE[0])
    assert lost is not None
    assert won["mu"] - FIELD_BOUND - 1e-9 <= lost["mu"] < won["mu"]
    assert lost["sigma"] >= won["sigma"]
    entry = await ratings.boards.entry(BOARD, CORE[0])
    assert entry is not None and entry["mu"] == lost["mu"]


async def test_established_after_enough_races_against_enough_established_opponents(
    ratings: Ratings,
) -> None:
    races = Races()
    await seed_core(ratings, races)
    narrow, wide = "narrow0000000000", "wide000000000000"
    # `narrow` meets only ESTABLISHED_OPPONENTS - 1 of them, however often: provisional
    few = CORE[: ESTABLISHED_OPPONENTS - 1]
    for r in range(PROVISIONAL_RACES + 2):
        await races.run(ratings, [(narrow, 1), (few[r % len(few)], 2)])
    row = await ratings.get(GAME, narrow)
    assert row is not None and row["provisional"] is True and row["mu"] > 25.0
    assert await ratings.boards.entry(BOARD, narrow) is None
    # `wide` meets them all: on the board at its PROVISIONAL_RACES-th race, not before
    for r in range(PROVISIONAL_RACES):
        assert await ratings.boards.entry(BOARD, wide) is None
        await races.run(ratings, [(CORE[r % len(CORE)], 1), (wide, 2)])
    entry = await ratings.boards.entry(BOARD, wide)
    assert entry is not None and entry["provisional"] is False and "opponents" not in entry


async def test_bots_and_humans_are_rated_apart_unless_the_room_says_so(
    ratings: Ratings,
) -> None:
    ann, robo = "ann0000000000000", "robo000000000000"
    seats = [Seat(ann, "ann", False, 2), Seat(robo, "robo", True, 1)]
    assert await ratings.apply("1" * 16, GAME, NOW, seats) == "unrated"
    assert await ratings.get(GAME, ann) is None and await ratings.get(GAME, robo) is None
    assert await ratings.apply("2" * 16, GAME, NOW, seats, rated_bots=True) == "applied"
    mine, its = await ratings.get(GAME, ann), await ratings.get(GAME, robo)
    assert mine is not None and its is not None
    assert its["bot"] is True and its["mu"] > 25.0 > mine["mu"]
    # two humans and a bot, not marked: the humans rate each other, the bot is left out
    bob = "bob0000000000000"
    three = [Seat(robo, "robo", True, 1), Seat(bob, "bob", False, 2), Seat(ann, "ann", False, 3)]
    assert await ratings.apply("3" * 16, GAME, NOW, three) == "applied"
    assert await ratings.get(GAME, robo) == its
    again = await ratings.get(GAME, ann)
    assert again is not None and again["mu"] < mine["mu"] and again["rated"] == 2


async def test_provisional_ratings_are_bounded_in_number(redis_url: str, key_prefix: str) -> None:
    redis = connect(redis_url, max_connections=4, pool_timeout=5)
    try:
        ratings = Ratings(Boards(redis, key_prefix), provisional_cap=4)
        for n in range(5):
            seats = [
                Seat(f"p{n}a{'0' * 13}", "a", False, 1),
                Seat(f"p{n}b{'0' * 13}", "b", False, 2),
            ]
            assert await ratings.apply(f"{n + 1:016x}", GAME, NOW + n, seats) == "applied"
        zset, rows, _, prov = ratings.keys(GAME)
        assert await redis.zcard(prov) == 4 and await redis.hlen(rows) == 4
        assert await ratings.get(GAME, f"p4a{'0' * 13}") is not None  # the newest stay
        assert await ratings.get(GAME, f"p0a{'0' * 13}") is None
        assert await redis.zcard(zset) == 0
    finally:
        keys = [k async for k in redis.scan_iter(match=f"{key_prefix}*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()
