"""The hostile-traffic scenario of `solrace bench load` (issue 10, item 6).

A victim racer moves in its own room at a steady pace; its move-to-ack latency is measured
first with the server otherwise idle, then while hostile connections send a mix of legal-
looking and broken messages at the rate the server allows a connection in no room (`welcome`'s
`lobby_rate`): `lobby` pages, `join`s of random codes, `create`s, `resume`s with bad tokens,
undecodable frames, pings. The goal: the victim's p99 within 2x of its idle value.

Hostile connections come from many loopback addresses (127.0.1.x: on Linux all of 127/8 is the
loopback), 10 per address, so the server's per-address limits apply to them as to clients on
the internet; the victim connects from 127.0.0.1. The server runs with its default limits. A
connection the server closes (three bad frames, its address over its caps) is opened again
after a pause. The public rooms the lobby lists are made from an exempt address first.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import random
import secrets
import time
from collections import Counter
from typing import Any

from solrace.bench.load_hist import Histogram
from solrace.bench.load_policy import next_move
from solrace.client.codec import decode, encode
from solrace.protocol.messages import VERSION, acked_view
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

#: the address the lobby's public rooms are made from: exempt (the server is told so)
SEEDER = "127.0.0.9"
#: hostile connections per client address
PER_ADDRESS = 10
#: the niceness of the hostile load generators' processes
NICE = 10
#: what a hostile connection sends, by weight
MIX = [
    ("lobby", 3),
    ("join", 3),
    ("create", 1),
    ("resume", 2),
    ("bad_frame", 1),
    ("ping", 2),
]


def parse_mix(text: str) -> list[tuple[str, int]]:
    """`lobby,join:3` -> [("lobby", 1), ("join", 3)]: which kinds, by weight."""
    known = {k for k, _ in MIX}
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, weight = part.partition(":")
        if kind not in known:
            raise ValueError(f"unknown hostile message kind {kind!r} (one of {sorted(known)})")
        out.append((kind, int(weight or 1)))
    return out


def hostile_source(index: int) -> str:
    """127.0.1.1, 127.0.1.2, ...: PER_ADDRESS connections each."""
    n = index // PER_ADDRESS
    return f"127.0.{1 + n // 250}.{1 + n % 250}"


def _hostile_message(kind: str, rid: int) -> bytes:
    code = "".join(random.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(5))
    if kind == "bad_frame":
        return b"\xc1\xff garbage"
    msg: dict[str, Any] = {"type": kind, "id": rid}
    if kind == "join":
        msg.update(room=code, name="h")
    elif kind == "resume":
        msg.update(room=code, token=secrets.token_urlsafe(32))
    elif kind == "create":
        msg.update(name="h", options={"game": "puttputt"})
    elif kind == "ping":
        msg["t"] = rid
    return encode(msg)


async def _hostile_conn(
    url: str, index: int, until: float, stats: Counter[str], mix: list[tuple[str, int]]
) -> None:
    """One hostile client: connect, hello, then one message per 1/lobby_rate seconds, replies
    read and counted by kind; opened again when the server closes it."""
    source = hostile_source(index)
    kinds = [k for k, w in mix for _ in range(w)]
    while time.monotonic() < until:
        try:
            async with connect(
                url, compression=None, local_addr=(source, 0), open_timeout=10
            ) as ws:
                stats["connections"] += 1
                await ws.send(encode({"type": "hello", "version": VERSION, "id": 0}))
                welcome = decode(await ws.recv())
                if welcome.get("type") != "welcome":
                    stats[f"refused {welcome.get('limit') or welcome.get('code')}"] += 1
                    await asyncio.sleep(1.0)
                    continue
                period = 1.0 / float(welcome["limits"].get("lobby_rate", 2))
                reader = asyncio.ensure_future(_read(ws, stats))
                rid = 1
                next_t = time.monotonic() + random.random() * period
                while time.monotonic() < until and not reader.done():
                    await asyncio.sleep(max(0.0, next_t - time.monotonic()))
                    next_t += period
                    kind = random.choice(kinds)
                    rid += 1
                    await ws.send(_hostile_message(kind, rid))
                    stats[f"sent {kind}"] += 1
                reader.cancel()
        except Exception as exc:  # closed by the server, or refused: open again
            stats[f"closed {type(exc).__name__}"] += 1
            await asyncio.sleep(0.5)


async def _read(ws: ClientConnection, stats: Counter[str]) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for frame in ws:
            msg = decode(frame) if isinstance(frame, bytes) else {}
            if msg.get("type") == "error":
                limit = f" {msg['limit']}" if "limit" in msg else ""
                stats[f"error {msg['code']}{limit}"] += 1
            else:
                stats[f"reply {msg.get('type')}"] += 1
    stats[f"closed by the server {ws.close_code}"] += 1


def _hostile_worker(
    url: str, first: int, count: int, until: float, mix: list[tuple[str, int]], out: Any
) -> None:
    async def run() -> Counter[str]:
        stats: Counter[str] = Counter()
        await asyncio.gather(
            *(_hostile_conn(url, first + i, until, stats, mix) for i in range(count))
        )
        return stats

    # attackers on the internet spend their own CPU, not the server's: on this 2-core machine
    # the crowd runs niced, so that it takes what the server and the victim leave
    os.nice(NICE)
    stats = asyncio.run(run())
    stats["cpu seconds"] = int(time.process_time())
    out.put(dict(stats))


class Hostiles:
    """Hostile connections in `procs` processes, running until `until` (time.monotonic)."""

    def __init__(
        self, url: str, count: int, procs: int, until: float, mix: list[tuple[str, int]]
    ) -> None:
        ctx = mp.get_context("spawn")
        self.out = ctx.Queue()
        share = [count // procs + (1 if i < count % procs else 0) for i in range(procs)]
        firsts = [sum(share[:i]) for i in range(procs)]
        self.procs = [
            ctx.Process(target=_hostile_worker, args=(url, f, n, until, mix, self.out), daemon=True)
            for f, n in zip(firsts, share, strict=True)
        ]
        for p in self.procs:
            p.start()

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.pid is not None]

    def join(self, timeout: float) -> Counter[str]:
        total: Counter[str] = Counter()
        for _ in self.procs:
            total.update(self.out.get(timeout=timeout))
        for p in self.procs:
            p.join(5)
        return total


# --- the victim -------------------------------------------------------------------------------


class Victim:
    """A racer alone in a Klondike room (unlimited passes: the race lasts), moving at `pace`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ws: ClientConnection | None = None
        self.view: dict[str, Any] | None = None
        self.n = 0
        self.errors: Counter[str] = Counter()

    async def open(self) -> None:
        from solrace.bench.load import room_options

        self.ws = await connect(self.url, compression=None, max_size=1 << 22)
        await self._request({"type": "hello", "version": VERSION})
        made = await self._request(
            {"type": "create", "name": "victim", "options": room_options("klondike", 1)}
        )
        started = await self._request({"type": "start", "host_token": made["host_token"]})
        assert started["type"] == "ok", started

    async def _request(self, msg: dict[str, Any]) -> dict[str, Any]:
        assert self.ws is not None
        self.n_id = getattr(self, "n_id", 0) + 1
        await self.ws.send(encode({**msg, "id": self.n_id}))
        while True:
            reply = decode(await self.ws.recv())
            if reply.get("type") == "snapshot":
                you = reply["snapshot"].get("you") or {}
                self.view = you.get("view") or self.view
            if reply.get("ref") == self.n_id:
                return reply

    async def race(self, seconds: float, pace: float) -> Histogram:
        """Moves for `seconds`, one every 1/pace s; the move-to-ack latency of each."""
        hist = Histogram()
        period = 1.0 / pace
        end = time.monotonic() + seconds
        next_t = time.monotonic()
        while time.monotonic() < end:
            await asyncio.sleep(max(0.0, next_t - time.monotonic()))
            next_t += period
            if self.view is None:
                await asyncio.sleep(0.05)  # the race's start snapshot is on its way
                await self._drain()
                continue
            move = next_move("klondike", self.view)
            t = time.monotonic()
            reply = await self._request({"type": "move", "move": move, "n": self.n + 1})
            if reply["type"] == "ack":
                hist.record(time.monotonic() - t)
                self.n, self.view = reply["n"], acked_view(self.view, reply)
            else:
                self.errors[reply.get("code", "?")] += 1
                if reply.get("code") == "out_of_sync":
                    self.n = reply["expected"] - 1
        return hist

    async def _drain(self) -> None:
        assert self.ws is not None
        try:
            while True:
                reply = decode(await asyncio.wait_for(self.ws.recv(), 0.01))
                if reply.get("type") == "snapshot":
                    self.view = (reply["snapshot"].get("you") or {}).get("view") or self.view
        except TimeoutError:
            return

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


