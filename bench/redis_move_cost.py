"""Redis's own CPU per stored move, for ways the move's Redis work could be written.

    setsid python -m solrace.bench.redis_move_cost [--per-turn 64] [--moves 40000] [--repeats 3]
                                                  [--only script5,script3,...]

A private redis-server gets `--moves` moves of 8 rooms of 8 seats, `--per-turn` of them in
each pipeline (the batcher's turn: 64 when every bot is in one process, a few when the
server's connections arrive one by one), each variant on fresh keys; Redis's CPU (its
process, from /proc) is divided by the moves. Nothing of the server runs: this is the floor
each way of storing a move puts under Redis, to choose between them.

Variants:
* `script5`: the lease holder's lean script as it was before 2026-11-27 (`HMGET` of the
  fence, `RPUSH`, `HINCRBY` of the revision, `INCR` of the event counter, `XADD`);
* `script3`: `HMGET`, `XADD` numbered by the holder (trimmed exactly, `MAXLEN` 1000), `RPUSH`;
* `lazy3`: the lean script (lua/owned.lua, still the holder's store of a move while another
  process listens to the room): `script3` with the stream trimmed once every 16 events
  (`XTRIM`) instead of on every `XADD`;
* `tail1`: as it is now (`Store.append_native`, lua/tail.lua): ONE native command a move,
  `XADD tail NOMKSTREAM <n>-0 s o m d` to the holder's tail, and the fold script (the
  package's own) every FOLD_EVERY events of a room, which moves the tail's entries into the
  seat logs and the room's stream;
* `script1`: a script of the fence's read and `RPUSH` alone (what a script costs as such);
* `native2`: `RPUSH` and `XADD` as two native commands (no fence);
* `rpush`, `xadd`: one native command (`RPUSH` is Colyseus's whole store of a move).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

import redis
from solrace.bench.load_procs import cpu_seconds
from solrace.server.store.base import ACTIVE_TTL_MS
from solrace.server.store.scripts import FOLD_EVERY, folding

ROOMS, SEATS, MAXLEN = 8, 8, 1000
FENCE = "local fence = redis.call('HMGET', KEYS[1], 'sync', 'epoch', 'here', 'watching')\n"
REFUSE = "if fence[1] ~= ARGV[1] or fence[2] ~= ARGV[2] then return {-5, 0} end\n"
SCRIPTS = {
    "script5": FENCE
    + REFUSE
    + """local len = redis.call('RPUSH', KEYS[2], ARGV[3])
local rev = redis.call('HINCRBY', KEYS[3], ARGV[5], 1)
local n = redis.call('INCR', KEYS[4])
redis.call('XADD', KEYS[5], 'MAXLEN', 1000, n .. '-0', 'd', ARGV[4])
return {len, rev, n, tonumber(fence[4])}
""",
    "script3": FENCE
    + REFUSE
    + """local n = tonumber(ARGV[6])
redis.call('XADD', KEYS[5], 'MAXLEN', 1000, n .. '-0', 'd', ARGV[4])
local len = redis.call('RPUSH', KEYS[2], ARGV[3])
return {len, 0, n, tonumber(fence[4])}
""",
    "lazy3": FENCE
    + REFUSE
    + """local n = tonumber(ARGV[6])
