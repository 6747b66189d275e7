"""The client library against a real server: handshake, race, events, resume, errors."""

from __future__ import annotations

import asyncio

import pytest
from helpers.timing import scaled
from helpers.views import ELSEWHERE
from solrace.client import Client, ErrorReply, Reconnected
from solrace.client import events as ev
from solrace.client.moves import legal_moves


async def connected(url: str, **kw) -> Client:
    c = Client(url, **kw)
    await c.connect()
    return c


async def collect(client: Client, seconds: float) -> list[ev.Message]:
    out: list[ev.Message] = []
    try:
        async with asyncio.timeout(seconds):
            while True:
                out.append(await client.next_event())
    except TimeoutError:
        pass
    return out


async def race_of_two(url: str, game: str = "puttputt", **kw) -> tuple[Client, Client]:
    a = await connected(url, **kw)
    b = await connected(url, **kw)
    joined = await a.create("ann", {"game": game, "countdown": 1, "spectator_delay": 0})
    assert joined.role == "player" and joined.seat == 0 and joined.host_token and joined.token
    jb = await b.join(joined.room, "bob")
    assert jb.seat == 1 and jb.host_token is None
    await a.ready()
    await b.ready()
    await a.start()
    await a.wait_board(10)
    await b.wait_board(10)
    assert a.room.state == b.room.state == "racing"
    return a, b


async def test_hello_welcome_ping_lobby(server_url):
    c = await connected(server_url)
    try:
        assert c.welcome.version == 1 and c.welcome.limits["max_frame"] == 8192
        pong = await c.ping(t=123)
        assert pong.t == 123
        lobby = await c.lobby()
        assert isinstance(lobby.rooms, list)
    finally:
        await c.close()


async def test_race_moves_acked_and_events_numbered_in_order(server_url):
    a, b = await race_of_two(server_url)
    try:
        assert a.room.room == b.room.room
        view = b.room.view
        assert "s" in view["piles"] and all(isinstance(x, dict) for x in view["piles"]["s"])
        move = legal_moves(view)[0]
        ack = await b.move(move, n=1)
        assert ack.n == 1 and ack.move == move and ack.view["moves"] == 1
        assert b.room.view == ack.view
        ack2 = await b.move(legal_moves(b.room.view)[0], n=2)
        assert ack2.n == 2
        seen = await collect(a, 1.0)
        # b's moves reach a as progress events or, within one tick, one coalesced frame
        progress = [m.moves for m in seen if isinstance(m, ev.Progress) and m.seat == 1] + [
            line["moves"]
            for m in seen
            if isinstance(m, ev.ProgressFrame)
            for line in m.seats
            if line["seat"] == 1
        ]
        assert progress and max(progress) == 2
        assert a.room.players[1]["moves"] == 2
        numbers = [m.n for m in seen if isinstance(m, ev.Event)]
        assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
        assert a.room.gaps == [] and b.room.gaps == []
        # both sides agree on the room's event count once the queues are drained
        await collect(b, 0.5)
        assert a.room.event == b.room.event
    finally:
        await a.close()
        await b.close()


async def test_errors_come_back_as_server_errors(server_url):
    a, b = await race_of_two(server_url)
    try:
        with pytest.raises(ErrorReply) as e:
            await b.request({"type": "start", "host_token": "not-the-token"})
        assert e.value.code == "not_host"
        with pytest.raises(ErrorReply) as e:
            await b.move("t9-f1", n=1)
        assert e.value.code == "illegal_move"
        with pytest.raises(ErrorReply) as e:
            await b.move(legal_moves(b.room.view)[0], n=5)
        assert e.value.code == "out_of_sync"
        with pytest.raises(ErrorReply) as e:
            await b.request({"type": "move"})
        assert e.value.code == "bad_message"
        with pytest.raises(ErrorReply) as e:
            await b.request({"type": "no_such_thing"})
        assert e.value.code == "unknown_type"
        # nothing changed: the first move is still move 1
        ack = await b.move(legal_moves(b.room.view)[0], n=1)
        assert ack.n == 1
    finally:
        await a.close()
        await b.close()


async def test_lobby_errors(server_url):
    c = await connected(server_url)
    try:
        with pytest.raises(ErrorReply) as e:
            await c.join("NOROOM", "zed")
        assert e.value.code == "no_room"
        j = await c.create("host", {"game": "klondike"})
        with pytest.raises(ErrorReply) as e:
            await c.move("deal")
        assert e.value.code == "bad_state"
        await c.configure({"time_limit": 120})
        assert (await collect(c, 0.5)) is not None
        assert c.room.options["time_limit"] == 120
        with pytest.raises(ErrorReply) as e:
            await c.resume(j.room, "bad-token")
        assert e.value.code == "bad_token"
    finally:
        await c.close()


