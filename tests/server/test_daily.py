"""Daily races (issue 13) over real sockets, a real Redis and the server's HTTP API.

The server runs in the test's loop, so the daily's clock (which day it is, and whether a
daily record may be shown yet) is the test's: no waiting for midnight.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.deals import TEST_SECRET
from helpers.race import play, until
from helpers.timing import scaled
from solrace.protocol import messages as m
from solrace.protocol.record_sign import check
from solrace.protocol.record_text import export, parse
from solrace.protocol.record_verify import verify
from solrace.protocol.records import day_end_ms, hidden_until
from solrace.server.app import build
from solrace.server.config import ServerConfig
from solrace.server.league.boards import Boards
from solrace.server.league.daily import (
    Dailies,
    board_name,
    board_score,
    default_options,
    previous_date,
    utc_date,
)
from solrace.server.net.api import Api
from solrace.server.net.conn import Limits, networks
from solrace.server.net.daily_pages import DailyPages
from solrace.server.net.guard import Guard, GuardLimits
from solrace.server.net.http import make_process_request
from solrace.server.net.ws_server import serve
from solrace.server.rules.room import text_deal_seed
from solrace.server.solver.deal_pool import daily_pick, pool_for
from solrace.server.store.redis_conn import connect
from solrace.server.store.store import Store

GAME = "puttputt"  # the solver wins most of its deals at once: a daily is dealt in moments


class Daily:
    """A server in the test's loop: its transport, ws and http URLs, and the daily's clock."""

    def __init__(self, transport: Any, ws_url: str, http_url: str) -> None:
        self.transport, self.ws_url, self.http_url = transport, ws_url, http_url
        self.api: Api | None = None  # set by the fixture
        self.shift = 0  # ms added to the real time: "which day it is" for dailies and records

    def now(self) -> int:
        return self.transport.service.clock() + self.shift

    def _get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.http_url + path, timeout=scaled(10)) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    async def get(self, path: str) -> tuple[int, bytes]:
        """An HTTP GET from a thread: the server answers in this loop."""
        return await asyncio.to_thread(self._get, path)

    async def json(self, path: str) -> tuple[int, Any]:
        status, body = await self.get(path)
        return status, json.loads(body)

    def fresh(self) -> None:
        """Forget the 2 s page cache: the next read is Redis's figure now."""
        assert self.api is not None and self.api.daily_pages is not None
        self.api.daily_pages.pages.kept.clear()


@contextlib.asynccontextmanager
async def daily_server(
    redis_url: str, key_prefix: str, limits: Limits | None = None
) -> AsyncIterator[Daily]:
    """A server in the test's loop (`limits`: the serve flags' values) whose dailies' clock is
    the test's."""
    guard = GuardLimits(exempt=networks("127.0.0.1"))
    transport = build(
        lambda sink: Store.from_url(redis_url, key_prefix, sink=sink),
        ServerConfig(limits=limits or Limits(), guard=guard),
    )
    d = Daily(transport, "", "")
    transport.dailies.clock = d.now
    api = Api(transport.records, dailies=transport.dailies, clock=d.now)
    d.api = api
    hook = make_process_request(transport.health, api=api.handle)
    async with serve(
        transport, "127.0.0.1", 0, process_request=hook, **transport.serve_options()
    ) as srv:
        await transport.start()
        port = next(iter(srv.sockets)).getsockname()[1]
        d.ws_url, d.http_url = f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}"
        try:
            yield d
        finally:
            for conn in transport.conns:
                conn.ws.transport.abort()
            await transport.close()
    await transport.store.close()


@pytest.fixture
async def daily(redis_url: str, key_prefix: str) -> AsyncIterator[Daily]:
    async with daily_server(redis_url, key_prefix) as d:
        yield d


async def player(d: Daily, wire: Any, key: str | None = None) -> Any:
    c = await wire(d.ws_url, hello=False)
    hello: dict[str, Any] = {"type": "hello", "version": m.VERSION}
    if key:
        hello["player_key"] = key
    welcome = await c.request(hello)
    c.player = welcome["player"]
    return c


async def attempt(c: Any, name: str, practice: bool = False) -> dict[str, Any]:
    msg = {"type": "daily", "game": GAME, "name": name, "practice": practice}
    return await c.request(msg, timeout=120)


