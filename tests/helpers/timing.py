"""How long a test may wait for something: one factor for every bound that only stops a hang.

A test that waits for a state polls for it (`helpers.race.until`) and gives up after a bound
that a passing run never reaches. On a loaded machine (CI beside other jobs, pytest workers
beside a CPU hog) a generous bound can still run out, so every such bound goes through
`scaled`: `SOLRACE_TESTS_TIME_FACTOR=3 ./dev test` triples them all, as websockets'
`WEBSOCKETS_TESTS_TIMEOUT_FACTOR` does for its suite. Only bounds are scaled: a server setting
the test waits out (a grace period, a lease) stays as short as the test chose, so a larger
factor costs a passing run nothing.

Unset, the factor is the number of pytest-xdist workers per core (at least 1): `./dev test`
runs three workers a core, and a test's wait then gets at best a third of a core, so its
bounds are three times what one test alone on an idle machine needs.
"""

from __future__ import annotations

import os


def factor_for(workers: int) -> float:
    """The factor for a run of `workers` pytest-xdist workers (1: no xdist)."""
    chosen = os.environ.get("SOLRACE_TESTS_TIME_FACTOR")
    return max(1.0, float(chosen) if chosen else workers / (os.cpu_count() or 1))


#: the factor every hang bound of this process is multiplied by
FACTOR = factor_for(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1))


def scaled(seconds: float) -> float:
    """A hang bound of `seconds` on an idle machine, stretched by the factor."""
    return seconds * FACTOR
