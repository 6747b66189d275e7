"""How long the client waits before trying again what the server calls normal.

A server answers `busy` while Redis fails over and `rate_limited` when a client outruns its
budget (with `retry_after`, ms, when waiting helps); a server restarting refuses connections
for a moment. None of these is the client's failure: it waits and tries again, a bounded
number of times. Every wait has jitter, so clients refused together do not come back in step
(a crowd retrying at once is refused again). The pauses are the protocol layer's `Backoff`
(protocol/retry.py), the one helper the server's loops use too.
"""

from __future__ import annotations

import random
from typing import Any

from solrace.protocol.retry import Backoff

#: the codes a request is sent again for, as it was (nothing was done: PROTOCOL.md, Errors)
RETRYABLE = frozenset({"busy", "rate_limited"})
#: tries of a request refused with a retryable code (the first included)
REQUEST_TRIES = 8
#: seconds before the first retry without a `retry_after`, and the cap (doubling between)
FIRST_S, CAP_S = 0.1, 3.0
#: the longest `retry_after` the client waits out (a longer one is the server saying no)
MAX_RETRY_AFTER_S = 10.0


#: the pauses between tries: doubling, the upper half jittered (waits still grow)
PAUSES = Backoff(FIRST_S, CAP_S, jitter=0.5)


def backoff(attempt: int) -> float:
    """Seconds to wait before try `attempt + 1` (attempt counts from 0)."""
    return PAUSES.delay(attempt)


def retry_delay(reply: dict[str, Any] | None, attempt: int) -> float | None:
    """Seconds to wait before sending a refused request again, or None not to: the server's
    `retry_after` (plus up to a fifth more, as jitter) when it gives one, else `backoff`."""
    after = (reply or {}).get("retry_after")
    if isinstance(after, int | float) and after > 0:
        seconds = after / 1000
        if seconds > MAX_RETRY_AFTER_S:
            return None
        return seconds * random.uniform(1.0, 1.2)
    return backoff(attempt)
