"""Quick match over the wire (server/race/quick.py): the queue in Redis, the matcher, the rooms it
makes, cancels, and two server processes sharing one queue."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from typing import Any

import pytest
import redis.asyncio as aioredis
from helpers.race import until
from helpers.servers import in_loop, serving
from helpers.timing import scaled
from solrace.client.player_key import new_key
from solrace.protocol import messages as m
from solrace.server.race.quick import QuickConfig


async def keyed(wire: Any, url: str, key: str | None = None) -> Any:
    c = await wire(url, hello=False)
    hello: dict[str, Any] = {"type": "hello", "version": m.VERSION, "client": "solrace-tests"}
    if key is not False:
        hello["player_key"] = key or new_key()
    assert (await c.request(hello))["type"] == "welcome"
    return c


async def take_seat(wire: Any, url: str, matched: dict[str, Any]) -> Any:
    """What a client does with `matched`: connect naming the room, resume the seat."""
    c = await wire(f"{url}?room={matched['room']}")
    joined = await c.request({"type": "resume", "room": matched["room"], "token": matched["token"]})
    assert joined["type"] == "joined" and joined["seat"] == matched["seat"], joined
    return c, joined


def quick_keys(r: Any, prefix: str) -> Any:
    return r.keys(f"{prefix}quick*")


async def test_two_players_asking_within_two_seconds_race_the_same_deal(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    async with in_loop(redis_url, key_prefix) as (transport, url):
        a, b = await keyed(wire, url), await keyed(wire, url)
        qa = await a.request({"type": "quick", "game": "puttputt", "name": "ann"})
        assert qa["type"] == "queued" and qa["rated"] is True and qa["rating"] == 25.0, qa
        qb = await b.request({"type": "quick", "game": "puttputt", "name": "bob"})
        assert qb["type"] == "queued", qb
        ma = await a.wait_for(lambda x: x["type"] == "matched")
        mb = await b.wait_for(lambda x: x["type"] == "matched")
        assert ma["room"] == mb["room"] and {ma["seat"], mb["seat"]} == {0, 1}
        assert ma["token"] != mb["token"] and sorted(ma["players"]) == ["ann", "bob"]
        assert ma["rated"] is True
        # the room was made by this process, which owns its code, with both seated and started
        assert transport.service.owns(ma["room"])
        # made by this process: the queue's connection may take the seat (a new one naming
        # the room may too)
        assert ma["here"] is True and mb["here"] is True
        ja = await a.request({"type": "resume", "room": ma["room"], "token": ma["token"]})
        assert ja["type"] == "joined" and ja["seat"] == ma["seat"], ja
        sa = a
        sb, _ = await take_seat(wire, url, mb)
        snap = ja["snapshot"]
        assert snap["options"]["rated"] is True and snap["options"]["game"] == "puttputt"
        assert [p["name"] for p in snap["players"]] == ma["players"]
        assert snap["state"] in ("countdown", "racing")
        for s in (sa, sb):
            await s.wait_for(lambda x: x["type"] == "snapshot" and x["snapshot"]["you"]["view"])
        views = [
            [x for x in s.received if x["type"] == "snapshot"][-1]["snapshot"]["you"]["view"]
            for s in (sa, sb)
        ]
        assert views[0] == views[1]  # one deal for both
        # nothing of the queue is left but the matcher's lease
        r = aioredis.from_url(redis_url)
        try:
            left = {k.decode() for k in await quick_keys(r, key_prefix)}
            assert left <= {
                f"{key_prefix}quick:lease",
                f"{key_prefix}quickbox:{{{transport.rooms.proc_id}}}",
            }
        finally:
            await r.aclose()


async def test_a_cancel_leaves_nothing_behind(redis_url: str, key_prefix: str, wire: Any) -> None:
    async with in_loop(redis_url, key_prefix) as (transport, url):
        r = aioredis.from_url(redis_url)
        try:
            a = await keyed(wire, url)
            assert (await a.request({"type": "quick", "game": "manx", "name": "ann"}))[
                "type"
            ] == "queued"
            tickets = f"{key_prefix}quick:{{manx.rated}}:tickets"
            assert await r.hlen(tickets) == 1
            assert await r.pttl(tickets) > 0  # every key a client makes expires
            again = await a.request_once({"type": "quick", "game": "manx", "name": "ann"})
            assert again["code"] == "bad_state"  # one ticket per connection
            assert (await a.request({"type": "quick_cancel"}))["type"] == "ok"
            assert {k.decode() for k in await quick_keys(r, key_prefix)} <= {
                f"{key_prefix}quick:lease"
            }
            assert transport.quick is not None and transport.quick.waiting == {}
            second = await a.request({"type": "quick_cancel"})
            assert second["code"] == "bad_state"
            # a connection that goes away takes its ticket with it
            b = await keyed(wire, url)
            await b.request({"type": "quick", "game": "manx", "name": "bob"})
            assert await r.hlen(tickets) == 1
            await b.close()

            async def gone() -> bool:
                return not await r.exists(tickets)

            await until(gone, "the closed connection's ticket leaves the queue")
            assert transport.quick.waiting == {}
            # and the lone player who cancelled was never seated anywhere
            assert not [x for x in a.received if x["type"] == "matched"]
        finally:
            await r.aclose()


async def test_rated_needs_a_player_key_and_casual_does_not(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    async with in_loop(redis_url, key_prefix) as (_transport, url):
        anon = await keyed(wire, url, key=False)  # type: ignore[arg-type]
        refused = await anon.request({"type": "quick", "game": "manx", "name": "x"})
        assert refused["code"] == "player_key_required", refused
        other = await keyed(wire, url, key=False)  # type: ignore[arg-type]
        for c, name in ((anon, "x"), (other, "y")):
            q = await c.request({"type": "quick", "game": "manx", "name": name, "rated": False})
            assert q["type"] == "queued" and q["rated"] is False
        mx = await anon.wait_for(lambda x: x["type"] == "matched")
        my = await other.wait_for(lambda x: x["type"] == "matched")
        assert mx["room"] == my["room"] and mx["rated"] is False


async def test_two_processes_sharing_one_redis_pair_players_who_asked_on_each(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    async with serving(redis_url, key_prefix, count=2) as (one, two):
        a = await keyed(wire, one.ws_url)
        b = await keyed(wire, two.ws_url)
        assert (await a.request({"type": "quick", "game": "puttputt", "name": "ann"}))[
            "type"
        ] == "queued"
        assert (await b.request({"type": "quick", "game": "puttputt", "name": "bob"}))[
            "type"
        ] == "queued"
        ma = await a.wait_for(lambda x: x["type"] == "matched", timeout=15)
        mb = await b.wait_for(lambda x: x["type"] == "matched", timeout=15)
        assert ma["room"] == mb["room"] and {ma["seat"], mb["seat"]} == {0, 1}
        # one process made the room: its player may stay, the other is told to connect anew
        assert {ma["here"], mb["here"]} == {True, False}
        # each takes its seat (without a front, on its own process: through Redis)
        sa, _ = await take_seat(wire, one.ws_url, ma)
        sb, _ = await take_seat(wire, two.ws_url, mb)
        for s in (sa, sb):
            await s.wait_for(lambda x: x["type"] == "event" and x["kind"] == "start", timeout=15)


async def test_players_far_apart_in_rating_wait_for_the_window_to_widen(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """The matcher uses each player's rating in the game (server/ratings.py): two players 20
    points apart are not paired while their windows are narrow."""
    async with in_loop(redis_url, key_prefix) as (transport, url):
        assert transport.quick is not None
        quick = transport.quick
        quick.config = QuickConfig(countdown=0)
        ratings: dict[str, float] = {}

        async def rating_of(game: str, player: str) -> dict[str, Any] | None:
            mu = ratings.get(player)
            return None if mu is None else {"mu": mu}

        quick.rating_of = rating_of
        a, b = await keyed(wire, url), await keyed(wire, url)
        ka, kb = a.received[0]["player"], b.received[0]["player"]
        ratings[ka], ratings[kb] = 10.0, 30.0
        await a.request({"type": "quick", "game": "manx", "name": "low"})
        await b.request({"type": "quick", "game": "manx", "name": "high"})
        # windows of 3 points widening 1 a second: about 17 s before they meet; meanwhile
        # nobody is matched (checked over several of the matcher's rounds)
        seen = quick.rounds
        await until(lambda: quick.rounds >= seen + 5, "five rounds of the matcher")
        assert not [x for x in a.received + b.received if x["type"] == "matched"]
        # a third close to the first is paired with it at once
        c = await keyed(wire, url)
        ratings[c.received[0]["player"]] = 11.0
        await c.request({"type": "quick", "game": "manx", "name": "near"})
        ma = await a.wait_for(lambda x: x["type"] == "matched")
        mc = await c.wait_for(lambda x: x["type"] == "matched")
        assert ma["room"] == mc["room"]
        assert not [x for x in b.received if x["type"] == "matched"]


@pytest.mark.parametrize("game", ["nope"])
async def test_an_unknown_game_is_refused(
    redis_url: str, key_prefix: str, wire: Any, game: str
) -> None:
    async with in_loop(redis_url, key_prefix) as (_t, url):
        a = await keyed(wire, url)
        refused = await a.request({"type": "quick", "game": game, "name": "x"})
        assert refused["code"] == "bad_options"


async def test_with_workers_the_room_is_made_where_its_code_routes(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """`--workers 2`: the players' queue connections land on both workers (round robin); the
    room is made by one of them with a code routed to itself, so every seat taken over a
    connection naming the room is on that worker, and the other holds no part of it."""
    from solrace.server.common.codes import new_code
    from solrace.server.net.front import rendezvous

    def health(srv: Any, room: str) -> dict[str, Any]:
        with urllib.request.urlopen(f"{srv.url}/healthz?room={room}", timeout=scaled(10)) as r:
            out: dict[str, Any] = json.loads(r.read())
            return out

    def code_on(worker: int) -> str:
        while True:
            code = new_code()
            if rendezvous(code, [0, 1]) == worker:
                return code

    async with serving(redis_url, key_prefix, extra_args=["--workers", "2"]) as (srv,):
        players = [await keyed(wire, srv.ws_url) for _ in range(4)]
        for i, p in enumerate(players):
            q = await p.request({"type": "quick", "game": "tabbycat", "name": f"p{i}"})
            assert q["type"] == "queued", q
        matches = [await p.wait_for(lambda x: x["type"] == "matched", timeout=15) for p in players]
        code = matches[0]["room"]
        assert {x["room"] for x in matches} == {code} and len(matches[0]["players"]) == 4
        for mt in matches:
            await take_seat(wire, srv.ws_url, mt)
        home_worker = rendezvous(code, [0, 1])
        home = health(srv, code)
        assert home["worker"] == home_worker
        assert home["rooms"] == 1  # every seat's connection is here
        other = health(srv, code_on(1 - home_worker))
        assert other["worker"] == 1 - home_worker and other["rooms"] == 0


async def test_a_full_queue_refuses_busy(
    redis_url: str, key_prefix: str, wire: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every queue is bounded (QUEUE_CAP tickets): over it, `quick` is refused and stores
    nothing."""
    import solrace.server.race.quick as quick_module

    monkeypatch.setattr(quick_module, "QUEUE_CAP", 1)
    async with in_loop(redis_url, key_prefix) as (transport, url):
        a, b = await keyed(wire, url), await keyed(wire, url)
        assert (await a.request({"type": "quick", "game": "leapyear", "name": "a"}))[
            "type"
        ] == "queued"
        refused = await b.request({"type": "quick", "game": "leapyear", "name": "b"})
        assert refused["code"] == "busy", refused
        assert transport.quick is not None and len(transport.quick.waiting) == 1


