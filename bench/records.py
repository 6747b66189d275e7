"""`solrace bench records`: how many bytes a race record takes (issue 13: <= 2 KiB for an
8-player Klondike race), what packing and unpacking it costs, and (`--redis N`) how much Redis
memory N records with their players' histories take.

Each race is played by the room rules themselves (server/rules/room.py, no network): N seats on one
deal, each a bot (client/strategy.py, its own tie-break generator, and a share `--noise` of
its moves a random legal move instead, so that the seats play apart as people do), each move
timed a human-like pause after the last (log-normal, median `--pause` seconds). The record is
built and packed exactly as the server stores it (server/league/records.py), in the stored form of
now (2) and, in the same run, the first form (1: moves as text) as the baseline.

`--redis N`: a Redis of its own (a child process on a free port, gone afterwards) gets N
records written as the server writes them (`Records.save`: the record, and each keyed
player's history and entry), their values the packed races of the size run (each record its
own id; 8 players drawn from a pool of N / 5 player ids, so a player has about 40 races), and
INFO memory is read before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import statistics
import time
from typing import Any

from solrace.client.moves import Board
from solrace.client.strategy import choose_move
from solrace.protocol.record_text import export
from solrace.protocol.records import pack, unpack
from solrace.server.league.players import key_hash, player_id
from solrace.server.league.records import Records, build_record
from solrace.server.rules.room import Room, token_hash

T0 = 1_795_350_000_000
MOVE_CAP = 400
KLONDIKE_SETS = (
    {"draw": 1, "moves": "top"},
    {"draw": 1, "moves": "build"},
    {"draw": 3, "moves": "build"},
)


def race(
    game: str, options: dict[str, Any], seed: int, seats: int, noise: float, pause: float
) -> Room:
    room = Room.new("BENCH", token_hash("host"), {"game": game, "game_options": options}, T0)
    for i in range(seats):
        # a player id as the server makes them (random-looking: they do not compress)
        pid = player_id(key_hash(f"key of player {i} in race {seed}"))
        room.join(f"player{i}", token_hash(f"t{i}"), T0, player=pid)
    room.start(T0, seed, random.Random(seed).randbytes(16))
    now = room.doc["starts_at"]
    room.tick(now)
    for seat in range(seats):
        rng = random.Random(seed * 100 + seat)
        game_ = room.races[seat].game
        at = now  # each seat starts at the start
        history: list[str] = []
        seen: set[tuple[Any, ...]] = set()
        while room.status(seat) == "racing" and len(history) < MOVE_CAP:
            view = game_.view()
            if rng.random() < noise:
                move: str | None = str(rng.choice(game_.legal_moves()))
            else:
                move = choose_move(view, history, seen, rng=rng)
            if move is None:
                break
            seen.add(Board.from_view(view).key())
            at += max(80, int(rng.lognormvariate(0, 0.7) * pause * 1000))
            room.play(seat, move, None, at)
            history.append(move)
        if room.status(seat) == "racing":
            room.resign(seat, at)
    room.finish_if_done(max([now] + [e.at for r in room.races.values() for e in r.entries]))
    return room


def cpu_us(fn: Any, *args: Any, repeat: int = 3) -> float:
    """The best of `repeat` CPU times of one call, in µs (process time: other load on the
    machine slows it less than wall time)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - t)
    return best * 1e6


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def measure(game: str, options: dict[str, Any], args: argparse.Namespace) -> list[bytes]:
    """One option set over seeds 1..N: sizes (form 2, form 1), CPU; the packed records."""
    rows: dict[str, list[float]] = {
        k: [] for k in ("moves", "v2", "v1", "text", "pack", "unpack", "pack1", "unpack1")
    }
    packed = []
    for seed in range(1, args.seeds + 1):
        record = build_record(race(game, options, seed, args.seats, args.noise, args.pause))
        data, old = pack(record), pack(record, 1)
        assert unpack(data) == record and unpack(old) == record
        packed.append(data)
        rows["moves"].append(sum(len(m) for m in record["moves"].values()))
        rows["v2"].append(len(data))
        rows["v1"].append(len(old))
        rows["text"].append(len(export(record)))
        rows["pack"].append(cpu_us(pack, record))
        rows["unpack"].append(cpu_us(unpack, data))
        rows["pack1"].append(cpu_us(pack, record, 1))
        rows["unpack1"].append(cpu_us(unpack, old))
        if args.verbose:
            print(f"  seed {seed}: {rows['moves'][-1]} moves, {len(data)} B (form 1: {len(old)} B)")
    med = {k: statistics.median(v) for k, v in rows.items()}
    ratio = statistics.median(a / b for a, b in zip(rows["v2"], rows["v1"], strict=True))
    print(
        f"{game} {options or ''} x{args.seats}, {args.seeds} races, moves {med['moves']:.0f} "
        f"({min(rows['moves']):.0f}-{max(rows['moves']):.0f}):\n"
        f"  form 2: median {med['v2']:.0f} B, p90 {pct(rows['v2'], 0.9):.0f}, "
        f"max {max(rows['v2']):.0f}, {med['v2'] / med['moves']:.2f} B a move, "
        f"over 2048 B: {sum(v > 2048 for v in rows['v2'])}\n"
        f"  form 1: median {med['v1']:.0f} B, p90 {pct(rows['v1'], 0.9):.0f}, "
        f"max {max(rows['v1']):.0f}; form 2 / form 1 median {ratio:.3f}; "
        f"text file median {med['text']:.0f} B\n"
        f"  CPU per record (median of best-of-3): pack {med['pack']:.0f} µs "
        f"(form 1 {med['pack1']:.0f}), unpack {med['unpack']:.0f} µs (form 1 {med['unpack1']:.0f})",
        flush=True,
    )
    return packed


