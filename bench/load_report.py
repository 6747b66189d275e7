"""How load figures are printed: one line per figure, units in the text, goals judged aloud.

The benchmark prints and never asserts; the smoke test reads this output, so
every figure has a fixed label (`label: value unit`) that a regex can find.
"""

from __future__ import annotations

import sys
from typing import TextIO

from solrace.bench.load_hist import Histogram


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def kib(n_bytes: float) -> str:
    return f"{n_bytes / 1024:.1f} KiB"


class Report:
    """Prints to a stream as it goes (a long run shows progress) and keeps goal verdicts."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out
        self.goals: list[tuple[str, str, str, bool | None]] = []

    @property
    def out(self) -> TextIO:
        """The stream given, else sys.stdout as it is now (so a capturing test sees the output)."""
        return self._out or sys.stdout

    def line(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def heading(self, text: str) -> None:
        self.line()
        self.line(f"== {text} ==")

    def figure(self, label: str, value: str) -> None:
        self.line(f"  {label}: {value}")

    def latency(self, label: str, hist: Histogram, *, with_max: bool = True) -> None:
        parts = [f"p50 {ms(hist.percentile(50))}", f"p99 {ms(hist.percentile(99))}"]
        if with_max:
            parts.append(f"max {ms(hist.max)}")
        parts.append(f"n {hist.count}")
        self.figure(label, "  ".join(parts))

    def cpu(self, shares: dict[str, float]) -> None:
        self.figure("cpu (cores busy)", "  ".join(f"{k} {v:.2f}" for k, v in shares.items()))

    def goal(self, name: str, measured: str, target: str, met: bool | None) -> None:
        """Record a goal verdict (None: not measured in this run) and print it."""
        self.goals.append((name, measured, target, met))
        self.figure(f"goal {name}", f"{measured} (target {target}): {verdict(met)}")

    def summary(self) -> None:
        self.heading("goals")
        for name, measured, target, met in self.goals:
            self.line(f"  {verdict(met):8} {name}: {measured} (target {target})")


def verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("MET" if met else "MISSED")