async def _is(value: Any, want: Any) -> bool:
    return await value == want


def new_key() -> str:
    return secrets.token_urlsafe(24)


async def board_settled(d: Daily, total: int) -> dict[str, Any]:
    """The daily's board once `total` entries are there and none is still racing."""
    out: dict[str, Any] = {}

    async def settled() -> bool:
        d.fresh()
        _, page = await d.json(f"/api/daily/{utc_date(d.now())}/{GAME}?count=10")
        out.update(page)
        return page["total"] == total and all(e["status"] != "racing" for e in page["entries"])

    await until(settled, f"{total} settled entries on the board")
    return out


async def test_three_players_at_different_times_race_one_deal(daily: Daily, wire) -> None:
    views, results = [], []
    for i, moves in enumerate([200, 6, 0]):  # one plays on, one a little, one resigns at once
        c = await player(daily, wire, new_key())
        joined = await attempt(c, f"p{i}")
        assert joined["type"] == "joined", joined
        assert joined["daily"]["scored"] is True
        assert joined["daily"]["id"] == f"{utc_date(daily.now())}/{GAME}"
        assert "host_token" not in joined  # nobody may restart, rematch or reconfigure it
        snap = joined["snapshot"]
        assert snap["state"] == "racing" and snap["options"]["spectators"] is False
        assert snap["daily"] == joined["daily"]
        views.append(snap["you"]["view"])
        acks = await play(c, moves)
        if not acks or acks[-1]["status"] == "racing":
            assert (await c.request({"type": "resign"}))["type"] == "ok"
        results.append((await c.wait_event("results", timeout=30))["ranking"][0])
        await c.close()
    assert views[0] == views[1] == views[2]  # one deal for everyone that day
    page = await board_settled(daily, 3)
    by_name = {e["name"]: e for e in page["entries"]}
    for row in results:
        entry = by_name[row["name"]]
        for field in ("status", "moves", "progress", "time"):
            assert entry[field] == row[field], (field, entry, row)
        assert entry["score"] == board_score(row)
    assert [e["score"] for e in page["entries"]] == sorted(e["score"] for e in page["entries"])
    assert page["finished"] == 3 and page["racing"] == 0


async def test_the_servers_longest_race_caps_a_daily_attempt(
    redis_url: str, key_prefix: str, wire
) -> None:
    """`--max-race` (issue 22) cuts a daily attempt's hour as it cuts every race's limit: an
    attempt whose player stays connected and does nothing ends when the server's longest race
    is over (`timeout`), its board entry with it; with the default (2 hours) the hour stands."""
    async with daily_server(redis_url, key_prefix, Limits(max_race=1)) as d:
        c = await player(d, wire, new_key())
        joined = await attempt(c, "ann")
        snap = joined["snapshot"]
        assert snap["ends_at"] == snap["starts_at"] + 1000, snap
        results = await c.wait_event("results", timeout=30)
        assert results["ranking"][0]["status"] == "timeout", results
        page = await board_settled(d, 1)
        assert page["entries"][0]["status"] == "timeout"
        await c.close()
    async with daily_server(redis_url, key_prefix) as d:
        c = await player(d, wire, new_key())
        snap = (await attempt(c, "bob"))["snapshot"]
        assert snap["ends_at"] == snap["starts_at"] + 3600 * 1000, snap
        await c.close()