async def redis_memory(count: int, packed: list[bytes], seats: int) -> None:
    """`count` records (and their players' histories) into a Redis of its own: bytes each."""
    import redis.asyncio as aioredis
    from solrace.server.store.redis_process import RedisProcess

    with RedisProcess() as server:
        client = aioredis.Redis.from_url(server.url)
        records = Records(client, "bench:", days=90)
        rng = random.Random(1)
        pool = [player_id(key_hash(f"key {i}")) for i in range(max(seats, count // 5))]
        before = await client.info("memory")
        todo = iter(range(count))

        async def worker() -> None:
            """Records as `Records.save` writes them, 50 to a pipeline (fewer round trips)."""
            batch = list(itertools.islice(todo, 50))
            while batch:
                pipe = client.pipeline(transaction=False)
                for i in batch:
                    pids = rng.sample(pool, seats)
                    players = [{"player": pid, "name": f"name{pid[-4:]}"} for pid in pids]
                    rec = {"id": f"{i:016x}", "finished_at": T0 + i * 1000, "players": players}
                    records.queue(pipe, rec, packed[i % len(packed)])
                await pipe.execute()
                batch = list(itertools.islice(todo, 50))

        t = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(8)))
        after = await client.info("memory")
        keys = await client.dbsize()
        used = after["used_memory"] - before["used_memory"]
        value = statistics.mean(len(packed[i % len(packed)]) for i in range(count))
        print(
            f"Redis: {count} records "
            f"(values {value:.0f} B on average), {len(pool)} players, {keys} keys, "
            f"written in {time.monotonic() - t:.0f} s:\n"
            f"  used_memory +{used / 1e6:.1f} MB = {used / count:.0f} B a record "
            f"(with its share of histories and player entries); "
            f"used_memory_rss +{(after['used_memory_rss'] - before['used_memory_rss']) / 1e6:.1f} MB",
            flush=True,
        )
        await client.aclose()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="solrace bench records", description=__doc__)
    parser.add_argument("--game", action="append", help="games (default: all)")
    parser.add_argument("--seats", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=20, help="races per option set (seeds 1..N)")
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--pause", type=float, default=1.5, help="median seconds between moves")
    parser.add_argument(
        "--sets", type=int, default=len(KLONDIKE_SETS), help="Klondike option sets (the first N)"
    )
    parser.add_argument("--redis", type=int, default=0, metavar="N", help="records to write")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    games = args.game or ["klondike", "puttputt", "tabbycat", "manx", "leapyear"]
    print(
        f"{args.seats}-player races, noise {args.noise}, median pause {args.pause} s; "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
        flush=True,
    )
    default: list[bytes] = []
    for game in games:
        for options in KLONDIKE_SETS[: args.sets] if game == "klondike" else ({},):
            packed = measure(game, options, args)
            if not default:
                default = packed  # the first: Klondike's room defaults
    if args.redis:
        asyncio.run(redis_memory(args.redis, default, args.seats))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0
