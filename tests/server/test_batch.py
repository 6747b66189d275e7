"""The move path's per-turn pipeline (server/store/batch.py) on real Redis servers: one Redis, a
Redis that goes away and comes back, and a Redis Cluster whose slots move under it (MOVED and
ASK redirections). No mocks: every failure here is a real server's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from helpers.race import until
from helpers.timing import scaled
from redis.exceptions import ResponseError
from solrace.server.store.batch import Batcher
from solrace.server.store.redis_conn import connect
from solrace.server.store.redis_process import RedisClusterProcess, RedisProcess

#: these tests wait on real time (Redis away and back): one at a time (tests/conftest.py)
pytestmark = pytest.mark.timing

#: a script that answers with its key's new count, or fails when asked to
COUNT = """
if ARGV[1] == 'fail' then return redis.error_reply('refused') end
return redis.call('INCR', KEYS[1])
"""


def keys_in_slots(prefix: str, count: int) -> list[str]:
    """`count` keys of distinct hash tags (so distinct slots, on a cluster)."""
    return [f"{prefix}{{room{i}}}:n" for i in range(count)]


async def run_turn(batcher: Batcher, script: Any, calls: list[tuple[str, str]]) -> list[Any]:
    """Every call in the same turn of the loop; each call's own outcome (or error)."""
    return await asyncio.gather(
        *(batcher.evalsha(script, [k], [a]) for k, a in calls), return_exceptions=True
    )


# --- packing ------------------------------------------------------------------------------------


def test_hiredis_packing_is_byte_for_byte_redis_pys_own() -> None:
    from redis.exceptions import DataError
    from solrace.server.store.hiredis_packing import PackedConnection

    ours, theirs = PackedConnection(), aioredis.Connection()
    for args in [
        (
            "EVALSHA",
            "ab12",
            2,
            b"k:{A}:meta",
            "k:{A}:log:0",
            1,
            0,
            b"push",
            "t1-f1 17",
            b"\x81\xa1a",
        ),
        ("SCRIPT LOAD", "return 1"),  # a two-word command name: sent as two words
        (b"CLIENT SETNAME", b"solrace"),
        ("SET", "x", 1.5),
        ("SET", "\u00e9t\u00e9", memoryview(b"bytes")),
    ]:
        assert b"".join(ours.pack_command(*args)) == b"".join(theirs.pack_command(*args)), args
    with pytest.raises(DataError):  # what hiredis does not take goes through redis-py's checks
        ours.pack_command("SET", "x", True)


# --- one Redis --------------------------------------------------------------------------------


