"""The solver off the event loop: winnable deals, post-race verdicts, practice hints.

The engine's `solve` is pure CPU (a Klondike proof can take seconds), so every solve runs in
a small pool of worker processes, made at the first need and shut down with the server (and
killed with it: server/solver/solver_jobs.py); the event loop only awaits futures. The jobs wait in
this process's priority queue, not in the executor's first-in-first-out one: hints first,
then draws, then verdicts, each kind's queue bounded, verdicts never on every worker
(server/solver/solver_jobs.py). A flood of cheap-to-ask verdicts (541 abandoned practice races) used
to make a hint wait minutes and a daily's draw time out; now they wait behind those, and over
their bound they are "unknown".

Three uses, each bounded by a node budget per game (`Budgets`), because a position the
solver cannot decide would otherwise hold a worker for minutes:

* A shipped pool (server/solver/deal_pool.py: seeds decided offline at a large budget)
  replaces the search where `--deal-pool` says: `always`, every winnable room of a rule set
  with a pool takes one of its seeds at random, at once (public deals: see that module);
  `cold` (the default) leaves rooms to the search and only answers a daily not drawn yet.
* `winnable_seed`: draw fresh secret seeds until one is "won" within the draw budget;
  several candidates run at once (one per worker), but the one taken is the first *drawn*
  that is won, never the first to finish, and the budget is large (issue 24): so the deal
  drawn is any winnable deal the budget decides, not the ones the solver wins soonest.
  After `max_seconds` (or `max_draws` candidates) without a win, or when the draws' queue
  is full, the start is refused with `busy` (retryable): a host never waits without end.
* `verdicts`: after a race, the deal (unless already known from a winnable draw) and
  each unfinished seat's final position; "unknown" when the budget runs out or the verdicts'
  queue is full. None for a race nobody played (every racer resigned or left with no move)
  or a practice daily attempt (`unjudged`).
* `hint`: the next move of a solution from a solo player's position (`busy` when the hints'
  queue is full). Solutions are kept by position text, so a player who follows the hints
  gets the next one without a solve.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from solrace.engine import from_text, new_game
from solrace.engine.solve import LOST, UNKNOWN, WON, SolveResult
from solrace.engine.solve_klondike import C_SEARCH
from solrace.engine.solve_leapyear import C_SEARCH as LEAPYEAR_C_SEARCH
from solrace.protocol.messages import ProtocolError
from solrace.server.common.codes import shown
from solrace.server.common.lru import LRU
from solrace.server.common.metrics import METRICS
from solrace.server.rules.room import FINISHED, Room
from solrace.server.solver import deal_pool
from solrace.server.solver.deal_pool import DEFAULT_MODE, MODES, DealPool
from solrace.server.solver.solver_jobs import (
    DEEP,
    DRAW,
    HINT,
    STOCK,
    VERDICT,
    Jobs,
    QueueBounds,
    QueueFull,
)
from solrace.server.solver.work import DEEP_NICE, draw_solve, solve_position

log = logging.getLogger("solrace.server")

#: positions along found solutions kept for hints (the least recently hinted forgotten first)
HINTS_KEPT = 4096

__all__ = ["LOST", "UNKNOWN", "WON", "Budgets", "RaceVerdicts", "SolverPool", "Winnable", "hint"]


def compiled_verdicts() -> dict[str, int]:
    """Post-race verdict budgets of the games whose search is compiled, where it built.

    Klondike's search runs in C since 2026-12-05 (engine/_solve_klondike_c.c, an exact port:
    the same verdict for the same budget), ~1 million positions a CPU s against the Python
    search's ~31,000. At `verdict`'s 100,000 positions a Klondike verdict was "unknown" for
    41 of seeds 1-100 (default rules); at 1,000,000 for 21, at 0.33 CPU s a deal on average
    (1.3 at most) and a solver process of 150 MB at its largest (BENCHMARKS.md, issue 24,
    verdicts and hints on the compiled search). Without the extension these stay off: a
    million positions in Python is half a minute.

    Leap Year's search runs in C since 2026-12-05 too (engine/_solve_leapyear_c.c, about 3
    million positions a CPU s against the Python search's ~120,000; not a port: its own
    counts), with beams through the deals since the fifth pass and the last-card test since
    the sixth. At 1,000,000 positions it wins 129 of seeds 1-200 (64.5%) at 0.18 CPU s a deal
    on average (0.56 at most), against 109 before the last-card test, 87 for the depth-first
    search alone and 21 at the Python search's 30,000 (docs/SOLVABILITY.md, Leap Year, fourth
    to sixth pass); no loss of a real Leap Year deal is proved at either."""
    out = {"klondike": 1_000_000} if C_SEARCH else {}
    return out | ({"leapyear": 1_000_000} if LEAPYEAR_C_SEARCH else {})


def compiled_draws() -> dict[str, int]:
    """Draw budgets of the games whose search is compiled, where larger than `Budgets.draw`'s.

    A winnable Klondike deal is drawn from the deals won within 1,000,000 positions, the
    post-race verdict's budget (`compiled_verdicts`), not 30,000 (which the Python search
    took ~1 CPU s to reach): the deals a draw leaves out are the ones still "unknown" there,
    75 of seeds 1-400 against 168 at 100,000 and 229 at 30,000 (won: 187, 130, 91), so
    the drawn deals lean less toward the ones the solver wins soonest (docs/SOLVABILITY.md,
    "Winnable deals at the verdicts' budget"). A candidate costs 0.33 CPU s on average
    there (1.6 at most). The background draws (the dailies, the stock) and the shipped
    pools search further (`compiled_dailies`). Leap Year's too (its compiled search,
    `compiled_verdicts`): a deal won within 1,000,000 positions, where the Python search's
    10,000 left out all but 7.5% of deals.
    So a compiled game's draw budget is its verdict budget, by definition."""
    return compiled_verdicts()


