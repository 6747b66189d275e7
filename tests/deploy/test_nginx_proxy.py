"""The proxy of docker-compose.yml, run for real: nginx with server/deploy/nginx.conf in front
of two `solrace serve` processes on one Redis. Docker does not run on the development machine,
so this checks the part that can break silently: that the config routes WebSocket upgrades to
both processes, and that players landing on different processes share a room through it.

Only the upstream addresses, the listen address and nginx's own file paths are rewritten;
every proxy directive is the committed file's."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from solrace.client import Client
from solrace.server.process import ServerProcess
from solrace.server.redis_process import free_port

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


async def test_websockets_through_the_proxy_reach_both_processes_and_share_a_room(proxy) -> None:
    port, (a, b) = proxy
    url = f"ws://127.0.0.1:{port}/ws"
    host = Client(url)
    await host.connect()
    created = await host.create("ann", {"game": "puttputt", "countdown": 0})
    guests = []
    for name in ("bob", "cy", "di"):
        c = Client(url)
        await c.connect()
        await c.join(created.room, name)
        guests.append(c)
    # every join made through the proxy reaches the host, whichever process it landed on
    await host.wait_until(lambda: len(host.room.players) == 4)
    assert sorted(p["name"] for p in host.room.players.values()) == ["ann", "bob", "cy", "di"]
    # round robin spread the four WebSocket connections over both processes
    opened = [s.log().count("connection open") for s in (a, b)]
    assert all(n >= 1 for n in opened), opened
    for c in (host, *guests):
        await c.close()
