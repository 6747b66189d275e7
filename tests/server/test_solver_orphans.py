"""Issue 20 item 9: a SIGKILLed server leaves none of its solver processes behind.

The solver pool's workers (and multiprocessing's helper processes) used to live on under
PID 1 for good after a crash of their server, ~32 MB each. Here a real `solrace serve`
starts its pool (a hint), is SIGKILLed, and every process it had started, and every process
those started, must be gone soon after. psutil is not installed: /proc is read directly.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from helpers.race import start_race, until
from solrace.bench.server_process import ServerProcess


def _stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, state, start time) of a live process; None when gone (or a zombie)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    state, ppid, started = fields[0], int(fields[1]), int(fields[19])
    return None if state in ("Z", "X") else (ppid, state, started)


def descendants(root: int) -> dict[int, int]:
    """Every live process below `root`, by pid: its start time (so a reused pid is told apart)."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            got = _stat(int(entry))
            if got is not None:
                parents.setdefault(got[0], []).append(int(entry))
                starts[int(entry)] = got[2]
    found: dict[int, int] = {}
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found[child] = starts[child]
                todo.append(child)
    return found


def alive(procs: dict[int, int]) -> dict[int, int]:
    left = {}
    for pid, started in procs.items():
        got = _stat(pid)
        if got is not None and got[2] == started:
            left[pid] = started
    return left


async def test_a_killed_servers_solver_processes_die_with_it(redis_url, key_prefix, wire) -> None:
    server = ServerProcess(redis_url, key_prefix)
    await asyncio.to_thread(server.start)
    below: dict[int, int] = {}
    try:
        (a,), *_ = await start_race(server.ws_url, wire, players=1, hints=True)
        hint = await a.request({"type": "hint"}, timeout=60)
        assert hint["type"] == "hint", hint
        assert server.proc is not None
        below = descendants(server.proc.pid)
        assert below, "the hint started no solver process"
        await asyncio.to_thread(server.kill)
        await until(lambda: not alive(below), f"no process of {sorted(below)} left", 15)
    finally:
        await asyncio.to_thread(server.kill)
        for pid in alive(below):  # the test's own leftovers (on the old code)
            os.kill(pid, signal.SIGKILL)