def compiled_dailies() -> dict[str, int]:
    """Background draw budgets (`Budgets.daily`: the dailies and the deal stock) of the games
    whose search is compiled: larger than a room's on-demand draw, since nobody waits for them.

    A draw takes a deal the solver wins within its budget, so the deals it leaves out are the
    ones won only past it, the hardest to find (issue 24). Of the 224 deals of Klondike seeds
    1-400 won within 30,000,000 positions, a draw at 1,000,000 takes 187 (83%), at
    10,000,000 218 (97%), about 2 CPU s of candidates a deal drawn and up to ~700 MB in a
    solver process while one is searched (docs/SOLVABILITY.md, "Winnable deals drawn in the
    background"). Of the 180 Leap Year deals of seeds 1-200 won within 100,000,000
    positions, a draw at 1,000,000 takes 129 (72%), at 6,000,000 155 (86%), at 30,000,000
    176 (98%): about 3.5 CPU s of candidates a deal drawn (a candidate left unknown costs
    12-24 s) and up to ~630 MB in a solver process while one is searched."""
    out = {"klondike": 10_000_000} if C_SEARCH else {}
    return out | ({"leapyear": 30_000_000} if LEAPYEAR_C_SEARCH else {})


def compiled_hints() -> dict[str, int]:
    """Hint budgets of the games whose search is compiled (`compiled_verdicts`): a Klondike
    hint at 300,000 positions (0.36 CPU s at most from the starts of seeds 1-100, a solver
    process of 74 MB), where `hint`'s 50,000 left 54 of those 100 starts "unknown" (31 at
    300,000)."""
    return {"klondike": 300_000} if C_SEARCH else {}


