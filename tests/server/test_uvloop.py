"""`solrace serve --loop uvloop`: the same server on uvloop's event loop (its transports are
not asyncio's classes, and write as soon as asked): a race is played over real sockets, the
other seat gets the move's progress at its tick, a ping is answered, a frame too large gets
its error and close code, and a peer that goes is let go."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.race import play, start_race, until
from helpers.timing import scaled
from solrace.bench.server_process import ServerProcess
from solrace.protocol import messages as m


@pytest.fixture
def uv_server(redis_url: str, key_prefix: str) -> Iterator[ServerProcess]:
    with ServerProcess(redis_url, key_prefix, extra_args=["--loop", "uvloop"]) as server:
        yield server


async def test_a_race_on_uvloop(uv_server: ServerProcess, wire: Any) -> None:
    url = uv_server.ws_url
    (ann, bob), _, _, _ = await start_race(url, wire, 2)
    acks = await play(ann, 5)
    assert [a["n"] for a in acks] == [1, 2, 3, 4, 5]
    last = acks[-1]["event"]
    await until(lambda: bob.last_event >= last, "bob saw ann's moves")
    lines = [
        line["moves"]
        for x in bob.received
        if x["type"] in ("event", "progress")
        for line in (x["seats"] if x["type"] == "progress" else [x])
        if line.get("seat") == 0 and "moves" in line
    ]
    assert lines and lines[-1] == 5
    assert (await bob.request({"type": "ping", "t": 7}))["t"] == 7
    big = await wire(url)
    await big.send_raw(m.encode({"type": "ping", "t": "x" * 10000}))  # over the frame limit
    assert (await big.next_push())["code"] == "frame_too_large"
    code, _ = await asyncio.wait_for(big.closed, scaled(5))
    assert code == 1009