async def test_resume_after_dropped_socket(server_url):
    a, b = await race_of_two(server_url, auto_resume=True)
    try:
        await b.move(legal_moves(b.room.view)[0], n=1)
        await collect(b, 0.3)
        before = b.room.event
        await b.drop()
        # while b is away, a plays: b must get these events on resume
        for i in range(3):
            moves = legal_moves(a.room.view)
            await a.move(moves[0], n=i + 1)
        notice = await b.wait_for(lambda m: isinstance(m, Reconnected), timeout=scaled(10))
        assert notice.attempts >= 1
        await collect(b, 1.0)
        await collect(a, 0.3)
        assert b.room.event >= before + 3
        assert b.room.players[0]["moves"] == 3
        assert b.room.view["moves"] == 1
        ack = await b.move(legal_moves(b.room.view)[0], n=2)
        assert ack.n == 2
    finally:
        await a.close()
        await b.close()


async def test_resume_from_a_new_connection_with_token(server_url):
    a, b = await race_of_two(server_url)
    try:
        await b.move(legal_moves(b.room.view)[0], n=1)
        token, room, last = b.token, b.room.room, b.room.event
        await b.close()
        c = await connected(server_url)
        try:
            joined = await c.resume(room, token, last_event=last)
            assert joined.seat == 1 and c.room.seat == 1
            await c.resume()  # full resync: the snapshot holds our own board
            assert c.room.view["moves"] == 1
            ack = await c.move(legal_moves(c.room.view)[0], n=2)
            assert ack.n == 2
        finally:
            await c.close()
    finally:
        await a.close()


async def test_spectator_gets_boards_and_progress(server_url):
    a, b = await race_of_two(server_url)
    s = await connected(server_url, record=True, source=ELSEWHERE)  # not a racer's address
    try:
        joined = await s.spectate(a.room.room)
        assert joined.role == "spectator"
        assert set(s.room.boards) == {0, 1}
        assert all("hidden" in x for x in s.room.boards[0]["piles"]["s"])
        await a.move(legal_moves(a.room.view)[0], n=1)
        await s.wait_until(lambda: s.room.boards[0]["moves"] == 1, scaled(5))
        assert s.room.boards[0]["moves"] == 1
        # the progress comes as an event, or folded into a snapshot: the model has it either way
        await s.wait_until(lambda: s.room.players[0]["moves"] == 1, scaled(5))
        from solrace.protocol.messages import validate_server

        for msg in s.received:
            validate_server(msg)
            if msg["type"] == "board":  # never a hidden card, even in a spectator's feed
                assert all(isinstance(x, dict) for x in msg["view"]["piles"]["s"])
    finally:
        for c in (a, b, s):
            await c.close()


async def test_bots_finish_a_putt_putt_race(server_url):
    from solrace.client.bot import run_bot

    host = await connected(server_url)
    try:
        joined = await host.create("host", {"game": "puttputt", "countdown": 1}, play=False)
        bots = [
            asyncio.create_task(run_bot(server_url, joined.room, f"bot{i}", pace=0.0))
            for i in range(2)
        ]
        await host.wait_until(
            lambda: sum(bool(p.get("ready")) for p in host.room.players.values()) == 2, timeout=10
        )
        await host.start()
        results = await asyncio.wait_for(asyncio.gather(*bots), scaled(120))
        for r in results:
            assert r.races == 1 and r.moves > 0
            assert r.statuses[0] in ("won", "dead", "resigned")
            assert not [e for e in r.errors if e != "bad_state"]  # never illegal, never limited
        await host.wait_until(lambda: host.room.state == "finished", timeout=scaled(20))
        ranking = host.room.results["ranking"]
        assert sorted(p["seat"] for p in ranking) == sorted(r.seat for r in results)
        # the moves each bot made replay on the revealed deal to what the server saw
        from solrace.engine import replay

        res = host.room.results
        for r in results:
            moves = (
                res["moves"][str(r.seat)] if str(r.seat) in res["moves"] else res["moves"][r.seat]
            )
            g = replay(res["game"], res["seed"], res["game_options"], moves)
            assert len(g.history) == r.moves
    finally:
        await host.close()


async def test_undo_when_the_room_allows_it(server_url):
    a = await connected(server_url)
    try:
        await a.create("ann", {"game": "puttputt", "countdown": 1, "undo": "safe"})
        await a.ready()
        await a.start()
        await a.wait_board()
        while not [m for m in legal_moves(a.room.view) if m != "deal"]:
            await a.move("deal", n=a.room.view["moves"] + 1)  # until a card can be played
        n = a.room.view["moves"]
        move = next(m for m in legal_moves(a.room.view) if m != "deal")
        await a.move(move, n=n + 1)
        ack = await a.undo(n=n + 1)
        assert ack.undone == move and ack.view["moves"] == n and a.room.view["moves"] == n
        await a.move("deal", n=n + 1)  # a deal reveals a card: it cannot be taken back
        with pytest.raises(ErrorReply) as e:
            await a.undo()
        assert e.value.code == "undo_refused"
    finally:
        await a.close()