@dataclass(frozen=True)
class Budgets:
    """Positions the solver may expand, per use (and per game for draws).

    A draw budget is large on purpose (issue 24). A deal is drawn when the solver wins it
    within the budget, so a small budget (500 Klondike positions, 2,500 Tabby Cat ones, as
    until 2026-11-26) draws only the deals the solver wins soonest: the easy ones, with
    solutions a third to a half as long as a winnable deal's (`solrace bench winnable
    --difficulty`; docs/SOLVABILITY.md, "Winnable deals: difficulty of the draw"). At these
    budgets Putt Putt is always decided and Tabby Cat and Manx nearly always, so their draw
    is all winnable deals; Klondike's and Leap Year's leave out the deals still "unknown" at
    the budget, the only bias left (the same section gives the shares). Dailies are drawn
    ahead (server/league/daily.py), so nobody waits for these budgets on a day's first daily.
    """

    draw: dict[str, int] = field(
        default_factory=lambda: (
            {
                # (`compiled_draws` raises Klondike's where its search is compiled)
                # every deal of seeds 1-2,000 decided; the largest search 684,128 positions
                "puttputt": 2_000_000,
                # 96.6% of deals won, 3.4% unknown (seeds 1-1,000), 0.4-0.7 CPU s a deal
                "tabbycat": 200_000,
                "manx": 200_000,
                # without the compiled search (`compiled_draws`: 1,000,000): 19% won, 71%
                # undecided (seeds 1-100); a daily drawn cold took 15.2 CPU s of candidates
                # (7.9) at load 31-38, at 100,000 positions 29.3 (5.7) at load 14-23
                "klondike": 30_000,
                # without the compiled search (`compiled_draws`: 1,000,000): 7.5% won, 92.5%
                # unknown (seeds 1-200; 3.5% before the restarts of 2026-11-27); no Leap Year
                # loss is ever proved (docs/SOLVABILITY.md, Leap Year third and fourth pass)
                "leapyear": 10_000,
            }
            | compiled_draws()
        )
    )
    #: a background draw's search (a daily, days ahead: server/league/daily.py; a deal stock:
    #: server/league/deal_stock.py), where larger than `draw`: nobody waits for it. Without
    #: the compiled search, Klondike at 100,000 positions, not only the deals won within a
    #: room's 30,000; with it, `compiled_dailies`. Tabby Cat and Manx at 1,000,000: of the
    #: first 20 deals of each unknown at 200,000, 16 and 19 are won within it, at 1.9-17 CPU s
    #: (a deal left unknown: 16-27 s, ~150 MB; docs/SOLVABILITY.md, "Tabby Cat and Manx
    #: searched further"). `--draw-budget GAME=N` sets both.
    daily: dict[str, int] = field(
        default_factory=lambda: (
            {"klondike": 100_000, "tabbycat": 1_000_000, "manx": 1_000_000} | compiled_dailies()
        )
    )
    verdict: int = 100_000
    hint: int = 50_000
    #: per game, where larger than `verdict` / `hint`: the games whose search is compiled
    #: (`compiled_verdicts`, `compiled_hints`)
    verdicts: dict[str, int] = field(default_factory=compiled_verdicts)
    hints: dict[str, int] = field(default_factory=compiled_hints)
    #: a winnable draw gives up (`busy`) after this many candidates or seconds
    max_draws: int = 2_000
    max_seconds: float = 60.0

    def for_draw(self, game: str) -> int:
        return self.draw.get(game, 2_000)

    def for_daily(self, game: str) -> int:
        """A background draw's budget (a daily, a stocked deal): the draw's, or the larger
        `daily` one."""
        return max(self.for_draw(game), self.daily.get(game, 0))

    def for_hint(self, text: str) -> int:
        """A hint's budget for a position text: never below its game's draw budget, so a
        deal drawn as winnable (won within that budget from its start, and the solver is
        deterministic) gets a won hint at its start, whose solution then answers the hints
        along it (a Putt Putt deal drawn at 2,000,000 positions was answered "unknown" at
        `hint`'s 50,000)."""
        game = text_game(text)
        return max(self.hint, self.hints.get(game, 0), self.for_draw(game))

    def for_verdict(self, text: str) -> int:
        """A post-race verdict's budget for a seat's final position: never below its game's
        draw budget either, for the same reason as `for_hint` (a Putt Putt racer who followed
        the hints of a drawn deal and resigned was told "unknown" at `verdict`'s 100,000)."""
        return self.for_deal(text_game(text))

    def for_deal(self, game: str) -> int:
        """A post-race verdict's budget for the deal: the seats' (`for_verdict`), so a seat
        that never moved is never judged "won" beside a deal "unknown"."""
        return max(self.verdict, self.verdicts.get(game, 0), self.for_draw(game))


def text_game(text: str) -> str:
    """The game a position text is of ("" when it names none)."""
    return text.split(None, 2)[1] if text.startswith("game ") else ""


@dataclass(frozen=True)
class Winnable:
    """A winnable deal for a room: its seed, the length of the solver's win, and the rules it
    was solved under (the room's options must still be these when the race starts)."""

    seed: int
    solution: int
    tried: int
    game: str
    game_options: dict[str, Any]

    def check(self, options: dict[str, Any]) -> None:
        same = options["game"] == self.game and options["game_options"] == self.game_options
        if not same or options.get("deal") != "winnable":
            raise ProtocolError("busy", "the room's game changed while dealing; start again")


def _deal_key(room_options: dict[str, Any]) -> str:
    return json.dumps([room_options["game"], room_options["game_options"]], sort_keys=True)


def _quiet(task: asyncio.Future[Any]) -> None:
    """A draw made ahead that nobody awaited must not log 'exception never retrieved'."""
    if not task.cancelled():
        task.exception()


def _busy(kind: str) -> ProtocolError:
    return ProtocolError("busy", f"the solver has too many {kind}s waiting; try again shortly")


