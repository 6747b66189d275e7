"""What the solver's worker processes run, and nothing they do not need.

A worker is a spawned interpreter (solver_jobs.py): it imports the module of every function it
is handed before it runs it, at every worker's start. These functions live here, beside the
engine's solvers alone, not in solving.py or solver_jobs.py, whose asyncio, metrics and
protocol imports a worker would pay for and never use (0.24 against 0.10 CPU-s to import;
every finished race's verdicts may start one)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from typing import Any

from solrace.engine.solve import SolveResult, solve_deal, solve_text

#: linux/prctl.h
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a worker, first thing: SIGKILL when the server dies (Linux), so a crashed server
    leaves no solver running under PID 1. A server that died before this line ran would
    send no signal: the worker sees it has a new parent and exits."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


#: a solver worker's niceness: below the server's event loop (moves must not wait for a proof)
WORKER_NICE = 10
#: the deeper verdicts' worker's: below the other workers too (it only takes idle CPU)
DEEP_NICE = 19


def worker_start(parent: int, niceness: int = WORKER_NICE) -> None:
    """A worker's initializer: die with the server, and yield the CPU to its event loop
    (and, `DEEP_NICE`, to the other workers)."""
    die_with_parent(parent)
    with contextlib.suppress(OSError):
        os.nice(niceness)


def draw_solve(game: str, seed: int, options: dict[str, Any], budget: int) -> tuple[str, int]:
    """One candidate seed: (verdict, solution length)."""
    r = solve_deal(game, seed, options, budget)
    return r.verdict, len(r.moves)


def solve_position(text: str, budget: int) -> SolveResult:
    """A position (its text) solved within `budget` positions."""
    return solve_text(text, budget)