async def test_bot_readies_again_after_a_rematch(server_url):
    from solrace.client.bot import run_bot

    host = await connected(server_url)
    try:
        joined = await host.create("host", {"game": "puttputt", "countdown": 1}, play=False)
        bot = asyncio.create_task(run_bot(server_url, joined.room, "robo", pace=0.0, races=2))
        for race in range(2):
            await host.wait_until(
                lambda: any(p.get("ready") for p in host.room.players.values()), timeout=10
            )
            await host.start()
            await host.wait_until(lambda: host.room.state == "finished", timeout=scaled(60))
            if race == 0:
                await host.rematch()
        result = await asyncio.wait_for(bot, scaled(30))
        assert result.races == 2 and len(result.statuses) == 2
        assert "rate_limited" not in result.errors  # the bot keeps to the server's limits
    finally:
        await host.close()


async def test_bot_as_host_creates_starts_and_races_alone(server_url):
    from solrace.client.bot import run_bot

    result = await asyncio.wait_for(
        run_bot(
            server_url,
            None,
            "solo",
            pace=0.0,
            start_when=1,
            create_options={"game": "leapyear", "countdown": 1, "public": True},
        ),
        120,
    )
    assert result.room and result.seat == 0 and result.races == 1
    assert result.statuses[0] in ("won", "dead", "resigned") and result.moves > 20
    assert "rate_limited" not in result.errors


async def test_lobby_lists_public_rooms_only(server_url):
    c = await connected(server_url)
    d = await connected(server_url)
    try:
        public = await c.create("pub", {"game": "manx", "public": True})
        private = await d.create("priv", {"game": "manx"})
        rooms = {r["room"]: r for r in (await c.lobby()).rooms}
        assert public.room in rooms and private.room not in rooms
        assert rooms[public.room]["game"] == "manx" and rooms[public.room]["players"] == 1
    finally:
        await c.close()
        await d.close()


def _keys_in(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _keys_in(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys_in(v)


def _views_in(obj, path="$"):
    """Every engine view (a map with `piles`) inside a message, with where it was."""
    if isinstance(obj, dict):
        if "piles" in obj:
            yield path, obj
        for k, v in obj.items():
            yield from _views_in(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _views_in(v, f"{path}[{i}]")


async def test_a_player_only_ever_sees_its_own_board(server_url):
    a, b = await race_of_two(server_url, record=True)
    try:
        for i in range(6):
            await a.move(legal_moves(a.room.view)[0], n=i + 1)
            if i < 3:
                await b.move(legal_moves(b.room.view)[0], n=i + 1)
        await a.resign()
        await b.resign()
        await b.wait_until(lambda: b.room.state == "finished", scaled(10))
        from solrace.protocol.messages import validate_server

        seen_results = False
        for msg in b.received:
            validate_server(msg)  # every server message keeps to the protocol's shapes
            if msg.get("type") == "event" and msg.get("kind") == "results":
                seen_results = True
                continue
            assert "seed" not in set(_keys_in(msg)) or seen_results, msg
            for where, view in _views_in(msg):
                assert msg["type"] in ("ack", "joined", "snapshot"), (where, msg["type"])
                assert where in ("$.view", "$.change", "$.snapshot.you.view", "$.you.view"), where
                if where == "$.change":  # what b's own move did to its board (its ack)
                    assert msg["n"] <= 3  # b's own move, never a's (6 moves)
                    for item in view["piles"].get("s", [0])[1:]:
                        assert isinstance(item, dict) and set(item) == {"hidden"}
                    continue
                assert view["moves"] <= 3  # b's own board, never a's (6 moves)
                for item in view["piles"]["s"]:
                    assert isinstance(item, dict) and set(item) == {"hidden"}
    finally:
        await a.close()
        await b.close()


async def test_a_gap_in_event_numbers_triggers_a_resync(server_url):
    a, b = await race_of_two(server_url)
    try:
        await collect(b, 0.3)
        n = b.room.event
        players_before = dict(b.room.players[0])
        # feed the reader a numbered event from the future, as if frames had been lost
        b._dispatch(
            ev.parse_message(
                {
                    "type": "event",
                    "n": n + 5,
                    "kind": "progress",
                    "at": 0,
                    "seat": 0,
                    "moves": 99,
                    "home": 0,
                    "progress": 0.0,
                    "status": "racing",
                    "time": None,
                }
            )
        )
        assert b.room.gaps == [n + 5]
        await b.wait_for(lambda m: type(m).__name__ == "Resynced", scaled(5))
        assert b.room.gaps == [] and b.room.players[0]["moves"] == players_before["moves"]
    finally:
        await a.close()
        await b.close()
