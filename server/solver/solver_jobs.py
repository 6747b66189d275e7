"""The solver's processes, and the order in which they take work.

A server process owns one small `ProcessPoolExecutor` for the solver (server/solver/solving.py),
made at the first job. The executor's own queue is first in, first out and unbounded, so
once many cheap-to-ask, costly-to-answer jobs were queued (541 abandoned practice races'
verdicts), a hint or a daily's draw waited minutes behind them. Here the parent schedules:

* every job has a kind, and kinds go in priority order: `hint` (a player waits, alone),
  then `draw` (a daily's or a winnable room's deal: a player or a host waits), then
  `verdict` (post-race verdicts: nobody waits; "unknown" is an answer). Two more kinds
  run apart, each in one worker of its own (`SolverPool.jobs_for`), since a candidate or a
  search of theirs may take half a minute and in the shared workers it held the one slot
  the verdicts have: `stock` (winnable deals drawn ahead for rooms to come:
  server/league/deal_stock.py; and the dailies drawn ahead, server/league/daily.py's
  pre-draw) in `SolverPool.stock_jobs`, at the shared workers' niceness, and `deep` (a
  post-race verdict left "unknown" searched again further: solving.RaceVerdicts.deepen) in
  `SolverPool.deep_jobs`, at the lowest CPU priority (`DEEP_NICE`). Measured, 16 Klondike
  races, 2 workers: with deeper verdicts in the shared workers a race's first verdicts came
  3.9 s after it on average, 29 s at worst, against 0.2-0.4 s and 2.5 s apart (2026-12-06);
  with a winnable room started before each race, its stock's refill in the shared workers
  made them 3.4 s, 15.1 s at worst, against 1.0 s and 2.9 s with no stock (`solrace bench
  verdict-wait --winnable`, 2026-12-06 night; in its own worker as soon as with none). The
  stock's worker keeps the shared workers' niceness: at the lowest it would refill only
  on an idle host, and a busy one would deal its winnable rooms on demand.
* the jobs wait in this process's priority queue, and at most `workers` are handed to the
  executor at once: a worker that comes free takes the most urgent job queued, never one
  queued earlier of a lesser kind; verdicts hold at most `workers - 1` of them (one when
  there is one worker), so a hint or a draw starts at once instead of waiting out a
  verdict's budget (seconds on Klondike);
* each kind's queue is bounded (`QueueBounds`): a job over the bound is refused at once
  (`QueueFull`); solving.py turns that into `busy` for a hint or a draw and "unknown" for
  a verdict. A job cancelled while it waits leaves the queue (a draw that found its deal
  cancels its other candidates); one a worker has started runs to its budget.

The workers die with their server: each asks Linux, as it starts, for SIGKILL when its
parent dies (`PR_SET_PDEATHSIG`), so a server killed with SIGKILL leaves no solver behind;
multiprocessing's resource tracker, which the workers keep open, then sees the end of its
pipe and exits too (tests/server/test_solver_orphans.py).
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import itertools
import logging
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from solrace.server.common.metrics import METRICS
from solrace.server.solver.work import WORKER_NICE, worker_start

log = logging.getLogger("solrace.server")

__all__ = [
    "DEEP",
    "DRAW",
    "HINT",
    "KINDS",
    "STOCK",
    "VERDICT",
    "Jobs",
    "QueueBounds",
    "QueueFull",
]

HINT, DRAW, VERDICT, STOCK, DEEP = "hint", "draw", "verdict", "stock", "deep"
#: the order kinds are served in (a lower number first)
KINDS = {HINT: 0, DRAW: 1, VERDICT: 2, STOCK: 3, DEEP: 4}
#: the kinds nobody waits for, which share `Jobs.verdict_slots`
BACKGROUND = frozenset((VERDICT, STOCK, DEEP))


@dataclass(frozen=True)
class QueueBounds:
    """Jobs of each kind that may wait for a worker at once (those running not counted).

    A hint waits for at most `hint` solves ahead of it (each within the hint budget, ~a
    second); a draw batch is a worker's count of candidates, so `draw` lets ~30 draws
    wait at once on two workers; `verdict` keeps a burst of finished races' verdicts
    (each a deal and a position per unfinished seat) and drops the rest as "unknown".
    """

    hint: int = 16
    draw: int = 64
    verdict: int = 64
    #: a stock's draw keeps a batch of candidates queued, as a room's draw does
    stock: int = 32
    #: deeper verdicts (up to ~15-25 CPU s each): past these the first verdicts stand
    deep: int = 16

    def of(self, kind: str) -> int:
        return int(getattr(self, kind))


class QueueFull(Exception):
    """The job's kind has `QueueBounds` jobs waiting already: it was not queued."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"the solver's {kind} queue is full")
        self.kind = kind


@dataclass(eq=False)
class _Job:
    kind: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    future: asyncio.Future[Any]
    waiting: bool = True


