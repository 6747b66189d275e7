"""Winnable deals and post-race verdicts (issue 11) over real sockets and a real Redis.

A winnable room's seed is drawn by the solver in the server's process pool and committed
as any other; the results reveal it with the solution length, so anyone can replay the
solver's win. After every race a `solved` event says whether the deal was winnable and
whether each unfinished seat's final position still was.
"""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from solrace.engine import new_game, replay
from solrace.engine.solve import solve_deal, solve_text
from solrace.protocol.messages import ProtocolError
from solrace.server.solver import solving
from solrace.server.solver.solving import Budgets, SolverPool


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


async def start(clients, created) -> list[dict]:
    ok = await clients[0].request(
        {"type": "start", "host_token": created["host_token"]}, timeout=120
    )
    assert ok["type"] == "ok", ok
    return [(await c.wait_for(lambda x: x["type"] == "snapshot"))["snapshot"] for c in clients]


async def test_winnable_room_reveals_a_seed_the_solution_wins(shared_server, wire) -> None:
    # played to its time limit: a race given up with no move played gets no verdicts
    (a,), created = await room(shared_server.ws_url, wire, deal="winnable", time_limit=1)
    assert created["snapshot"]["options"]["deal"] == "winnable"
    await start([a], created)
    countdown = next(x for x in a.received if x.get("kind") == "countdown")
    results = await a.wait_event("results")
    seed, salt = results["seed"], bytes.fromhex(results["salt"])
    digest = hashlib.sha256(salt + seed.to_bytes(8, "big")).hexdigest()
    assert digest == countdown["commitment"] == results["commitment"]
    assert results["deal"] == "winnable" and results["solution_moves"] > 0
    # the revealed seed's deal is won by the solver's moves, replayed by the engine
    budget = Budgets().for_draw("puttputt")  # the draw's own budget (see below)
    solved = solve_deal("puttputt", seed, results["game_options"], budget=budget)
    assert solved.verdict == "won"
    assert replay("puttputt", seed, results["game_options"], solved.moves).is_won()
    assert len(solved.moves) == results["solution_moves"]
    verdicts = await a.wait_event("solved", timeout=60)
    assert verdicts["deal"] == "won" and verdicts["deal_moves"] == results["solution_moves"]
    # the timed-out seat never moved: its final position is the deal, which was winnable
    assert verdicts["seats"] == {"0": "won"}


async def test_results_carry_verdicts_of_an_any_room(shared_server, wire) -> None:
    (a, b), created = await room(shared_server.ws_url, wire, players=2)
    await start([a, b], created)
    await a.request({"type": "move", "move": "deal"})
    await a.request({"type": "resign"})
    await b.request({"type": "resign"})
    results = await a.wait_event("results")
    assert results["deal"] == "any" and results["solution_moves"] is None
    verdicts = await a.wait_event("solved", timeout=120)
    game = new_game("puttputt", seed=results["seed"], options=results["game_options"])
    # the server's budget for a deal's verdict and a seat's is at least the game's draw
    # budget (Budgets.for_deal, for_verdict: 2,000,000 for Putt Putt, where the longest
    # search of seeds 1-2000 took 684,128): judge them against the same budget
    budgets = Budgets()
    expected = solve_deal(
        "puttputt", results["seed"], results["game_options"], budgets.for_deal("puttputt")
    )
    assert verdicts["deal"] == expected.verdict
    assert verdicts["deal_moves"] == (len(expected.moves) if expected.moves else None)
    assert set(verdicts["seats"]) == {"0", "1"}
    assert verdicts["seats"]["1"] == expected.verdict  # seat 1 never moved
    after = replay("puttputt", results["seed"], results["game_options"], results["moves"]["0"])
    assert after.to_text() != game.to_text()
    seat_budget = budgets.for_verdict(after.to_text())
    assert verdicts["seats"]["0"] == solve_text(after.to_text(), seat_budget).verdict
    # a late viewer finds the verdicts in the stored results
    c = await wire(shared_server.ws_url)
    joined = await c.request({"type": "spectate", "room": created["room"]})
    assert joined["snapshot"]["results"]["solved"] == {
        k: verdicts[k] for k in ("deal", "deal_moves", "seats")
    }


async def test_deal_option_is_checked_and_listed(shared_server, wire) -> None:
    a = await wire(shared_server.ws_url)
    bad = await a.request(
        {"type": "create", "name": "x", "options": {"deal": "easy", "game": "puttputt"}}
    )
    assert bad["code"] == "bad_options"
    both = await a.request(
        {"type": "create", "name": "x", "options": {"deal": "winnable", "seed": "2026-11-23"}}
    )
    assert both["code"] == "bad_options" and "text seed" in both["message"]
    created = await a.request(
        {"type": "create", "name": "x", "options": {"deal": "winnable", "public": True}}
    )
    rows = (await a.request({"type": "lobby"}))["rooms"]
    assert {"room": created["room"], "deal": "winnable"}.items() <= next(
        r for r in rows if r["room"] == created["room"]
    ).items()


