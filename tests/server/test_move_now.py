"""A racer's move handled straight from the connection's `data_received`, without a task
(transport.py `_move_now`, service.py `move_now`): the room's rules and the turn's Redis
pipeline at once, the ack written from the pipeline's answer. These tests check that moves
take that path, that the connection's next message waits for the move's answer (the ack
before the pong), and that an append the tail refuses goes on as `move` would: the room
reloaded, the move played again and acked, every move in Redis's log.

The server runs in the test's own event loop (a real Redis, a real WebSocket port), so its
tasks can be counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.race import current_view, play, start_race, until
from helpers.servers import in_loop
from helpers.views import putt_move
from solrace.protocol import messages as m
from solrace.server.net.transport import Transport
from solrace.server.store.store import Store


@pytest.fixture
async def server(redis_url: str, key_prefix: str) -> AsyncIterator[tuple[Transport, str]]:
    async with in_loop(redis_url, key_prefix) as (transport, url):
        yield transport, url


def count_paths(transport: Transport, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The coroutines the transport runs in tasks (by name), and what each move handled
    without a task left to a task (None: nothing)."""
    seen: dict[str, list[Any]] = {"tasks": [], "tails": []}
    handle_task, moved = transport._handle_task, transport._moved

    def task(coro: Any) -> Any:
        seen["tasks"].append(coro.__qualname__)
        return handle_task(coro)

    def answered(conn: Any, msg: dict[str, Any], tail: Any) -> None:
        seen["tails"].append(tail)
        moved(conn, msg, tail)

    monkeypatch.setattr(transport, "_handle_task", task)
    monkeypatch.setattr(transport, "_moved", answered)
    return seen


def assert_mostly_at_once(seen: dict[str, list[Any]], acks: list[list[dict[str, Any]]]) -> None:
    """At least two thirds of the moves were handled without a task (a move that finds the
    room's lock held by something else, a timer or a join, goes the ordinary way), and only
    a move that ended its seat's race left something to a task (the room to settle)."""
    total = sum(len(got) for got in acks)
    ended = sum(1 for got in acks for a in got if a["status"] != "racing")
    tails = seen["tails"]
    assert len(tails) >= total - total // 3, (len(tails), total, seen["tasks"])
    assert sum(tail is not None for tail in tails) <= ended, tails


async def logged(store: Store, code: str, seat: int) -> list[bytes]:
    loaded = await store.load(code)
    assert loaded is not None
    return [entry.split(b" ")[0] for entry in loaded.logs.get(seat, [])]


@pytest.mark.whitebox
async def test_moves_are_handled_without_a_task(
    server: tuple[Transport, str], wire: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the room's first move (its copy loaded once under the fence's counter), a move
    is acked from the pipeline's answer: no task drains the mover's inbox for it."""
    transport, url = server
    (ann, bob), _, code, _ = await start_race(url, wire)
    first = await play(ann, 1)
    seen = count_paths(transport, monkeypatch)
    acks = await play(ann, 6) + await play(bob, 6)
    assert len(acks) == 12 and all(a["type"] == "ack" for a in acks)
    assert_mostly_at_once(seen, [acks])
    assert not transport.moves
    moves = [a["move"].encode() for a in first + acks[:6]]
    assert await logged(transport.store, code, 0) == moves


@pytest.mark.whitebox
async def test_a_message_behind_a_move_waits_for_its_ack(
    server: tuple[Transport, str], wire: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move and a ping sent back to back: the ping waits in the inbox while the move is in
    Redis, and its pong follows the ack."""
    transport, url = server
    (ann, _bob), *_ = await start_race(url, wire)
    await play(ann, 1)
    seen = count_paths(transport, monkeypatch)
    view = current_view(ann)
    move = {"type": "move", "move": putt_move(view), "n": view["moves"] + 1, "id": 901}
    await ann.ws.send(m.encode(move))
    await ann.ws.send(m.encode({"type": "ping", "id": 902}))
    await until(lambda: {x.get("ref") for x in ann.received} >= {901, 902}, "ack and pong")
    order = [x["type"] for x in ann.received if x.get("ref") in (901, 902)]
    assert order == ["ack", "pong"], order
    assert seen["tails"] in ([None], [])  # [] when a timer held the room's lock: a task


async def test_a_refused_append_is_played_again_on_a_fresh_copy(
    server: tuple[Transport, str], wire: Any, redis_url: str, key_prefix: str
) -> None:
    """Another writer numbers an event of the room (a connection counted in elsewhere): the
    holder's next `XADD` under its old number is refused by the tail. The move handled
    without a task is handed on as a coroutine that goes on as `move` does: the room
    reloaded, the move played again and acked after that event, in the seat's log. (The
    service is called as the transport calls it, at a moment nothing holds the room's lock.)"""
    transport, url = server
    service = transport.service
    (ann, _bob), _, code, _ = await start_race(url, wire)
    before = await play(ann, 2)
    view = current_view(ann)
    text = putt_move(view)
    assert text is not None
    acks: list[dict[str, Any]] = []
    tails: list[Any] = []
    other = Store.from_url(redis_url, key_prefix)
    try:
        event = {"kind": "connected", "at": before[-1]["at"], "seat": 1, "connected": True}
        held = service.cache[code]
        _, numbered = await other.presence(code, "elsewhere", +1, event)
    finally:
        await other.close()
    await until(lambda: not service.locks.busy(code), "the room's lock free")
    # the holder may have caught up meanwhile (its lease's renewal or a reload can run while
    # the test waits; under load they often do): put back the copy it held before that
    # event, as if the news had not reached it yet. Nothing is awaited from here to the
    # call. (The event is a connection's: the seats' games are as they were.)
    service.cache[code] = held
    assert numbered > before[-1]["event"]
    stored = service.move_now(
        code, 0, text, view["moves"] + 1, reply=acks.append, finished=tails.append
    )
    assert stored is not None  # taken: played, its XADD queued
    await until(lambda: tails, "the append's answer")
    assert tails[0] is not None and not acks  # refused: the rest handed on
    ack = await tails[0]
    assert acks == [ack] and ack["type"] == "ack" and ack["event"] == numbered + 1
    assert code not in service._chains
    await until(lambda: not service.locks.busy(code), "the room's lock let go")
    moves = [a["move"].encode() for a in before] + [text.encode()]
    assert await logged(transport.store, code, 0) == moves


@pytest.mark.whitebox
async def test_a_rooms_moves_at_once_pass_the_lock_on_without_a_task(
    server: tuple[Transport, str], wire: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four racers moving at once: a move that comes while the room's previous one is in
    Redis waits in the room's queue and gets the lock in that move's callback, not in a
    task. Every move is acked once, in its seat's order, and is in its seat's log."""
    transport, url = server
    clients, _, code, _ = await start_race(url, wire, 4)
    first = [await play(c, 1) for c in clients]
    seen = count_paths(transport, monkeypatch)
    acks = await asyncio.gather(*(play(c, 8) for c in clients))
    assert all(a["type"] == "ack" for got in acks for a in got)
    total = sum(len(got) for got in acks)
    assert_mostly_at_once(seen, acks)
    assert not transport.moves and not transport.service._chains
    events = sorted(a["event"] for got in acks for a in got)
    assert events == list(range(events[0], events[0] + total))  # one event each, no gap
    for seat in range(len(clients)):
        moves = [a["move"].encode() for a in first[seat] + acks[seat]]
        assert await logged(transport.store, code, seat) == moves
