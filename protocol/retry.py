"""The pauses of every retry loop, in one place: a first pause, doubling up to a cap, with or
without jitter.

Every loop of the server and the client that tries again after a failure (pub/sub
resubscribes, lobby rows, optimistic room writes, rating writes, a move's outcome, background
record writes, the client's reconnects and its requests refused `busy`) takes its pauses from
a `Backoff`, so none spins, none waits without bound, and writers that collided do not collide
again in step (`jitter`). It lives in the protocol layer because both sides of the wire use
it, and neither may import the other.
"""

from __future__ import annotations

import asyncio
import math
import random

#: 2**this is the largest factor applied to `first` (more would overflow a float)
_MAX_DOUBLINGS = 64


class Backoff:
    """Pauses of one retry loop: `first` seconds before the first retry, doubling, at most
    `cap`. With `jitter`, each pause is drawn uniformly between 0 and that (full jitter).

    Use `sleep(attempt)` when the loop counts its attempts, or `pause()` / `reset()` when it
    does not (the count is kept here: `reset()` after a success starts again from `first`)."""

    def __init__(
        self, first: float, cap: float = math.inf, *, jitter: bool | float = False
    ) -> None:
        if first <= 0 or cap < first or not 0 <= float(jitter) <= 1:
            raise ValueError("a backoff needs 0 < first <= cap and a jitter from 0 to 1")
        self.first, self.cap = first, cap
        #: the share of each pause drawn at random: 1 (True) full jitter, 0.5 the upper half
        self.jitter = float(jitter)
        #: pauses taken by `pause()` since the last `reset()`
        self.taken = 0

    def delay(self, attempt: int) -> float:
        """The pause before retry `attempt` (0: the first retry)."""
        top = min(self.cap, self.first * 2.0 ** min(max(attempt, 0), _MAX_DOUBLINGS))
        return random.uniform(top * (1 - self.jitter), top) if self.jitter else top

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