async def test_draws_give_up_with_busy_after_the_cap() -> None:
    """A budget no deal can meet: every candidate is "unknown", and after max_draws the
    start is refused with the retryable `busy` instead of drawing for ever."""
    pool = SolverPool(workers=1, budgets=Budgets(draw={"klondike": 1}, max_draws=3))
    try:
        with pytest.raises(ProtocolError) as err:
            await pool.winnable({"game": "klondike", "game_options": {}})
        assert err.value.code == "busy" and "3 tries" in err.value.message
    finally:
        pool.close()
    pool = SolverPool(workers=1)
    try:
        dealt = await pool.winnable({"game": "puttputt", "game_options": {}})
    finally:
        pool.close()
    assert dealt.game == "puttputt" and dealt.tried >= 1
    # judged at the draw's own budget: a deal drawn as won within it may need more than
    # any smaller one (a check at 200,000 failed once on a deal drawn at 2,000,000)
    budget = Budgets().for_draw("puttputt")
    assert solve_deal("puttputt", dealt.seed, {}, budget).verdict == "won"


async def test_a_deal_drawn_ahead_is_used_once() -> None:
    """A winnable room's deal is drawn when the room is made (prefetch), so `start` finds it
    ready; each drawn deal serves one start only."""
    pool = SolverPool(workers=1)
    opts = {"game": "puttputt", "game_options": {}}
    try:
        pool.prefetch(opts)
        pool.prefetch(opts)  # one draw ahead per game and rule options
        assert len(pool._ahead) == 1
        drawn = await asyncio.shield(next(iter(pool._ahead.values())))
        assert (await pool.winnable(opts)).seed == drawn.seed
        assert pool._ahead == {}
        assert (await pool.winnable(opts)).seed != drawn.seed
    finally:
        pool.close()


async def test_a_seat_still_at_a_won_deal_is_judged_won_without_a_new_solve() -> None:
    """A winnable deal is drawn at a larger budget than a post-race verdict's: a seat that never
    moved gets the deal's known "won", not a verdict solved again at the smaller budget (here
    1 position with a draw budget of 1, which can only say "unknown"); a seat that moved is
    judged as before."""
    from solrace.server.solver.solving import RaceVerdicts

    async def no_update(code: str, rule: object) -> None:
        return None

    pool = SolverPool(workers=1, budgets=Budgets(verdict=1, draw={"puttputt": 1}))
    try:
        judge = RaceVerdicts(pool, no_update)
        options = {"game": "puttputt", "game_options": {}}
        start = new_game("puttputt", 7)
        moved = new_game("puttputt", 7)
        moved.play(str(moved.legal_moves()[0]))
        texts = {"0": start.to_text(), "1": moved.to_text()}
        seats = await judge._seat_verdicts(options, 7, "won", texts)
        assert seats == {"0": "won", "1": "unknown"}
        # the deal not known won: the start is solved like any position
        assert await judge._seat_verdicts(options, 7, "unknown", texts) == {
            "0": "unknown",
            "1": "unknown",
        }
    finally:
        pool.close()