class SolverPool:
    """A bounded pool of solver processes, made lazily, owned by one server process; its
    jobs wait in a priority queue of bounded length per kind (server/solver/solver_jobs.py)."""

    def __init__(
        self,
        workers: int | None = None,
        budgets: Budgets | None = None,
        bounds: QueueBounds | None = None,
        seeds: Callable[[], int] | None = None,
        pool_mode: str = DEFAULT_MODE,
        pools: Callable[[str, dict[str, Any]], DealPool | None] | None = None,
    ) -> None:
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))
        self.budgets = budgets or Budgets()
        if pool_mode not in MODES:
            raise ValueError(f"deal pool mode {pool_mode!r}: one of {', '.join(MODES)}")
        #: where shipped pools replace the search (`solrace serve --deal-pool`, deal_pool.MODES)
        self.pool_mode = pool_mode
        #: a rule set's pool (the shipped ones; tests give their own)
        self._pools = pools or deal_pool.pool_for
        #: where a winnable draw's candidates come from: fresh secret 64-bit seeds (tests
        #: give a sequence of their own, to know which deal a draw must take)
        self.seeds: Callable[[], int] = seeds or (lambda: secrets.randbits(64))
        self.jobs = Jobs(self.workers, bounds)
        #: the stock draws' own worker (`STOCK` jobs: deals drawn ahead at the background
        #: budget, a candidate up to half a minute), so they never hold a worker the first
        #: verdicts need; at the shared workers' niceness (at the lowest, a busy host would
        #: never refill its stocks)
        self.stock_jobs = Jobs(1, bounds)
        #: the deeper verdicts' own worker (`DEEP` jobs), at the lowest CPU priority, so a
        #: search of up to half a minute never holds a worker the other kinds need
        self.deep_jobs = Jobs(1, bounds, niceness=DEEP_NICE)
        self._hints: LRU[str, tuple[str, list[str]]] = LRU(HINTS_KEPT)
        self._solving: dict[str, asyncio.Future[SolveResult]] = {}
        self._ahead: dict[str, asyncio.Future[Winnable]] = {}

    def pool(self, game: str, options: dict[str, Any]) -> DealPool | None:
        """The deal pool of a rule set, unless pools are off (`--deal-pool off`)."""
        return None if self.pool_mode == "off" else self._pools(game, options)

    def jobs_for(self, kind: str) -> Jobs:
        """Where `kind` runs: `STOCK` and `DEEP` each in a worker of their own, the other
        kinds in the shared workers."""
        return {STOCK: self.stock_jobs, DEEP: self.deep_jobs}.get(kind, self.jobs)

    async def run(self, kind: str, fn: Any, *args: Any) -> Any:
        """`fn(*args)` in a worker, after every more urgent job queued there (`KINDS`;
        `jobs_for`); `QueueFull` when `kind`'s queue is full."""
        return await self.jobs_for(kind).run(kind, fn, *args)

    async def draw(self, fn: Any, *args: Any, kind: str = DRAW) -> Any:
        """A candidate of a draw (a daily's or a winnable room's), queued as `kind` (a daily
        drawn ahead: `STOCK`, nobody waits): `busy` when that kind's queue is full."""
        try:
            return await self.run(kind, fn, *args)
        except QueueFull:
            raise _busy("draw") from None

    def close(self) -> None:
        """Drop queued solves and stop the workers now (a solve in progress is not waited for)."""
        for task in self._ahead.values():
            task.cancel()
        self._ahead.clear()
        self.jobs.close()
        self.stock_jobs.close()
        self.deep_jobs.close()

    # --- winnable deals -----------------------------------------------------------------

    async def winnable(self, room_options: dict[str, Any]) -> Winnable:
        """A winnable deal under a room's game and rule options: the one drawn ahead for
        them (`prefetch`) when there is one, else a fresh draw. Each is used once."""
        key = _deal_key(room_options)
        ahead = self._ahead.pop(key, None)
        if ahead is not None:
            try:
                return await ahead
            except ProtocolError:
                pass  # that draw gave up; the host is waiting now, so draw again
        try:
            return await self._draw(room_options)
        except ProtocolError:
            self.prefetch(room_options)  # keep drawing: the host's retry may find one ready
            raise

    def prefetch(self, room_options: dict[str, Any]) -> None:
        """Start drawing a winnable deal for these options now (a winnable room was made or
        set up), so that `start` usually finds one ready. The seed stays in this process's
        memory only and is committed, as any seed, when a race starts with it."""
        key = _deal_key(room_options)
        if key in self._ahead or len(self._ahead) >= 32 or self._pooled(room_options):
            return  # a pooled draw is instant: nothing to draw ahead
        task = asyncio.ensure_future(self._draw(room_options))
        task.add_done_callback(_quiet)
        self._ahead[key] = task

    def _pooled(self, room_options: dict[str, Any]) -> DealPool | None:
        """The pool a winnable room draws from (`--deal-pool always`), else None: search."""
        if self.pool_mode != "always":
            return None
        return self.pool(room_options["game"], dict(room_options["game_options"]))

    async def _draw(self, room_options: dict[str, Any]) -> Winnable:
        game, options = room_options["game"], dict(room_options["game_options"])
        pool = self._pooled(room_options)
        if pool is not None:
            pick = secrets.choice(pool.seeds)
            return Winnable(pick.seed, pick.length, 0, game, options)
        seed, solution, tried = await self.winnable_seed(game, options)
        return Winnable(seed, solution, tried, game, options)

    async def winnable_seed(
        self, game: str, options: dict[str, Any], *, budget: int | None = None, kind: str = DRAW
    ) -> tuple[int, int, int]:
        """A fresh secret seed whose deal the solver wins within the draw budget (or
        `budget`), its candidates queued as `kind` jobs (a stock's draw: `STOCK`).

        Candidates are solved one per worker at once, and the one taken is the first drawn
        that is won: a candidate is accepted only once every candidate drawn before it is
        known not won. Taking the first solve to finish, as until 2026-11-26, favoured the
        deals solved soonest among those racing. So which deal is drawn depends only on the
        seeds and on each one's verdict at the budget, never on how long a solve took
        (`busy` when the draws' queue is full or the draw ran out of tries or time)."""
        budget = budget or self.budgets.for_draw(game)
        jobs = self.jobs_for(kind)
        pending: collections.deque[tuple[int, asyncio.Future[tuple[str, int]]]] = (
            collections.deque()
        )
        tried = 0
        loop = asyncio.get_running_loop()
        give_up = loop.time() + self.budgets.max_seconds
        try:
            while True:
                # the candidates done, in the order drawn, before any other is started: one
                # started after the win is taken would run to its budget for nothing (a
                # stock's candidate: up to ~15 s)
                while pending and pending[0][1].done():
                    seed, first = pending.popleft()
                    verdict, length = first.result()
                    if verdict == WON:
                        return seed, length, tried
                out_of_time = loop.time() >= give_up
                while (
                    sum(not f.done() for _, f in pending) < jobs.workers
                    and len(pending) < 4 * jobs.workers
                    and tried < self.budgets.max_draws
                    and not out_of_time
                ):
                    seed = self.seeds()
                    try:
                        fut = jobs.submit(kind, draw_solve, game, seed, dict(options), budget)
                    except QueueFull:
                        raise _busy(kind) from None
                    pending.append((seed, fut))
                    tried += 1
                if not pending or out_of_time:
                    # out of tries, or of time with candidates still solving or queued (a
                    # slow solve, a queue held by others): the host is told now, not when
                    # those end
                    raise ProtocolError(
                        "busy",
                        f"no winnable {game} deal found in {tried} tries; try again",
                    )
                running = [f for _, f in pending if not f.done()]  # the first among them
                if running:  # else all are done (one failed as it was handed over): see above
                    await asyncio.wait(
                        running, timeout=give_up - loop.time(), return_when=asyncio.FIRST_COMPLETED
                    )
        finally:
            for _, f in pending:
                f.cancel()  # a candidate still queued leaves the queue

    # --- after a race -------------------------------------------------------------------

    async def deal_verdict(
        self,
        game: str,
        seed: int,
        options: dict[str, Any],
        budget: int | None = None,
        kind: str = VERDICT,
    ) -> tuple[str, int | None]:
        """(verdict, solution length when won) of a deal from its start, searched within
        `budget` positions (the verdicts' by default) as a `kind` job."""
        budget = budget or self.budgets.for_deal(game)
        try:
            verdict, length = await self.run(kind, draw_solve, game, seed, dict(options), budget)
        except QueueFull:
            log.debug("the solver's verdict queue is full: a deal's verdict is unknown")
            return UNKNOWN, None
        return verdict, (length if verdict == WON else None)

    async def position_verdicts(
        self, texts: dict[str, str], budget: int | None = None, kind: str = VERDICT
    ) -> dict[str, str]:
        """Each named position's verdict ("unknown" also when a solve failed), searched
        within `budget` positions (the verdicts' by default) as `kind` jobs."""

        async def one(text: str) -> str:
            try:
                r: SolveResult = await self.run(
                    kind, solve_position, text, budget or self.budgets.for_verdict(text)
                )
            except QueueFull:
                log.debug("the solver's verdict queue is full: a position's verdict is unknown")
                return UNKNOWN
            except Exception:
                log.warning("solving a final position failed", exc_info=True)
                return UNKNOWN
            return r.verdict

        keys = list(texts)
        out = await asyncio.gather(*(one(texts[k]) for k in keys))
        return dict(zip(keys, out, strict=True))

    # --- hints --------------------------------------------------------------------------

    async def hint(self, text: str, at_least: int = 0) -> tuple[str, str | None]:
        """(verdict, the next move of a solution when "won") from a position text, searched
        within `hint_budget` positions, or `at_least` where that is larger."""
        known = self._hints.get(text)
        if known is not None:
            return WON, known[1][0] if known[1] else None
        # one solve per position at a time: asking again while it runs waits for the same one
        running = self._solving.get(text)
        if running is None:
            try:
                budget = max(self.hint_budget(text), at_least)
                job = self.jobs.submit(HINT, solve_position, text, budget)
            except QueueFull:
                raise _busy("hint") from None
            running = self._solving[text] = job
            running.add_done_callback(lambda _: self._solving.pop(text, None))
        r: SolveResult = await asyncio.shield(running)
        if r.verdict != WON:
            return r.verdict, None
        self._remember(text, r.moves)
        return WON, r.moves[0] if r.moves else None

    def hint_budget(self, text: str) -> int:
        """A hint's budget (`Budgets.for_hint`), and with rooms dealt from pools (`always`) at
        least the pools' budget, so a pooled deal's first hint finds the pool's win."""
        budget = self.budgets.for_hint(text)
        if self.pool_mode == "always":
            budget = max(budget, deal_pool.budget_for(text_game(text)))
        return budget

    def _remember(self, text: str, moves: list[str]) -> None:
        """Every position along the solution, so following the hints needs no new solve."""
        game = from_text(text)
        for i, mv in enumerate(moves):
            self._hints.put(game.to_text(), (text, moves[i:]))
            game.play(mv)