async def test_second_scored_attempt_refused_practice_allowed(daily: Daily, wire) -> None:
    key = new_key()
    first = await player(daily, wire, key)
    assert (await attempt(first, "ann"))["type"] == "joined"
    await first.request({"type": "resign"})
    await first.wait_event("results")
    again = await player(daily, wire, key)  # the same player, another connection
    refused = await attempt(again, "ann")
    assert refused["type"] == "error" and refused["code"] == "daily_played", refused
    assert "practice" in refused["message"]
    practice = await attempt(again, "ann", practice=True)
    assert practice["type"] == "joined" and practice["daily"]["scored"] is False
    await play(again, 5)
    await again.request({"type": "resign"})
    rid = (await again.wait_event("results"))["record"]
    await board_settled(daily, 1)
    # the scored attempt counts in the player's all-time figures, the practice does not
    standings = daily.transport.standings

    async def races() -> int:
        return int((await standings.player_games(first.player)).get(GAME, {}).get("races", 0))

    await until(lambda: _is(races(), 1), "the scored attempt is in the player's figures")

    async def recorded() -> bool:
        return await daily.transport.records.get(rid) is not None

    await until(recorded, "the practice's record is stored")
    await until(
        lambda: not daily.transport.records.tasks, "the standings written (with the record)"
    )
    assert await races() == 1
    entry = (await daily.transport.dailies.boards.page(board_name(utc_date(daily.now()), GAME)))[
        "entries"
    ][0]
    assert entry["moves"] == 0 and entry["player"] == first.player  # the scored one's outcome
    # anonymous: practice only
    anon = await player(daily, wire)
    assert (await attempt(anon, "x"))["code"] == "not_allowed"
    assert (await attempt(anon, "x", practice=True))["type"] == "joined"


async def test_hidden_seed_and_record_until_the_day_ends(daily: Daily, wire) -> None:
    c = await player(daily, wire, new_key())
    joined = await attempt(c, "ann")
    await play(c, 4)
    await c.request({"type": "resign"})
    results = await c.wait_event("results")
    date = utc_date(daily.now())
    assert results["seed"] is None and results["salt"] is None
    assert results["reveal_at"] == day_end_ms(date) and results["daily"] == joined["daily"]["id"]
    rid = results["record"]

    async def stored() -> bool:
        return await daily.transport.records.get(rid) is not None

    await until(stored, "the record is stored")
    for path in (f"/api/record/{rid}", f"/api/record/{rid}.txt"):
        status, body = await daily.json(path)
        assert status == 403, path
        assert body == {
            "error": "daily deal: hidden until the day ends",
            "reveal_at": day_end_ms(date),
        }
    daily.shift = day_end_ms(date) - daily.transport.service.clock()  # midnight UTC
    status, body = await daily.json(f"/api/record/{rid}")
    assert status == 200 and body["daily"] == date and body["scored"] is True
    assert hidden_until(body, day_end_ms(date) - 1) == day_end_ms(date)
    assert verify(body) == []
    status, text = await daily.get(f"/api/record/{rid}.txt")
    assert status == 200 and f'[Daily "{date}"]' in text.decode()
    assert verify(parse(text.decode())) == [] and parse(export(body)) == body
    signer = daily.transport.records.signer  # its day and `scored` are signed too
    assert signer is not None and check(parse(text.decode()), signer.public_key()).ok
    # asked before anything drew it, the day's deal is the shipped pool's pick for the day
    # (`--deal-pool cold`, the default; tests/server/test_deal_pool.py: the pre-draw searches
    # a secret candidate instead, as tests/server/test_winnable_draw.py checks)
    pool = pool_for(GAME, default_options(GAME))
    assert pool is not None
    assert body["seed"] == daily_pick(pool, TEST_SECRET.encode(), date).seed


async def test_live_counts_on_the_landing_api(daily: Daily, wire) -> None:
    async def mine() -> dict[str, Any]:
        daily.fresh()
        status, body = await daily.json("/api/daily")
        assert status == 200 and body["date"] == utc_date(daily.now())
        return next(x for x in body["dailies"] if x["game"] == GAME)

    async def figures() -> tuple[int, int]:
        got = await mine()
        return got["racing"], got["finished"]

    assert await figures() == (0, 0)
    _, listing = await daily.json("/api/daily")
    assert {x["game"] for x in listing["dailies"]} == set(m.GAME_NAMES)
    a = await player(daily, wire, new_key())
    b = await player(daily, wire)
    await attempt(a, "ann")
    await attempt(b, "bob", practice=True)  # a past day's deal: no figure of today's
    assert await figures() == (1, 0)
    await a.request({"type": "resign"})
    await a.wait_event("results")

    async def now_is(racing: int, finished: int) -> bool:
        return await figures() == (racing, finished)

    await until(lambda: now_is(0, 1), "the scored attempt is finished and not racing")
    _, seen = await daily.json(f"/api/daily?player={a.player}")
    assert {x["game"]: x["played"] for x in seen["dailies"]} == {g: g == GAME for g in m.GAME_NAMES}
    await b.request({"type": "resign"})
    await b.wait_event("results")
    assert await figures() == (0, 1)  # the practice attempt is over, and not on the board
    # the board page with the player's own entry, and its bad queries
    date = utc_date(daily.now())
    status, page = await daily.json(f"/api/daily/{date}/{GAME}?player={a.player}")
    assert status == 200 and page["you"]["player"] == a.player and page["you"]["rank"] == 1
    assert (await daily.json(f"/api/daily/2026-13-01/{GAME}"))[0] == 404
    assert (await daily.json(f"/api/daily/{date}/{GAME}?count=1000"))[0] == 400


