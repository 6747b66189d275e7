"""Issue 20 item 5 and issue 22 item 4: a solver that cannot be starved, and a connection
that keeps reading while a request waits for it.

The order is checked, not the clock: a pool of one worker is held busy by a job that waits
for a file (helpers/latch.py), jobs are queued behind it, the file appears, and the order the
queue handed jobs to the worker (`Jobs.started`) and the answers are what is asserted.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from helpers.latch import hold
from helpers.race import play, start_race, until
from helpers.servers import in_loop
from helpers.timing import scaled
from solrace.engine import new_game
from solrace.protocol.messages import ProtocolError
from solrace.server.common.metrics import METRICS
from solrace.server.net.conn import Limits
from solrace.server.solver.solver_jobs import DEEP, DRAW, HINT, STOCK, VERDICT, QueueBounds
from solrace.server.solver.solving import UNKNOWN, WON, Budgets, SolverPool
from solrace.server.solver.work import draw_solve


def _count(metric: Any, label: str) -> float:
    return float(metric.labels(label)._value.get())


def _texts(count: int) -> dict[str, str]:
    """Distinct won Putt Putt deals (seeds the solver wins at once)."""
    return {
        str(i): new_game("puttputt", seed=seed).to_text()
        for i, seed in enumerate((1, 2, 3, 4, 6, 7, 8, 9)[:count])
    }


async def _held(pool: SolverPool, tmp_path: Path) -> tuple[asyncio.Future[Any], Path]:
    """The pool's only worker busy with a verdict-kind job until the returned file is made."""
    release = tmp_path / "release"
    blocker = pool.jobs.submit(VERDICT, hold, str(release))
    await until(lambda: pool.jobs.running == 1 and pool.jobs.started == [VERDICT], "held")
    return blocker, release


async def test_a_hint_runs_before_queued_verdicts_and_draws(tmp_path: Path) -> None:
    """Verdicts of several races queued first, then a draw, then a hint: once the worker is
    free it takes the hint, then the draw, and only then the verdicts (the executor's own
    queue would have taken them in the order they came)."""
    pool = SolverPool(workers=1)
    try:
        blocker, release = await _held(pool, tmp_path)
        verdicts = asyncio.ensure_future(pool.position_verdicts(_texts(6)))
        await until(lambda: pool.jobs.waiting[VERDICT] == 6, "6 verdicts queued")
        draw = asyncio.ensure_future(pool.draw(draw_solve, "puttputt", 1, {}, 20_000))
        hint = asyncio.ensure_future(pool.hint(new_game("puttputt", seed=1).to_text()))
        await until(lambda: pool.jobs.waiting[HINT] == 1, "the hint queued")
        assert not hint.done()
        release.touch()
        verdict, move = await asyncio.wait_for(hint, scaled(60))
        assert verdict == WON and move is not None
        assert not verdicts.done()  # the hint did not wait for the verdicts queued before it
        assert await asyncio.wait_for(blocker, scaled(60)) == "held"
        assert (await asyncio.wait_for(draw, scaled(60)))[0] == WON
        assert set((await asyncio.wait_for(verdicts, scaled(60))).values()) == {WON}
        assert pool.jobs.started == [VERDICT, HINT, DRAW] + [VERDICT] * 6
    finally:
        pool.close()


async def test_stock_draws_and_deeper_verdicts_run_in_workers_of_their_own(
    tmp_path: Path,
) -> None:
    """A verdict searched further (`deep`) and a stock's draw (`stock`), each up to half a
    minute, run in workers of their own: both are done while the only shared worker is held,
    and so take none of the shared workers' slots from first verdicts, draws or hints. The
    deeper verdicts' worker runs at the lowest CPU priority, the stock's at the shared ones'."""
    pool = SolverPool(workers=1, seeds=itertools.count(1).__next__)
    try:
        blocker, release = await _held(pool, tmp_path)
        deeper = await asyncio.wait_for(pool.position_verdicts(_texts(2), 20_000, DEEP), scaled(60))
        assert set(deeper.values()) == {WON}
        drawn = pool.winnable_seed("puttputt", {}, budget=20_000, kind=STOCK)
        # seed 1, won in 47 moves, taken before a second candidate was started
        assert await asyncio.wait_for(drawn, scaled(60)) == (1, 47, 1)
        assert not blocker.done() and pool.jobs.started == [VERDICT]
        assert pool.deep_jobs.started == [DEEP, DEEP]
        assert pool.stock_jobs.started[0] == STOCK and set(pool.stock_jobs.started) == {STOCK}
        base = os.nice(0)
        assert await pool.run(DEEP, os.nice, 0) == min(19, base + 19)
        assert await pool.run(STOCK, os.nice, 0) == min(19, base + 10)
        release.touch()
        assert await asyncio.wait_for(blocker, scaled(60)) == "held"
        assert await pool.run(VERDICT, os.nice, 0) == min(19, base + 10)
        assert pool.jobs.started == [VERDICT, VERDICT]
    finally:
        pool.close()