async def test_what_the_race_tells_is_not_solved_again() -> None:
    """Every seat's position was reached from the deal's start by legal moves. So a deal a
    racer won is won, with no solve (the solver, at 50 positions here, would say "unknown"
    beside the winner); a deal proved lost makes every seat's position lost, with no solve
    either; and a seat judged won makes a deal the solver left unknown won. Putt Putt deal 5
    is lost, deal 7 is won at 4,417 positions."""
    from solrace.server.solver.solving import RaceVerdicts

    async def no_update(code: str, rule: object) -> None:
        return None

    pool = SolverPool(workers=1, budgets=Budgets(verdict=50, draw={"puttputt": 50}))
    try:
        judge = RaceVerdicts(pool, no_update)
        options = {"game": "puttputt", "game_options": {}}
        line = solve_deal("puttputt", 7, {}, 2_000_000).moves
        near_end = new_game("puttputt", 7)
        for move in line[:-3]:
            near_end.play(move)
        start = new_game("puttputt", 7).to_text()
        assert solve_deal("puttputt", 7, {}, 50).verdict == "unknown"
        # a racer won: no deal solve, no solver's win to give
        won = await judge.verdicts(options, 7, None, {"1": start}, someone_won=True)
        assert won == {"deal": "won", "deal_moves": None, "seats": {"1": "won"}}
        # nobody won, the deal unknown at 50 positions, one seat judged won near the end
        texts = {"0": start, "1": near_end.to_text()}
        upgraded = await judge.verdicts(options, 7, None, texts, someone_won=False)
        assert upgraded == {
            "deal": "won",
            "deal_moves": None,
            "seats": {"0": "unknown", "1": "won"},
        }
        # deal 5 proved lost (its whole search fits the budget): every seat lost, unsolved
        lost_pool = SolverPool(workers=1, budgets=Budgets(draw={"puttputt": 2_000_000}))
        try:
            lost_judge = RaceVerdicts(lost_pool, no_update)
            moved = new_game("puttputt", 5)
            moved.play(str(moved.legal_moves()[0]))
            seats = {"0": new_game("puttputt", 5).to_text(), "1": moved.to_text()}
            solves: list[dict[str, str]] = []

            async def counted(texts: dict[str, str]) -> dict[str, str]:
                solves.append(texts)
                return dict.fromkeys(texts, "unknown")

            lost_pool.position_verdicts = counted  # type: ignore[method-assign]
            lost = await lost_judge.verdicts(options, 5, None, seats, someone_won=False)
            assert lost == {"deal": "lost", "deal_moves": None, "seats": {"0": "lost", "1": "lost"}}
            assert solves == []
        finally:
            lost_pool.close()
    finally:
        pool.close()


async def test_an_unknown_verdict_is_searched_again_further_in_the_background() -> None:
    """With deep verdicts on, a verdict left "unknown" at the verdicts' budget (50 positions
    here) is searched again at the game's background budget (2,000,000) as `deep` jobs, in
    the pool's worker kept for them, and what that decides replaces the first verdicts in the
    results and goes out as a second `solved` event. Putt Putt deal 5 is proved lost at
    2,252 positions: every seat with it."""
    from helpers.records import finished_room
    from solrace.server.solver.solving import RaceVerdicts

    room = finished_room("puttputt", players=3, seed=5)
    events: list[dict] = []

    async def update(code: str, rule) -> None:
        events.extend(rule(room, 0))

    budgets = Budgets(verdict=50, draw={"puttputt": 50}, daily={"puttputt": 2_000_000})
    pool = SolverPool(workers=2, budgets=budgets)
    try:
        judge = RaceVerdicts(pool, update, deep=True)
        judge.finished(room)
        await asyncio.gather(*judge.tasks)
        first, second = events
        assert first["kind"] == second["kind"] == "solved"
        assert first["deal"] == "unknown" and "unknown" in first["seats"].values()
        assert second["deal"] == "lost" and set(second["seats"].values()) == {"lost"}
        assert second["seats"].keys() == first["seats"].keys()
        stored = room.doc["results"]["solved"]
        assert stored == {k: second[k] for k in ("deal", "deal_moves", "seats")}
        # the deal's deeper solve only (a lost deal makes every seat lost), in its own worker
        assert pool.deep_jobs.started == ["deep"] and set(pool.jobs.started) == {"verdict"}
        # stored once: the same deeper verdicts again change nothing
        before = {k: first[k] for k in ("deal", "deal_moves", "seats")}
        assert solving._store_solved(room.doc["round"], stored, replaces=before)(room, 0) == []
        assert solving._store_solved(room.doc["round"], before)(room, 0) == []
    finally:
        pool.close()


async def test_deep_verdicts_are_off_or_idle_where_they_would_find_nothing_more() -> None:
    """Off (the default of a `RaceVerdicts`), or on where the background budget is no larger
    than a verdict's, or with nothing unknown: one `solved` event, no second search."""
    from helpers.records import finished_room
    from solrace.server.solver.solving import RaceVerdicts

    for deep, daily in ((False, 2_000_000), (True, 50)):
        room = finished_room("puttputt", players=3, seed=5)
        events: list[dict] = []

        async def update(code: str, rule, room=room, events=events) -> None:
            events.extend(rule(room, 0))

        budgets = Budgets(verdict=50, draw={"puttputt": 50}, daily={"puttputt": daily})
        pool = SolverPool(workers=1, budgets=budgets)
        try:
            judge = RaceVerdicts(pool, update, deep=deep)
            judge.finished(room)
            await asyncio.gather(*judge.tasks)
            assert [e["deal"] for e in events] == ["unknown"]
            decided = {"deal": "won", "deal_moves": 3, "seats": {"1": "lost"}}
            assert await judge.deepen({"game": "puttputt"}, 5, decided, {"1": ""}) is None
        finally:
            pool.close()