async def test_a_new_day_deals_a_new_daily(daily: Daily, wire) -> None:
    c = await player(daily, wire, new_key())
    one = await attempt(c, "ann")
    await c.request({"type": "resign"})
    tomorrow = utc_date(daily.now() + 86_400_000)
    dailies = daily.transport.dailies

    async def drawn_ahead() -> bool:
        return bool(await dailies.redis.exists(dailies.key(tomorrow, GAME, "deal")))

    await until(drawn_ahead, "tomorrow's deal of a game played today is drawn ahead")
    daily.shift = 86_400_000
    two = await attempt(c, "ann")  # scored again: it is another day's daily
    assert two["type"] == "joined" and two["daily"]["scored"] is True
    assert two["daily"]["date"] != one["daily"]["date"]


async def test_bad_daily_requests_change_nothing(daily: Daily, wire) -> None:
    c = await player(daily, wire, new_key())
    asks = [
        {"game": "chess"},
        {"game": GAME, "game_options": {"nope": 1}},
        {"game": "klondike", "game_options": {"draw": 3}},
    ]
    for ask in asks:
        reply = await c.request({"type": "daily", "name": "ann", **ask})
        assert reply["type"] == "error" and reply["code"] == "bad_options", reply
    assert (await c.request({"type": "daily", "name": "ann"}))["code"] == "bad_message"
    blank = await c.request({"type": "daily", "name": "   ", "game": GAME})
    assert blank["code"] == "bad_message" and blank["field"] == "name"
    page = await daily.transport.dailies.boards.page(board_name(utc_date(daily.now()), GAME))
    assert page["total"] == 0


async def test_board_order(redis_url: str, key_prefix: str) -> None:
    """Finisher faster > finisher slower > same time, fewer moves > more progress > less
    progress (then reached sooner) > never moved: one packed score each, exact."""
    rows = [
        {"name": "fast", "status": "won", "time": 60_000, "moves": 90, "progress": 1.0},
        {"name": "fewer", "status": "won", "time": 61_000, "moves": 80, "progress": 1.0},
        {"name": "more", "status": "won", "time": 61_000, "moves": 81, "progress": 1.0},
        {"name": "far", "status": "dead", "time": 30_000, "moves": 40, "progress": 0.75},
        {"name": "near", "status": "resigned", "time": 5_000, "moves": 9, "progress": 0.25},
        {"name": "later", "status": "timeout", "time": 9_000, "moves": 9, "progress": 0.25},
        {"name": "idle", "status": "racing", "time": None, "moves": 0, "progress": 0.0},
    ]
    redis = connect(redis_url, max_connections=2, pool_timeout=5)
    boards = Boards(redis, key_prefix)
    try:
        for i, row in enumerate(reversed(rows)):
            await boards.submit("order", f"p{i}", board_score(row), row)
        page = await boards.page("order", 0, 10)
        assert [e["name"] for e in page["entries"]] == [r["name"] for r in rows]
        assert all(board_score(r) < 2**53 for r in rows)
    finally:
        with contextlib.suppress(Exception):
            await redis.delete(*boards.keys("order"))
        await redis.aclose()


def test_daily_attempts_spend_the_room_budget() -> None:
    guard = Guard(GuardLimits(rooms_per_address=2))
    key = guard.connect("192.0.2.1")
    guard.check(key, "daily")
    guard.check(key, "create")
    with pytest.raises(m.ProtocolError) as refused:
        guard.check(key, "daily")
    assert refused.value.code == "rate_limited" and refused.value.extra["limit"] == "rooms"