@pytest.fixture
async def plain(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_a_turns_calls_go_as_one_pipeline_each_with_its_own_outcome(
    plain: aioredis.Redis, key_prefix: str
) -> None:
    batcher = Batcher(plain)
    script = plain.register_script(COUNT)
    await plain.script_load(COUNT)
    keys = keys_in_slots(key_prefix, 20)
    calls = [(k, "ok") for k in keys] + [(keys[0], "fail"), (keys[0], "ok")]
    out = await run_turn(batcher, script, calls)
    assert batcher.batches == 1 and batcher.commands == len(calls)
    assert out[:20] == [1] * 20
    assert isinstance(out[20], ResponseError) and "refused" in str(out[20])
    assert out[21] == 2  # the refused call failed alone; the one after it ran in order
    # the next turn is the next pipeline
    assert await run_turn(batcher, script, [(keys[1], "ok")]) == [2]
    assert batcher.batches == 2
    await plain.delete(*keys)


async def test_a_lone_move_waits_for_company_unless_a_command_that_may_not_wait_comes(
    plain: aioredis.Redis, key_prefix: str
) -> None:
    """A spaced command (a move nothing waits for) goes at the end of its turn after a quiet
    spell; within the spacing of the last pipeline it waits, later turns' spaced commands
    join it, and a command that may not wait takes them all along at the end of its turn,
    in the order they were queued."""
    batcher = Batcher(plain, spacing=600.0)  # longer than the test: only the last sends them
    key = key_prefix + "spaced"
    try:
        first = batcher.queue(None, ("INCR", key), spaced=True)
        assert await asyncio.wait_for(first, 60) == 1
        lone = batcher.queue(None, ("INCR", key), spaced=True)
        for _ in range(5):
            await asyncio.sleep(0)  # turns of the loop go by: it waits
        company = batcher.queue(None, ("INCR", key), spaced=True)
        for _ in range(5):
            await asyncio.sleep(0)
        assert not lone.done() and not company.done() and batcher.batches == 1
        assert await asyncio.wait_for(batcher.command("INCR", key), 60) == 4
        assert (lone.result(), company.result()) == (2, 3)
        assert batcher.batches == 2 and batcher.commands == 4
    finally:
        await batcher.close()
        await plain.delete(key)


async def test_on_reply_is_told_by_the_turn_that_settles_the_call_once_each(
    plain: aioredis.Redis, key_prefix: str
) -> None:
    """`on_reply` (the move path's ack) runs inside the turn that settles its call, before
    any callback that turn's futures schedule, once for a reply and once for an error reply,
    with the call's future done."""
    batcher = Batcher(plain)
    key = key_prefix + "told"
    told: list[tuple[str, Any]] = []
    scheduled: list[str] = []

    def hear(name: str) -> Any:
        def on_reply(future: asyncio.Future[Any]) -> None:
            assert future.done()
            # inside the batcher's turn (a done callback runs outside any task)
            assert asyncio.current_task() in batcher._tasks
            told.append((name, future.exception() or future.result()))
            scheduled.append("told " + name)

        return on_reply

    try:
        ok = batcher.queue(None, ("INCR", key), on_reply=hear("ok"))
        bad = batcher.queue(None, ("HGET", key, "x"), on_reply=hear("bad"))  # WRONGTYPE
        ok.add_done_callback(lambda _: scheduled.append("callback"))
        await asyncio.wait([ok, bad])
        assert [name for name, _ in told] == ["ok", "bad"]
        assert told[0][1] == 1 and isinstance(told[1][1], ResponseError)
        assert scheduled[:2] == ["told ok", "told bad"]  # not a callback of a later turn
    finally:
        await batcher.close()
        await plain.delete(key)


@pytest.mark.parametrize("protocol", [2, 3])
async def test_a_turns_replies_are_parsed_by_hiredis_in_resp2_and_resp3(
    redis_url: str, key_prefix: str, protocol: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py 8 speaks RESP3 by default: the turn's replies are still read by hiredis in one
    loop, never by redis-py's `read_response` (the slow way, a coroutine a reply), and every
    kind of reply a move meets comes back as it would from redis-py."""
    client = aioredis.from_url(redis_url, protocol=protocol)
    try:

        def slow_way(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a turn's reply read by redis-py's read_response")

        batcher = Batcher(client)
        stream, missing = key_prefix + "{tail}:s", key_prefix + "{tail}:none"
        await batcher.command("DEL", stream)  # the batcher's connection made (its handshake)
        monkeypatch.setattr(aioredis.Connection, "read_response", slow_way)
        out = await asyncio.gather(
            batcher.command("XADD", stream, "5-0", "m", "a"),
            batcher.command("XADD", missing, "NOMKSTREAM", "6-0", "m", "a"),
            batcher.command("XADD", stream, "4-0", "m", "b"),
            batcher.command("HGET", missing, "epoch"),
            return_exceptions=True,
        )
        assert batcher.batches == 2
        assert out[0] == b"5-0"
        assert out[1] is None  # NOMKSTREAM on a missing stream: a stale holder's refusal
        assert isinstance(out[2], ResponseError) and "equal or smaller" in str(out[2])
        assert out[3] is None
        monkeypatch.undo()
        await client.delete(stream)
    finally:
        await client.aclose()


@pytest.mark.whitebox
async def test_on_one_redis_a_turn_after_the_first_runs_with_no_task_and_replies_in_pieces(
    plain: aioredis.Redis, key_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the batcher has a connection of its own (a `_Link`), a turn is written and its
    replies handed over in the link's callbacks, with no task: even replies that come in
    many reads (a 3 MB value, bytes of a reply in one read and the rest in later ones)
    are parsed whole, in order, each error reply in its place."""
    batcher = Batcher(plain)
    big, key = key_prefix + "big", key_prefix + "n"
    value = bytes(range(256)) * (3 * 4096)
    try:
        assert await batcher.command("SET", big, value) == b"OK"  # the link made here
        assert len(batcher._idle) == 1

        def no_task(*args: Any) -> Any:
            raise AssertionError("a turn in a task")

        monkeypatch.setattr(Batcher, "_send", no_task)
        out = await asyncio.gather(
            batcher.command("INCR", key),
            batcher.command("GET", big),
            batcher.command("HGET", key, "x"),  # WRONGTYPE: an error reply in its place
            batcher.command("GET", big),
            batcher.command("INCR", key),
            return_exceptions=True,
        )
        assert out[0] == 1 and out[4] == 2
        assert out[1] == value and out[3] == value
        assert isinstance(out[2], ResponseError) and "WRONGTYPE" in str(out[2])
        assert batcher.batches == 2 and len(batcher._idle) == 1
    finally:
        monkeypatch.undo()
        await batcher.close()
        await plain.delete(big, key)


async def test_a_link_redis_closes_is_dropped_and_the_next_turn_opens_another(
    plain: aioredis.Redis, key_prefix: str
) -> None:
    """Redis closes the batcher's idle connection (a timeout of its own, CLIENT KILL): the
    link is dropped as soon as the close is read, and the next turn opens a new one (a
    link lost during a turn fails it: test_a_lost_redis_fails_the_turns_calls_...)."""
    batcher = Batcher(plain)
    key = key_prefix + "n"
    try:
        assert await batcher.command("INCR", key) == 1
        (link,) = batcher._idle
        await plain.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        await until(lambda: not batcher._idle, "the killed link dropped")
        assert link.lost
        assert await batcher.command("INCR", key) == 2
        assert len(batcher._idle) == 1 and batcher._idle[0] is not link
    finally:
        await batcher.close()
        await plain.delete(key)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A Redis of this test's own: it is flushed, stopped and started again."""
    (tmp_path / "redis").mkdir()
    with RedisProcess(data_dir=str(tmp_path / "redis")) as proc:
        yield proc


async def test_a_script_redis_does_not_know_is_loaded_and_its_calls_sent_again(
    own_redis: RedisProcess,
) -> None:
    client = aioredis.from_url(own_redis.url)
    batcher = Batcher(client)
    script = client.register_script(COUNT)
    await client.script_flush()  # e.g. a restarted Redis, or a replica just promoted
    out = await run_turn(batcher, script, [("a", "ok"), ("b", "ok"), ("a", "ok")])
    assert out == [1, 1, 2]
    assert (await client.script_exists(script.sha)) == [True]
    await client.aclose()


async def test_a_lost_redis_fails_the_turns_calls_and_the_next_turns_reconnect(
    own_redis: RedisProcess,
) -> None:
    client = aioredis.from_url(own_redis.url, socket_connect_timeout=1)
    batcher = Batcher(client)
    script = client.register_script(COUNT)
    assert await run_turn(batcher, script, [("a", "ok")]) == [1]
    own_redis.stop()
    out = await run_turn(batcher, script, [("a", "ok"), ("b", "ok")])
    assert all(isinstance(x, redis.exceptions.ConnectionError) for x in out), out
    own_redis.start()  # the same port and data folder
    out = await run_turn(batcher, script, [("a", "ok"), ("b", "ok")])
    assert all(isinstance(x, int) for x in out), out
    await client.aclose()


#: a script that answers late (busy for 0.6 s of Redis's clock), then counts like COUNT
SLOW = """
local t0 = redis.call('TIME')
while true do
  local t = redis.call('TIME')
  if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 600000 then break end
end
return redis.call('INCR', KEYS[1])
"""


async def test_a_turn_answered_late_fails_and_its_connection_is_never_reused(
    own_redis: RedisProcess,
) -> None:
    """On one Redis the turns go on the batcher's own connections. A turn whose answer comes
    after the client's socket_timeout fails (a timeout: the service then asks for the
    move's outcome); its connection is closed, so its late answer can never be read as the
    answer to a later turn's command."""
    client = aioredis.from_url(own_redis.url, socket_timeout=0.2)
    batcher = Batcher(client)
    slow, count = client.register_script(SLOW), client.register_script(COUNT)
    await client.script_load(SLOW)
    await client.script_load(COUNT)
    out = await run_turn(batcher, slow, [("late", "ok")])
    assert isinstance(out[0], redis.exceptions.TimeoutError), out
    assert batcher._idle == []  # not kept for the next turn
    patient = aioredis.from_url(own_redis.url)  # no timeout: answers once the script is done

    async def ran() -> bool:
        # polled: under load the timeout may come before Redis has even read the script,
        # and a first GET on a new connection may then be served before it
        return bool(await patient.get("late") == b"1")

    await until(ran, "the slow script ran, late")
    await patient.aclose()
    # the slow script ran (late): the next turn's answer is its own, 2, not the stale 1
    assert await run_turn(batcher, count, [("late", "ok")]) == [2]
    assert len(batcher._idle) == 1
    await batcher.close()
    assert batcher._idle == []
    await client.aclose()


# --- a Redis Cluster whose slots move ---------------------------------------------------------


@pytest.fixture(scope="module")
def small_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisClusterProcess]:
    with RedisClusterProcess(
        str(tmp_path_factory.mktemp("batch-cluster")), masters=3, replicas=0
    ) as cluster:
        yield cluster


def node_of(cluster: RedisClusterProcess, key: str) -> tuple[redis.Redis, redis.Redis, int]:
    """(the master holding key's slot, another master, the slot), by plain clients."""
    masters = [redis.Redis(port=n.port) for n in cluster.nodes[: cluster.masters]]
    slot = int(masters[0].execute_command("CLUSTER", "KEYSLOT", key))
    for i, m in enumerate(masters):
        myid = m.execute_command("CLUSTER", "MYID").decode()
        nodes = m.execute_command("CLUSTER", "NODES").decode().splitlines()
        me = next(line for line in nodes if line.startswith(myid))
        if any(_covers(part, slot) for part in me.split()[8:]):
            return m, masters[(i + 1) % len(masters)], slot
    raise AssertionError(f"no master holds slot {slot}")


def _covers(part: str, slot: int) -> bool:
    if part.startswith("["):
        return False
    lo, _, hi = part.partition("-")
    return int(lo) <= slot <= int(hi or lo)


def settled(*nodes: redis.Redis) -> None:
    """Wait until every node sees the cluster as whole (a fresh cluster, or one whose slots just
    moved, may still answer CLUSTERDOWN for a moment); bounded only so a broken one fails.
    With `cluster-require-full-coverage no` a node says "ok" before gossip has told it every
    slot's master, so the slots it knows are counted too."""
    deadline = time.monotonic() + scaled(30)
    whole = (b"cluster_state:ok", b"cluster_slots_assigned:16384")
    while True:
        infos = [n.execute_command("CLUSTER", "INFO") for n in nodes]
        if all(w in info for info in infos for w in whole):
            return
        assert time.monotonic() < deadline, f"the cluster did not settle: {infos!r}"
        time.sleep(0.05)


def move_slot(source: redis.Redis, target: redis.Redis, slot: int, *, finish: bool) -> None:
    """Migrate a slot's keys from source to target; `finish` hands the slot over (MOVED for
    clients that still send there), else it stays migrating (ASK for keys already moved)."""
    settled(source, target)
    source_id = source.execute_command("CLUSTER", "MYID").decode()
    target_id = target.execute_command("CLUSTER", "MYID").decode()
    # the target is told the slot's master itself: a target that gossip had not yet told
    # refused every key moved to it ("CLUSTERDOWN Hash slot not served") for the whole 30 s
    # bound, once, under the suite's own load
    target.execute_command("CLUSTER", "SETSLOT", slot, "NODE", source_id)
    target.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    port = target.connection_pool.connection_kwargs["port"]
    deadline = time.monotonic() + scaled(30)
    while keys := source.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
        try:
            source.execute_command("MIGRATE", "127.0.0.1", port, "", 0, 5000, "KEYS", *keys)
        except redis.exceptions.ResponseError as exc:  # the target still settling: try again
            assert "CLUSTERDOWN" in str(exc) and time.monotonic() < deadline, exc
            time.sleep(0.05)
    if finish:
        for node in (target, source):
            node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)


