"""The server's background writes, retried: `retrying` runs an idempotent write until it is
stored, with the pauses of a `Backoff` (protocol/retry.py: the one helper every retry loop of
the server and the client takes its pauses from, re-exported here)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from solrace.protocol.retry import Backoff

__all__ = ["RETRY_S", "WRITE_TRIES", "Backoff", "retrying"]

log = logging.getLogger("solrace.server")

#: tries of a background write, and the pause before the first retry (doubling)
WRITE_TRIES, RETRY_S = 5, 0.5


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
