"""A replay that is not kept costs a Redis read and a worker's CPU to build, so it is charged
to the client address's budget of expensive requests (server/net/guard.py): one address asking
for replay after replay is refused 429 with Retry-After, and another address is still served.
Kept replays cost nothing and are never refused."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import pytest
from helpers.records import finished_room
from helpers.timing import scaled
from solrace.server.app import build
from solrace.server.league.records import build_record
from solrace.server.net.api import Api
from solrace.server.net.conn import networks
from solrace.server.net.guard import Guard, GuardLimits
from solrace.server.net.http import make_process_request
from solrace.server.net.ws_server import serve
from solrace.server.store.store import Store

BURST = 3
A, B = "10.1.0.1", "10.2.0.2"


def get(url: str, address: str) -> tuple[int, dict[str, str], bytes]:
    """A GET as a client behind the trusted proxy (loopback) at `address`."""
    req = urllib.request.Request(url, headers={"X-Forwarded-For": address})
    try:
        with urllib.request.urlopen(req, timeout=scaled(10)) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


@pytest.fixture
async def site(redis_url: str, key_prefix: str) -> AsyncIterator[tuple[str, Api]]:
    transport = build(lambda sink: Store.from_url(redis_url, key_prefix, sink=sink))
    # nearly no refill, so the test sees the burst and then the refusals, whatever the load
    guard = Guard(GuardLimits(requests_burst=BURST, requests_rate=0.001))
    api = Api(transport.records, guard=guard, trusted_proxies=networks("127.0.0.1"))
    hook = make_process_request(transport.health, api=api.handle)
    async with serve(transport, "127.0.0.1", 0, process_request=hook) as srv:
        await transport.start()
        port = next(iter(srv.sockets)).getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}", api
        finally:
            await transport.close()
    await transport.store.close()


async def test_replay_builds_are_charged_per_address(site: tuple[str, Api]) -> None:
    url, api = site
    missing = [f"{i:016x}" for i in range(BURST + 1)]
    answers = [await asyncio.to_thread(get, f"{url}/api/replay/{m}", A) for m in missing]
    assert [a[0] for a in answers[:BURST]] == [404] * BURST  # looked up: each charged
    status, headers, body = answers[BURST]
    assert status == 429, body
    assert int(headers["Retry-After"]) >= 1
    assert json.loads(body)["limit"] == "address"
    # another address has its own budget
    assert (await asyncio.to_thread(get, f"{url}/api/replay/{missing[0]}", B))[0] == 404
    # the refused address is refused before any Redis read or build
    assert api.replays.builds == 0


async def test_a_kept_replay_is_never_refused(site: tuple[str, Api]) -> None:
    url, api = site
    record: dict[str, Any] = build_record(finished_room("puttputt", players=2, seed=8))
    record["id"] = "00000000000000ff"
    await api.replays.build(record["id"], record)  # kept, as after an earlier visitor
    for _ in range(BURST + 3):
        status, _, body = await asyncio.to_thread(get, f"{url}/api/replay/{record['id']}", A)
        assert status == 200, body
    assert api.replays.builds == 1


@pytest.mark.parametrize("kind", ["record", "player"])
async def test_record_and_player_lookups_are_charged_per_address(
    site: tuple[str, Api], kind: str
) -> None:
    """Issue 20 item 10: `/api/record|player` lookups (Redis reads, records unpacked) had no
    per-address budget: one address could ask for them without end. They draw on the same
    expensive-request budget as a replay build: over it 429 with Retry-After, another
    address still served."""
    url, _ = site
    ids = [f"{i:016x}" if kind == "record" else f"{'a' * 15}{c}" for i, c in enumerate("bcde")]
    answers = [await asyncio.to_thread(get, f"{url}/api/{kind}/{x}", A) for x in ids]
    assert [a[0] for a in answers[:BURST]] == [404] * BURST  # looked up: each charged
    status, headers, body = answers[BURST]
    assert status == 429, body
    assert int(headers["Retry-After"]) >= 1 and json.loads(body)["limit"] == "address"
    assert (await asyncio.to_thread(get, f"{url}/api/{kind}/{ids[0]}", B))[0] == 404
    # a malformed id is refused before anything is looked up: not charged, not 429
    assert (await asyncio.to_thread(get, f"{url}/api/{kind}/nothex", A))[0] == 404
