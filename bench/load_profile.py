"""Where the race server spends its time under load: py-spy on the server's own PID.

`solrace bench load --profile` samples the race server (only the process the
benchmark started) with py-spy during a measured run and prints the functions
with the largest share of samples, both self time (the leaf frame) and
inclusive time (anywhere on the stack). py-spy is an optional tool
(`pip install py-spy`); without it the benchmark says so and goes on.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def py_spy() -> str | None:
    here = Path(sys.executable).parent / "py-spy"
    return str(here) if here.exists() else shutil.which("py-spy")


class Profiler:
    """py-spy record of one PID for a fixed duration, in collapsed-stack ("raw") form."""

    def __init__(self, pid: int, duration: float, output: Path, rate: int = 100) -> None:
        self.pid, self.duration, self.output, self.rate = pid, duration, output, rate
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> bool:
        tool = py_spy()
        if tool is None:
            return False
        self.proc = subprocess.Popen(
            [
                tool,
                "record",
                "--pid",
                str(self.pid),
                "--duration",
                str(max(1, int(self.duration))),
                "--rate",
                str(self.rate),
                "--format",
                "raw",
                "--output",
                str(self.output),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return True

    def wait(self) -> str:
        """Wait for py-spy to write its file; returns its error text ('' when fine)."""
        if self.proc is None:
            return "py-spy is not installed (pip install py-spy)"
        _, err = self.proc.communicate(timeout=self.duration + 60)
        if self.proc.returncode != 0 or not self.output.exists():
            return (err or b"").decode(errors="replace")[
                -500:
            ] or f"py-spy exited {self.proc.returncode}"
        return ""


def short(frame: str) -> str:
    """`func (path/to/module.py:12)` -> `module.py:func` (line numbers dropped so a function adds up)."""
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = m.group("file")
    parts = Path(path).parts
    tail = "/".join(parts[-2:]) if len(parts) >= 2 else path
    return f"{tail}:{m.group('func')}"


#: (component, test on a frame's file path) from the most specific; the first that matches a
#: sample's frames, searched leaf first, gets the sample
COMPONENTS: list[tuple[str, Callable[[str], bool]]] = [
    ("engine (rules, views, dead check)", lambda p: "/engine/" in p),
    ("redis-py client", lambda p: "/redis/" in p),
    ("msgpack", lambda p: "/msgpack/" in p),
    ("websockets", lambda p: "/websockets/" in p),
    ("protocol (validate, encode)", lambda p: "/protocol/" in p),
    ("server (room, service, transport, projection)", lambda p: "/server/" in p),
]


def component_of(frames: list[str]) -> str:
    """Which part of the stack a sample is spent in; socket writes are split by who wrote."""
    leaf = frames[-1] if frames else ""
    joined = ";".join(frames)
    if "_SelectorSocketTransport.write" in leaf or "sock_send" in leaf:
        return (
            "socket write syscall (Redis)"
            if "/redis/" in joined
            else "socket write syscall (WebSocket)"
        )
    if "EpollSelector.select" in leaf:
        return "epoll wait"
    for frame in reversed(frames):
        m = _FRAME.match(frame.strip())
        path = m.group("file") if m else frame
        for name, test in COMPONENTS:
            if test("/" + path):
                return name
    return "asyncio loop and other"


def components(collapsed: str) -> list[tuple[str, float]]:
    """Share of samples per component (see component_of), largest first."""
    counts: Counter[str] = Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        counts[component_of(stack.split(";"))] += int(count)
    return [(k, c / total) for k, c in counts.most_common()] if total else []


def summarize(
    collapsed: str, top: int = 15
) -> tuple[int, list[tuple[str, float]], list[tuple[str, float]]]:
    """(samples, top self shares, top inclusive shares) from py-spy's collapsed stacks.

    Idle samples (the event loop waiting in select/epoll) are counted, so shares
    are of wall time the profiler saw, and an idle server shows up as such.
    """
    self_c: Counter[str] = Counter()
    incl_c: Counter[str] = Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [short(f) for f in stack.split(";")]
        if frames:
            self_c[frames[-1]] += n
        for f in set(frames):
            incl_c[f] += n
    if not total:
        return 0, [], []
    return (
        total,
        [(f, c / total) for f, c in self_c.most_common(top)],
        [(f, c / total) for f, c in incl_c.most_common(top + 10)],
    )
