"""`solrace bench quick`: quick match's two goals (issue 23), measured against a real server.

* **pair**: two players ask for a race (`quick`) `--delays` seconds apart (0, 1 and 2 s by
  default, `--repeats` times each); for each, the time from its ask until it is racing: its
  `matched` came, it connected naming the room, resumed its seat and the race's `start` event
  arrived (or its snapshot already said `racing`). Goal: both racing within 5 s.
* **crowd**: `--players` (1,000) players, connected and said hello beforehand, all send
  `quick` at once; the time until each is **seated** (its `resume` in the room answered
  `joined`), and until each has `matched`. Goal: all seated within 10 s. With every seat's
  connection open, the rooms the servers hold (each worker's /healthz `rooms`: a room with
  connections on two processes would count twice) against the rooms made: no room split.

Each player has a player key of its own (rated races, the default). The server runs in a
session of its own (bench/load_procs.py `RaceServer`, 127.0.0.1 exempt from the per-address
caps: every player connects from it); its CPU (every process, with `--workers N`) and this
process's are read from /proc over the crowd's window and printed per player seated, beside
the load average: the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from solrace.bench.load_procs import RaceServer, cpu_seconds
from solrace.client.player_key import new_key
from solrace.protocol import messages as m
from solrace.server.store.redis_process import RedisProcess
from websockets.asyncio.client import ClientConnection, connect

#: connections opened at once while the crowd connects (not measured)
CONNECTING = 64


class Player:
    """One connection: hello with a key of its own, requests by id, pushes kept in order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = 0
        self.replies: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.pushes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, key: str) -> Player:
        ws = await connect(url, compression=None, max_size=1 << 22, open_timeout=30)
        p = cls(ws)
        hello = {
            "type": "hello",
            "version": m.VERSION,
            "client": "solrace-bench",
            "player_key": key,
        }
        await p.ws.send(m.encode(hello))
        welcome = await p.pushes.get()
        assert welcome["type"] == "welcome", welcome
        return p

    async def _read(self) -> None:
        async for frame in self.ws:
            assert isinstance(frame, bytes)
            msg = m.decode(frame, 1 << 22)
            ref = msg.get("ref")
            fut = self.replies.pop(ref, None) if ref is not None else None
            if fut is not None:
                fut.set_result(msg)
            else:
                self.pushes.put_nowait(msg)

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.replies[self.ids] = fut
        await self.ws.send(m.encode({**msg, "id": self.ids}))
        return await fut

    async def push(self, mtype: str, **fields: Any) -> dict[str, Any]:
        while True:
            msg = await self.pushes.get()
            if msg["type"] == mtype and all(msg.get(k) == v for k, v in fields.items()):
                return msg
            if msg["type"] == "error":
                raise RuntimeError(f"error while waiting for {mtype}: {msg}")

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


async def seat(
    url: str, key: str, matched: dict[str, Any], queued: Player
) -> tuple[Player, dict[str, Any]]:
    """What a client does with `matched`: resume the seat on the queue's connection when its
    process serves the room (`here`), else on a new one naming the room."""
    p = queued if matched.get("here") else await Player.open(f"{url}?room={matched['room']}", key)
    joined = await p.request({"type": "resume", "room": matched["room"], "token": matched["token"]})
    assert joined["type"] == "joined", joined
    return p, joined


async def ask_and_race(url: str, game: str, name: str, delay: float, t0: float) -> dict[str, float]:
    """One player of a pair: asks `delay` s after t0; returns its times (s) from t0."""
    key = new_key()
    p = await Player.open(url, key)
    await asyncio.sleep(max(0.0, t0 + delay - time.monotonic()))
    asked = time.monotonic()
    q = await p.request({"type": "quick", "game": game, "name": name})
    assert q["type"] == "queued", q
    matched = await p.push("matched")
    t_matched = time.monotonic()
    racer, joined = await seat(url, key, matched, p)
    if joined["snapshot"]["state"] != "racing":
        await racer.push("event", kind="start")
    racing = time.monotonic()
    await p.close()
    if racer is not p:
        await racer.close()
    return {"asked": asked - t0, "matched": t_matched - t0, "racing": racing - t0}


async def pairs(url: str, delays: list[float], repeats: int) -> None:
    print(f"pair: two players asking d s apart, {repeats} times each d (puttputt, rated)")
    for d in delays:
        from_first, from_second = [], []
        for _ in range(repeats):
            t0 = time.monotonic() + 0.2
            a, b = await asyncio.gather(
                ask_and_race(url, "puttputt", "ann", 0.0, t0),
                ask_and_race(url, "puttputt", "bob", d, t0),
            )
            last = max(a["racing"], b["racing"])
            from_first.append(last - a["asked"])
            from_second.append(last - b["asked"])
        print(
            f"  d = {d:.1f} s: both racing {statistics.median(from_first):.2f} s "
            f"(max {max(from_first):.2f}) after the first ask, "
            f"{statistics.median(from_second):.2f} s (max {max(from_second):.2f}) after the second"
        )


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))]


