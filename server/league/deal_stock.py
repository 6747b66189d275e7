"""Winnable deals drawn ahead, in the background, at the dailies' budget, for winnable rooms.

Why: a winnable room's deal used to be searched while its host waited, so it was searched at
the small `draw` budget (30,000 Klondike positions), and a small budget draws only the deals
the solver wins soonest: 81 of the 117 Klondike deals of seeds 1-400 won at 100,000, and the
easier ones (issue 24; docs/SOLVABILITY.md). A stock has nobody waiting on it, so its deals
are searched at the dailies' budget (`Budgets.for_daily`: since 2026-12-06 Klondike
10,000,000 positions and Leap Year 30,000,000 with their compiled searches, against 1,000,000
on demand; Klondike 100,000 without it), the same population as the dailies and the shipped
pools, and a room takes one at once. The first hint at such a deal's start searches as far
(`solving.drawn_start`), so it finds the win the draw found.

A stock is a short Redis list per rule set (keys.stock), shared by every process on the
deployment; each deal in it is taken once (LPOP) and its seed is as secret as a room's
(fresh 64-bit seeds, not the public pools). A fixed list of rule sets is stocked
(`stocked_rules`): each game's defaults, and Klondike's draw one or three with top cards or
runs, unlimited passes (standard Klondike is draw three with runs). The rule sets a client may
ask for are unbounded (any pass limit), and a stock per rule set asked for would let one
client set every server's solver to work; a room with other rules draws on demand. A stock is
refilled after a room of its rule set asks, as `STOCK` jobs in a solver worker of their own
(`SolverPool.stock_jobs`, at the shared workers' niceness): a candidate at 10,000,000
positions takes up to ~15 s, and in the shared workers it held the one the first verdicts may
take (a race's first verdicts came 12 s late at worst; `solrace bench verdict-wait
--winnable`). An
entry records its budget: one drawn at a smaller budget than today's (a changed
`--draw-budget`) is passed over, so a stocked deal is always one won at the current budget.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any, cast

from solrace.protocol.messages import ProtocolError
from solrace.protocol.retry import Backoff
from solrace.server.league.daily import canonical_options, default_options
from solrace.server.solver.solver_jobs import STOCK
from solrace.server.solver.solving import SolverPool, Winnable
from solrace.server.store import keys
from solrace.server.store.redis_conn import Client

__all__ = ["DEFAULT_SIZE", "STOCKED_VARIANTS", "DealStock", "stock_key", "stocked_rules"]

log = logging.getLogger("solrace.server")

#: deals kept per rule set (`solrace serve --deal-stock`): a burst of rooms of one rule set
#: started at once takes this many at once; the rest draw on demand while it refills
DEFAULT_SIZE = 4
#: draws of a refill that may give up (`busy`: the solver's queue full, or out of time on a
#: loaded machine) in a row before it stops until the next room asks
GIVE_UPS = 5
#: rule sets stocked besides each game's defaults, as options over the defaults: the
#: Klondike variants most played, unlimited passes (a pass limit draws on demand)
STOCKED_VARIANTS: dict[str, tuple[dict[str, Any], ...]] = {
    "klondike": ({"draw": 3}, {"moves": "build"}, {"draw": 3, "moves": "build"}),
}


def stocked_rules(game: str) -> list[dict[str, Any]]:
    """Every rule set of `game` with a stock, its options filled in (as a room holds them):
    the defaults first, then `STOCKED_VARIANTS`."""
    defaults = default_options(game)
    return [defaults, *({**defaults, **v} for v in STOCKED_VARIANTS.get(game, ()))]


def stock_key(prefix: str, room_options: dict[str, Any]) -> str:
    """The Redis key of the stock of a rule set: its game and a digest of its options."""
    rules = canonical_options(room_options["game_options"])
    digest = hashlib.sha256(rules.encode()).hexdigest()[:16]
    return keys.stock(prefix, f"{room_options['game']}:{digest}")


class DealStock:
    """The stocks of winnable deals of one deployment, as one process sees and refills them."""

    def __init__(self, redis: Client, prefix: str, solver: SolverPool, size: int) -> None:
        self.redis = redis
        self.prefix = prefix
        self.solver = solver
        self.size = size
        #: the refill running in this process, per stock key
        self._refills: dict[str, asyncio.Task[None]] = {}
        #: `ahead`'s reads of a stock's length, in flight
        self._checks: set[asyncio.Task[None]] = set()

    def stocked(self, room_options: dict[str, Any]) -> bool:
        """Whether rooms under these options deal from a stock (`stocked_rules`)."""
        return self.size > 0 and room_options["game_options"] in stocked_rules(room_options["game"])

    def key(self, room_options: dict[str, Any]) -> str:
        return stock_key(self.prefix, room_options)

    def budget(self, game: str) -> int:
        return self.solver.budgets.for_daily(game)

    async def take(self, room_options: dict[str, Any]) -> Winnable | None:
        """A deal from the stock of these options (None: not stocked, or none left), and a
        refill started. Entries drawn at a smaller budget than today's are dropped."""
        if not self.stocked(room_options):
            return None
        key, game = self.key(room_options), room_options["game"]
        try:
            while (raw := await self.redis.lpop(key)) is not None:
                entry = json.loads(cast("bytes", raw))  # one element: no count asked
                if entry["budget"] >= self.budget(game):
                    return Winnable(
                        int(entry["seed"]),
                        int(entry["solution"]),
                        int(entry["tried"]),
                        game,
                        dict(room_options["game_options"]),
                    )
            return None
        finally:
            self.refill(room_options)

    def ahead(
        self, room_options: dict[str, Any], on_empty: Callable[[dict[str, Any]], None]
    ) -> None:
        """A winnable room of these (stocked) options was set up: refill the stock, and call
        `on_empty(room_options)` (the solver's on-demand draw, started ahead) when it holds
        no deal now, so that its host does not wait at `start` for a cold stock."""

        async def check() -> None:
            try:
                if not await self.redis.llen(self.key(room_options)):
                    on_empty(room_options)
            except Exception:  # Redis down: the draw at `start` says so
                log.warning("the deal stock could not be read", exc_info=True)

        task = asyncio.ensure_future(check())
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)
        self.refill(room_options)

    def refill(self, room_options: dict[str, Any]) -> None:
        """Start filling the stock of these options up to `size` in the background, unless
        this process is at it already (a winnable room of its rules was made or started)."""
        if not self.stocked(room_options):
            return
        key = self.key(room_options)
        running = self._refills.get(key)
        if running is not None and not running.done():
            return
        game, options = room_options["game"], dict(room_options["game_options"])
        self._refills[key] = asyncio.ensure_future(self._fill(key, game, options))

    async def _fill(self, key: str, game: str, options: dict[str, Any]) -> None:
        pauses, give_ups = Backoff(1.0), 0
        try:
            while await self.redis.llen(key) < self.size:
                budget = self.budget(game)
                try:
                    seed, solution, tried = await self.solver.winnable_seed(
                        game, options, budget=budget, kind=STOCK
                    )
                except ProtocolError:  # busy: the queue was full or the draw ran out of time
                    give_ups += 1
                    if give_ups >= GIVE_UPS:
                        return
                    await pauses.pause()
                    continue
                entry = {"seed": seed, "solution": solution, "tried": tried, "budget": budget}
                pipe = self.redis.pipeline(transaction=False)
                pipe.rpush(key, json.dumps(entry))
                pipe.ltrim(key, 0, self.size - 1)  # two processes filling at once: no more
                await pipe.execute()
                pauses.reset()
                give_ups = 0
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("the %s deal stock was not refilled", game, exc_info=True)

    def close(self) -> None:
        for task in [*self._refills.values(), *self._checks]:
            task.cancel()
        self._refills.clear()
