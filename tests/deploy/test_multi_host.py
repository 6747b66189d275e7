"""Three hosts behind the shipped proxy on a Redis Cluster, one host killed and one master
failed over mid-race (issue 22: a multi-host test).

Each "host" is a Linux network namespace this test makes (its own address on a bridge the
test makes too), running `solrace serve --workers 2`; nginx runs the committed
server/deploy/nginx.conf over TLS (as tests/deploy/test_nginx_proxy.py runs it: only addresses,
ports, the certificate and nginx's own paths rewritten) in front of
the three; Redis is a local cluster of 3 masters and 3 replicas listening on the bridge.
Traffic goes only to loopback, the bridge and the namespaces.

Twelve rooms of two bots race through the proxy. Before anything fails, no room is served by
two processes at once (every room's connections sit in one process: the room's code routes
the create too). Then a host is SIGKILLed and a Redis master is killed: every race still
reaches its results, and no acknowledged move is missing from them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import random
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as sync_redis
from deploy.test_nginx_proxy import nginx
from helpers.timing import scaled
from solrace.bench.server_process import ServerProcess
from solrace.client import Client
from solrace.client.bot import run_bot
from solrace.server.store import keys
from solrace.server.store.redis_process import RedisClusterProcess

pytestmark = [pytest.mark.slow, pytest.mark.timing]

CONF = Path(__file__).resolve().parents[2] / "server" / "deploy" / "nginx.conf"
HOSTS = 3
ROOMS = 12
PORT = 8765


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


def free_subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.0.0.0/8 that no interface of this machine is on."""
    used = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    for _ in range(100):
        net = ipaddress.ip_network(f"10.{random.randint(100, 250)}.{random.randint(0, 255)}.0/24")
        if not any(ipaddress.ip_interface(a).ip in net for a in re.findall(r"inet (\S+)", used)):
            return net
    raise AssertionError("no free 10.x.y.0/24 for the test's bridge")


class Namespaces:
    """A bridge in this namespace and `count` network namespaces on it, each one host."""

    def __init__(self, count: int) -> None:
        tag = secrets.token_hex(2)
        self.bridge = f"srb{tag}"
        self.names = [f"srh{tag}-{i}" for i in range(1, count + 1)]
        net = free_subnet()
        hosts = list(net.hosts())
        self.gateway = str(hosts[-1])  # the bridge's own address: Redis and nginx's side
        self.addresses = [str(hosts[i]) for i in range(count)]
        self.prefix = net.prefixlen

    def __enter__(self) -> Namespaces:
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
            sh("ip", "addr", "add", f"{self.gateway}/{self.prefix}", "dev", self.bridge)
            sh("ip", "link", "set", self.bridge, "up")
            for i, (ns, addr) in enumerate(zip(self.names, self.addresses, strict=True)):
                outside, inside = f"{self.bridge}o{i}", f"{self.bridge}i{i}"
                sh("ip", "netns", "add", ns)
                sh("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
                sh("ip", "link", "set", outside, "master", self.bridge, "up")
                sh("ip", "link", "set", inside, "netns", ns)
                sh(
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "ip",
                    "addr",
                    "add",
                    f"{addr}/{self.prefix}",
                    "dev",
                    inside,
                )
                sh("ip", "netns", "exec", ns, "ip", "link", "set", inside, "up")
                sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def kill(self, ns: str) -> None:
        """SIGKILL every process of a host (its front and workers), as a crash would."""
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        for pid in pids.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), 9)

    def __exit__(self, *exc: object) -> None:
        for ns in self.names:
            self.kill(ns)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)


class HostServer(ServerProcess):
    """`solrace serve --workers 2` inside a namespace, on its address."""

    def __init__(self, ns: str, addr: str, redis_url: str, prefix: str, proxy: str) -> None:
        super().__init__(
            redis_url,
            prefix,
            port=PORT,
            host=addr,
            exempt=("127.0.0.1",),
            extra_args=(
                *("--workers", "2", "--heartbeat", "0.5", "--grace", "20"),
                *("--trusted-proxies", proxy),
            ),
        )
        self.ns = ns

    def command(self) -> list[str]:
        return ["ip", "netns", "exec", self.ns, *super().command()]


