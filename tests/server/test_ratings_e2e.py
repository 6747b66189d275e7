"""Rated races through a real server and a real Redis: a rated Putt Putt race of three
established keyed players (one a marked bot, in a room that rates bots: `rated_bots`) over
WebSockets moves the winner's rating up and the last's down, the rating board lists them in
finishing order, and applying the same race again (from another process, and after a server
restart) changes nothing; a rated room seats no one without a player key; and one race of
the sybil script (a fresh farmer against 7 fresh keys who resign at once) adds no row to the
board and leaves every rating of it provisional (the 8-race figures: test_rating_sybils.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import redis.asyncio as aioredis
from helpers.http_get import aget
from helpers.race import play, until
from solrace.client.bot import run_bot
from solrace.client.connection import ErrorReply
from solrace.protocol import messages as m
from solrace.server.league.boards import Boards
from solrace.server.league.players import key_hash, player_id
from solrace.server.league.ratings import PROVISIONAL_RACES, Ratings
from solrace.server.league.records import Records
from solrace.server.league.standings import Finisher, Outcome, Standings, board_options

KEYS = ["R" * 20 + f"-rated-player-key-{i}-0123456789" for i in range(3)]


async def hello(wire: Any, url: str, key: str | None, bot: bool = False) -> tuple[Any, str | None]:
    client = await wire(url, hello=False)
    msg: dict[str, Any] = {"type": "hello", "version": m.VERSION, "client": "solrace-tests"}
    if key is not None:
        msg["player_key"] = key
    if bot:
        msg["bot"] = True
    welcome = await client.request(msg)
    assert welcome["type"] == "welcome", welcome
    return client, welcome["player"]


async def play_until_home(client: Any, home: int, limit: int = 100) -> None:
    """Moves until `home` cards are home (a deal from the stock may put none there)."""
    for _ in range(limit):
        acks = await play(client, 1)
        if not acks or acks[-1]["home"] >= home or acks[-1]["status"] != "racing":
            return


async def seed_established(
    redis_url: str, prefix: str, players: dict[str, tuple[float, float]]
) -> None:
    """Established ratings (id -> (mu, sigma)) written as the rating board keeps them: a
    deployment past its bootstrap, without racing PROVISIONAL_RACES races for each."""
    r = aioredis.Redis.from_url(redis_url)
    try:
        ratings = Ratings(Boards(r, prefix))
        zset, rows_key = ratings.keys("puttputt")[:2]
        for pid, (mu, sigma) in players.items():
            ordinal = ratings.model.rating(mu=mu, sigma=sigma).ordinal()
            row = {"name": pid[:4], "bot": False, "mu": mu, "sigma": sigma}
            row |= {"ordinal": ordinal, "rated": PROVISIONAL_RACES, "provisional": False}
            await r.hset(rows_key, pid, json.dumps(row))
            await r.zadd(zset, {pid: -ordinal})
    finally:
        await r.aclose()


def pid_of(key: str) -> str:
    return player_id(key_hash(key))


#: established players below every player the tests race (the board is past its bootstrap)
FILLERS = {f"filler{i:010d}": (20.0, 5.0) for i in range(3)}


async def rated_race(wire: Any, url: str) -> tuple[dict[str, Any], list[str]]:
    """Three keyed players (the third a marked bot) race a rated room: the first plays until
    2 cards are home, the second until 1 is, the bot not at all; all resign (so the places
    are 1, 2, 3: ranked by progress). Returns the results and the ids."""
    seated = [await hello(wire, url, KEYS[i], bot=i == 2) for i in range(3)]
    clients, ids = [c for c, _ in seated], [pid for _, pid in seated]
    opts = {"game": "puttputt", "countdown": 0, "rated": True, "rated_bots": True}
    created = await clients[0].request({"type": "create", "name": "ann", "options": opts})
    assert created["type"] == "joined", created
    for c, name in zip(clients[1:], ("bob", "robo"), strict=True):
        joined = await c.request({"type": "join", "room": created["room"], "name": name})
        assert joined["type"] == "joined", joined
    players = joined["snapshot"]["players"]
    assert [p["bot"] for p in players] == [False, False, True]
    assert joined["snapshot"]["options"]["rated"] is True
    started = await clients[0].request({"type": "start", "host_token": created["host_token"]})
    assert started["type"] == "ok", started
    for c in clients:
        await c.wait_for(lambda x: x["type"] == "snapshot")
    for c, home in zip(clients, (2, 1), strict=False):
        await play_until_home(c, home)
    for c in clients:
        await c.request({"type": "resign"})
    results = await clients[0].wait_event("results")
    return results, ids


async def rows(redis_url: str, prefix: str) -> dict[str, Any]:
    r = aioredis.Redis.from_url(redis_url)
    try:
        raw = await r.hgetall(f"{prefix}board:{{rating:puttputt}}:rows")
        return {k.decode(): json.loads(v) for k, v in raw.items()}
    finally:
        await r.aclose()


def outcome(results: dict[str, Any], at: int) -> Outcome:
    """The race as the server's hook saw it (another process applying it again)."""
    return Outcome(
        id=results["record"],
        game="puttputt",
        opts=board_options("puttputt", {}),
        at=at,
        rated=True,
        counted=True,
        players=tuple(
            Finisher(
                r["player"],
                r["name"],
                r["name"] == "robo",
                r["place"],
                r["status"],
                r["time"],
                r["moves"],
            )
            for r in results["ranking"]
        ),
    )


