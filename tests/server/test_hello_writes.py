"""A `hello` with a player key writes nothing to Redis (issue 20 item 6): a stranger makes
keys for free, and each hello with a fresh one used to store a `player:{PID}` entry kept 90
days. The entry is written with the player's first finished keyed race (server/league/records.py
`queue`), which the room budgets bound. Over real sockets on a real Redis; the clients
connect from 127.0.0.2 (the test servers exempt 127.0.0.1), so the per-address limits apply."""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis
from helpers.race import play, until
from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m
from solrace.server.league.players import key_hash, player_id

A = "127.0.0.2"


@pytest.fixture
def server(redis_url: str, key_prefix: str):
    # messages out of a room at the racer's rate: 200 hellos on one connection must not wait
    # on the lobby's 1 message per second, and fresh keys per address have a budget of their
    # own (test_limits.py): the limits are not what this test is about
    args = [
        "--lobby-burst", "60", "--lobby-rate", "200", "--rate", "200",
        "--keys-per-address", "1000",
    ]  # fmt: skip
    with ServerProcess(redis_url, key_prefix, extra_args=args) as srv:
        yield srv


def hello(key: str) -> dict[str, Any]:
    return {"type": "hello", "version": m.VERSION, "player_key": key}


def fresh(i: int) -> str:
    return f"a-fresh-player-key-number-{i:04d}"


async def entries(redis_url: str, key_prefix: str) -> set[str]:
    """Every player key of this test's prefix (entries, histories, figures)."""
    r = aioredis.Redis.from_url(redis_url)
    try:
        keys = [k.decode() async for k in r.scan_iter(match=f"{key_prefix}player:*")]
    finally:
        await r.aclose()
    return {k[len(key_prefix) :] for k in keys}


async def test_fresh_key_hellos_write_no_player_key(server, wire, redis_url, key_prefix) -> None:
    """200 hellos with fresh keys on one connection, then 30 on connections of their own:
    every one is welcomed with its own id, and nothing under `player:` is in Redis."""
    c = await wire(server.ws_url, hello=False, source=A)
    ids = set()
    for i in range(200):
        welcome = await c.request(hello(fresh(i)))
        assert welcome["type"] == "welcome", welcome
        ids.add(welcome["player"])
    for i in range(200, 230):
        c = await wire(server.ws_url, hello=False, source=A)
        welcome = await c.request(hello(fresh(i)))
        assert welcome["type"] == "welcome" and welcome["player"], welcome
        ids.add(welcome["player"])
        await c.close()
    assert len(ids) == 230  # every key is its own player...
    assert await entries(redis_url, key_prefix) == set()  # ...and none of them is stored


async def test_a_finished_keyed_race_writes_the_entry(server, wire, redis_url, key_prefix) -> None:
    """Ann (a key) races Bob (no key) to the end: Ann's entry is written with the race (her
    name, the player page reads it), Bob has none, and a keyed hello that never raced has none."""
    ann = await wire(server.ws_url, hello=False, source=A)
    pid = (await ann.request(hello(fresh(1))))["player"]
    idle = await wire(server.ws_url, hello=False, source=A)
    assert (await idle.request(hello(fresh(2))))["type"] == "welcome"
    bob = await wire(server.ws_url, source=A)
    opts = {"game": "puttputt", "countdown": 0}
    created = await ann.request({"type": "create", "name": "ann", "options": opts})
    joined = await bob.request({"type": "join", "room": created["room"], "name": "bob"})
    assert joined["type"] == "joined", joined
    assert (await ann.request({"type": "start", "host_token": created["host_token"]}))[
        "type"
    ] == "ok"
    assert await entries(redis_url, key_prefix) == set()  # seated and racing: nothing yet
    for c in (ann, bob):
        await c.wait_for(lambda x: x["type"] == "snapshot")
        await play(c, 2)
        assert (await c.request({"type": "resign"}))["type"] in ("ok", "ack")
    await ann.wait_event("results", timeout=20)

    async def written() -> bool:
        return f"player:{{{pid}}}" in await entries(redis_url, key_prefix)

    await until(written, "ann's entry written with the race")
    r = aioredis.Redis.from_url(redis_url)
    try:
        entry = await r.hgetall(f"{key_prefix}player:{{{pid}}}")
    finally:
        await r.aclose()
    assert entry[b"name"] == b"ann" and int(entry[b"seen"]) > 0, entry
    assert b"key" not in entry  # neither the key nor its hash is kept
    stored = await entries(redis_url, key_prefix)
    assert {k.split("}")[0] + "}" for k in stored} == {f"player:{{{pid}}}"}, stored
    assert player_id(key_hash(fresh(2))) not in "".join(stored)
