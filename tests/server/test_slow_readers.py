"""Clients that stop reading, over real sockets: the server drops them fast, and they never
hold back what the room's other connections are sent.

The server runs in the test's loop (a real Redis, a real port, the same websockets options
as `solrace serve`), so the test can see its connections. A slow client is a real TCP socket
with a small receive buffer whose reading is paused: the kernel's window closes, and what the
server sends stays queued on the server's side, as with a client that froze.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from helpers.race import play, seated_room, until
from helpers.servers import in_loop
from helpers.views import ELSEWHERE
from solrace.protocol import messages as m
from solrace.server.common.metrics import METRICS
from solrace.server.net.conn import Conn, Limits
from solrace.server.net.transport import Transport
from solrace.server.net.ws_limits import SendLimits

#: small buffers, so a few dozen frames fill them; no rate limit gets in the way
SMALL = SendLimits(send_buffer=4096, write_limit=8192, max_buffered=1 << 20, slow_reader_s=0.5)


@dataclasses.dataclass
class Server:
    transport: Transport
    url: str


@pytest.fixture
async def server_with(
    redis_url: str, key_prefix: str
) -> AsyncIterator[Callable[[SendLimits], Any]]:
    """server_with(sends) -> a Server in this loop with those send limits."""
    async with contextlib.AsyncExitStack() as stack:

        async def make(sends: SendLimits) -> Server:
            limits = Limits(burst=10_000, rate=10_000.0, sends=sends)
            transport, url = await stack.enter_async_context(in_loop(redis_url, key_prefix, limits))
            return Server(transport, url)

        yield make


async def stalled_client(url: str, wire: Any, source: str = "127.0.0.1") -> Any:
    """A client whose socket will stop reading (`stall`): a 4 KiB receive window. `source`:
    the local address it connects from (a spectator's must not be the racers')."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.bind((source, 0))
    sock.setblocking(False)
    host, port = url.removeprefix("ws://").split("/")[0].split(":")
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    return await wire(url, sock=sock)


def stall(client: Any) -> None:
    client.ws.transport.pause_reading()


def conn_of(transport: Transport, room: str, seat: int) -> Conn:
    return next(c for c in transport.conns if c.room == room and c.seat == seat)


async def fill(client: Any, conn: Conn) -> None:
    """Ask for more than the stalled socket can take, until the server's side is paused."""
    while not conn.ws.paused:
        await client.ws.send(m.encode({"type": "hello", "version": m.VERSION}))
        await asyncio.sleep(0)


async def test_a_client_that_stops_reading_is_dropped_and_let_go(server_with, wire) -> None:
    srv = await server_with(SMALL)
    (host, _), _, code, _ = await seated_room(srv.url, wire, 2)
    slow = await stalled_client(srv.url, wire)
    joined = await slow.request({"type": "join", "room": code, "name": "slow"})
    conn = conn_of(srv.transport, code, joined["seat"])
    dropped = METRICS.slow_readers_dropped._value.get()
    stall(slow)
    await fill(slow, conn)  # its handler now waits on the full socket; the clock runs
    await until(lambda: conn not in srv.transport.conns, "the slow reader dropped")
    assert METRICS.slow_readers_dropped._value.get() == dropped + 1
    assert conn.room is None  # unbound like any lost connection: its seat shows disconnected
    gone = await host.wait_event("connected", seat=joined["seat"], connected=False)
    assert gone["seat"] == joined["seat"]
    assert (await host.request({"type": "ping", "t": 1}))["t"] == 1  # the others carry on


async def test_a_spectator_that_stops_reading_is_dropped_at_the_buffer_cap(
    server_with, wire
) -> None:
    """The fan-out never waits (broadcast): what a non-reading spectator is sent piles up in
    its write buffer until the cap, then it goes; the racers never notice."""
    capped = dataclasses.replace(SMALL, max_buffered=8 * 1024, slow_reader_s=600)
    srv = await server_with(capped)
    clients, _, code, host_token = await seated_room(srv.url, wire, 4)  # 4 seats: moves to spare
    slow = await stalled_client(srv.url, wire, ELSEWHERE)  # not a racer's address: boards
    await slow.request({"type": "spectate", "room": code})
    conn = next(c for c in srv.transport.conns if c.room == code and c.role == "spectator")
    stall(slow)
    assert (await clients[0].request({"type": "start", "host_token": host_token}))["type"] == "ok"
    for c in clients:
        await c.wait_for(lambda x: x["type"] == "snapshot")
    moves = 0
    racing = list(clients)
    while conn in srv.transport.conns:
        assert racing, "the race ran out of moves before the cap was reached"
        mover = racing[moves % len(racing)]
        acks = await play(mover, 1)
        if not acks or acks[-1]["status"] != "racing":
            racing.remove(mover)
        moves += 1
        if acks:  # spectators get a frame per tick: each move its own, so frames pile up
            await until(
                lambda n=acks[-1]["event"]: conn.last_event >= n or conn not in srv.transport.conns,
                "the move went out to the spectator",
            )
    assert conn.ws.dropped and moves > 1


async def test_start_boards_reach_every_player_while_one_socket_is_full(server_with, wire) -> None:
    """Issue 10 item 13: a player that stopped reading held back the others' boards (sent one
    player at a time, each waiting for its socket to drain). Here the slow one's socket is full
    before the start, and stays full (a long slow-reader clock) while the others get theirs."""
    srv = await server_with(dataclasses.replace(SMALL, slow_reader_s=600))
    clients, _, code, host_token = await seated_room(srv.url, wire, 6)
    slow = await stalled_client(srv.url, wire)
    joined = await slow.request({"type": "join", "room": code, "name": "slow"})
    conn = conn_of(srv.transport, code, joined["seat"])
    stall(slow)
    await fill(slow, conn)
    assert (await clients[0].request({"type": "start", "host_token": host_token}))["type"] == "ok"
    for c in clients:
        snap = (await c.wait_for(lambda x: x["type"] == "snapshot"))["snapshot"]
        assert snap["state"] == "racing" and snap["you"]["view"] is not None
    assert conn.ws.paused and conn in srv.transport.conns  # still stuck all along
    slow.ws.transport.resume_reading()
