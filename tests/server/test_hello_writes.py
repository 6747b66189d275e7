"""A `hello` with a player key writes the player's entry to Redis within bounds: once per
connection, once per id per process in a while, and charged to the address's budget of
expensive requests (a hello over it is still answered). Over real sockets on a real Redis;
the clients connect from 127.0.0.2 (the test servers exempt 127.0.0.1)."""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis
from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m
from solrace.server.players import Registrations, key_hash, player_id

A = "127.0.0.2"
BURST = 4


@pytest.fixture
def server(redis_url: str, key_prefix: str):
    args = ["--requests-burst", str(BURST), "--requests-rate", "0.001"]
    with ServerProcess(redis_url, key_prefix, extra_args=args) as srv:
        yield srv


def hello(key: str) -> dict[str, Any]:
    return {"type": "hello", "version": m.VERSION, "player_key": key}


def fresh(i: int) -> str:
    return f"a-fresh-player-key-number-{i:04d}"


async def entries(redis_url: str, key_prefix: str) -> set[str]:
    r = aioredis.Redis.from_url(redis_url)
    try:
        keys = [k.decode() async for k in r.scan_iter(match=f"{key_prefix}player:*")]
    finally:
        await r.aclose()
    return {k[len(key_prefix) :] for k in keys}


async def test_fresh_keys_on_one_connection_write_one_entry(
    server, wire, redis_url, key_prefix
) -> None:
    c = await wire(server.ws_url, hello=False, source=A)
    ids = []
    for i in range(200):
        welcome = await c.request(hello(fresh(i)))
        assert welcome["type"] == "welcome", welcome
        ids.append(welcome["player"])
    assert len(set(ids)) == 200  # every key is its own player...
    assert await entries(redis_url, key_prefix) == {f"player:{{{ids[0]}}}"}  # ...one write


async def test_fresh_keys_on_many_connections_write_within_the_address_budget(
    server, wire, redis_url, key_prefix
) -> None:
    """50 connections from one address, one after the other, each a hello with a fresh key:
    the address's burst of expensive requests is all the writes it gets (the rate is ~0)."""
    for i in range(50):
        c = await wire(server.ws_url, hello=False, source=A)
        welcome = await c.request(hello(fresh(i)))
        assert welcome["type"] == "welcome" and welcome["player"], welcome
        await c.close()
    assert len(await entries(redis_url, key_prefix)) == BURST
    # the budget is the one lobby pages and joins draw on: it is spent
    c = await wire(server.ws_url, source=A)
    over = await c.request_once({"type": "lobby"})
    assert over["type"] == "error" and over["limit"] == "address", over


async def test_one_key_hello_again_writes_once(server, wire, redis_url, key_prefix) -> None:
    """The same key on new connections: written once (per `Registrations.every`)."""
    for _ in range(10):
        c = await wire(server.ws_url, hello=False, source=A)
        assert (await c.request(hello(fresh(0))))["type"] == "welcome"
        await c.close()
    pid = player_id(key_hash(fresh(0)))
    assert await entries(redis_url, key_prefix) == {f"player:{{{pid}}}"}
    c = await wire(server.ws_url, source=A)
    assert (await c.request_once({"type": "lobby"}))["type"] == "lobby"  # 1 of 4 spent


def test_registrations_are_bounded_and_expire() -> None:
    reg = Registrations(size=3, every=0.0)
    for pid in "abcde":
        assert reg.due(pid)
        reg.done(pid)
    assert list(reg.seen) == ["c", "d", "e"]
    assert reg.due("c")  # every=0: due again at once
    reg = Registrations(size=3, every=3600.0)
    reg.done("a")
    assert not reg.due("a") and reg.due("b")
