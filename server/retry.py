"""The pauses of every retry loop, in one place: a first pause, doubling up to a cap, with or
without jitter.

Every loop of the server and the client that tries again after a failure (pub/sub
resubscribes, lobby rows, optimistic room writes, rating writes, a move's outcome, background
record writes, the client's reconnect) takes its pauses from a `Backoff`, so none spins, none
waits without bound, and writers that collided do not collide again in step (`jitter`).

This module imports nothing of the server: the client uses it too.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Awaitable, Callable

log = logging.getLogger("solrace.server")

#: tries of a background write, and the pause before the first retry (doubling)
WRITE_TRIES, RETRY_S = 5, 0.5

#: 2**this is the largest factor applied to `first` (more would overflow a float)
_MAX_DOUBLINGS = 64


class Backoff:
    """Pauses of one retry loop: `first` seconds before the first retry, doubling, at most
    `cap`. With `jitter`, each pause is drawn uniformly between 0 and that (full jitter).

    Use `sleep(attempt)` when the loop counts its attempts, or `pause()` / `reset()` when it
    does not (the count is kept here: `reset()` after a success starts again from `first`)."""

    def __init__(self, first: float, cap: float = math.inf, *, jitter: bool = False) -> None:
        if first <= 0 or cap < first:
            raise ValueError("a backoff needs 0 < first <= cap")
        self.first, self.cap, self.jitter = first, cap, jitter
        #: pauses taken by `pause()` since the last `reset()`
        self.taken = 0

    def delay(self, attempt: int) -> float:
        """The pause before retry `attempt` (0: the first retry)."""
        top = min(self.cap, self.first * 2.0 ** min(max(attempt, 0), _MAX_DOUBLINGS))
        return random.uniform(0, top) if self.jitter else top

    async def sleep(self, attempt: int) -> None:
        """Sleep the pause before retry `attempt`."""
        await asyncio.sleep(self.delay(attempt))

    async def pause(self) -> None:
        """Sleep the next pause of the loop (each one twice the last, up to the cap)."""
        delay = self.delay(self.taken)
        self.taken += 1
        await asyncio.sleep(delay)

    def reset(self) -> None:
        """The loop succeeded: its next pause is `first` again."""
        self.taken = 0


async def retrying(
    step: Callable[[], Awaitable[object]], what: str, failed: Callable[[], object]
) -> bool:
    """Run `step` until it succeeds or WRITE_TRIES have failed, pausing RETRY_S, doubling, in
    between (each failure reported to `failed`, e.g. a metric; the last one logged with
    `what`). True when it succeeded. For background writes that must not be lost to a passing
    Redis error: every caller's step is idempotent (a record is SET NX by its id, standings
    are marked per race), so a try whose answer was lost is safe to make again."""
    pauses = Backoff(RETRY_S)
    for attempt in range(WRITE_TRIES):
        try:
            await step()
            return True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failed()
            if attempt == WRITE_TRIES - 1:
                log.warning("%s not stored: %r", what, exc)
                return False
        await pauses.pause()
    return False