# --- issue 20: a text seed never deals a daily; practice never deals today's ------------------


async def solo_room(d: Daily, wire: Any, **options: Any) -> tuple[Any, dict[str, Any]]:
    """A private Putt Putt room of one, started: (its client, the room's first snapshot)."""
    c = await wire(d.ws_url)
    opts = {"game": GAME, "countdown": 0, **options}
    created = await c.request({"type": "create", "name": "eve", "options": opts})
    assert created["type"] == "joined", created
    started = await c.request({"type": "start", "host_token": created["host_token"]}, timeout=120)
    assert started["type"] == "ok", started
    snap = await c.wait_for(lambda x: x["type"] == "snapshot" and x["snapshot"]["you"]["view"])
    return c, snap["snapshot"]


async def test_a_room_seeded_with_the_daily_text_is_not_dealt_the_daily(daily: Daily, wire) -> None:
    """The attack of issue 20: a private room whose text seed is the daily's candidate text
    was dealt that day's daily (its results then gave the seed away, its hints the way)."""
    ann = await player(daily, wire, new_key())
    joined = await attempt(ann, "ann")
    date = utc_date(daily.now())
    deal = await daily.transport.dailies.deal(date, GAME)
    options = json.dumps(default_options(GAME), sort_keys=True, separators=(",", ":"))
    for text in (f"daily|{date}|{GAME}|{options}|{deal.n}", f"{date}/{GAME}", date):
        eve, snap = await solo_room(daily, wire, seed=text, hints=True)
        assert snap["you"]["view"] != joined["snapshot"]["you"]["view"], text
        await eve.request({"type": "resign"})
        results = await eve.wait_event("results")
        assert results["seed"] != deal.seed, text
        await eve.close()


async def test_practice_plays_a_past_daily_never_todays(daily: Daily, wire) -> None:
    key = new_key()
    keyed = await player(daily, wire, key)
    anon = await player(daily, wire)
    today = utc_date(daily.now())
    yesterday = utc_date(daily.now() - 86_400_000)
    # practice first, keyed or not: yesterday's deal, said so plainly
    views = []
    for c in (keyed, anon):
        got = await attempt(c, "p", practice=True)
        assert got["type"] == "joined", got
        assert got["daily"]["date"] == yesterday and got["daily"]["id"] == f"{yesterday}/{GAME}"
        assert got["daily"]["practice"] is True and got["daily"]["scored"] is False
        views.append(got["snapshot"]["you"]["view"])
        await c.request({"type": "resign"})
        results = await c.wait_event("results")
        past = await daily.transport.dailies.deal(yesterday, GAME)
        assert results["seed"] == past.seed  # a past day's deal: revealed already
    scored = await attempt(keyed, "p")
    assert scored["daily"]["date"] == today and scored["daily"]["scored"] is True
    assert scored["daily"]["practice"] is False
    assert scored["snapshot"]["you"]["view"] not in views
    await keyed.request({"type": "resign"})
    await keyed.wait_event("results")
    # after the scored attempt: practice again, still yesterday's; a scored ask says so
    refused = await attempt(keyed, "p")
    assert refused["code"] == "daily_played" and yesterday in refused["message"], refused
    again = await attempt(keyed, "p", practice=True)
    assert again["daily"]["date"] == yesterday
    assert again["snapshot"]["you"]["view"] != scored["snapshot"]["you"]["view"]
    no_key = await attempt(anon, "p")
    assert no_key["code"] == "not_allowed" and yesterday in no_key["message"], no_key


