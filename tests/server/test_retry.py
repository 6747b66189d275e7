"""protocol/retry.py: the one backoff of every retry loop (server and client)."""

from __future__ import annotations

import asyncio

import pytest
from solrace.protocol.retry import Backoff


def test_pauses_double_from_first_up_to_the_cap() -> None:
    pauses = Backoff(0.1, 1.0)
    assert [pauses.delay(a) for a in range(6)] == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    assert Backoff(0.5).delay(10_000) == 0.5 * 2.0**64  # no float overflow for a long outage
    assert Backoff(0.5, 30.0).delay(10_000) == 30.0
    with pytest.raises(ValueError):
        Backoff(0.0)
    with pytest.raises(ValueError):
        Backoff(1.0, 0.5)


def test_jitter_draws_below_the_pause() -> None:
    pauses = Backoff(0.01, 0.05, jitter=True)
    draws = [pauses.delay(a) for a in range(8) for _ in range(50)]
    assert all(0 <= d <= 0.05 for d in draws) and len(set(draws)) > 100


async def test_pause_counts_its_own_attempts_and_reset_starts_again(monkeypatch) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    pauses = Backoff(1.0, 4.0)
    for _ in range(4):
        await pauses.pause()
    pauses.reset()
    await pauses.pause()
    await pauses.sleep(1)
    assert slept == [1.0, 2.0, 4.0, 4.0, 1.0, 2.0]
