"""How long a test may wait for something: one factor for every bound that only stops a hang.

A test that waits for a state polls for it (`helpers.race.until`) and gives up after a bound
that a passing run never reaches. On a loaded machine (CI beside other jobs, two pytest
workers beside a CPU hog) a generous bound can still run out, so every such bound goes through
`scaled`: `SOLRACE_TESTS_TIME_FACTOR=3 ./dev test` triples them all, as websockets'
`WEBSOCKETS_TESTS_TIMEOUT_FACTOR` does for its suite. Only bounds are scaled: a server setting
the test waits out (a grace period, a lease) stays as short as the test chose.
"""

from __future__ import annotations

import os

#: the factor every hang bound is multiplied by (`SOLRACE_TESTS_TIME_FACTOR`, default 1)
FACTOR = max(1.0, float(os.environ.get("SOLRACE_TESTS_TIME_FACTOR") or 1))


def scaled(seconds: float) -> float:
    """A hang bound of `seconds` on an idle machine, stretched by the factor."""
    return seconds * FACTOR
