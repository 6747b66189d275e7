"""A/B of Redis clients on the move path: CPU per stored move, in this process and in Redis.

    python -m solrace.bench.redis_clients [--movers 200] [--seconds 3] [--repeats 3]
                                          [--work-us 100] [--only redispy,redispy-tick,...]

Every option runs the server's own `Store.append` (the Lua script that stores one move, with
the store's own keys and arguments) against a private redis-server, with `--movers` coroutines
each playing one seat as fast as its stores return, like the throughput scenario's bots; the
options differ only in how the store's script call reaches Redis (the store's `batcher`).
Before each store a mover burns `--work-us` of CPU (the rest of a move's work in the server:
decode, engine, ack): without it every reply wakes every mover in the same turn and batches
are far larger than a real server's. That work is measured and subtracted, so the figures are
the store's cost per move with each client.

Options:
* `redispy`: redis-py as the server used it: one EVALSHA per move on a BlockingConnectionPool;
* `redispy-tick`: redis-py, one non-transactional pipeline per loop turn: the server's own
  `server/store/batch.py` Batcher, as the store uses it;
* `coredis`, `coredis-tick`: coredis (anyio-based, multiplexed connections), per move / per turn;
* `glide`, `glide-tick`: valkey-glide (a Rust core over FFI), per move / a Batch per turn;
  (these two need `pip install coredis valkey-glide`; they are skipped when absent);
* `resp-tick`: a minimal RESP connection on hiredis's Reader, one write per turn: the floor
  a client could reach, for reference only (it handles no reconnection, no cluster).

Options run in rotation within each repeat (so a change in the machine's load hits them all),
and each prints CPU µs per stored move: this process (`client`, with its Rust threads for
glide) and the Redis process (`redis`, from INFO cpu), plus moves per second.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

import redis.asyncio as aioredis
from solrace.server.store.batch import Batcher
from solrace.server.store.redis_process import RedisProcess
from solrace.server.store.store import Store

OPTIONS = ("redispy", "redispy-tick", "coredis", "coredis-tick", "glide", "glide-tick", "resp-tick")


def burn(us: float) -> float:
    """Spend about `us` microseconds of CPU; returns the CPU seconds actually spent."""
    t0 = time.thread_time()
    end = t0 + us / 1e6
    while time.thread_time() < end:
        pass
    return time.thread_time() - t0


class Seat:
    """One mover's seat: its room, its log's length and revision as the last store left them."""

    def __init__(self, room: int, seat: int) -> None:
        self.code = f"B{room:04d}"
        self.seat = seat
        self.length = 0
        self.rev = 0
        self.event = {"kind": "progress", "at": 0, "seat": seat, "moves": 1, "home": 1}

    async def store(self, store: Store) -> None:
        stored = await store.append(
            self.code, 1, self.seat, self.length, self.rev, "t1-f1 1795350891437", self.event
        )
        self.length, self.rev = stored.length, stored.rev


# --- per-turn batching, generic over how a batch is sent ----------------------------------

Call = tuple[Sequence[Any], Sequence[Any]]


def _b(value: Any) -> bytes:
    """A script argument as bytes (clients that take nothing else)."""
    if isinstance(value, bytes):
        return value
    return str(value).encode()


class TurnBatcher:
    """Collects the calls of one loop turn and sends them with `send_batch` at its end (the
    same scheme as server/store/batch.py, for the clients other than redis-py)."""

    def __init__(self, send_batch: Callable[[list[Call]], Awaitable[list[Any]]]) -> None:
        self.send_batch = send_batch
        self.queue: list[tuple[Call, asyncio.Future[Any]]] = []
        self.scheduled = False
        self.tasks: set[asyncio.Task[None]] = set()

    async def call(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.queue.append(((keys, args), fut))
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)
        return await fut

    def _flush(self) -> None:
        self.scheduled = False
        batch, self.queue = self.queue, []
        task = asyncio.ensure_future(self._send(batch))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, batch: list[tuple[Call, asyncio.Future[Any]]]) -> None:
        try:
            replies = await self.send_batch([c for c, _ in batch])
        except Exception as exc:
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc)
            return
        for (_, fut), reply in zip(batch, replies, strict=True):
            if not fut.done():
                fut.set_result(reply)


class Via:
    """Stands in for the store's batcher: the store's script call, sent by `call`."""

    def __init__(self, call: Callable[[Sequence[Any], Sequence[Any]], Awaitable[Any]]) -> None:
        self.call = call

    async def evalsha(self, script: Any, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        return await self.call(keys, args)


# --- the options: each gives the store its way of sending the append script ----------------


def _pool(stack: AsyncExitStack, url: str) -> aioredis.Redis:
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=64, timeout=20)
    r = aioredis.Redis.from_pool(pool)
    stack.push_async_callback(r.aclose)
    return r


async def opt_redispy(stack: AsyncExitStack, url: str, source: str) -> Any:
    """One EVALSHA per move, through redis-py's Script (what the store did before)."""
    script = _pool(stack, url).register_script(source)

    async def call(keys: Sequence[Any], args: Sequence[Any]) -> Any:
        return await script(keys=keys, args=args)

    return Via(call)