Rule = Callable[[Room, int], list[dict[str, Any]]]


class RaceVerdicts:
    """After a race this process finished: was the deal winnable, and was each unfinished
    seat's final position? Sent as a `solved` event once known (the results do not wait).

    The verdicts are computed after the results are stored, so a process that dies in
    between never stores them: any process that loads the finished room without them
    (`owed`: a player resuming elsewhere, the janitor counting the dead process out)
    computes them again from the stored logs. Storing them is idempotent (`_store_solved`).

    With `deep` (`solrace serve --deep-verdicts`, on by default), a verdict left "unknown" is
    searched again, further, once the first ones are stored: at the game's background budget
    (`Budgets.for_daily`: the compiled Klondike search 10,000,000 positions and Leap Year's
    30,000,000, against a verdict's 1,000,000) as a `deep` job, in the solver's worker kept
    for them at the lowest CPU priority (`SolverPool.deep_jobs`), so it takes idle CPU and
    never a worker the hints, draws, first verdicts or stock draws need. Nobody waits for a
    verdict, and at 1,000,000 positions a fifth of Klondike deals stay "unknown"
    (docs/SOLVABILITY.md, "Deeper verdicts"). What it decides replaces the first verdicts in
    the results and goes out as a second `solved` event. Only the process that judged the
    race searches further (a process that dies first leaves the first verdicts, which stand).
    """

    def __init__(
        self,
        solver: SolverPool,
        update: Callable[[str, Rule], Awaitable[Any]],
        deal_ahead: Callable[[dict[str, Any]], None] | None = None,
        deep: bool = False,
    ) -> None:
        self.solver = solver
        self.update = update
        #: search "unknown" verdicts again at the background budget (`deepen`)
        self.deep = deep
        #: a winnable room's next deal, started for its rematch (app.build: the room
        #: service's, which takes a stocked deal when there is one; else the solver's draw)
        self.deal_ahead = deal_ahead or solver.prefetch
        self.tasks: set[asyncio.Task[None]] = set()
        #: (room, round) whose verdicts this process is computing: each once at a time
        self.pending: set[tuple[str, int]] = set()

    def finished(self, room: Room) -> None:
        """Called as the race's results are stored: read what to solve now (the cached
        games change with a rematch), solve later."""
        if room.doc["seed"] is not None and room.doc["options"].get("deal") == "winnable":
            self.deal_ahead(room.doc["options"])  # for the rematch
        self._judge_later(room)

    def owed(self, room: Room) -> None:
        """Called with every room loaded from Redis: a finished race whose results have no
        verdicts (the process that finished it died first, or its solve failed) gets them."""
        results = room.doc.get("results")
        if room.state == FINISHED and results and "solved" not in results:
            self._judge_later(room)

    def _judge_later(self, room: Room) -> None:
        d = room.doc
        key = (room.code, d["round"])
        if d["seed"] is None or key in self.pending:
            return
        skip = unjudged(room)
        if skip is not None:
            METRICS.verdicts_skipped.labels(skip).inc()
            log.debug("no verdicts for %s: %s", shown(room.code), skip)
            return
        texts = {
            str(seat): race.game.to_text()
            for seat, race in sorted(room.races.items())
            if room.status(seat) != "won"
        }
        won = any(room.status(seat) == "won" for seat in room.races)
        job = self._judge(
            room.code, d["round"], d["options"], d["seed"], d.get("solution"), texts, won
        )
        task = asyncio.ensure_future(job)
        self.tasks.add(task)
        self.pending.add(key)
        task.add_done_callback(self.tasks.discard)
        task.add_done_callback(lambda _: self.pending.discard(key))

    async def _judge(
        self,
        code: str,
        round_: int,
        options: dict[str, Any],
        seed: int,
        solution: int | None,
        texts: dict[str, str],
        someone_won: bool = False,
    ) -> None:
        try:
            solved = await self.verdicts(options, seed, solution, texts, someone_won)
            await self.update(code, _store_solved(round_, solved))
            deeper = await self.deepen(options, seed, solved, texts) if self.deep else None
            if deeper is not None:
                await self.update(code, _store_solved(round_, deeper, replaces=solved))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("post-race verdicts of %s not stored", shown(code), exc_info=True)

    async def verdicts(
        self,
        options: dict[str, Any],
        seed: int,
        solution: int | None,
        texts: dict[str, str],
        someone_won: bool,
    ) -> dict[str, Any]:
        """The `solved` event's fields: the deal's verdict and each unfinished seat's."""
        deal = await self._deal_verdict(options, seed, solution, someone_won)
        seats = await self._seat_verdicts(options, seed, deal[0], texts)
        if deal[0] == UNKNOWN and WON in seats.values():
            deal = (WON, None)  # that seat's position was reached from the deal's start
        return {"deal": deal[0], "deal_moves": deal[1], "seats": seats}

    async def deepen(
        self, options: dict[str, Any], seed: int, solved: dict[str, Any], texts: dict[str, str]
    ) -> dict[str, Any] | None:
        """`solved` with its "unknown" verdicts searched again at the game's background budget,
        as `deep` jobs; None when that budget is no larger than a verdict's (nothing
        more to find) or the search decided nothing more."""
        game = options["game"]
        budget = self.solver.budgets.for_daily(game)
        if budget <= self.solver.budgets.for_deal(game) or UNKNOWN not in (
            solved["deal"],
            *solved["seats"].values(),
        ):
            return None
        deal: tuple[str, int | None] = (solved["deal"], solved["deal_moves"])
        if deal[0] == UNKNOWN:
            deal = await self.solver.deal_verdict(
                game, seed, options["game_options"], budget=budget, kind=DEEP
            )
        unknown = {s: texts[s] for s, v in solved["seats"].items() if v == UNKNOWN}
        seats = {
            **solved["seats"],
            **await self._seat_verdicts(options, seed, deal[0], unknown, budget, DEEP),
        }
        if deal[0] == UNKNOWN and WON in seats.values():
            deal = (WON, None)
        out = {"deal": deal[0], "deal_moves": deal[1], "seats": seats}
        return None if out == solved else out

    async def _deal_verdict(
        self, options: dict[str, Any], seed: int, solution: int | None, someone_won: bool
    ) -> tuple[str, int | None]:
        """(verdict, the solver's win's length) of the deal, solved only when the race does
        not tell it: a deal drawn winnable has its draw's win, and one a racer won is won
        (with no solver's win to give, and no solve that could say "unknown" beside them)."""
        if solution is not None:
            return WON, solution
        if someone_won:
            return WON, None
        return await self.solver.deal_verdict(options["game"], seed, options["game_options"])

    async def _seat_verdicts(
        self,
        options: dict[str, Any],
        seed: int,
        deal: str,
        texts: dict[str, str],
        budget: int | None = None,
        kind: str = VERDICT,
    ) -> dict[str, str]:
        """Each seat's final position judged, where the deal's verdict does not tell it.

        Every seat's position was reached from the deal's start by legal moves, so when the
        deal is proved lost so is every seat's (no solve), and a seat still at the deal gets
        the deal's own verdict when that is known won: a winnable deal is drawn at a larger
        budget than a verdict's, so judging it again could say "unknown" beside a deal
        "won". (The other way, `verdicts`: a seat judged won makes an unknown deal won.)"""
        if deal == LOST:
            return dict.fromkeys(texts, LOST)
        known: dict[str, str] = {}
        if deal == WON:
            start = new_game(options["game"], seed, options["game_options"]).to_text()
            known = {seat: WON for seat, text in texts.items() if text == start}
        rest = {seat: text for seat, text in texts.items() if seat not in known}
        judged = await self.solver.position_verdicts(rest, budget, kind) if rest else {}
        return {seat: known.get(seat) or judged[seat] for seat in texts}

    def close(self) -> None:
        for t in list(self.tasks):
            t.cancel()


