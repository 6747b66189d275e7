"""The proxy of docker-compose.yml, run for real: nginx with server/deploy/nginx.conf in front
of two `solrace serve` processes on one Redis. Docker does not run on the development machine,
so this checks the part that can break silently: that the config routes every connection
naming a room (`/ws?room=CODE`) to one process, spreads rooms over the processes, and that a
room's creator lands on its process too (it draws the code and connects naming it before
`create`): no room splits over two processes.

Only the upstream addresses, the listen address and nginx's own file paths are rewritten;
every proxy directive is the committed file's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.race import until
from solrace.bench.server_process import ServerProcess
from solrace.client import Client
from solrace.client.events import Joined
from solrace.server.redis_process import free_port

CONF = Path(__file__).resolve().parents[2] / "server" / "deploy" / "nginx.conf"


def local_conf(tmp: Path, port: int, upstreams: list[int]) -> str:
    text = CONF.read_text()
    hosts = re.findall(r"^ *server solrace-[a-z]+:8765[^;\n]*;\n", text, re.M)
    assert hosts, "nginx.conf names no upstream host solrace-X:8765"
    block = "".join(hosts)
    assert block in text, "the upstream hosts of nginx.conf are not one after another"
    text = text.replace(
        block,
        "".join(re.sub(r"solrace-[a-z]+:8765", f"127.0.0.1:{p}", hosts[0]) for p in upstreams),
    )
    text, n = re.subn(r"listen 80;", f"listen 127.0.0.1:{port};", text)
    assert n == 1, "nginx.conf no longer listens on port 80 as docker-compose.yml expects"
    paths = " ".join(
        f"{k}_temp_path {tmp / k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    text = text.replace("http {", f"http {{\n    access_log {tmp / 'access.log'};\n    {paths}", 1)
    return f"pid {tmp / 'nginx.pid'};\nerror_log {tmp / 'error.log'};\ndaemon off;\n" + text


@contextlib.contextmanager
def nginx(tmp_path: Path, upstreams: list[int]) -> Iterator[int]:
    """nginx with the committed config in front of the processes on `upstreams`; its port."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(binary).exists(), "nginx is needed for this test (apt-get install nginx-light)"
    port = free_port()
    conf = tmp_path / "nginx.conf"
    conf.write_text(local_conf(tmp_path, port, upstreams))
    proc = subprocess.Popen(
        [binary, "-c", str(conf), "-p", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=0.5) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
                assert time.monotonic() < deadline, "nginx did not come up"
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def proxy(redis_url: str, key_prefix: str, tmp_path: Path):
    with (
        ServerProcess(redis_url, key_prefix) as a,
        ServerProcess(redis_url, key_prefix) as b,
        nginx(tmp_path, [a.port, b.port]) as port,
    ):
        yield port, (a, b)


def connections(server: ServerProcess) -> int:
    with urllib.request.urlopen(f"{server.url}/healthz", timeout=5) as r:
        return int(json.loads(r.read())["connections"])


async def open_connections(servers: tuple[ServerProcess, ...]) -> list[int]:
    return await asyncio.to_thread(lambda: [connections(s) for s in servers])


async def test_a_rooms_connections_reach_one_process_and_rooms_spread(proxy) -> None:
    port, (a, b) = proxy
    url = f"ws://127.0.0.1:{port}/ws"
    before = [connections(s) for s in (a, b)]
    host = Client(url)
    await host.connect()
    created = await host.create("ann", {"game": "puttputt", "countdown": 0})
    # the host, on the process its room hashes to (its first socket, named no room, is gone)
    await until(
        lambda: sum(connections(s) for s in (a, b)) == sum(before) + 1, "the host's one socket"
    )
    before = [connections(s) for s in (a, b)]
    guests = []
    for name in ("bob", "cy", "di"):
        c = Client(f"{url}?room={created.room}")
        await c.connect()
        await c.join(created.room, name)
        guests.append(c)
    # the three guests named the room: all on the process of the host
    after = [connections(s) - n for s, n in zip((a, b), before, strict=True)]
    assert sorted(after) == [0, 3], after
    assert before[after.index(3)] == 1, "the guests are not on the host's process"
    # every join reaches the host, whichever process it is on
    await host.wait_until(lambda: len(host.room.players) == 4)
    assert sorted(p["name"] for p in host.room.players.values()) == ["ann", "bob", "cy", "di"]
    # other rooms hash over both processes
    watchers = []
    for _ in range(12):
        w = Client(f"{url}?room={secrets.token_hex(3).upper()}")
        await w.connect()
        watchers.append(w)
    assert all(
        connections(s) > n
        for s, n in zip((a, b), (before[i] + after[i] for i in (0, 1)), strict=True)
    )
    for c in (host, *guests, *watchers):
        await c.close()


async def room_spread(
    url: str, servers: tuple[ServerProcess, ...], routed: bool, guests: int = 3
) -> tuple[list[int], list[Client]]:
    """One room (its creator and `guests` guests naming it) made through the proxy; how many
    of its connections each process serves, and the clients (left open)."""
    before = await open_connections(servers)
    host = Client(url)
    await host.connect()
    if routed:  # the client draws the code and reconnects naming it (PROTOCOL.md, Room codes)
        created = await host.create("ann", {"game": "puttputt"})
    else:  # the server draws the code: the creator stays where its roomless socket landed
        created = await host.request({"type": "create", "name": "ann"})
    assert isinstance(created, Joined)
    code = created.room
    clients = [host]
    for i in range(guests):
        c = Client(url, room=code)
        await c.connect()
        await c.join(code, f"g{i}")
        clients.append(c)
    spread: list[int] = []

    async def settled() -> bool:  # the creator's first socket (if it moved) is gone
        spread[:] = [n - m for n, m in zip(await open_connections(servers), before, strict=True)]
        return sum(spread) == 1 + guests

    await until(settled, "each client of the room on one socket")
    return spread, clients


async def test_no_room_splits_over_three_hosts(
    redis_url: str, key_prefix: str, tmp_path: Path
) -> None:
    """Issue 22 item 5: 12 rooms made through the shipped proxy in front of 3 processes (each
    a host), every room's creator and 3 guests: each room on one process. The same made the
    old way (the server draws the code; the creator's socket named no room) splits rooms, so
    this count can see a split: about 2 in 3 rooms then, with 3 hosts."""
    with contextlib.ExitStack() as stack:
        servers = tuple(stack.enter_context(ServerProcess(redis_url, key_prefix)) for _ in range(3))
        port = stack.enter_context(nginx(tmp_path, [s.port for s in servers]))
        url = f"ws://127.0.0.1:{port}/ws"
        clients: list[Client] = []
        split = {True: 0, False: 0}
        used: set[int] = set()
        for routed in (True, False):
            for _ in range(12):
                spread, opened = await room_spread(url, servers, routed)
                clients += opened
                split[routed] += sum(1 for n in spread if n) > 1
                used |= {i for i, n in enumerate(spread) if n}
        for c in clients:
            await c.close()
    print(f"split rooms of 12 over 3 processes: routed {split[True]}, old way {split[False]}")
    assert split[True] == 0, f"{split[True]} of 12 rooms split over processes"
    assert split[False] > 0, "the old way split no room: this test cannot see a split"
    assert used == {0, 1, 2}, "the rooms did not spread over the three processes"