async def opt_redispy_tick(stack: AsyncExitStack, url: str, source: str) -> Any:
    """The server's own batcher (server/store/batch.py) on the server's own kind of pool."""
    return Batcher(_pool(stack, url))


def _sha(source: str) -> str:
    import hashlib

    return hashlib.sha1(source.encode()).hexdigest()


async def opt_coredis(stack: AsyncExitStack, url: str, source: str) -> Any:
    import coredis

    client = coredis.Redis.from_url(url)
    await stack.enter_async_context(client)
    sha = _sha(source)

    async def call(keys: Sequence[Any], args: Sequence[Any]) -> Any:
        return await client.evalsha(sha, keys=keys, args=args)

    return Via(call)


async def opt_coredis_tick(stack: AsyncExitStack, url: str, source: str) -> Any:
    import coredis

    client = coredis.Redis.from_url(url)
    await stack.enter_async_context(client)
    sha = _sha(source)

    async def send(batch: list[Call]) -> list[Any]:
        async with client.pipeline(transaction=False) as pipe:
            results = [pipe.evalsha(sha, keys=keys, args=args) for keys, args in batch]
        return [await r for r in results]

    return Via(TurnBatcher(send).call)


async def _glide(stack: AsyncExitStack, url: str) -> Any:
    from glide import GlideClient, GlideClientConfiguration, NodeAddress

    host, port = url.split("//", 1)[1].split("/")[0].split(":")
    client = await GlideClient.create(GlideClientConfiguration([NodeAddress(host, int(port))]))
    stack.push_async_callback(client.close)
    return client


def _evalsha(sha: str, keys: Sequence[Any], args: Sequence[Any]) -> list[bytes]:
    return [b"EVALSHA", sha.encode(), b"%d" % len(keys), *map(_b, keys), *map(_b, args)]


async def opt_glide(stack: AsyncExitStack, url: str, source: str) -> Any:
    client = await _glide(stack, url)
    sha = _sha(source)

    async def call(keys: Sequence[Any], args: Sequence[Any]) -> Any:
        return await client.custom_command(_evalsha(sha, keys, args))

    return Via(call)


async def opt_glide_tick(stack: AsyncExitStack, url: str, source: str) -> Any:
    from glide import Batch

    client = await _glide(stack, url)
    sha = _sha(source)

    async def send(batch: list[Call]) -> list[Any]:
        b = Batch(is_atomic=False)
        for keys, args in batch:
            b.custom_command(_evalsha(sha, keys, args))
        return list(await client.exec(b, raise_on_error=True) or [])

    return Via(TurnBatcher(send).call)


class RespProtocol(asyncio.Protocol):
    """The floor: RESP written once per turn, replies parsed by hiredis, in order."""

    def __init__(self) -> None:
        import hiredis

        self.reader = hiredis.Reader()
        self.waiting: list[asyncio.Future[Any]] = []
        self.head = 0

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            fut = self.waiting[self.head]
            self.head += 1
            if not fut.done():
                fut.set_result(reply)
        if self.head > 1024:
            del self.waiting[: self.head]
            self.head = 0


def resp(parts: list[bytes]) -> bytes:
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        out.append(b"$%d\r\n%s\r\n" % (len(p), p))
    return b"".join(out)


async def opt_resp_tick(stack: AsyncExitStack, url: str, source: str) -> Any:
    host, port = url.split("//", 1)[1].split("/")[0].split(":")
    loop = asyncio.get_running_loop()
    transport, proto = await loop.create_connection(RespProtocol, host, int(port))
    stack.callback(transport.close)
    sha = _sha(source)

    async def send(batch: list[Call]) -> list[Any]:
        futs = [loop.create_future() for _ in batch]
        proto.waiting.extend(futs)
        transport.write(b"".join(resp(_evalsha(sha, k, a)) for k, a in batch))
        return [await f for f in futs]

    return Via(TurnBatcher(send).call)