redis.call('XADD', KEYS[5], n .. '-0', 'd', ARGV[4])
if n % 16 == 0 then redis.call('XTRIM', KEYS[5], 'MAXLEN', 1000) end
local len = redis.call('RPUSH', KEYS[2], ARGV[3])
return {len, 0, n, tonumber(fence[4])}
""",
    "script1": FENCE + REFUSE + "return redis.call('RPUSH', KEYS[2], ARGV[3])\n",
}
VARIANTS = ("script5", "script3", "lazy3", "tail1", "script1", "native2", "rpush", "xadd")


def _keys(room: int, seat: int) -> list[str]:
    p = f"bench:room:{{R{room}}}:"
    return [p + "fence", p + f"log:{seat}", p + "revs", p + "seq", p + "events"]


def _trial(r: redis.Redis, pid: int, variant: str, shas: dict[str, str], args: Any) -> float:
    """Redis CPU µs per move for one variant on fresh keys."""
    for key in r.scan_iter(match="bench:*"):
        r.delete(key)
    for room in range(ROOMS):
        r.hset(_keys(room, 0)[0], mapping={"sync": 1, "epoch": 1, "here": "", "watching": 0})
    last = dict.fromkeys(range(ROOMS), 0)
    event = os.urandom(60)
    store: Callable[[Any, list[str], bytes, int, int], None]
    if variant == "tail1":
        fold = shas["fold"]
        for room in range(ROOMS):
            tail = _keys(room, 0)[0][: -len("fence")] + "tail:1"
            r.xadd(tail, {"h": 1}, id="0-1")
            r.xtrim(tail, maxlen=0)

        def store(p: Any, k: list[str], entry: bytes, seat: int, n: int) -> None:
            tail = k[0][: -len("fence")] + "tail:1"
            p.execute_command(
                "XADD", tail, "NOMKSTREAM", b"%d-0" % n, "s", seat, "o", "p", "m", entry, "d", event
            )
            if n % FOLD_EVERY == 0:
                p.evalsha(fold, 1, k[0])

    elif variant in SCRIPTS:
        sha = shas[variant]

        def store(p: Any, k: list[str], entry: bytes, seat: int, n: int) -> None:
            p.evalsha(sha, 5, *k, 1, 1, entry, event, seat, n)

    elif variant == "native2":

        def store(p: Any, k: list[str], entry: bytes, seat: int, n: int) -> None:
            p.rpush(k[1], entry)
            p.xadd(k[4], {"d": event}, id=f"{n}-0", maxlen=MAXLEN, approximate=False)

    elif variant == "rpush":

        def store(p: Any, k: list[str], entry: bytes, seat: int, n: int) -> None:
            p.rpush(k[1], entry)

    else:

        def store(p: Any, k: list[str], entry: bytes, seat: int, n: int) -> None:
            p.xadd(k[4], {"d": event}, id=f"{n}-0", maxlen=MAXLEN, approximate=False)

    cpu0, done = cpu_seconds(pid), 0
    while done < args.moves:
        p = r.pipeline(transaction=False)
        for _ in range(args.per_turn):
            room, seat = random.randrange(ROOMS), random.randrange(SEATS)
            last[room] += 1
            store(p, _keys(room, seat), b"t3-f4 %d" % (1764190000000 + done), seat, last[room])
            done += 1
        p.execute()
    return (cpu_seconds(pid) - cpu0) / done * 1e6


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m solrace.bench.redis_move_cost", description=__doc__)
    p.add_argument("--per-turn", type=int, default=64, help="moves per pipeline")
    p.add_argument("--moves", type=int, default=40000, help="moves per trial")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", help="variants, comma-separated: " + ",".join(VARIANTS))
    args = p.parse_args(argv)
    variants = args.only.split(",") if args.only else list(VARIANTS)
    with tempfile.TemporaryDirectory() as data:
        sock = os.path.join(data, "redis.sock")
        server = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--dir", data],
            stdout=subprocess.DEVNULL,
        )
        try:
            r = redis.Redis(unix_socket_path=sock)
            for _ in range(100):
                try:
                    r.ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            shas = {name: str(r.script_load(text)) for name, text in SCRIPTS.items()}
            shas["fold"] = str(r.script_load(folding("fold", MAXLEN, ACTIVE_TTL_MS)))
            figures: dict[str, list[float]] = {v: [] for v in variants}
            for _ in range(args.repeats):
                for v in variants:  # in rotation: a change in the machine's load hits them all
                    figures[v].append(_trial(r, server.pid, v, shas, args))
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"Redis CPU per move, {args.per_turn} moves a pipeline (load average {load}):")
            for v, xs in figures.items():
                each = " ".join(f"{x:5.1f}" for x in xs)
                print(f"  {v:8s} median {statistics.median(xs):5.1f} us  ({each})")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