def split_rooms(cluster: RedisClusterProcess, prefix: str, codes: list[str]) -> dict[str, set[str]]:
    """Rooms whose connections are held by more than one live process (each process's
    `proc:{ID}:conns` hash counts its connections per room)."""
    client = sync_redis.RedisCluster(host=cluster.host, port=cluster.nodes[0].port)
    try:
        holders: dict[str, set[str]] = {code: set() for code in codes}
        for proc in client.smembers(keys.processes(prefix)):
            pid = proc.decode()
            for field, count in client.hgetall(keys.proc(prefix, pid, "conns")).items():
                code = field.decode().split("|", 1)[0]
                if code in holders and int(count) > 0:
                    holders[code].add(pid)
        return {code: procs for code, procs in holders.items() if len(procs) > 1}
    finally:
        client.close()


def master_ports(cluster: RedisClusterProcess) -> list[int]:
    client = sync_redis.Redis(host=cluster.host, port=cluster.nodes[0].port)
    try:
        nodes = client.execute_command("CLUSTER", "NODES").decode().splitlines()
    finally:
        client.close()
    return [
        int(line.split()[1].split(":")[1].split("@")[0])
        for line in nodes
        if "master" in line.split()[2] and "fail" not in line.split()[2]
    ]


@pytest.fixture
def hosts() -> Iterator[Namespaces]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.fail("this test makes network namespaces: it needs root and iproute2")
    with Namespaces(HOSTS) as ns:
        yield ns


async def test_three_hosts_a_host_killed_and_a_master_failed_over(
    hosts: Namespaces, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = f"solrace-test-hosts-{secrets.token_hex(4)}:"
    with RedisClusterProcess(str(tmp_path / "cluster"), host=hosts.gateway) as cluster:
        servers = [
            HostServer(ns, addr, cluster.url, prefix, hosts.gateway)
            for ns, addr in zip(hosts.names, hosts.addresses, strict=True)
        ]
        try:
            await asyncio.gather(*(asyncio.to_thread(s.start, 120) for s in servers))
            with nginx(tmp_path, [f"{a}:{PORT}" for a in hosts.addresses], monkeypatch) as proxy:
                await race_through_failures(proxy.ws_url, hosts, cluster, prefix)
        finally:
            for s in servers:
                with contextlib.suppress(Exception):
                    s.stop()


async def race_through_failures(
    url: str, hosts: Namespaces, cluster: RedisClusterProcess, prefix: str
) -> None:
    stop = asyncio.Event()
    codes: list[str] = []
    bots: list[asyncio.Task[Any]] = []
    for r in range(ROOMS):
        joined: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        bots.append(
            asyncio.create_task(
                run_bot(
                    url,
                    None,
                    f"h{r}",
                    0.15,
                    stop,
                    create_options={"game": "puttputt", "countdown": 0},
                    start_when=2,
                    on_joined=lambda j, f=joined: f.done() or f.set_result(j.room),
                    seed=r,
                )
            )
        )
        code = await asyncio.wait_for(joined, scaled(60))
        codes.append(code)
        bots.append(asyncio.create_task(run_bot(url, code, f"g{r}", 0.15, stop, seed=100 + r)))
    watchers = []
    for code in codes:
        w = Client(f"{url}?room={code}", auto_resume=True)
        await w.connect()
        await w.spectate(code)
        watchers.append(w)
    try:
        await asyncio.gather(
            *(
                w.wait_until(
                    lambda w=w: (
                        len(w.room.players) == 2
                        and all(p.get("moves", 0) >= 2 for p in w.room.players.values())
                    ),
                    60,
                )
                for w in watchers
            )
        )
        assert split_rooms(cluster, prefix, codes) == {}, "a room served by two processes"

        hosts.kill(hosts.names[1])
        masters = master_ports(cluster)
        cluster.kill(masters[0])
        results = await asyncio.wait_for(asyncio.gather(*bots), scaled(240))
        finals = []
        for w in watchers:
            await w.wait_until(lambda w=w: w.room.results is not None, 120)
            finals.append(w.room.results)
    finally:
        stop.set()
        for w in watchers:
            with contextlib.suppress(Exception):
                await w.close()
    by_room: dict[str, list[Any]] = {}
    for result in results:
        assert result.races == 1, result
        assert result.statuses and result.statuses[0] in ("won", "dead", "resigned"), result
        by_room.setdefault(result.room, []).append(result)
    for code, final in zip(codes, finals, strict=True):
        stored = final["moves"]
        for bot in by_room[code]:
            # every move a bot was acked is in the results (a lost answer's move may be there
            # and not counted by the bot, so at least as many)
            assert len(stored[str(bot.seat)]) >= bot.moves, (code, bot, stored)
