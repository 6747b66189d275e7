"""The WebSocket layer (server/net/ws_server.py) over real sockets: what one loop turn sends a
connection leaves in one write; frames are framed as websockets frames them; a client that
stops answering pings is failed with 1011."""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

import pytest
from helpers.race import until
from helpers.servers import in_loop
from solrace.protocol import messages as m
from solrace.server.app import build
from solrace.server.config import ServerConfig
from solrace.server.net.conn import Limits, networks
from solrace.server.net.guard import GuardLimits
from solrace.server.store.store import Store
from websockets.frames import BINARY, CONT, PING, TEXT, Frame
from websockets.protocol import OPEN


def queued_bytes(conn: Any) -> int:
    """Bytes waiting in the server's socket for it to read (peeked: nothing is consumed)."""
    fd = conn.ws.transport.get_extra_info("socket").fileno()
    with socket.socket(fileno=os.dup(fd)) as peek:
        try:
            return len(peek.recv(1 << 16, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except BlockingIOError:
            return 0


async def test_the_replies_of_one_turn_leave_in_one_write(redis_url, key_prefix, wire) -> None:
    """Five pings read at once: their five pongs are written with one call, not five."""
    async with in_loop(redis_url, key_prefix) as (transport, url):
        client = await wire(url)
        (conn,) = transport.conns
        writes: list[int] = []  # per write call: how many frames (writelines: chunks)
        tcp = conn.ws.transport
        real_write, real_writelines = tcp.write, tcp.writelines
        inside = []

        def write(data: Any) -> None:
            if not inside:  # not writelines' own write of the joined chunks
                writes.append(1)
            real_write(data)

        def writelines(chunks: Any) -> None:
            chunks = list(chunks)
            writes.append(len(chunks))
            inside.append(1)
            try:
                real_writelines(chunks)
            finally:
                inside.pop()

        tcp.write, tcp.writelines = write, writelines  # type: ignore[method-assign]
        tcp.pause_reading()  # the five arrive before the server reads any of them
        frames = [m.encode({"type": "ping", "id": 100 + i, "t": i}) for i in range(5)]
        for frame in frames:
            await client.send_raw(frame)
        await until(lambda: queued_bytes(conn) >= sum(len(f) for f in frames), "all five queued")
        tcp.resume_reading()
        await until(lambda: len(client.unmatched) == 5, "five pongs")
        assert [p["t"] for p in client.unmatched] == [0, 1, 2, 3, 4]
        assert writes == [5], writes


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_a_frame_is_framed_as_websockets_frames_it(size: int) -> None:
    from solrace.server.net.ws_server import frame_bytes

    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    assert frame_bytes(data) == Frame(BINARY, data).serialize(mask=False)
    assert frame_bytes(data, TEXT) == Frame(TEXT, data).serialize(mask=False)


async def test_a_client_that_stops_answering_pings_is_failed_1011(
    redis_url, key_prefix, wire
) -> None:
    from solrace.server.net.ws_server import serve

    guard = GuardLimits(exempt=networks("127.0.0.1"))
    transport = build(
        lambda sink: Store.from_url(redis_url, key_prefix, sink=sink), ServerConfig(guard=guard)
    )
    options = {**transport.serve_options(), "close_timeout": 0.2}
    async with serve(
        transport, "127.0.0.1", 0, ping_interval=0.2, ping_timeout=0.3, **options
    ) as srv:
        await transport.start()
        url = f"ws://127.0.0.1:{srv.sockets[0].getsockname()[1]}/ws"
        alive = await wire(url)
        client = await wire(url)
        quiet = next(
            c for c in transport.conns if c.ws.remote_address[1] == client.ws.local_address[1]
        )
        # a ping answered (by the client's protocol) keeps it open
        await until(lambda: quiet.ws.latency > 0, "a pong received")
        assert quiet in transport.conns
        client.ws.transport.pause_reading()  # it reads no ping: no pong
        await until(lambda: quiet not in transport.conns, "the silent client dropped")
        assert quiet.ws.protocol.close_sent.code == 1011
        assert quiet.ws.protocol.close_sent.reason == "keepalive ping timeout"
        assert (await alive.request({"type": "ping", "t": 2}))["t"] == 2
        await transport.close()
    await transport.store.close()


@pytest.mark.whitebox
async def test_reading_pauses_while_a_connections_inbox_is_full(
    redis_url, key_prefix, wire, monkeypatch
) -> None:
    """Messages wait in the connection's inbox while one is handled; past INBOX_HIGH of them
    the socket is no longer read (what a flooding client sends stays in the kernel), and
    reading resumes as the inbox drains, every message handled in order."""
    roomy = Limits(burst=1000, rate=1000.0, lobby_burst=1000, lobby_rate=1000.0)
    async with in_loop(redis_url, key_prefix, roomy) as (transport, url):
        client = await wire(url)
        (conn,) = transport.conns
        gate = asyncio.Event()
        real = transport.dispatch

        async def held(c: Any, msg: Any) -> None:
            await gate.wait()
            await real(c, msg)

        monkeypatch.setattr(transport, "dispatch", held)
        try:
            for i in range(40):
                await client.send_raw(m.encode({"type": "ping", "id": 200 + i, "t": i}))
            await until(lambda: conn.reading_paused, "reading paused", timeout=5)
            assert not conn.ws.transport.is_reading()
        finally:
            gate.set()  # a failure must not leave the handler waiting (shutdown waits for it)
        await until(lambda: len(client.unmatched) == 40, "every ping answered")
        assert [p["t"] for p in client.unmatched] == list(range(40))
        assert conn.ws.transport.is_reading() and conn.drainer is None


def masked(frame: Frame) -> bytes:
    return frame.serialize(mask=True)


async def test_simple_frames_skip_websockets_parser_and_the_rest_keep_their_order(
    redis_url, key_prefix, wire
) -> None:
    """Whole, masked, unfragmented data frames at the start of what one read brings go
    straight to the message handler (`WsConnection._simple_frames`); from the first frame
    that is not one (a fragment, a control frame, a frame cut in two by the read) websockets
    parses the rest. Every message is handled, in the order sent, whichever way it went."""
    async with in_loop(redis_url, key_prefix) as (transport, url):
        client = await wire(url)
        (conn,) = transport.conns
        parsed: list[bytes] = []  # what websockets' parser was given
        real = conn.ws.protocol.receive_data

        def receive_data(data: Any) -> None:
            parsed.append(bytes(data))
            real(data)

        conn.ws.protocol.receive_data = receive_data  # type: ignore[method-assign]
        ping = [m.encode({"type": "ping", "id": 300 + i, "t": i}) for i in range(7)]
        big = m.encode({"type": "ping", "id": 400, "t": 7, "pad": "x" * 300})  # a 16-bit length
        simple = masked(Frame(BINARY, ping[0])) + masked(Frame(BINARY, big))
        fragmented = masked(Frame(BINARY, ping[1][:3], fin=False)) + masked(
            Frame(CONT, ping[1][3:])
        )
        control = masked(Frame(PING, b"abcd"))
        tail = masked(Frame(BINARY, ping[2]))
        tcp = client.ws.transport
        # one read: two simple frames, then a fragmented message, a ping and a simple frame
        conn.ws.transport.pause_reading()
        tcp.write(simple + fragmented + control + tail)
        total = len(simple + fragmented + control + tail)
        await until(lambda: queued_bytes(conn) >= total, "the first chunk queued")
        conn.ws.transport.resume_reading()
        await until(lambda: len(client.unmatched) == 4, "four pongs")
        assert [p["t"] for p in client.unmatched] == [0, 7, 1, 2]
        assert parsed == [fragmented + control + tail]  # the two simple frames never were
        # a simple frame cut in two by the reads: websockets gets it whole from its halves
        parsed.clear()
        whole = masked(Frame(BINARY, ping[3]))
        tcp.write(whole[:5])
        await until(lambda: parsed == [whole[:5]], "the first half read")
        tcp.write(whole[5:] + masked(Frame(BINARY, ping[4])))
        await until(lambda: len(client.unmatched) == 6, "six pongs")
        assert [p["t"] for p in client.unmatched][4:] == [3, 4]
        # websockets' reader is empty again: the next simple frames skip it
        parsed.clear()
        tcp.write(masked(Frame(BINARY, ping[5])) + masked(Frame(BINARY, ping[6])))
        await until(lambda: len(client.unmatched) == 8, "eight pongs")
        assert [p["t"] for p in client.unmatched][6:] == [5, 6]
        assert parsed == []
        assert conn in transport.conns and conn.ws.protocol.state is OPEN
