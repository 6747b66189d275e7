"""The proxy of docker-compose.yml, run for real: nginx with server/deploy/nginx.conf in front
of two `solrace serve` processes on one Redis. Docker does not run on the development machine,
so this checks the part that can break silently: that the config routes every connection
naming a room (`/ws?room=CODE`) to one process, spreads rooms over both, and that a room whose
players landed on different processes (the host stays where it created the room) is shared.

Only the upstream addresses, the listen address and nginx's own file paths are rewritten;
every proxy directive is the committed file's."""

from __future__ import annotations

import json
import re
import secrets
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from solrace.bench.server_process import ServerProcess
from solrace.client import Client
from solrace.server.store.redis_process import free_port

CONF = Path(__file__).resolve().parents[2] / "server" / "deploy" / "nginx.conf"


def local_conf(tmp: Path, port: int, upstreams: list[int]) -> str:
    text = CONF.read_text()
    text = text.replace("solrace-a:8765", f"127.0.0.1:{upstreams[0]}")
    text = text.replace("solrace-b:8765", f"127.0.0.1:{upstreams[1]}")
    text, n = re.subn(r"listen 80;", f"listen 127.0.0.1:{port};", text)
    assert n == 1, "nginx.conf no longer listens on port 80 as docker-compose.yml expects"
    paths = " ".join(
        f"{k}_temp_path {tmp / k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    text = text.replace("http {", f"http {{\n    access_log {tmp / 'access.log'};\n    {paths}", 1)
    return f"pid {tmp / 'nginx.pid'};\nerror_log {tmp / 'error.log'};\ndaemon off;\n" + text


@pytest.fixture
def proxy(redis_url: str, key_prefix: str, tmp_path: Path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "nginx is needed for this test (apt-get install nginx-light)"
    with ServerProcess(redis_url, key_prefix) as a, ServerProcess(redis_url, key_prefix) as b:
        port = free_port()
        conf = tmp_path / "nginx.conf"
        conf.write_text(local_conf(tmp_path, port, [a.port, b.port]))
        proc = subprocess.Popen(
            [nginx, "-c", str(conf), "-p", str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/healthz", timeout=0.5
                    ) as r:
                        assert r.status == 200
                        break
                except OSError:
                    assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
                    assert time.monotonic() < deadline, "nginx did not come up"
                    time.sleep(0.05)
            yield port, (a, b)
        finally:
            proc.terminate()
            proc.wait(10)


def connections(server: ServerProcess) -> int:
    with urllib.request.urlopen(f"{server.url}/healthz", timeout=5) as r:
        return int(json.loads(r.read())["connections"])


async def test_a_rooms_connections_reach_one_process_and_rooms_spread(proxy) -> None:
    port, (a, b) = proxy
    url = f"ws://127.0.0.1:{port}/ws"
    host = Client(url)
    await host.connect()
    created = await host.create("ann", {"game": "puttputt", "countdown": 0})
    before = [connections(s) for s in (a, b)]
    assert sorted(before) == [0, 1]  # the host, on whichever process took the create
    guests = []
    for name in ("bob", "cy", "di"):
        c = Client(f"{url}?room={created.room}")
        await c.connect()
        await c.join(created.room, name)
        guests.append(c)
    # the three guests named the room: all on one process
    after = [connections(s) - n for s, n in zip((a, b), before, strict=True)]
    assert sorted(after) == [0, 3], after
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
