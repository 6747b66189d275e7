"""Background writes that must not be lost to a passing Redis error: a few tries, doubling
the pause. Every caller's step is idempotent (a record is SET NX by its id, standings are
marked per race), so a try whose answer was lost is safe to make again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from solrace.server.metrics import METRICS

log = logging.getLogger("solrace.server")

#: tries of a background write, and the pause before the first retry (doubling)
WRITE_TRIES, RETRY_S = 5, 0.5


async def retrying(step: Callable[[], Awaitable[object]], where: str, what: str) -> bool:
    """Run `step` until it succeeds or WRITE_TRIES have failed (each failure counted in
    redis_errors{where}; the last one logged with `what`). True when it succeeded."""
    wait = RETRY_S
    for attempt in range(WRITE_TRIES):
        try:
            await step()
            return True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            METRICS.redis_errors.labels(where).inc()
            if attempt == WRITE_TRIES - 1:
                log.warning("%s not stored: %r", what, exc)
                return False
        await asyncio.sleep(wait)
        wait *= 2
    return False
