"""Driving a Putt Putt race over the wire, shared by the server's end-to-end tests.

Built on the tests' own WireClient (tests/server/conftest.py), not on solrace.client, so the
server tests stay independent of the Python client library tested elsewhere.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from helpers.timing import scaled
from helpers.views import putt_move


async def seated_room(url: str, wire: Any, players: int = 2, **options: Any) -> tuple:
    """Host + players seated in a Putt Putt room, not started; returns (clients, tokens, code,
    host_token). Spectators see the boards live unless `spectator_delay` is given (the
    default is 180 s)."""
    host = await wire(url)
    opts = {"game": "puttputt", "countdown": 0, "spectator_delay": 0, **options}
    created = await host.request({"type": "create", "name": "p0", "options": opts})
    code = created["room"]
    clients, tokens = [host], [created["token"]]
    for i in range(1, players):
        c = await wire(url)
        j = await c.request({"type": "join", "room": code, "name": f"p{i}"})
        clients.append(c)
        tokens.append(j["token"])
    return clients, tokens, code, created["host_token"]


async def start_race(url: str, wire: Any, players: int = 2, **options: Any) -> tuple:
    """`seated_room`, then the race started and every player's board arrived."""
    clients, tokens, code, host_token = await seated_room(url, wire, players, **options)
    assert (await clients[0].request({"type": "start", "host_token": host_token}))["type"] == "ok"
    for c in clients:
        await c.wait_for(lambda x: x["type"] == "snapshot")
    return clients, tokens, code, host_token


def current_view(client: Any) -> dict[str, Any]:
    """The client's own board as last sent to it: an ack's view, else a snapshot's."""
    for msg in reversed(client.received):
        if msg["type"] == "ack":
            return msg["view"]
        snapshot = msg.get("snapshot") if msg["type"] in ("snapshot", "joined") else None
        if snapshot and snapshot["you"] and snapshot["you"]["view"]:
            return msg["snapshot"]["you"]["view"]
        if msg["type"] == "joined" and msg.get("you") and msg["you"]["view"]:
            return msg["you"]["view"]
    raise AssertionError("no view yet")


async def play(client: Any, count: int) -> list[dict[str, Any]]:
    """Up to `count` legal moves, each sent after the previous ack; stops when the seat is done.

    A move refused `busy` (the server's retries ran out under contention: a room written by
    two processes at once) is sent again, as every client does (PROTOCOL.md, errors): `n`
    makes the retry safe, and a refusal changed nothing."""
    acks = []
    for _ in range(count):
        view = current_view(client)
        mv = putt_move(view)
        if mv is None:
            break
        msg = {"type": "move", "move": mv, "n": view["moves"] + 1}
        ack = await client.request(msg)
        for retry in range(20):
            if ack.get("code") != "busy":
                break
            await asyncio.sleep(0.01 * (retry + 1))
            ack = await client.request(msg)
        assert ack["type"] == "ack", ack
        acks.append(ack)
        if ack["status"] != "racing":
            break
    return acks


def progress_line(msg: dict[str, Any], seat: int | None = None) -> dict[str, Any] | None:
    """A seat's progress in a message: a progress event, or its line in a coalesced `progress`
    frame (which carries each seat's latest line only, so a wait for move k should accept
    k or later); None when the message carries none (of that seat)."""
    if msg.get("type") == "event" and msg.get("kind") == "progress":
        return msg if seat is None or msg["seat"] == seat else None
    if msg.get("type") == "progress":
        for line in msg["seats"]:
            if seat is None or line["seat"] == seat:
                return line
    return None


def reached(msg: dict[str, Any], seat: int | None, moves: int) -> bool:
    """Whether msg shows `seat` (any seat: None) at `moves` moves or more."""
    line = progress_line(msg, seat)
    return line is not None and line["moves"] >= moves


async def sent_to(
    client: Any, pred: Callable[[dict[str, Any]], bool], timeout: float = 30.0
) -> dict[str, Any]:
    """The first message the client was ever sent that satisfies pred, waiting until there is one.

    Unlike WireClient.wait_for, which takes pushes off the queue, this reads the client's whole
    history, so waiting for one message never throws away another that arrived before it: a
    spectator's board and the progress event of the same move come by separate paths, in
    either order.
    """
    loop = asyncio.get_running_loop()
    timeout = scaled(timeout)
    deadline = loop.time() + timeout
    while True:
        for msg in client.received:
            if pred(msg):
                return msg
        if client.failure is not None:
            raise client.failure
        if loop.time() > deadline:
            raise AssertionError(f"no such message in {timeout} s; last: {client.received[-3:]}")
        await asyncio.sleep(0.01)


async def until(
    cond: Callable[[], bool | Awaitable[bool]], what: str, timeout: float = 30.0
) -> None:
    """Wait for a condition (a plain or async check, polled every 10 ms); fail naming `what`.

    The timeout is only a bound for a test that would otherwise hang: generous, since the
    machine may be busy, and never reached when the condition comes true.
    """
    loop = asyncio.get_running_loop()
    timeout = scaled(timeout)
    deadline = loop.time() + timeout
    while True:
        ok = cond()
        if inspect.isawaitable(ok):
            ok = await ok
        if ok:
            return
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.01)


def log_showing(server: Any, text: str, timeout: float = 10.0) -> str:
    """A server process's log once it shows `text`, or as it is when the (scaled) bound runs
    out. A thread of this process copies the child's output, so a line the server has already
    written may not be in `log()` yet on a busy machine."""
    deadline = time.monotonic() + scaled(timeout)
    while text not in (log := server.log()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return str(log)


async def until_refused(redis: Any, command: str, times: int) -> None:
    """Wait until Redis has refused `command` (its ACL denies it) at least `times` times: the
    server's tries and retries of a write a test makes fail, counted by Redis itself."""

    async def enough() -> bool:
        stats = await redis.info("commandstats")
        return int(stats.get(f"cmdstat_{command}", {}).get("rejected_calls", 0)) >= times

    await until(enough, f"{times} refused {command} calls")