async def seed_lobby(url: str, rooms: int) -> None:
    """Public rooms for the lobby to list, made from the exempt address."""

    async def one(i: int) -> ClientConnection:
        ws = await connect(url, compression=None, local_addr=(SEEDER, 0))
        await ws.send(encode({"type": "hello", "version": VERSION, "id": 1}))
        await ws.recv()
        opts = {"game": "puttputt", "public": True}
        await ws.send(encode({"type": "create", "name": f"r{i}", "options": opts, "id": 2}))
        while decode(await ws.recv()).get("ref") != 2:
            pass
        return ws

    held = [await one(i) for i in range(rooms)]
    SEEDED.extend(held)


#: the public rooms' host connections, kept open so the rooms stay listed
SEEDED: list[ClientConnection] = []


async def victim_under_hostiles(
    url: str,
    *,
    rooms: int,
    hostiles: int,
    procs: int,
    duration: float,
    warmup: float,
    pace: float,
    mix: list[tuple[str, int]] = MIX,
    on_measure: Any = None,
) -> dict[str, Any]:
    """The victim's latency idle, then under `hostiles` connections; the hostiles' counts."""
    await seed_lobby(url, rooms)
    victim = Victim(url)
    await victim.open()
    try:
        await victim.race(warmup, pace)
        idle = await victim.race(duration, pace)
        until = time.monotonic() + warmup * 2 + duration + 2
        crowd = Hostiles(url, hostiles, procs, until, mix)
        await victim.race(warmup * 2, pace)  # the crowd connects and settles in
        if on_measure is not None:
            on_measure()  # e.g. the server's profiler, for the measured window
        t0 = time.monotonic()
        loaded = await victim.race(duration, pace)
        measured = time.monotonic() - t0
        counts = await asyncio.to_thread(crowd.join, duration + warmup * 2 + 120)
        return {
            "idle": idle,
            "loaded": loaded,
            "seconds": measured,
            "hostile": counts,
            "errors": dict(victim.errors),
        }
    finally:
        await victim.close()
        for ws in SEEDED:
            await ws.close()
        SEEDED.clear()
