"""The mover's ack goes out before the room's fan-out of its move, and carries the mover's own
progress event: the mover gets no separate frame for it, and counts it as the next event.

The server runs in the test's own event loop here (a real Redis, a real WebSocket port), so the
order in which frames are written can be recorded where they leave the process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.race import current_view, play, start_race, until
from helpers.views import putt_move
from solrace.protocol import messages as m
from solrace.server.app import build
from solrace.server.net import fanout
from solrace.server.net.ws_server import serve
from solrace.server.store.store import Store

#: they watch the move path by replacing its methods (conftest: the white-box lane)
pytestmark = pytest.mark.whitebox


@pytest.fixture
async def server(redis_url: str, key_prefix: str) -> AsyncIterator[str]:
    transport = build(lambda sink: Store.from_url(redis_url, key_prefix, sink=sink))
    async with serve(transport, "127.0.0.1", 0) as srv:
        await transport.start()
        port = next(iter(srv.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws"
        await transport.close()
    await transport.store.close()


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    """Every message the fan-out module writes (acks and room frames, each message of a
    spectator's `batch`, and a catch-up's, which a connection left behind on a busy machine
    gets by `fanout.send`), in order, decoded."""
    out: list[tuple[Any, dict[str, Any]]] = []
    real, real_send = fanout.broadcast, fanout.send

    def record(conns: Any, frame: bytes, **kw: Any) -> None:
        conns = list(conns)
        msg = m.decode(frame, 1 << 22)
        # a spectator's tick is one `batch` frame of its events and boards
        inner = msg["messages"] if msg["type"] == "batch" else [msg]
        for ws in conns:
            out.extend((ws, x) for x in inner)
        real(conns, frame, **kw)

    async def record_send(conn: Any, msg: dict[str, Any]) -> None:
        out.append((conn.ws, msg))
        await real_send(conn, msg)

    monkeypatch.setattr(fanout, "broadcast", record)
    monkeypatch.setattr(fanout, "send", record_send)
    return out


async def test_the_ack_carries_the_movers_progress_and_goes_out_before_the_fan_out(
    server: str, wire: Any, written: list[tuple[Any, dict[str, Any]]]
) -> None:
    url = server
    (ann, bob), *_ = await start_race(url, wire, 2)
    start = ann.last_event
    view = current_view(ann)
    written.clear()
    ack = await ann.request({"type": "move", "move": putt_move(view), "n": view["moves"] + 1})
    seen = await bob.wait_event("progress", seat=0)
    # the ack is the mover's progress event: its number and fields, and the event bob got
    assert ack["event"] == seen["n"] == start + 1
    for key in ("moves", "home", "progress", "status", "time", "at"):
        assert ack["n" if key == "moves" else key] == seen[key], key
    # written in this order: the ack, then the room's frame, which the mover does not get
    kinds = [(msg["type"], msg.get("n")) for _, msg in written]
    assert kinds == [("ack", 1), ("event", seen["n"])], kinds
    assert [ws for ws, msg in written if msg["type"] == "event"] != [
        ws for ws, msg in written if msg["type"] == "ack"
    ]
    # the mover's next event follows its ack's number with no gap
    view = current_view(bob)
    await bob.request({"type": "move", "move": putt_move(view), "n": view["moves"] + 1})
    nxt = await ann.wait_event("progress", seat=1)
    assert nxt["n"] == ack["event"] + 1
    assert not [
        x
        for x in ann.received
        if x["type"] == "event" and x["kind"] == "progress" and x["seat"] == 0
    ]


async def test_every_ack_is_written_before_its_moves_fan_out(
    server: str, wire: Any, written: list[tuple[Any, dict[str, Any]]]
) -> None:
    """Four players moving at once, a spectator watching: each ack leaves before any frame
    carrying its move's event, and no mover is sent its own move's event."""
    url = server
    clients, *_ = await start_race(url, wire, 4)
    eve = await wire(url)
    await eve.request({"type": "spectate", "room": clients[0].received[1]["room"]})
    written.clear()
    acks = await asyncio.gather(*(play(c, 8) for c in clients))
    await until(lambda: eve.last_event >= max(a["event"] for got in acks for a in got), "spectator")
    first_sent: dict[int, int] = {}
    for i, (_, msg) in enumerate(written):
        if msg["type"] == "event":
            first_sent.setdefault(msg["n"], i)
        elif msg["type"] == "progress":  # coalesced: it stands for its events from..n
            for n in range(msg["from"], msg["n"] + 1):
                first_sent.setdefault(n, i)
        elif msg["type"] == "snapshot":  # a catch-up's, when the events were gone
            for n in range(1, msg["snapshot"]["event"] + 1):
                first_sent.setdefault(n, i)
    ack_at = {msg["event"]: i for i, (_, msg) in enumerate(written) if msg["type"] == "ack"}
    assert len(ack_at) == sum(len(a) for a in acks)
    for n, i in ack_at.items():
        assert i < first_sent[n], (n, i, first_sent[n])
    for seat, c in enumerate(clients):
        own = [x for x in c.received if x["type"] == "event" and x.get("seat") == seat]
        mine = {a["event"] for a in acks[seat]}
        # its own move's event comes only when the ack could not stand for it (an earlier
        # event of the room was still on its way to this connection)
        for x in own:
            assert x["n"] in mine
            ack = next(a for a in acks[seat] if a["event"] == x["n"])
            assert ack["event"] != events_before(c, ack) + 1


def events_before(client: Any, ack: dict[str, Any]) -> int:
    """The last event number the client had when this ack arrived (snapshots included)."""
    last = 0
    for x in client.received:
        if x is ack:
            return last
        if x["type"] in ("event", "progress"):
            last = max(last, x["n"])
        elif x.get("snapshot"):
            last = x["snapshot"]["event"]
        elif x["type"] == "ack" and x["event"] == last + 1:
            last = x["event"]
    raise AssertionError("ack not received")
