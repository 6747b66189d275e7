"""Practice hints (issue 11): solo rooms only, answered by the solver off the event loop."""

from __future__ import annotations

from solrace.engine import new_game, replay
from solrace.engine.solve import solve_deal
from solrace.server.solver.solving import SolverPool


async def room(url: str, wire, players: int = 1, **options):
    host = await wire(url)
    created = await host.request(
        {"type": "create", "name": "p0", "options": {"game": "puttputt", "countdown": 0, **options}}
    )
    assert created["type"] == "joined", created
    clients = [host]
    for i in range(1, players):
        c = await wire(url)
        joined = await c.request({"type": "join", "room": created["room"], "name": f"p{i}"})
        assert joined["type"] == "joined", joined
        clients.append(c)
    return clients, created


async def start(clients, created) -> dict:
    reply = await clients[0].request(
        {"type": "start", "host_token": created["host_token"]}, timeout=120
    )
    return reply


async def test_hints_refused_with_two_players(shared_server, wire) -> None:
    (a, b), created = await room(shared_server.ws_url, wire, players=2)
    on = await a.request(
        {"type": "configure", "host_token": created["host_token"], "options": {"hints": True}}
    )
    assert on["code"] == "bad_options" and "solo" in on["message"]
    assert (await start([a, b], created))["type"] == "ok"
    await a.wait_for(lambda x: x["type"] == "snapshot")
    refused = await a.request({"type": "hint"})
    assert refused["code"] == "not_allowed"


async def test_hints_room_refuses_to_start_a_race_of_two(shared_server, wire) -> None:
    """A second player may sit in a hints room, but the race does not start while hints
    are on: the host turns them off first."""
    (a, b), created = await room(shared_server.ws_url, wire, players=2, hints=True)
    refused = await start([a, b], created)
    assert refused["code"] == "bad_options"
    off = await a.request(
        {"type": "configure", "host_token": created["host_token"], "options": {"hints": False}}
    )
    assert off["type"] == "ok"
    assert (await start([a, b], created))["type"] == "ok"


async def test_hint_off_and_before_the_race(shared_server, wire) -> None:
    (a,), created = await room(shared_server.ws_url, wire)
    assert (await a.request({"type": "hint"}))["code"] == "not_allowed"  # hints off
    (b,), created = await room(shared_server.ws_url, wire, hints=True)
    assert (await b.request({"type": "hint"}))["code"] == "bad_state"  # lobby
    spectator = await wire(shared_server.ws_url)
    await spectator.request({"type": "spectate", "room": created["room"]})
    assert (await spectator.request({"type": "hint"}))["code"] == "not_player"


async def test_following_the_hints_wins_a_winnable_solo_deal(shared_server, wire) -> None:
    """Every hint is a legal move (the server acks it) that keeps the position winnable:
    following them from the deal ends in a win."""
    (a,), created = await room(shared_server.ws_url, wire, hints=True, deal="winnable")
    assert (await start([a], created))["type"] == "ok"
    await a.wait_for(lambda x: x["type"] == "snapshot")
    played: list[str] = []
    status = "racing"
    while status == "racing":
        hint = await a.request({"type": "hint"}, timeout=60)
        assert hint["type"] == "hint" and hint["verdict"] == "won", hint
        assert hint["n"] == len(played) + 1
        ack = await a.request({"type": "move", "move": hint["move"], "n": hint["n"]})
        assert ack["type"] == "ack", ack
        played.append(hint["move"])
        status = ack["status"]
    assert status == "won"
    results = await a.wait_event("results")
    assert results["moves"]["0"] == played
    assert replay("puttputt", results["seed"], results["game_options"], played).is_won()
    verdicts = await a.wait_event("solved", timeout=60)
    assert verdicts["deal"] == "won" and verdicts["seats"] == {}


async def test_hint_from_a_lost_position_has_no_move() -> None:
    """Putt Putt deal 5 is lost (the solver proves it): the hint says so, with no move."""
    assert solve_deal("puttputt", 5, {}, 200_000).verdict == "lost"
    pool = SolverPool(workers=1)
    try:
        assert await pool.hint(new_game("puttputt", seed=5).to_text()) == ("lost", None)
        won = new_game("puttputt", seed=1)
        verdict, move = await pool.hint(won.to_text())
        assert verdict == "won" and move in {str(m) for m in won.legal_moves()}
        won.play(move)
        # the next position lies on the remembered solution: answered without a solve
        assert won.to_text() in pool._hints
    finally:
        pool.close()