async def test_a_rated_race_moves_ratings_by_place_and_replaying_it_changes_nothing(
    race_server, wire, redis_url, key_prefix
) -> None:
    port, url = race_server.port, race_server.ws_url
    seeded = {pid_of(k): (25.0, 5.0) for k in KEYS} | FILLERS
    await seed_established(redis_url, key_prefix, seeded)
    results, ids = await rated_race(wire, url)
    ranking = results["ranking"]
    assert [r["place"] for r in ranking] == [1, 2, 3], ranking  # the race's order is clear-cut
    first, last = ranking[0]["player"], ranking[-1]["player"]
    assert {first, last} <= set(ids) and last == ids[2]  # the bot made no move

    async def rated() -> bool:
        return all(
            r["rated"] == PROVISIONAL_RACES + 1
            for r in (await rows(redis_url, key_prefix)).values()
            if r["name"] != "fill"
        )

    await until(rated, "three ratings moved")
    before = await rows(redis_url, key_prefix)
    assert before[first]["mu"] > 25.0 and before[first]["ordinal"] > 10.0
    assert before[last]["mu"] < 25.0 and before[last]["ordinal"] < 10.0
    assert (
        before[first]["ordinal"] > before[ranking[1]["player"]]["ordinal"] > before[last]["ordinal"]
    )
    assert before[last]["bot"] is True and before[first]["bot"] is False

    status, headers, body = await aget(port, "/api/leaderboard/puttputt/rating")
    assert status == 200, body
    page = json.loads(body)
    assert [e["player"] for e in page["entries"]][:3] == [r["player"] for r in ranking]
    assert [e["rank"] for e in page["entries"]][:3] == [1, 2, 3] and page["total"] == 6
    assert page["entries"][2]["bot"] is True and page["options"] is None
    assert "max-age" in headers["Cache-Control"]

    status, _, body = await aget(port, f"/api/player/{first}")
    games = json.loads(body)["games"]
    assert games["puttputt"]["rated"] == PROVISIONAL_RACES + 1
    assert games["puttputt"]["races"] == 1
    view = {k: before[first][k] for k in ("mu", "sigma", "ordinal")}
    shown = games["puttputt"]["rating"]
    assert {k: shown[k] for k in (*view, "provisional")} == {**view, "provisional": False}
    # the rating as shown (1000 + 40 x ordinal) and what this race changed (issue 23)
    assert shown["rating"] == round(1000 + 40 * view["ordinal"])
    assert shown["last"]["race"] == results["record"]

    status, _, body = await aget(port, f"/api/ratings/puttputt?players={first},{'z' * 16}")
    assert status == 200, body
    got = json.loads(body)["players"]
    assert list(got) == [first] and got[first]["rating"] == shown["rating"]
    assert got[first]["last"] == shown["last"] and got[first]["provisional"] is False

    # the same race again, as another process (or this one after a restart) would apply it
    redis = aioredis.Redis.from_url(redis_url)
    try:
        standings = Standings(Records(redis, key_prefix), Boards(redis, key_prefix))
        at = int(await redis.zscore(standings.ratings.keys("puttputt")[2], results["record"]))
        again = outcome(results, at)
        assert await standings.apply(again) == "dup"
        assert await rows(redis_url, key_prefix) == before
        player_before = (await aget(port, f"/api/player/{first}"))[2]
        await asyncio.to_thread(race_server.restart)
        assert (
            await Standings(Records(redis, key_prefix), Boards(redis, key_prefix)).apply(again)
            == "dup"
        )
        assert await rows(redis_url, key_prefix) == before
        assert (await aget(port, f"/api/player/{first}"))[2] == player_before
    finally:
        await redis.aclose()