async def test_marked_bots_fill_in_for_a_player_who_waited_alone(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """`--quick-bots N`: bots in the queue (`solrace bot --quick GAME`: hello with `bot: true`)
    never race each other; a player alone for N seconds races them, each seat marked a bot's."""
    from solrace.client.bot import run_quick_bot
    from solrace.server.rules.matchmaking import Rules

    async with in_loop(redis_url, key_prefix) as (transport, url):
        assert transport.quick is not None
        quick = transport.quick
        quick.config = QuickConfig(rules=Rules(bots_after=1.0, bot_seats=2), countdown=0)
        stop = asyncio.Event()
        seen: list[Any] = []
        bots = [
            asyncio.create_task(
                run_quick_bot(
                    url,
                    "puttputt",
                    f"robo{i}",
                    0.02,
                    stop,
                    player_key=new_key(),
                    on_matched=seen.append,
                )
            )
            for i in range(2)
        ]
        try:
            await until(lambda: len(quick.waiting) == 2, "both bots in the queue")
            rounds = quick.rounds
            await until(lambda: quick.rounds >= rounds + 15, "the matcher's rounds")
            assert seen == []  # bots alone: nobody to fill in for
            human = await keyed(wire, url)
            await human.request({"type": "quick", "game": "puttputt", "name": "ann"})
            matched = await human.wait_for(lambda x: x["type"] == "matched")
            assert sorted(matched["players"]) == ["ann", "robo0", "robo1"]
            _seat, joined = await take_seat(wire, url, matched)
            marks = {p["name"]: p.get("bot", False) for p in joined["snapshot"]["players"]}
            assert marks == {"ann": False, "robo0": True, "robo1": True}
            results = await asyncio.wait_for(asyncio.gather(*bots), scaled(60))
            assert all(r.races == 1 and r.room == matched["room"] for r in results)
        finally:
            stop.set()
            for b in bots:
                b.cancel()


async def test_a_claimed_ticket_whose_room_never_comes_is_told_to_ask_again(
    redis_url: str, key_prefix: str, wire: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process making a group's room died after the claim: each member's own process,
    finding its ticket gone from the queue and no `matched` for LOST_S, says `busy`."""
    import solrace.server.race.quick as quick_module

    monkeypatch.setattr(quick_module, "LOST_S", 0.5)
    monkeypatch.setattr(quick_module, "VOUCH_S", 0.1)
    async with in_loop(redis_url, key_prefix) as (transport, url):
        quick = transport.quick
        assert quick is not None
        a = await keyed(wire, url)
        await a.request({"type": "quick", "game": "klondike", "name": "ann"})
        (tid,) = quick.waiting
        # a matcher's claim, with nobody left to make the room
        missing = await quick._scripts["claim"](keys=quick._qkeys("klondike.rated"), args=[tid])
        assert not missing
        told = await a.wait_for(lambda x: x["type"] == "error")
        assert told["code"] == "busy" and "ask again" in told["message"]
        assert quick.waiting == {} and quick.ticket_of(a) is None


async def test_a_rated_quick_match_spends_the_addresss_rated_seats(
    redis_url: str, key_prefix: str, wire: Any
) -> None:
    """Rated quick matches share the per-address budget of rated seats (server/guard.py):
    asking needs one left, being matched spends it."""
    from solrace.server.net.guard import GuardLimits

    rated = GuardLimits(rated_per_address=1, rated_window=3600.0)
    async with in_loop(redis_url, key_prefix, guard=rated) as (_transport, url):
        a = await wire(url, hello=False, address="10.9.0.1")
        await a.request({"type": "hello", "version": m.VERSION, "player_key": new_key()})
        b = await wire(url, hello=False, address="10.9.0.2")
        await b.request({"type": "hello", "version": m.VERSION, "player_key": new_key()})
        for c, name in ((a, "ann"), (b, "bob")):
            q = await c.request({"type": "quick", "game": "manx", "name": name})
            assert q["type"] == "queued", q
        await a.wait_for(lambda x: x["type"] == "matched")
        again = await a.request_once({"type": "quick", "game": "manx", "name": "ann"})
        assert again["code"] == "rate_limited" and again["limit"] == "rated", again
        casual = await a.request({"type": "quick", "game": "manx", "name": "ann", "rated": False})
        assert casual["type"] == "queued"


async def test_no_seat_token_ever_reaches_redis(redis_url: str, key_prefix: str, wire: Any) -> None:
    """Whoever reads the queue, the inbox or any command in Redis cannot take a seat: the
    token is made by the process holding the ticket's connection, and Redis sees its hash."""
    seen: list[str] = []
    watcher = aioredis.from_url(redis_url)
    monitor = watcher.monitor()
    await monitor.connect()
    await monitor.connection.send_command("MONITOR")
    assert await monitor.connection.read_response() in (b"OK", "OK")

    async def record() -> None:
        while True:
            seen.append((await monitor.next_command())["command"])

    recorder = asyncio.create_task(record())
    try:
        async with in_loop(redis_url, key_prefix) as (_transport, url):
            a, b = await keyed(wire, url), await keyed(wire, url)
            for c, name in ((a, "ann"), (b, "bob")):
                await c.request({"type": "quick", "game": "puttputt", "name": name})
            ma = await a.wait_for(lambda x: x["type"] == "matched")
            mb = await b.wait_for(lambda x: x["type"] == "matched")
            await take_seat(wire, url, mb)  # the token works: it seats its player
            tokens = [ma["token"], mb["token"]]
            # the room itself was written (the monitor saw the match's commands)
            await until(lambda: any(ma["room"] in cmd for cmd in seen), "the room in MONITOR")
    finally:
        recorder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await recorder
        await monitor.connection.disconnect()
        await watcher.aclose()
    assert seen, "MONITOR saw no command"
    leaked = [cmd for cmd in seen for t in tokens if t in cmd]
    assert leaked == [], leaked[:3]