async def test_on_a_cluster_a_turn_spans_nodes_and_follows_moved_and_ask(
    small_cluster: RedisClusterProcess, key_prefix: str
) -> None:
    client = connect(small_cluster.url, max_connections=16, pool_timeout=5)
    await client.initialize()
    batcher = Batcher(client)
    script = client.register_script(COUNT)
    await client.script_load(COUNT)  # on every master
    keys = keys_in_slots(key_prefix, 30)  # 30 slots over the 3 masters
    assert await run_turn(batcher, script, [(k, "ok") for k in keys]) == [1] * 30
    assert batcher.batches == 1

    # MOVED: a slot changes masters; the client's map still names the old one
    moved = keys[0]
    source, target, slot = node_of(small_cluster, moved)
    move_slot(source, target, slot, finish=True)
    port_of = lambda: client.nodes_manager.get_node_from_slot(slot).port  # noqa: E731
    assert port_of() == source.connection_pool.connection_kwargs["port"]  # stale: sends there
    out = await run_turn(batcher, script, [(k, "ok") for k in keys])
    assert out == [2] * 30, out  # the old master answered MOVED; the command went on
    assert port_of() == target.connection_pool.connection_kwargs["port"]

    # ASK: a slot half way through a migration; its keys already moved are answered by ASK
    asked = keys[1]
    source, target, slot = node_of(small_cluster, asked)
    move_slot(source, target, slot, finish=False)
    # its keys are on the importing node only: the source answers them with ASK
    assert source.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    out = await run_turn(batcher, script, [(k, "ok") for k in keys])
    assert out == [3] * 30, out
    for node in (source, target):  # finish the migration so the module's cluster stays sound
        node.execute_command(
            "CLUSTER", "SETSLOT", slot, "NODE", target.execute_command("CLUSTER", "MYID").decode()
        )
    await client.aclose()