async def test_verdicts_leave_a_worker_free_for_hints(tmp_path: Path) -> None:
    """With two workers, verdicts hold one at most: while one is held by a verdict, the
    other verdicts wait and the other worker takes the hint at once."""
    pool = SolverPool(workers=2)
    try:
        blocker, release = await _held(pool, tmp_path)
        verdicts = asyncio.ensure_future(pool.position_verdicts(_texts(3)))
        await until(lambda: pool.jobs.waiting[VERDICT] == 3, "3 verdicts queued")
        assert pool.jobs.running == 1  # a worker is free, and no verdict took it
        hint = await asyncio.wait_for(pool.hint(new_game("puttputt", seed=1).to_text()), scaled(60))
        assert hint[0] == WON and not blocker.done()  # answered while the verdict held on
        assert pool.jobs.started == [VERDICT, HINT]
        release.touch()
        assert set((await asyncio.wait_for(verdicts, scaled(60))).values()) == {WON}
        assert pool.jobs.started == [VERDICT, HINT] + [VERDICT] * 3
    finally:
        pool.close()


async def test_full_queues_drop_verdicts_and_refuse_hints_and_draws(tmp_path: Path) -> None:
    """Over its kind's bound a verdict is "unknown" (counted), a hint or a draw is `busy` at
    once; what was queued within the bounds is answered."""
    pool = SolverPool(workers=1, bounds=QueueBounds(hint=1, draw=1, verdict=2))
    refused = _count(METRICS.solver_refused, VERDICT)
    try:
        blocker, release = await _held(pool, tmp_path)
        verdicts = asyncio.ensure_future(pool.position_verdicts(_texts(4)))
        await until(lambda: _count(METRICS.solver_refused, VERDICT) == refused + 2, "2 dropped")
        assert pool.jobs.waiting[VERDICT] == 2
        hint = asyncio.ensure_future(pool.hint(new_game("puttputt", seed=1).to_text()))
        await until(lambda: pool.jobs.waiting[HINT] == 1, "the hint queued")
        same = asyncio.ensure_future(pool.hint(new_game("puttputt", seed=1).to_text()))
        with pytest.raises(ProtocolError) as over:
            await pool.hint(new_game("puttputt", seed=2).to_text())
        assert over.value.code == "busy"
        draw = asyncio.ensure_future(pool.draw(draw_solve, "puttputt", 1, {}, 20_000))
        await until(lambda: pool.jobs.waiting[DRAW] == 1, "the draw queued")
        with pytest.raises(ProtocolError) as over:
            await pool.winnable_seed("puttputt", {})
        assert over.value.code == "busy"
        assert pool.jobs.waiting == {
            HINT: 1,
            DRAW: 1,
            VERDICT: 2,
            STOCK: 0,
            DEEP: 0,
        }  # nothing more was queued
        release.touch()
        assert (await asyncio.wait_for(hint, scaled(60)))[0] == WON
        assert (await asyncio.wait_for(same, scaled(60)))[0] == WON  # the same position: one solve
        assert (await asyncio.wait_for(draw, scaled(60)))[0] == WON
        got = await asyncio.wait_for(verdicts, scaled(60))
        assert got == {"0": WON, "1": WON, "2": UNKNOWN, "3": UNKNOWN}
        await blocker
        assert pool.jobs.started == [VERDICT, HINT, DRAW, VERDICT, VERDICT]
    finally:
        pool.close()


async def test_a_draw_gives_up_at_its_deadline_while_its_candidates_wait(tmp_path: Path) -> None:
    """`max_seconds` bounds a winnable draw even when none of its candidates ends in time (a
    worker held by a long solve, here a latch): the host gets `busy` then, not when a worker
    comes free, and the draw's queued candidates leave the queue."""
    pool = SolverPool(workers=1, budgets=Budgets(max_seconds=0.2))
    try:
        blocker, release = await _held(pool, tmp_path)
        with pytest.raises(ProtocolError) as gave_up:
            await asyncio.wait_for(pool.winnable_seed("puttputt", {}), scaled(60))
        assert gave_up.value.code == "busy"
        assert not blocker.done()  # given up while the worker was still held
        assert pool.jobs.waiting[DRAW] == 0
        release.touch()
        assert await asyncio.wait_for(blocker, scaled(60)) == "held"
        assert pool.jobs.started == [VERDICT]  # no candidate of the draw ever ran
    finally:
        pool.close()


