"""Helpers for the server tests: a minimal msgpack WebSocket client of our own (not solrace.client),
recording every frame it receives so tests can check what each viewer was ever sent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from helpers.timing import scaled
from solrace.protocol import messages as m
from solrace.server.store.store import Store
from websockets.asyncio.client import ClientConnection, connect

#: rate_limited refusals `WireClient.request` waits out before it fails the test
RATE_LIMITED_RETRIES = 6


class WireClient:
    """One connection: numbered requests, replies matched by `ref`, pushes queued in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[bytes] = []  # every frame received, raw
        self.received: list[dict[str, Any]] = []  # every message received, decoded
        self.pushes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.unmatched: list[dict[str, Any]] = []
        self.next_id = 0
        self.failure: Exception | None = None
        self.rate_limited = 0
        self.last_event = 0
        #: this connection's own board, kept from snapshots and acks (`_own_board`)
        self.own_view: dict[str, Any] | None = None
        self.closed: asyncio.Future[tuple[int | None, str | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                assert isinstance(frame, bytes), "the server sends binary frames only"
                self.frames.append(frame)
                # a spectator's tick is one `batch` frame: its messages count one by one
                for msg in m.unbatch(m.validate_server(m.decode(frame, max_size=1 << 22))):
                    await self._message(msg)
        except Exception as exc:  # a bad server message fails every waiting request loudly
            self.failure = exc
            for fut in self.replies.values():
                if not fut.done():
                    fut.set_exception(exc)
        finally:
            if not self.closed.done():
                self.closed.set_result((self.ws.close_code, self.ws.close_reason))

    async def _message(self, msg: dict[str, Any]) -> None:
        self._own_board(msg)
        self.received.append(msg)
        if msg["type"] in ("event", "progress"):  # progress: coalesced events
            self.last_event = max(self.last_event, msg["n"])
        ref = msg.get("ref")
        if ref is not None and ref in self.replies:
            self.replies.pop(ref).set_result(msg)
        elif ref is not None:
            self.unmatched.append(msg)
        else:
            await self.pushes.put(msg)

    def _own_board(self, msg: dict[str, Any]) -> None:
        """Keep this connection's own board as a client must (PROTOCOL.md, `ack`): an ack
        carries what its move changed, applied here to the board before it; the derived board
        is put in the ack as `view`, so tests read every ack's board the same way."""
        kind = msg["type"]
        if kind == "ack":
            view = m.acked_view(self.own_view, msg)
            if view is not None:
                msg["view"] = view
            self.own_view = view
        elif kind in ("joined", "snapshot"):
            you = (msg.get("snapshot") or {}).get("you") or msg.get("you")
            if you and you.get("view") is not None:
                self.own_view = you["view"]

    async def request(self, msg: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send and wait for the reply; a rate_limited refusal is retried after a pause (its
        `retry_after`, else 0.25 s: a message token at the lobby's 1 per second), as a
        well-behaved client would, a few times. Still refused then, it fails loudly: a test
        that runs into a limit it is not about must not crawl along on the real rate (give
        its server higher limits instead), and one that is about it uses `request_once`."""
        for _ in range(RATE_LIMITED_RETRIES):
            reply = await self.request_once(msg, timeout)
            if reply.get("code") != "rate_limited":
                return reply
            self.rate_limited += 1
            await asyncio.sleep(min(2.0, reply.get("retry_after", 250) / 1000))
        raise AssertionError(
            f"{msg.get('type')!r} still rate_limited after {RATE_LIMITED_RETRIES} retries: "
            f"{reply}; give the test's server higher limits, or use request_once"
        )

    async def request_once(self, msg: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[rid] = fut
        await self.ws.send(m.encode({**msg, "id": rid}))
        return await asyncio.wait_for(fut, scaled(timeout))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def next_push(self, timeout: float = 10.0) -> dict[str, Any]:
        return await asyncio.wait_for(self.pushes.get(), scaled(timeout))

    async def wait_for(
        self, pred: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        """The first push (from now, skipping others) that satisfies pred."""

        async def loop() -> dict[str, Any]:
            while True:
                msg = await self.pushes.get()
                if pred(msg):
                    return msg

        return await asyncio.wait_for(loop(), scaled(timeout))

    async def wait_event(self, kind: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        return await self.wait_for(
            lambda x: (
                x["type"] == "event"
                and x["kind"] == kind
                and all(x.get(k) == v for k, v in fields.items())
            ),
            timeout,
        )

    def drain(self) -> list[dict[str, Any]]:
        out = []
        while not self.pushes.empty():
            out.append(self.pushes.get_nowait())
        return out

    async def hello(self) -> dict[str, Any]:
        return await self.request(
            {"type": "hello", "version": m.VERSION, "client": "solrace-tests"}
        )

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


@pytest.fixture
async def wire() -> AsyncIterator[Callable[..., Any]]:
    """wire(url, hello=True, address=None, source=None, **connect_kw) -> a connected
    WireClient; all are closed at the end of the test. `address`: the client address a trusted
    proxy (here: loopback) names in X-Forwarded-For; `source`: the local address to connect
    from (helpers/views.py ELSEWHERE: a spectator who is not one of the racers, whose
    connections come from 127.0.0.1); `connect_kw`: more arguments of websockets' connect
    (e.g. a `sock` of the test's own)."""
    made: list[WireClient] = []

    async def make(
        url: str,
        hello: bool = True,
        address: str | None = None,
        source: str | None = None,
        **connect_kw: Any,
    ) -> WireClient:
        headers = {"X-Forwarded-For": address} if address else None
        extra: dict[str, Any] = {"local_addr": (source, 0)} if source else {}
        ws = await connect(
            url,
            max_size=1 << 22,
            compression=None,
            additional_headers=headers,
            **extra,
            **connect_kw,
        )
        client = WireClient(ws)
        made.append(client)
        if hello:
            welcome = await client.hello()
            assert welcome["type"] == "welcome"
        return client

    yield make
    for c in made:
        try:
            await asyncio.wait_for(c.close(), scaled(2))
        except Exception:
            pass


@pytest.fixture
async def pair(redis_url: str, key_prefix: str) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores on one Redis and one key prefix: two processes of one deployment, for the
    tests of leases, fencing and the lease holder's appends. Their keys go with them."""
    a = Store.from_url(redis_url, key_prefix)
    b = Store.from_url(redis_url, key_prefix)
    yield a, b
    keys = [k async for k in a.redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await a.redis.delete(*keys)
    await a.close()
    await b.close()
