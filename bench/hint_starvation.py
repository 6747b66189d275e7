"""`solrace bench hint-starvation`: a hint's wait while abandoned races flood the solver.

Issue 20 (item 5): hundreds of abandoned practice races queued their post-race verdicts on
the solver's first-in-first-out pool, and a hint then waited minutes (seconds when idle).
This starts its own Redis and one `solrace serve`, measures a Klondike hint with the
solver idle, then floods `--races` solo Klondike races that are started and resigned at
once (`--moves 1`: one move first, a race the server still judges) from `--clients`
connections, and measures hints again right after the flood, each from a fresh room (a new
position: no remembered solution). It prints figures; it asserts nothing.

    solrace bench hint-starvation --races 300 --hints 3
    solrace bench hint-starvation --python /path/to/other/.venv/bin/python   # another build
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import time
from typing import Any

from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m
from solrace.server.store.redis_process import RedisProcess
from websockets.asyncio.client import ClientConnection, connect


class Client:
    """Requests matched to replies by `ref`; pushes are read and dropped."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.ensure_future(self._read())
        self.boarded = asyncio.Event()  # the race's board (a snapshot) arrived

    @classmethod
    async def open(cls, url: str) -> Client:
        c = cls(await connect(url, max_size=1 << 22))
        await c.request({"type": "hello", "version": m.VERSION, "client": "bench"})
        return c

    async def _read(self) -> None:
        async for frame in self.ws:
            msg = m.decode(frame, 1 << 22)
            fut = self.waiting.pop(msg.get("ref") or -1, None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
            else:
                self.pushed(msg)

    def pushed(self, msg: dict[str, Any]) -> None:
        """A message that answers no request: the race's board is noted, the rest dropped."""
        if msg["type"] == "snapshot":
            self.boarded.set()

    async def request(self, msg: dict[str, Any], timeout: float = 600.0) -> dict[str, Any]:
        rid = next(self.ids)
        fut = asyncio.get_running_loop().create_future()
        self.waiting[rid] = fut
        await self.ws.send(m.encode({**msg, "id": rid}))
        return await asyncio.wait_for(fut, timeout)

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


async def solo(
    url: str, client: type[Client] = Client, **options: Any
) -> tuple[Client, dict[str, Any]]:
    """A solo Klondike room, started (countdown 0), its board arrived; `client` the class of
    its connection (one that keeps some pushes, as verdict-wait's does)."""
    c = await client.open(url)
    opts = {"game": "klondike", "countdown": 0, **options}
    created = await c.request({"type": "create", "name": "bench", "options": opts})
    assert created["type"] == "joined", created
    started = await c.request({"type": "start", "host_token": created["host_token"]})
    assert started["type"] == "ok", started
    await asyncio.wait_for(c.boarded.wait(), 60)
    return c, created


async def hint_wait(url: str, cap: float) -> float | None:
    """Seconds from a hint request to its answer in a fresh hints room (None: over `cap`)."""
    c, _ = await solo(url, hints=True)
    try:
        t0 = time.monotonic()
        try:
            answer = await c.request({"type": "hint"}, timeout=cap)
        except TimeoutError:
            return None
        assert answer["type"] in ("hint", "error"), answer
        if answer["type"] == "error":
            print(f"  hint answered {answer['code']}: {answer['message']}")
        return time.monotonic() - t0
    finally:
        await c.close()


async def abandon(url: str, count: int, moves: int) -> None:
    """`count` solo races, each started and resigned at once (after `moves` moves)."""
    c = await Client.open(url)
    try:
        for _ in range(count):
            opts = {"game": "klondike", "countdown": 0}
            created = await c.request({"type": "create", "name": "x", "options": opts})
            await c.request({"type": "start", "host_token": created["host_token"]})
            for n in range(1, moves + 1):
                await c.request({"type": "move", "move": "deal", "n": n})
            await c.request({"type": "resign"})
            await c.request({"type": "leave"})
    finally:
        await c.close()


def show(label: str, waits: list[float | None], cap: float) -> None:
    text = ", ".join(f"> {cap:.0f} s" if w is None else f"{w:.2f} s" for w in waits)
    print(f"{label}: {text}", flush=True)


async def measure(url: str, args: argparse.Namespace) -> None:
    print("load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)
    idle = [await hint_wait(url, args.cap) for _ in range(args.hints)]
    show("hint, solver idle", idle, args.cap)
    t0 = time.monotonic()
    per = -(-args.races // args.clients)
    await asyncio.gather(*(abandon(url, per, args.moves) for _ in range(args.clients)))
    print(f"{per * args.clients} races abandoned in {time.monotonic() - t0:.1f} s", flush=True)
    loaded = [await hint_wait(url, args.cap) for _ in range(args.hints)]
    show("hint, after the flood", loaded, args.cap)
    print("load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()), flush=True)


class Server(ServerProcess):
    python: str | None = None

    def command(self) -> list[str]:
        cmd = super().command()
        return [self.python or cmd[0], *cmd[1:]]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="solrace bench hint-starvation", description=__doc__)
    p.add_argument("--races", type=int, default=300)
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--moves", type=int, default=0, help="moves before each resign")
    p.add_argument("--hints", type=int, default=3)
    p.add_argument("--cap", type=float, default=240.0, help="seconds a hint is waited for")
    p.add_argument("--python", help="the Python that runs the server (another checkout)")
    args = p.parse_args(argv)
    with RedisProcess() as redis:
        server = Server(redis.url, "bench:", env={"SOLRACE_PREDRAW_DAILY": "0"})
        server.python = args.python
        with server:
            asyncio.run(measure(server.ws_url, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
