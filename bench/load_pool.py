"""The coordinator's handle on the load-generator processes.

Commands go to every worker first and replies are collected after, so the
workers act in parallel (opening 2,000 connections takes as long as one
worker's share, not the sum).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from typing import Any

from solrace.bench.loadgen import worker_main


class WorkerFailed(RuntimeError):
    pass


class Pool:
    def __init__(self, size: int) -> None:
        # fork, not spawn: spawn re-imports the caller's __main__ (a console script,
        # pytest), and the pool is made before any event loop or socket exists.
        ctx = mp.get_context("fork")
        self.pipes = []
        self.procs = []
        for i in range(size):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=worker_main, args=(child, i), daemon=True, name=f"loadgen-{i}")
            p.start()
            self.pipes.append(parent)
            self.procs.append(p)

    @property
    def size(self) -> int:
        return len(self.procs)

    @property
    def pids(self) -> list[int]:
        out = []
        for p in self.procs:
            assert p.pid is not None, "a worker is started in __init__, so it has a pid"
            out.append(p.pid)
        return out

    def send(self, index: int, cmd: str, **args: Any) -> None:
        self.pipes[index].send((cmd, args))

    def recv(self, index: int, timeout: float = 600.0) -> Any:
        pipe = self.pipes[index]
        if not pipe.poll(timeout):
            raise WorkerFailed(f"worker {index} gave no answer within {timeout}s")
        status, value = pipe.recv()
        if status != "ok":
            raise WorkerFailed(f"worker {index} failed:\n{value}")
        return value

    def call(self, index: int, cmd: str, **args: Any) -> Any:
        self.send(index, cmd, **args)
        return self.recv(index)

    def each(self, cmd: str, per_worker: list[dict[str, Any]], timeout: float = 600.0) -> list[Any]:
        """Send worker i the args per_worker[i] (workers past the list get nothing)."""
        for i, args in enumerate(per_worker):
            self.send(i, cmd, **args)
        return [self.recv(i, timeout) for i in range(len(per_worker))]

    def all(self, cmd: str, timeout: float = 600.0, **args: Any) -> list[Any]:
        return self.each(cmd, [args] * self.size, timeout)

    def run(self, warmup: float, duration: float, **begin: Any) -> tuple[float, float]:
        """Start every worker's load (`begin`), then its measured window [t0, t1): chosen
        only once every worker has said its load runs (a worker starved on a loaded machine
        may take a second to start). Each worker's figures come from recv() once the load
        ends."""
        self.all("begin", **begin)
        t0 = time.monotonic() + warmup
        t1 = t0 + duration
        self.all("window", t0=t0, t1=t1)
        for i in range(self.size):
            self.send(i, "finish")
        return t0, t1

    def close(self) -> None:
        for _i, pipe in enumerate(self.pipes):
            try:
                pipe.send(("exit", {}))
                if pipe.poll(15):
                    pipe.recv()
            except (OSError, EOFError):
                pass
        for p in self.procs:
            p.join(5)
            if p.is_alive():
                p.terminate()
                p.join(5)


def split(total: int, parts: int) -> list[int]:
    """`total` as `parts` near-equal counts (the first ones get the remainder)."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]