# --- through the server -----------------------------------------------------------------------


async def test_a_move_while_redis_is_away_is_answered_busy_and_can_be_sent_again(
    tmp_path: Path, wire: Any
) -> None:
    from helpers.race import current_view, start_race
    from helpers.views import putt_move
    from solrace.server.app import build
    from solrace.server.net.ws_server import serve
    from solrace.server.store.store import Store

    (tmp_path / "redis").mkdir()
    proc = RedisProcess(data_dir=str(tmp_path / "redis"), persist=True).start()
    transport = build(lambda sink: Store.from_url(proc.url, "busy:", sink=sink, pool_timeout=2))
    try:
        async with serve(transport, "127.0.0.1", 0) as srv:
            await transport.start()
            url = f"ws://127.0.0.1:{next(iter(srv.sockets)).getsockname()[1]}/ws"
            (ann,), _, code, _ = await start_race(url, wire, 1)
            view = current_view(ann)
            move = {"type": "move", "move": putt_move(view), "n": view["moves"] + 1}
            proc.stop()  # Redis goes away with the move in flight
            refused = await ann.request(move)
            assert refused["type"] == "error" and refused["code"] == "busy", refused
            proc.start()  # back, with its data
            ack = await ann.request(move)  # the same move, the same n: stored once
            assert ack["type"] == "ack" and ack["n"] == view["moves"] + 1, ack
            assert len((await transport.store.load(code)).logs[0]) == 1
            await transport.close()
    finally:
        await transport.store.close()
        proc.stop()
