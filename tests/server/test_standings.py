"""Standings on a real Redis, read back through a real server's HTTP API: wins and best-time
boards after a few races (per option set), each race counted once however often it is applied,
concurrent rated races of one player both counted, and the leaderboard endpoint's paging,
errors and ETags, and `/api/player`'s `games`."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from helpers.http_get import aget
from openskill.models import PlackettLuce
from solrace.server.league.boards import Boards
from solrace.server.league.ratings import Seat
from solrace.server.league.records import Records
from solrace.server.league.standings import Finisher, Outcome, Standings, board_options, time_score
from solrace.server.store.redis_conn import connect

NOW = int(time.time() * 1000)
KLONDIKE = board_options("klondike", {})
PIDS = [f"{c * 16}" for c in "abcdefgh"]


@pytest.fixture
async def standings(redis_url: str, key_prefix: str):
    redis = connect(redis_url, max_connections=32, pool_timeout=5)
    records = Records(redis, key_prefix)
    yield Standings(records, Boards(redis, key_prefix))
    keys = [k async for k in redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await redis.delete(*keys)
    await redis.aclose()


def race(
    n: int, *rows: tuple[str, str, int | None], rated: bool = False, opts: str | None = KLONDIKE
) -> Outcome:
    """Race `n`: rows (player, status, time) in finishing order (a row's place is its index)."""
    return Outcome(
        id=f"{n:016x}",
        game="klondike",
        opts=opts,
        at=NOW - 1000 + n,
        rated=rated,
        counted=True,
        players=tuple(
            Finisher(pid, f"name-{pid[0]}", False, i + 1, status, t, 100 + i)
            for i, (pid, status, t) in enumerate(rows)
        ),
    )


async def test_wins_and_best_times_after_a_few_races(standings: Standings) -> None:
    a, b, c = PIDS[:3]
    await standings.apply(race(1, (a, "won", 90_000), (b, "dead", None)))
    await standings.apply(race(2, (b, "won", 70_000), (a, "won", 95_000), (c, "resigned", 4000)))
    await standings.apply(race(3, (a, "won", 80_000), (c, "dead", 5000)))
    draw3 = board_options("klondike", {"draw": 3})
    await standings.apply(race(4, (c, "won", 60_000), opts=draw3))

    wins = await standings.boards.page(f"wins:klondike:{KLONDIKE}")
    assert [(e["player"], -e["score"]) for e in wins["entries"]] == [(a, 3), (b, 1)]
    times = await standings.boards.page(f"time:klondike:{KLONDIKE}")
    assert [(e["player"], e["time"]) for e in times["entries"]] == [(b, 70_000), (a, 80_000)]
    assert times["entries"][1]["record"] == f"{3:016x}"
    assert times["entries"][1]["score"] == time_score(80_000, 100)
    other = await standings.boards.page(f"time:klondike:{draw3}")
    assert [e["player"] for e in other["entries"]] == [c]

    games = await standings.player_games(a)
    assert games == {
        "klondike": {"races": 3, "wins": 3, "best_time": 80_000, "rating": None, "rated": 0}
    }
    assert (await standings.player_games(c))["klondike"]["best_time"] == 60_000


async def test_a_race_counts_once_however_often_it_is_applied(standings: Standings) -> None:
    a, b = PIDS[:2]
    one = race(1, (a, "won", 90_000), (b, "dead", None), rated=True)
    assert await standings.apply(one) == "applied"
    figures = await standings.player_games(a)
    board = await standings.boards.page(f"wins:klondike:{KLONDIKE}")
    for _ in range(3):
        assert await standings.apply(one) == "dup"
    await asyncio.gather(*(standings.apply(one) for _ in range(4)))
    assert await standings.player_games(a) == figures
    assert figures["klondike"]["races"] == 1 and figures["klondike"]["rated"] == 1
    assert await standings.boards.page(f"wins:klondike:{KLONDIKE}") == board

    # a race older than the marks remember is refused, not counted a second time
    old = race(2, (a, "won", 1000), (b, "dead", None), rated=True)
    later = NOW + 8 * 86_400_000
    assert await standings.apply(old, now=later) == "stale"
    assert (await standings.player_games(a))["klondike"]["rated"] == 1


async def test_concurrent_rated_races_of_one_player_all_count(standings: Standings) -> None:
    """Ten races of player a (each against another player) applied at once: every one moves
    a's rating (the compare-and-set lost none), and a's rating is what rating them one after
    another in some order gives."""
    a, others = PIDS[0], PIDS[1:]
    races = [
        race(i, (a, "won", 1000 + i), (o, "dead", None), rated=True) for i, o in enumerate(others)
    ]
    results = await asyncio.gather(*(standings.apply(r) for r in races))
    assert results == ["applied"] * len(races)
    mine = await standings.ratings.get("klondike", a)
    assert mine is not None and mine["rated"] == len(races)
    # every win was counted: sequentially, seven wins give the same mu whatever the order
    model = PlackettLuce()
    me = model.rating()
    for _ in races:
        me = model.rate([[me], [model.rating()]], ranks=[1.0, 2.0])[0][0]
    assert mine["mu"] == pytest.approx(me.mu) and mine["sigma"] == pytest.approx(me.sigma)


async def test_a_rating_needs_two_players_and_a_bot_is_rated_as_a_bot_if_marked(
    standings: Standings,
) -> None:
    a, b = PIDS[:2]
    assert await standings.ratings.apply("1" * 16, "klondike", NOW, [Seat(a, "a", False, 1)]) == (
        "unrated"
    )
    seats = [Seat(a, "ann", False, 2), Seat(b, "robo", True, 1)]
    # a bot is rated against humans only in a room that says so (test_rating_sybils.py)
    assert await standings.ratings.apply("2" * 16, "klondike", NOW, seats) == "unrated"
    marked = await standings.ratings.apply("3" * 16, "klondike", NOW, seats, rated_bots=True)
    assert marked == "applied"
    robo, ann = [await standings.ratings.get("klondike", p) for p in (b, a)]
    assert robo is not None and ann is not None and robo["bot"] is True and ann["bot"] is False
    assert robo["ordinal"] > ann["ordinal"] and robo["provisional"] and ann["provisional"]
    assert (await standings.boards.page("rating:klondike"))["total"] == 0  # both provisional


async def test_leaderboard_and_player_over_http(
    standings: Standings, race_server, key_prefix: str
) -> None:
    port = race_server.port
    for i, pid in enumerate(PIDS):
        # the entry a record writes with the player's first race (records.py `queue`)
        await standings.redis.hset(
            standings.records.player_key(pid), mapping={"name": f"p{i}", "seen": NOW}
        )
        await standings.apply(race(i, (pid, "won", 60_000 + 1000 * i)))
    base = "/api/leaderboard/klondike/time"
    status, headers, body = await aget(port, f"{base}?start=2&count=3")
    assert status == 200, body
    page = json.loads(body)
    assert page["total"] == len(PIDS) and page["next"] == 5 and page["options"] == KLONDIKE
    assert [e["player"] for e in page["entries"]] == PIDS[2:5]
    assert [e["rank"] for e in page["entries"]] == [3, 4, 5]
    again = await aget(port, f"{base}?start=2&count=3", {"If-None-Match": headers["ETag"]})
    assert again[0] == 304 and again[2] == b""
    last = json.loads((await aget(port, f"{base}?start=6&count=50"))[2])
    assert last["next"] is None and len(last["entries"]) == 2
    # the defaults spelled out are the same board; another option set is another (empty) one
    spelled = json.loads((await aget(port, f"{base}?options=draw=1,passes=0&count=3"))[2])
    assert [e["player"] for e in spelled["entries"]] == PIDS[:3]
    draw3 = json.loads((await aget(port, f"{base}?options=draw=3"))[2])
    assert draw3["total"] == 0 and draw3["options"] == board_options("klondike", {"draw": 3})
    wins = json.loads((await aget(port, "/api/leaderboard/klondike/wins?count=1"))[2])
    assert wins["entries"][0]["score"] == -1 and wins["next"] == 1

    for path, code in [
        ("/api/leaderboard/nogame/wins", 404),
        ("/api/leaderboard/klondike/speed", 404),
        ("/api/leaderboard/klondike/wins?count=0", 400),
        ("/api/leaderboard/klondike/wins?count=101", 400),
        ("/api/leaderboard/klondike/wins?start=-1", 400),
        ("/api/leaderboard/klondike/wins?options=draw=2", 400),
        ("/api/leaderboard/klondike/wins?options=colour=red", 400),
        ("/api/leaderboard/klondike/wins?options=draw", 400),
    ]:
        status, _, body = await aget(port, path)
        assert status == code and "error" in json.loads(body), (path, status, body)

    status, _, body = await aget(port, f"/api/player/{PIDS[1]}")
    assert status == 200
    games: dict[str, Any] = json.loads(body)["games"]
    assert games == {
        "klondike": {"races": 1, "wins": 1, "best_time": 61_000, "rating": None, "rated": 0}
    }


async def test_a_game_without_options_has_a_wins_board(standings: Standings) -> None:
    """Putt Putt has no options (its option text is ""): its wins still go on its board
    (issue 23, item 4: the count was skipped when the option text was empty)."""
    a, b = PIDS[:2]
    opts = board_options("puttputt", {})
    assert opts == ""
    for n in (1, 2):
        one = race(n, (a, "won", 30_000 + n), (b, "dead", None), opts=opts)
        await standings.apply(Outcome(**{**one.__dict__, "game": "puttputt"}))
    wins = await standings.boards.page("wins:puttputt:")
    assert [(e["player"], -e["score"]) for e in wins["entries"]] == [(a, 2)]
    times = await standings.boards.page("time:puttputt:")
    assert [e["player"] for e in times["entries"]] == [a]
    assert (await standings.player_games(a))["puttputt"]["wins"] == 2