class Jobs:
    """This process's solver workers and the priority queue in front of them."""

    def __init__(
        self, workers: int, bounds: QueueBounds | None = None, niceness: int = WORKER_NICE
    ) -> None:
        self.workers = workers
        self.bounds = bounds or QueueBounds()
        #: the workers' niceness (`work.worker_start`)
        self.niceness = niceness
        self._pool: ProcessPoolExecutor | None = None
        self._queue: list[tuple[int, int, _Job]] = []
        self._order = itertools.count()
        #: jobs waiting, per kind (the bound applies to these)
        self.waiting: dict[str, int] = dict.fromkeys(KINDS, 0)
        #: jobs handed to the executor and not done yet (never more than `workers`)
        self.running = 0
        #: background jobs among them (verdicts and stock draws, which nobody waits for): never
        #: more than `verdict_slots`, so that with two workers or more a hint or a draw finds
        #: one free at once, not after a verdict's budget
        self.verdicts = 0
        self.verdict_slots = max(1, workers - 1)
        #: the kinds in the order the executor was handed them (tests read it)
        self.started: list[str] = []

    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn, not fork: the server has threads and open sockets a fork would copy
            ctx = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=ctx,
                initializer=worker_start,
                initargs=(os.getpid(), self.niceness),
            )
        return self._pool

    def submit(self, kind: str, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Queue `fn(*args)` for a worker; its future is the result. Raises `QueueFull` (and
        queues nothing) when `kind` has its bound of jobs waiting already."""
        if self.waiting[kind] >= self.bounds.of(kind):
            METRICS.solver_refused.labels(kind).inc()
            raise QueueFull(kind)
        job = _Job(kind, fn, args, asyncio.get_running_loop().create_future())
        heapq.heappush(self._queue, (KINDS[kind], next(self._order), job))
        self._count(kind, 1)
        job.future.add_done_callback(lambda _: self._unqueue(job))
        if len(self._queue) > 4 * sum(self.bounds.of(k) for k in KINDS):
            # cancelled jobs stay in the heap until popped: drop them now and then
            self._queue = [e for e in self._queue if e[2].waiting]
            heapq.heapify(self._queue)
        self._feed()
        return job.future

    async def run(self, kind: str, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.submit(kind, fn, *args)

    def _count(self, kind: str, delta: int) -> None:
        self.waiting[kind] += delta
        METRICS.solver_queued.labels(kind).set(self.waiting[kind])

    def _unqueue(self, job: _Job) -> None:
        if job.waiting:
            job.waiting = False
            self._count(job.kind, -1)

    def _feed(self) -> None:
        """Hand the most urgent waiting jobs to the executor while a worker is free (and,
        for background jobs, while they hold fewer than `verdict_slots`)."""
        while self.running < self.workers and self._queue:
            job = self._queue[0][2]
            if job.future.done():  # cancelled while it waited
                heapq.heappop(self._queue)
                self._unqueue(job)
                continue
            if job.kind in BACKGROUND and self.verdicts >= self.verdict_slots:
                return  # the most urgent job left is a background one: the worker stays free
            heapq.heappop(self._queue)
            self._unqueue(job)
            self.running += 1
            self.verdicts += job.kind in BACKGROUND
            self.started.append(job.kind)
            del self.started[:-256]
            pool = self.pool()
            try:
                done = asyncio.wrap_future(pool.submit(job.fn, *job.args))
            except Exception as exc:  # a pool broken: this job fails, the next gets a new one
                self.running -= 1
                self.verdicts -= job.kind in BACKGROUND
                self._reset_broken(exc, pool)
                job.future.set_exception(exc)
                continue
            done.add_done_callback(functools.partial(self._finished, job, pool=pool))

    def _finished(self, job: _Job, done: asyncio.Future[Any], *, pool: ProcessPoolExecutor) -> None:
        self.running -= 1
        self.verdicts -= job.kind in BACKGROUND
        if not job.future.done():
            if done.cancelled():
                job.future.cancel()
            elif done.exception() is not None:
                exc = done.exception()
                assert exc is not None
                self._reset_broken(exc, pool)
                job.future.set_exception(exc)
            else:
                job.future.set_result(done.result())
        elif not done.cancelled():
            done.exception()  # nobody awaits it any more: retrieved, not logged
        self._feed()

    def _reset_broken(self, exc: BaseException, pool: ProcessPoolExecutor) -> None:
        """A worker died (killed, out of memory): the executor is unusable; the next job
        makes a fresh one."""
        if isinstance(exc, BrokenProcessPool) and self._pool is pool:
            log.warning("a solver worker died; starting a fresh pool")
            self.close_pool()

    def close_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            if p.is_alive():
                p.terminate()

    def close(self) -> None:
        """Drop every waiting job and stop the workers now (a solve in progress is not
        waited for)."""
        queue, self._queue = self._queue, []
        for _, _, job in queue:
            job.future.cancel()
        self.close_pool()
