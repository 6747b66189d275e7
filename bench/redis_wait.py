"""What `WAIT 1` after each turn's writes would cost: a master and its replica, side by side.

    setsid python -m solrace.bench.redis_wait [--per-turn 1,8,64] [--moves 20000] [--repeats 3]
        [--wait-ms 1000]

Why: replication is asynchronous, so a master killed between acknowledging a move and
sending it to its replica loses that move (docs/OPERATIONS.md, "When Redis fails over").
`WAIT 1 <ms>` sent after a write, on the same connection, returns once a replica has
acknowledged everything that connection wrote: a move acked only after it would survive a
master's death. This measures the price before anyone builds it.

A private master and replica (Debian's redis-server, loopback) get `--moves` moves, each the
move path's one native command (`XADD tail NOMKSTREAM`, as `Store.append_native`), in
pipelines of `--per-turn` (the batcher's turn: 1 when moves come paced, one a turn; 64 when
a process's connections all move at once), each pipeline with and without a trailing
`WAIT 1 1000` (`--wait-ms`: how long a WAIT waits for the replica at most), in rotation. Per
move: the master's and the replica's CPU (from /proc), this client's CPU (what the server's
process would pay), and a pipeline's wall time p50 / p99 (what a mover waits for the ack).
Nothing of the server runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import redis
from solrace.bench.load_procs import cpu_seconds
from solrace.server.store.redis_process import RedisProcess

ROOMS = 8


def _replica_up(replica: redis.Redis) -> bool:
    info = replica.info("replication")
    return bool(info.get("role") == "slave" and info.get("master_link_status") == "up")


def _trial(
    r: redis.Redis, pids: tuple[int, int], per_turn: int, moves: int, wait: int
) -> dict[str, Any]:
    """One run of `moves` moves, each pipeline followed by `WAIT 1 wait` (ms; 0: no WAIT);
    CPU µs per move (master, replica, client), wall ms per turn."""
    event = os.urandom(60)
    tails = [f"bench:wait:{{R{room}}}:tail" for room in range(ROOMS)]
    for tail in tails:
        r.delete(tail)
        r.xadd(tail, {"h": 1}, id="0-1")
    last = dict.fromkeys(range(ROOMS), 1)
    walls: list[float] = []
    short = 0
    master0, replica0, client0 = cpu_seconds(pids[0]), cpu_seconds(pids[1]), time.process_time()
    done = 0
    while done < moves:
        p: Any = r.pipeline(transaction=False)  # redis-py types its pipeline's commands loosely
        for _ in range(per_turn):
            room = done % ROOMS
            last[room] += 1
            p.execute_command(
                "XADD", tails[room], "NOMKSTREAM", b"%d-0" % last[room],
                "s", done % 8, "o", "p", "m", b"t3-f4 %d" % done, "d", event,
            )  # fmt: skip
            done += 1
        if wait:
            p.execute_command("WAIT", 1, wait)
        t0 = time.perf_counter()
        replies = p.execute()
        walls.append(time.perf_counter() - t0)
        if wait and replies[-1] < 1:
            short += 1
    client = time.process_time() - client0
    master, replica = cpu_seconds(pids[0]) - master0, cpu_seconds(pids[1]) - replica0
    walls.sort()
    return {
        "master_us": master / done * 1e6,
        "replica_us": replica / done * 1e6,
        "client_us": client / done * 1e6,
        "p50_ms": walls[len(walls) // 2] * 1e3,
        "p99_ms": walls[int(len(walls) * 0.99)] * 1e3,
        "short": short,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m solrace.bench.redis_wait", description=__doc__)
    p.add_argument("--per-turn", default="1,8,64", help="moves per pipeline, comma-separated")
    p.add_argument("--moves", type=int, default=20000, help="moves per trial")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--wait-ms",
        type=int,
        default=1000,
        help="how long each WAIT waits for the replica at most (a WAIT that runs out is counted short)",
    )
    args = p.parse_args(argv)
    if args.wait_ms < 1:  # WAIT's 0 waits for ever, and _trial's 0 means no WAIT
        p.error("--wait-ms must be at least 1")
    # no wait for more replicas before the first sync (Redis waits 5 s by default)
    master = RedisProcess(extra_args=["--repl-diskless-sync-delay", "0"]).start()
    replica = RedisProcess(extra_args=["--replicaof", master.host, str(master.port)]).start()
    try:
        assert master.proc is not None and replica.proc is not None
        pids = (master.proc.pid, replica.proc.pid)
        r = redis.Redis(host=master.host, port=master.port)
        watch = redis.Redis(host=replica.host, port=replica.port)
        deadline = time.monotonic() + 30
        while not _replica_up(watch):
            assert time.monotonic() < deadline, "the replica did not come up"
            time.sleep(0.05)
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"WAIT 1 after each pipeline against none (load average {load} at the start):")
        for per_turn in (int(x) for x in args.per_turn.split(",")):
            rows: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
            for _ in range(args.repeats):
                for wait in (False, True):  # in rotation: a change in the load hits both
                    rows[wait].append(
                        _trial(r, pids, per_turn, args.moves, args.wait_ms if wait else 0)
                    )
            for wait, runs in rows.items():
                med = {k: statistics.median(run[k] for run in runs) for k in runs[0]}
                print(
                    f"  {per_turn:3d} a turn, {'WAIT 1' if wait else 'no WAIT'}:"
                    f" master {med['master_us']:5.1f} us, replica {med['replica_us']:5.1f} us,"
                    f" client {med['client_us']:5.1f} us a move;"
                    f" a turn p50 {med['p50_ms']:.3f} ms, p99 {med['p99_ms']:.3f} ms"
                    + (f"; WAIT short of a replica {sum(x['short'] for x in runs)}" if wait else "")
                )
        r.close()
        watch.close()
    finally:
        replica.stop()
        master.stop()


if __name__ == "__main__":
    main()
