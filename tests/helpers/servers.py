"""`solrace serve` processes for async tests, started and stopped off the event loop.

ServerProcess.start() and stop() block. Called on the test's event loop thread, stop() keeps
the test's own clients from answering the server's closing handshake, so each server waits
out its close timeout (2 s) before it exits; start() of two servers one after the other
costs twice the start-up. Here both run in threads, all servers at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence

from solrace.bench.server_process import ServerProcess
from solrace.server.app import build
from solrace.server.config import ServerConfig
from solrace.server.net.conn import networks
from solrace.server.net.guard import GuardLimits
from solrace.server.net.transport import Limits, Transport
from solrace.server.net.ws_server import serve
from solrace.server.store.store import Store


@contextlib.asynccontextmanager
async def serving(
    redis_url: str,
    prefix: str,
    count: int = 1,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[list[ServerProcess]]:
    """`count` servers on one Redis and one key prefix (so they share rooms), all up on entry
    and all stopped (SIGTERM, clean) on exit, while the loop keeps serving the clients."""
    procs = [ServerProcess(redis_url, prefix, extra_args=extra_args, env=env) for _ in range(count)]
    try:
        started = await asyncio.gather(
            *(asyncio.to_thread(p.start) for p in procs), return_exceptions=True
        )
        for result in started:
            if isinstance(result, BaseException):
                raise result
        yield procs
    finally:
        await asyncio.gather(*(asyncio.to_thread(p.stop) for p in procs))


@contextlib.asynccontextmanager
async def in_loop(
    redis_url: str, prefix: str, limits: Limits | None = None, guard: GuardLimits | None = None
) -> AsyncIterator[tuple[Transport, str]]:
    """A server in the test's own loop (a real Redis, a real port, `solrace serve`'s frame and
    send limits), for tests that look at its tables or connections: (transport, ws url).
    127.0.0.1 is exempt from the per-address caps, as for `ServerProcess`, unless `guard`
    gives the caps."""
    config = ServerConfig(
        limits=limits or Limits(), guard=guard or GuardLimits(exempt=networks("127.0.0.1"))
    )
    transport = build(lambda sink: Store.from_url(redis_url, prefix, sink=sink), config)
    async with serve(transport, "127.0.0.1", 0, **transport.serve_options()) as srv:
        await transport.start()
        port = next(iter(srv.sockets)).getsockname()[1]
        try:
            yield transport, f"ws://127.0.0.1:{port}/ws"
        finally:
            for conn in transport.conns:  # a stalled socket would hold the close up for seconds
                conn.ws.transport.abort()
            await transport.close()
    await transport.store.close()