async def test_any_past_daily_in_the_archive(daily: Daily, wire) -> None:
    c = await player(daily, wire, new_key())
    first = await attempt(c, "ann")
    day = first["daily"]["date"]
    await c.request({"type": "resign"})
    await c.wait_event("results")
    daily.shift = 3 * 86_400_000  # three days on: that daily is in the archive
    msg = {"type": "daily", "game": GAME, "name": "ann", "date": day}
    past = await c.request(msg)
    assert past["type"] == "joined", past
    assert past["daily"] == {**first["daily"], "scored": False, "practice": True}
    assert past["snapshot"]["you"]["view"] == first["snapshot"]["you"]["view"]
    await c.request({"type": "resign"})
    await c.wait_event("results")
    today = utc_date(daily.now())
    archive = daily.transport.dailies.archive_days
    for bad in (
        today,  # today's is scored, and hidden
        utc_date(daily.now() + 86_400_000),
        "2026-02-30",
        "26-11-2026",
        utc_date(daily.now() - (archive + 1) * 86_400_000),  # older than the archive
        utc_date(daily.now() - 4 * 86_400_000),  # nobody played it: not kept, not drawn
    ):
        refused = await c.request({**msg, "date": bad})
        assert refused["code"] == "bad_options" and refused["field"] == "date", (bad, refused)
    assert (await c.request({**msg, "date": 20261126}))["code"] == "bad_message"
    board = await daily.transport.dailies.boards.page(board_name(today, GAME))
    assert board["total"] == 0  # no refusal and no practice wrote anything of today's
    dailies = daily.transport.dailies
    assert not await dailies.redis.exists(dailies.key(today, GAME, "deal"))


async def test_no_hints_on_a_deal_a_daily_uses_today(daily: Daily, wire) -> None:
    """However a room came by today's daily deal, the solver does not play it for anyone."""
    dailies = daily.transport.dailies
    text = "a room's text"
    seed = text_deal_seed(TEST_SECRET.encode(), text)
    today = utc_date(daily.now())
    await dailies.redis.set(
        dailies.key(today, GAME, "deal"), json.dumps({"seed": seed, "solution": 1, "n": 0})
    )
    eve, _ = await solo_room(daily, wire, seed=text, hints=True)
    refused = await eve.request({"type": "hint"})
    assert refused["code"] == "not_allowed" and "daily" in refused["message"], refused
    other, _ = await solo_room(daily, wire, seed="another text", hints=True)
    assert (await other.request({"type": "hint"}, timeout=60))["type"] == "hint"


async def test_streaks_and_the_archive(redis_url: str, key_prefix: str) -> None:
    """A player's daily streak (days in a row with a scored attempt at any game, ending
    today or yesterday; the best run kept) and the archive of past dailies to practise
    (the days whose deal is kept), from the boards and deals in Redis (issue 23)."""
    redis = connect(redis_url, max_connections=4, pool_timeout=5)
    boards = Boards(redis, key_prefix)
    today = "2026-11-26"
    now = day_end_ms(today) - 3_600_000
    dailies = Dailies(redis, key_prefix, boards, board_days=10, clock=lambda: now)
    row = {"name": "ann", "status": "won", "time": 60_000, "moves": 90, "progress": 1.0}
    days_back = lambda *ns: [previous(today, n) for n in ns]  # noqa: E731
    try:
        # played yesterday, the day before (two games), then a gap, then three days in a row
        for n, date in enumerate(days_back(1, 2, 2, 4, 5, 6)):
            game = "klondike" if n != 2 else "puttputt"
            await boards.submit(board_name(date, game), "p" * 16, board_score(row), row)
        await redis.set(dailies.key(previous(today, 3), "klondike", "deal"), "{}")
        await redis.set(dailies.key(previous(today, 1), "puttputt", "deal"), "{}")
        pages = DailyPages(dailies)
        streak = await pages.streak("p" * 16)
        assert streak["current"] == 2 and streak["best"] == 3 and streak["today"] is False
        assert streak["days"] == days_back(1, 2, 4, 5, 6)
        await boards.submit(board_name(today, "klondike"), "p" * 16, board_score(row), row)
        assert (await pages.streak("p" * 16))["current"] == 3
        assert (await pages.streak("q" * 16)) == {
            "current": 0,
            "best": 0,
            "today": False,
            "days": [],
        }

        archive = await pages.archive()
        assert archive["today"] == today
        assert [(d["date"], [x["game"] for x in d["dailies"]]) for d in archive["days"]] == [
            (previous(today, 1), ["puttputt"]),
            (previous(today, 3), ["klondike"]),
        ]
        assert archive["days"][0]["dailies"][0]["players"] == 0
    finally:
        found = [k async for k in redis.scan_iter(match=f"{key_prefix}*")]
        if found:
            await redis.delete(*found)
        await redis.aclose()


def previous(date: str, n: int) -> str:
    for _ in range(n):
        date = previous_date(date)
    return date