FACTORIES: dict[str, Callable[[AsyncExitStack, str, str], Awaitable[Any]]] = {
    "redispy": opt_redispy,
    "redispy-tick": opt_redispy_tick,
    "coredis": opt_coredis,
    "coredis-tick": opt_coredis_tick,
    "glide": opt_glide,
    "glide-tick": opt_glide_tick,
    "resp-tick": opt_resp_tick,
}


# --- running --------------------------------------------------------------------------------


async def redis_cpu(r: aioredis.Redis) -> float:
    info = await r.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def run_one(
    name: str, url: str, movers: int, seconds: float, work_us: float, prefix: str
) -> dict[str, float]:
    admin = aioredis.from_url(url)
    store = Store(admin, prefix)
    await admin.script_load(store._append.script)
    seats = [Seat(i // 8, i % 8) for i in range(movers)]
    for code in {s.code for s in seats}:
        await admin.hset(store.key(code, "meta"), "ver", 1)
    stop = False
    count = 0
    work = 0.0
    errors: list[str] = []

    async def mover(seat: Seat) -> None:
        nonlocal count, work
        while not stop:
            work += burn(work_us)
            try:
                await seat.store(store)
            except Exception as exc:
                errors.append(repr(exc))
                await asyncio.sleep(0.01)
                continue
            count += 1

    async with AsyncExitStack() as stack:
        store.batcher = await FACTORIES[name](stack, url, store._append.script)
        tasks = [asyncio.create_task(mover(s)) for s in seats]
        await asyncio.sleep(min(1.0, seconds / 3))  # warm up: connections, script cache
        c0, w0, n0 = time.process_time(), work, count
        r0, t0 = await redis_cpu(admin), time.monotonic()
        await asyncio.sleep(seconds)
        c1, w1, n1 = time.process_time(), work, count
        r1, t1 = await redis_cpu(admin), time.monotonic()
        stop = True
        await asyncio.gather(*tasks, return_exceptions=True)
    if errors:
        print(f"  {name}: {len(errors)} stores failed, the first: {errors[0]}")
    moves = n1 - n0
    keys = [k async for k in admin.scan_iter(match=f"{prefix}*")]
    for i in range(0, len(keys), 500):
        await admin.delete(*keys[i : i + 500])
    await admin.aclose()
    return {
        "client_us": 1e6 * ((c1 - c0) - (w1 - w0)) / max(1, moves),
        "redis_us": 1e6 * (r1 - r0) / max(1, moves),
        "moves_s": moves / (t1 - t0),
    }


async def main_async(args: argparse.Namespace, url: str) -> None:
    names = [n for n in args.only.split(",") if n] if args.only else list(OPTIONS)
    for name, package in (("coredis", "coredis"), ("glide", "glide")):
        try:
            __import__(package)
        except ImportError:
            gone = [n for n in names if n.startswith(name)]
            if gone:
                print(
                    f"skipping {', '.join(gone)}: pip install {name.replace('glide', 'valkey-glide')}"
                )
            names = [n for n in names if n not in gone]
    results: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for rep in range(args.repeats):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            got = await run_one(
                name, url, args.movers, args.seconds, args.work_us, f"bench{rep}{name}:"
            )
            results[name].append(got)
            print(
                f"  repeat {rep + 1} {name:13} client {got['client_us']:6.1f} us/move  "
                f"redis {got['redis_us']:5.1f} us/move  {got['moves_s']:7.0f} moves/s",
                flush=True,
            )
    print(f"\nload average at the end: {os.getloadavg()}")
    print(
        f"{'option':13} {'client us/move':>15} {'redis us/move':>14} {'moves/s':>9}  (median of {args.repeats})"
    )
    for name in names:
        rows = results[name]
        med = {
            k: statistics.median(r[k] for r in rows) for k in ("client_us", "redis_us", "moves_s")
        }
        print(f"{name:13} {med['client_us']:15.1f} {med['redis_us']:14.1f} {med['moves_s']:9.0f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--movers", type=int, default=200)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--work-us", type=float, default=100.0)
    p.add_argument("--only", default="", help="comma-separated options (default: all)")
    p.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL"))
    args = p.parse_args(argv)
    print(f"load average at the start: {os.getloadavg()}", flush=True)
    if args.redis_url:
        asyncio.run(main_async(args, args.redis_url))
        return 0
    with tempfile.TemporaryDirectory() as tmp, RedisProcess(data_dir=tmp) as proc:
        asyncio.run(main_async(args, proc.url))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