async def test_a_rated_room_seats_only_keyed_players(race_server, wire) -> None:
    url = race_server.ws_url
    anon, _ = await hello(wire, url, None)
    refused = await anon.request(
        {"type": "create", "name": "cy", "options": {"game": "puttputt", "rated": True}}
    )
    assert refused["type"] == "error" and refused["code"] == "player_key_required", refused
    host, _ = await hello(wire, url, KEYS[0])
    created = await host.request(
        {"type": "create", "name": "ann", "options": {"game": "puttputt", "rated": True}}
    )
    assert created["type"] == "joined"
    refused = await anon.request({"type": "join", "room": created["room"], "name": "cy"})
    assert refused["code"] == "player_key_required", refused
    both = await host.request(
        {
            "type": "configure",
            "host_token": created["host_token"],
            "options": {"hints": True},
        }
    )
    assert both["code"] == "bad_options", both

    # a room turned rated with an anonymous seat in it: refused, and nothing changed
    open_room = await host.request(
        {"type": "create", "name": "ann", "options": {"game": "puttputt"}}
    )
    joined = await anon.request({"type": "join", "room": open_room["room"], "name": "cy"})
    assert joined["type"] == "joined"
    turned = await host.request(
        {"type": "configure", "host_token": open_room["host_token"], "options": {"rated": True}}
    )
    assert turned["code"] == "player_key_required", turned
    watcher, _ = await hello(wire, url, None)
    snap = (await watcher.request({"type": "spectate", "room": open_room["room"]}))["snapshot"]
    assert snap["options"]["rated"] is False


async def test_solrace_bots_say_so_and_with_a_key_sit_in_rated_rooms(race_server, wire) -> None:
    """The project's own bot (client/bot.py) marks its hello; with a key it takes a seat in a
    rated room, shown as a bot; without one it is refused."""
    url = race_server.ws_url
    host, _ = await hello(wire, url, KEYS[0])
    created = await host.request(
        {"type": "create", "name": "ann", "options": {"game": "puttputt", "rated": True}}
    )
    stop = asyncio.Event()
    keyed = asyncio.create_task(
        run_bot(url, created["room"], "robo", 0.05, stop, player_key=KEYS[1], ready=False)
    )
    try:
        joined = await host.wait_event("player_joined", seat=1)
        assert joined["bot"] is True and joined["player"] is not None
        with pytest.raises(ErrorReply) as refused:
            await run_bot(url, created["room"], "anon", 0.05, asyncio.Event(), ready=False)
        assert refused.value.code == "player_key_required"
    finally:
        stop.set()
        await keyed


async def test_a_sybil_race_of_fresh_keys_adds_no_row_to_the_rating_board(
    race_server, wire, redis_url, key_prefix
) -> None:
    """A fresh farmer wins a rated race against 7 fresh keys (one a marked bot) who resign at
    once: no board row is added, the farmer's rating does not rise and says provisional, the
    humans who lost are rated (provisional), the bot (the room does not say `rated_bots`) not."""
    port, url = race_server.port, race_server.ws_url
    core = {f"core{i:012d}": (27.0 + i, 3.0) for i in range(6)}
    await seed_established(redis_url, key_prefix, core)
    board = json.loads((await aget(port, "/api/leaderboard/puttputt/rating"))[2])
    assert board["total"] == len(core)
    keys = ["S" * 20 + f"-sybil-farm-key-{i}-0123456789" for i in range(8)]
    seated = [await hello(wire, url, k, bot=i == 7) for i, k in enumerate(keys)]
    clients, ids = [c for c, _ in seated], [pid for _, pid in seated]
    opts = {"game": "puttputt", "countdown": 0, "rated": True}
    created = await clients[0].request({"type": "create", "name": "farmer", "options": opts})
    for i, c in enumerate(clients[1:]):
        joined = await c.request({"type": "join", "room": created["room"], "name": f"s{i}"})
        assert joined["type"] == "joined", joined
    started = await clients[0].request({"type": "start", "host_token": created["host_token"]})
    assert started["type"] == "ok", started
    for c in clients:
        await c.wait_for(lambda x: x["type"] == "snapshot")
    for c in clients[1:]:
        await c.request({"type": "resign"})
    await play_until_home(clients[0], 1)
    await clients[0].request({"type": "resign"})
    results = await clients[0].wait_event("results")
    assert results["ranking"][0]["player"] == ids[0]

    async def rated() -> bool:
        return ids[0] in await rows(redis_url, key_prefix)

    await until(rated, "the race rated")
    stored = await rows(redis_url, key_prefix)
    assert ids[7] not in stored  # a bot is not rated against humans in an unmarked room
    farmer = stored[ids[0]]
    assert farmer["provisional"] is True and farmer["mu"] == 25.0
    assert farmer["ordinal"] < min(core[p][0] - 3 * core[p][1] for p in core)
    assert all(stored[p]["provisional"] and stored[p]["mu"] < 25.0 for p in ids[1:7])
    after = json.loads((await aget(port, "/api/leaderboard/puttputt/rating"))[2])
    assert after == board  # no row added, nobody moved
    games = json.loads((await aget(port, f"/api/player/{ids[0]}"))[2])["games"]
    assert games["puttputt"]["rating"]["provisional"] is True and games["puttputt"]["rated"] == 1