#: seat statuses of a racer who walked away (a grace period's end resigns)
GAVE_UP = ("resigned", "left")


def unjudged(room: Room) -> str | None:
    """Why a finished race gets no verdicts (None: it gets them). Each costs the solver
    seconds, so races nobody played must not queue solves: an *abandoned* race (every
    racer resigned or left, a grace period's end or a kick included, and not one move
    played) and a *practice* daily attempt (off the board; its deal is known winnable).
    A racer who played and then gave up still learns whether the deal and their position
    were winnable (that is what a solo practice room's results show); such races wait
    behind hints and draws, within the verdicts' bound (server/solver/solver_jobs.py)."""
    daily = room.doc.get("daily")
    if daily and not daily.get("scored"):
        return "practice"
    racers = [s["seat"] for s in room.seats() if s.get("in_race")]
    played = any(race.moves for race in room.races.values())
    if not played and all(room.status(n) in GAVE_UP for n in racers):
        return "abandoned"
    return None


def _store_solved(
    round_: int, solved: dict[str, Any], replaces: dict[str, Any] | None = None
) -> Rule:
    """The verdicts join the stored results (snapshots carry them) and go out as one event,
    unless the room moved on (a rematch) or the results' verdicts are not `replaces` (None:
    none yet; the first verdicts are stored once, and verdicts searched further replace
    only the ones they were searched from)."""

    def rule(room: Room, now: int) -> list[dict[str, Any]]:
        results = room.doc.get("results")
        if room.doc["round"] != round_ or room.state != FINISHED or not results:
            return []
        if results.get("solved") != replaces:
            return []
        results["solved"] = solved
        return [{"kind": "solved", "at": now, **solved}]

    return rule