async def crowd(url: str, server: RaceServer, players: int) -> None:
    keys = [new_key() for _ in range(players)]
    gate = asyncio.Semaphore(CONNECTING)

    async def opened(key: str) -> Player:
        async with gate:
            return await Player.open(url, key)

    t = time.monotonic()
    queue_conns = await asyncio.gather(*(opened(k) for k in keys))
    print(f"crowd: {players} players connected in {time.monotonic() - t:.1f} s (not measured)")
    pids = server.pids()
    load0 = os.getloadavg()
    cpu0 = {n: cpu_seconds(p) for n, p in pids.items()}
    me0 = time.process_time()
    t0 = time.monotonic()
    seats: list[Player] = []
    matched_at: list[float] = []
    seated_at: list[float] = []
    rooms: Counter[str] = Counter()
    resumed_elsewhere: list[int] = []

    async def one(p: Player, key: str, i: int) -> None:
        q = await p.request({"type": "quick", "game": "klondike", "name": f"p{i}"})
        assert q["type"] == "queued", q
        matched = await p.push("matched")
        matched_at.append(time.monotonic() - t0)
        rooms[matched["room"]] += 1
        racer, _ = await seat(url, key, matched, p)
        seated_at.append(time.monotonic() - t0)
        if racer is not p:
            seats.append(racer)
            resumed_elsewhere.append(1)

    await asyncio.gather(
        *(one(p, k, i) for i, (p, k) in enumerate(zip(queue_conns, keys, strict=True)))
    )
    wall = time.monotonic() - t0
    cpu = {n: cpu_seconds(p) - cpu0[n] for n, p in pids.items()}
    me = time.process_time() - me0
    load1 = os.getloadavg()
    held = sum(int(server.health(code).get("rooms", 0)) for code in _worker_codes(server))
    sizes = Counter(rooms.values())
    print(
        f"  all {len(seated_at)} seated {wall:.2f} s after asking at once "
        f"(matched: p50 {_pct(matched_at, 0.5):.2f} s, p99 {_pct(matched_at, 0.99):.2f} s, "
        f"last {max(matched_at):.2f} s; seated: p50 {_pct(seated_at, 0.5):.2f} s, "
        f"p99 {_pct(seated_at, 0.99):.2f} s, last {max(seated_at):.2f} s)"
    )
    print(
        f"  {len(rooms)} rooms, by players: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(sizes.items()))
        + f"; rooms held over the server's processes: {held} (a split room counts twice); "
        f"{len(resumed_elsewhere)} players took their seat over a new connection naming the room"
    )
    total = sum(cpu.values())
    print(
        "  server CPU "
        + ", ".join(f"{n} {s:.2f} s" for n, s in cpu.items())
        + f" = {total * 1000 / players:.2f} ms per player seated; "
        f"this client {me:.2f} s; wall {wall:.2f} s"
    )
    print(
        "  load average {:.2f} {:.2f} {:.2f} before, {:.2f} {:.2f} {:.2f} after".format(
            *load0, *load1
        )
    )
    await asyncio.gather(*(p.close() for p in [*queue_conns, *seats]), return_exceptions=True)


def _worker_codes(server: RaceServer) -> list[str | None]:
    if server.workers <= 1:
        return [None]
    from solrace.bench.load_procs import worker_codes

    return list(worker_codes(server.workers))


async def run(args: argparse.Namespace, server: RaceServer) -> None:
    url = server.ws_url
    print(
        f"server: {server.workers} process(es){' behind a front' if server.workers > 1 else ''}; "
        "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    )
    if "pair" in args.scenario:
        await pairs(url, args.delays, args.repeats)
    if "crowd" in args.scenario:
        await crowd(url, server, args.players)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench quick", description=__doc__)
    parser.add_argument(
        "--scenario", nargs="+", choices=["pair", "crowd"], default=["pair", "crowd"]
    )
    parser.add_argument("--players", type=int, default=1000, help="the crowd's size")
    parser.add_argument("--delays", type=float, nargs="+", default=[0.0, 1.0, 2.0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1, help="solrace serve --workers N")
    parser.add_argument(
        "--redis-url", help="a Redis to use (a unique key prefix); default: one of its own"
    )
    args = parser.parse_args(argv)
    prefix = f"bench-quick-{uuid.uuid4().hex[:8]}:"
    extra = ["--exempt", "127.0.0.1"]
    with tempfile.TemporaryDirectory() as work:
        if args.redis_url:
            with RaceServer(Path(work), args.redis_url, prefix, extra, args.workers) as server:
                asyncio.run(run(args, server))
            return 0
        with (
            RedisProcess() as redis,
            RaceServer(Path(work), redis.url, prefix, extra, args.workers) as server,
        ):
            asyncio.run(run(args, server))
    return 0