async def test_abandoned_and_practice_races_queue_no_verdict(redis_url, key_prefix, wire) -> None:
    """Every racer resigned before a move, or a practice daily attempt: no solve is queued
    for them (the hostile mix that starved hints was hundreds of those). A player who made
    a move and then resigned still gets the verdicts."""
    async with in_loop(redis_url, key_prefix) as (transport, url):
        jobs = transport.service.solver.jobs
        abandoned = _count(METRICS.verdicts_skipped, "abandoned")
        practice = _count(METRICS.verdicts_skipped, "practice")
        clients, *_ = await start_race(url, wire, players=2)
        for c in clients:
            assert (await c.request({"type": "resign"}))["type"] == "ok"
        await clients[0].wait_event("results")
        assert _count(METRICS.verdicts_skipped, "abandoned") == abandoned + 1

        solo = await wire(url)
        msg = {"type": "daily", "game": "puttputt", "name": "ann", "practice": True}
        assert (await solo.request(msg, timeout=120))["type"] == "joined"
        assert (await solo.request({"type": "resign"}))["type"] == "ok"
        await solo.wait_event("results")
        assert _count(METRICS.verdicts_skipped, "practice") == practice + 1
        assert VERDICT not in jobs.started and jobs.waiting[VERDICT] == 0

        (tried,), *_ = await start_race(url, wire, players=1)
        assert len(await play(tried, 1)) == 1
        assert (await tried.request({"type": "resign"}))["type"] == "ok"
        await tried.wait_event("results")
        await tried.wait_event("solved", timeout=60)
        assert VERDICT in jobs.started
        assert _count(METRICS.verdicts_skipped, "abandoned") == abandoned + 1


class BlockedHints:
    """The solver's hints wait until `go` is set (the solver itself is not the subject
    here: the connection's reading is); `asked` counts the hints waiting."""

    def __init__(self, transport: Any) -> None:
        self.go = asyncio.Event()
        self.asked = 0
        transport.service.solver.hint = self.hint

    async def hint(self, text: str, at_least: int = 0) -> tuple[str, str | None]:
        self.asked += 1
        await self.go.wait()
        return UNKNOWN, None


async def test_a_connection_reads_on_while_its_hint_is_pending(redis_url, key_prefix, wire) -> None:
    """A hint waiting for the solver used to stop the connection's reading: pings went
    unanswered and the idle timer closed it. Now a ping and a move are answered meanwhile,
    and the hint's answer comes later with its own ref."""
    async with in_loop(redis_url, key_prefix) as (transport, url):
        blocked = BlockedHints(transport)
        try:
            (c,), *_ = await start_race(url, wire, players=1, hints=True)
            hint = asyncio.ensure_future(c.request_once({"type": "hint"}, timeout=60))
            await until(lambda: blocked.asked == 1, "the hint pending")
            assert (await c.request({"type": "ping", "t": 7}))["type"] == "pong"
            assert len(await play(c, 1)) == 1  # a move, handled inline, acked meanwhile
            assert not hint.done()
        finally:
            blocked.go.set()
        answer = await hint
        assert answer["type"] == "hint" and answer["verdict"] == UNKNOWN


async def test_pending_slow_requests_are_bounded_per_connection(
    redis_url, key_prefix, wire
) -> None:
    """At most `Limits.pending` slow requests wait per connection: the next is `busy`
    (limit "pending") at once, so a client cannot grow tasks without bound."""
    async with in_loop(redis_url, key_prefix, Limits(pending=3)) as (transport, url):
        blocked = BlockedHints(transport)
        try:
            (c,), *_ = await start_race(url, wire, players=1, hints=True)
            hints = [asyncio.ensure_future(c.request_once({"type": "hint"}, 60)) for _ in range(3)]
            await until(lambda: blocked.asked == 3, "3 hints pending")
            over = await c.request_once({"type": "hint"})
            assert over["code"] == "busy" and over["limit"] == "pending", over
        finally:
            blocked.go.set()
        for answer in await asyncio.gather(*hints):
            assert answer["type"] == "hint"
        await until(lambda: not any(x.pending for x in transport.conns), "none pending")


async def test_the_solver_budget_is_the_servers_setting(redis_url, key_prefix) -> None:
    """`--solver-workers` (Limits.solver_workers): a host's solver budget, per server process;
    0 keeps the default of min(4, cores)."""
    async with in_loop(redis_url, key_prefix, Limits(solver_workers=1)) as (transport, _):
        assert transport.service.solver is not None
        assert transport.service.solver.workers == 1
        assert transport.service.max_race == Limits().max_race == 7200
    async with in_loop(redis_url, key_prefix, Limits(max_race=60)) as (transport, _):
        assert transport.service.solver is not None
        assert transport.service.solver.workers == SolverPool().workers
        assert transport.service.max_race == 60
