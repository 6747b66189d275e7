"""The players' windows share one timer of the loop's (server/net/fanout.py `Hub._windows_due`)."""

from __future__ import annotations

import asyncio

import pytest
from solrace.server.net import fanout
from solrace.server.net.fanout import Hub

#: they watch the move path by replacing its methods (conftest: the white-box lane)
pytestmark = pytest.mark.whitebox


def event(n: int) -> dict[str, object]:
    return {"type": "event", "n": n, "kind": "progress", "status": "racing"}


def recording(hub: Hub) -> list[str]:
    ended: list[str] = []

    def window_end(code: str) -> None:
        ended.append(code)
        hub.windows.pop(code, None)

    hub._window_end = window_end  # type: ignore[method-assign]
    return ended


async def test_windows_due_in_one_slot_share_one_timer_and_end_once_each() -> None:
    hub = Hub()
    hub.player_tick = 0.03
    ended = recording(hub)
    hub._open_window("A", event(1))
    timer = hub._due_timer
    hub._open_window("B", event(2))
    assert timer is not None and hub._due_timer is timer  # one timer for both
    assert hub.windows["A"].due == hub.windows["B"].due
    slot = fanout.WINDOW_SLOT_S
    # due on a slot's boundary, at the tick or up to a slot after it
    assert round(hub.windows["A"].due / slot, 6) == round(hub.windows["A"].due / slot)
    await asyncio.sleep(0.03 + 2 * slot)
    assert sorted(ended) == ["A", "B"]
    assert hub._due_timer is None and not hub._due
    await hub.close()


async def test_a_window_closed_early_is_passed_over_and_the_next_one_ends_on_time() -> None:
    hub = Hub()
    hub.player_tick = 0.03
    ended = recording(hub)
    hub._open_window("C", event(1))
    hub.windows.pop("C")  # news released it (`_release`)
    await asyncio.sleep(0.01)
    hub._open_window("C", event(2))  # the next progress opens the next window
    later = hub.windows["C"]
    await asyncio.sleep(0.03 + 2 * fanout.WINDOW_SLOT_S)
    assert ended == ["C"] and "C" not in hub.windows and later.held == [event(2)]
    await hub.close()


async def test_a_shorter_tick_rearms_the_timer_for_the_earlier_window() -> None:
    hub = Hub()
    hub.player_tick = 3600.0
    ended = recording(hub)
    hub._open_window("slow", event(1))
    hub.player_tick = 0.02
    hub._open_window("fast", event(2))
    await asyncio.sleep(0.02 + 2 * fanout.WINDOW_SLOT_S)
    assert ended == ["fast"] and "slow" in hub.windows
    assert hub._due_timer is not None  # armed for the hour-long one
    await hub.close()
    assert hub._due_timer is None and not hub.windows