def test_a_hint_gets_at_least_its_games_draw_budget() -> None:
    """A deal drawn as winnable is won within its game's draw budget from its start, so the
    first hint there must have that budget too (Putt Putt draws at 2,000,000 positions; at
    the hints' own 50,000 a drawn deal was answered "unknown", and following the hints of a
    winnable deal failed)."""
    from solrace.server.solver.solving import Budgets

    b = Budgets(verdicts={}, hints={})  # as without a compiled search
    for game in ("puttputt", "tabbycat", "manx", "klondike", "leapyear"):
        text = new_game(game, seed=1).to_text()
        assert b.for_hint(text) == max(b.hint, b.for_draw(game)) >= b.for_draw(game), game
        assert b.for_verdict(text) == max(b.verdict, b.for_draw(game)), game
    assert b.for_hint(new_game("puttputt", seed=1).to_text()) > b.hint
    assert b.for_hint("not a position") == max(b.hint, b.for_draw(""))


def test_klondike_hints_and_verdicts_get_the_compiled_searchs_budgets() -> None:
    """With Klondike's search in C (built on every machine of this kind: tests/engine/
    test_solve_c.py fails without it) its verdicts and hints search 10x and 6x the positions
    of the other games', for about the CPU the Python search spent on the smaller budgets,
    and its winnable deals are drawn at the verdicts' budget (so a hint, never below the
    draw's, gets it too); without it they keep the Python search's; other games keep theirs
    either way."""
    from solrace.engine.solve_klondike import C_SEARCH
    from solrace.server.solver.solving import Budgets

    b = Budgets()
    verdict, hint = (1_000_000, 1_000_000) if C_SEARCH else (b.verdict, b.hint)
    text = new_game("klondike", seed=1).to_text()
    three = new_game("klondike", seed=1, options={"draw": 3, "moves": "build"}).to_text()
    for t in (text, three):
        assert b.for_verdict(t) == verdict >= b.verdict
        assert b.for_hint(t) == hint >= b.hint
    assert b.for_deal("klondike") == verdict
    assert b.for_draw("klondike") == (1_000_000 if C_SEARCH else 30_000)
    assert Budgets(hints={"klondike": 300_000}, draw={}).for_hint(text) == 300_000
    tabby = new_game("tabbycat", seed=1).to_text()
    assert b.for_verdict(tabby) == max(b.verdict, b.for_draw("tabbycat"))
    assert b.for_hint(tabby) == max(b.hint, b.for_draw("tabbycat"))


async def test_a_drawn_deals_first_hint_searches_as_far_as_its_draw() -> None:
    """A daily or a stocked deal is drawn in the background at `for_daily`, past a hint's
    own budget: the hint at its start gets that budget and finds the draw's win, and the
    hints along it come from the remembered solution. The same start in a room whose deal
    was not drawn winnable keeps the hint's budget (here 100 positions: Putt Putt deal 7 is
    won at 4,417, so "unknown")."""
    from solrace.server.rules.room import RACING, Room, token_hash
    from solrace.server.solver.solving import Budgets, drawn_start, hint

    def solo(solution: int | None) -> Room:
        room = Room.new("ABCDE", token_hash("host"), {"game": "puttputt", "countdown": 0}, 0)
        room.configure({"hints": True}, 0)
        room.join("p0", token_hash("p0"), 0)
        room.start(0, 7, b"\x01" * 16, solution)
        room.tick(0)
        assert room.state == RACING
        return room

    budgets = Budgets(hint=100, draw={"puttputt": 100}, daily={"puttputt": 2_000_000})
    pool = SolverPool(workers=1, budgets=budgets)
    try:
        drawn, searched = solo(51), solo(None)
        start = new_game("puttputt", 7).to_text()
        assert drawn_start(drawn, start) and not drawn_start(searched, start)
        assert (await hint(pool, searched, 0, 0))["verdict"] == "unknown"
        first = await hint(pool, drawn, 0, 0)
        assert first["verdict"] == "won" and first["n"] == 1, first
        drawn.play(0, first["move"], 1, 0)
        after = drawn.races[0].game.to_text()
        assert not drawn_start(drawn, after)
        assert after in pool._hints  # along the draw's win: no solve at the smaller budget
        assert (await hint(pool, drawn, 0, 0))["verdict"] == "won"
    finally:
        pool.close()