async def hint(solver: SolverPool, room: Room, seat: int, now: int) -> dict[str, Any]:
    """A practice hint: only in a room with hints on and one player in the race."""
    if not room.options.get("hints"):
        raise ProtocolError("not_allowed", "hints are off in this room")
    race = room.check_can_move(seat, now)
    racers = [s for s in room.seats() if s.get("in_race")]
    if len(racers) != 1:
        raise ProtocolError("not_allowed", "hints are for solo practice only")
    text, n = race.game.to_text(), race.moves + 1
    at_least = solver.budgets.for_daily(room.options["game"]) if drawn_start(room, text) else 0
    verdict, move = await solver.hint(text, at_least)
    out: dict[str, Any] = {"type": "hint", "verdict": verdict, "n": n}
    if move is not None:
        out["move"] = move
    return out


def drawn_start(room: Room, text: str) -> bool:
    """Whether `text` is the start of the room's deal and that deal was drawn winnable.

    A daily or a stocked deal is drawn in the background at `Budgets.for_daily`, past a
    hint's own budget, so the first hint there searches as far as the draw did and finds
    the win it found (the search is deterministic); that solution is then remembered, and
    the hints along it need no solve. Anywhere else a hint keeps its own budget."""
    d = room.doc
    if d.get("solution") is None or d.get("seed") is None:
        return False
    o = room.options
    return text == new_game(o["game"], d["seed"], o["game_options"]).to_text()
