"""The compose files, checked without Docker (it does not run on the development machine):
docker-compose.yml (one Redis) and docker-compose.cluster.yml (a Redis Cluster of 3 masters and
3 replicas, formed by a one-shot `redis-init` service).

What can break silently is checked against the real parts: each server's command parses with
`solrace serve`'s own flags and names variables the server reads; every file mounted or built
exists; nginx's upstreams are the file's server services on the port the servers listen on,
and the config the proxy mounts passes `nginx -t` with the services' names mapped to loopback;
the Redis nodes' command starts real redis-server processes, and cluster-init.sh forms them
into a cluster of 3 masters and 3 replicas, then leaves it alone when run again.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis as sync_redis
import yaml
from deploy.test_nginx_proxy import certificate, local_conf
from helpers.timing import scaled
from solrace.server import main as serve_main
from solrace.server.store.redis_process import RedisProcess, free_cluster_port

ROOT = Path(__file__).resolve().parents[2]
FILES = ("docker-compose.yml", "docker-compose.cluster.yml")
#: what the server reads from its environment (server/main.py, server/net/admin.py)
SERVER_ENV = {
    "REDIS_URL",
    "SOLRACE_REDIS_PREFIX",
    "SOLRACE_PREDRAW_DAILY",
    "SOLRACE_DATA_DIR",
    "SOLRACE_SECRET",
    "SOLRACE_SIGNING_KEY",
    "SOLRACE_ADMIN_TOKEN",
}


def compose(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / name).read_text())
    return data


def solrace_services(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services built from the server's Dockerfile (the solrace hosts)."""
    return {k: v for k, v in doc["services"].items() if "build" in v}


def entrypoint() -> list[str]:
    """The server image's ENTRYPOINT (server/deploy/Dockerfile), as a list."""
    text = (ROOT / "server" / "deploy" / "Dockerfile").read_text()
    found = re.search(r"^ENTRYPOINT (\[.*\])$", text, re.M)
    assert found, "the Dockerfile has no ENTRYPOINT [...]"
    value: list[str] = yaml.safe_load(found.group(1))
    return value


def serve_args(argv: list[str]) -> argparse.Namespace:
    """`argv` parsed as `solrace serve` parses its flags (an unknown flag fails the test)."""
    parser = argparse.ArgumentParser(prog="solrace serve", exit_on_error=False)
    serve_main.add_arguments(parser)
    args, unknown = parser.parse_known_args(argv)
    assert not unknown, f"flags `solrace serve` does not know: {unknown}"
    return args


def upstreams(conf: str) -> list[str]:
    return re.findall(r"^ *server ([\w.-]+:\d+)[^;\n]*;", conf, re.M)


def mounted_conf(doc: dict[str, Any]) -> Path:
    """The nginx config the `proxy` service mounts."""
    for volume in doc["services"]["proxy"]["volumes"]:
        source, target = volume.split(":")[:2]
        if target == "/etc/nginx/nginx.conf":
            return ROOT / source
    raise AssertionError("the proxy mounts no /etc/nginx/nginx.conf")


@pytest.mark.parametrize("name", FILES)
def test_the_servers_commands_env_and_files(name: str) -> None:
    doc = compose(name)
    services = doc["services"]
    hosts = solrace_services(doc)
    assert len(hosts) >= 2, "fewer than two solrace hosts"
    head = entrypoint()
    assert head[:2] == ["solrace", "serve"], head
    assert shutil.which("solrace") or (ROOT / ".venv" / "bin" / "solrace").exists()
    for host, svc in hosts.items():
        assert (ROOT / svc["build"]["context"] / svc["build"]["dockerfile"]).is_file()
        args = serve_args([*head[2:], *svc["command"]])
        assert args.port == 8765 and args.host == "0.0.0.0", (host, args)
        assert "8765/healthz" in " ".join(svc["healthcheck"]["test"]), host
        env = svc["environment"]
        assert set(env) <= SERVER_ENV, (
            f"{host}: variables the server never reads: {set(env) - SERVER_ENV}"
        )
        url = urlsplit(env["REDIS_URL"])
        # every Redis the URL names is a service of this file on the port its nodes listen on
        for netloc in url.netloc.split(","):
            node, port = netloc.rsplit(":", 1)
            assert node in services and port == "6379", (host, netloc)
            assert node in svc["depends_on"] or "redis-init" in svc["depends_on"], host
        # a server and the Redis it names share a network (the default one, or a named one)
        for netloc in url.netloc.split(","):
            node = netloc.rsplit(":", 1)[0]
            theirs = set(services[node].get("networks") or ["default"])
            mine = set(svc.get("networks") or ["default"])
            assert theirs & mine, (host, node)
    # every file a service mounts from the repository exists
    for svc in services.values():
        for volume in svc.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                path = ROOT / source
                assert path.exists() or source == "./certs", f"{name} mounts {source}: missing"
    # the proxy's upstreams are this file's hosts, on the port they listen on
    conf = mounted_conf(doc).read_text()
    assert sorted(upstreams(conf)) == sorted(f"{h}:8765" for h in hosts), (upstreams(conf), hosts)
    assert set(services["proxy"]["depends_on"]) == set(hosts)
    assert set(services["proxy"].get("networks") or ["default"]) & set(
        next(iter(hosts.values())).get("networks") or ["default"]
    )


def test_the_cluster_file_has_three_masters_three_replicas_and_an_init() -> None:
    doc = compose("docker-compose.cluster.yml")
    services = doc["services"]
    nodes = sorted(k for k in services if re.fullmatch(r"redis-\d+", k))
    assert len(nodes) == 6
    init = services["redis-init"]
    assert init["restart"] == "no"
    assert init["environment"]["REDIS_NODES"].split() == [f"{n}:6379" for n in nodes]
    assert init["environment"]["REDIS_REPLICAS"] == "1"
    assert all(init["depends_on"][n]["condition"] == "service_healthy" for n in nodes)
    for host in solrace_services(doc).values():
        assert urlsplit(host["environment"]["REDIS_URL"]).scheme == "redis+cluster"
        assert host["depends_on"]["redis-init"]["condition"] == "service_completed_successfully"
    # fixed addresses, one each, inside the network's subnet
    subnet = doc["networks"]["redis"]["ipam"]["config"][0]["subnet"]
    addresses = [services[n]["networks"]["redis"]["ipv4_address"] for n in nodes]
    assert len(set(addresses)) == 6
    prefix = subnet.rsplit(".", 1)[0] + "."
    assert all(a.startswith(prefix) for a in addresses), (subnet, addresses)


def test_the_proxy_config_passes_nginx_t(tmp_path: Path) -> None:
    """`nginx -t` on the config both files mount, the hosts' names mapped to loopback ports
    (nginx resolves upstream names at start: the compose names exist only in Docker's DNS)."""
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(binary).exists(), "nginx is needed for this test (apt-get install nginx-light)"
    confs = {mounted_conf(compose(name)) for name in FILES}
    assert confs == {ROOT / "server" / "deploy" / "nginx.conf"}
    tls = certificate(tmp_path)
    hosts = solrace_services(compose("docker-compose.cluster.yml"))
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        local_conf(
            tmp_path,
            (8080, 8443),
            [f"127.0.0.1:{9000 + i}" for i in range(len(hosts))],
            tls,
            tmp_path,
        )
    )
    out = subprocess.run(
        [binary, "-t", "-c", str(conf), "-p", str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "test is successful" in out.stderr


@contextlib.contextmanager
def nodes_of_the_compose_file(tmp_path: Path) -> Iterator[list[RedisProcess]]:
    """Six redis-server processes started with the command of the file's Redis nodes (their
    port, address and folder made local)."""
    command = compose("docker-compose.cluster.yml")["services"]["redis-1"]["command"]
    assert command[0] == "redis-server"
    started: list[RedisProcess] = []
    try:
        for i in range(6):
            folder = tmp_path / f"node{i}"
            folder.mkdir()
            node = RedisProcess(
                port=free_cluster_port(), data_dir=str(folder), extra_args=list(command[1:])
            )
            started.append(node.start())
        yield started
    finally:
        for node in started:
            node.stop()


def run_init(nodes: list[RedisProcess]) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "REDIS_NODES": " ".join(f"127.0.0.1:{n.port}" for n in nodes),
        "REDIS_REPLICAS": "1",
    }
    script = ROOT / "server" / "deploy" / "cluster-init.sh"
    return subprocess.run(
        ["sh", str(script)], env=env, capture_output=True, text=True, timeout=scaled(120)
    )


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed")
def test_cluster_init_forms_three_masters_with_a_replica_each_once(tmp_path: Path) -> None:
    with nodes_of_the_compose_file(tmp_path) as nodes:
        first = run_init(nodes)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "cluster_state:ok" in first.stdout
        client = sync_redis.Redis(host="127.0.0.1", port=nodes[0].port)
        try:
            # the replicas' roles reach this node by gossip, a moment after the init returns
            deadline = time.monotonic() + scaled(10)
            while True:
                lines = client.execute_command("CLUSTER", "NODES").decode().splitlines()
                roles = sorted(line.split()[2].replace("myself,", "") for line in lines)
                if roles == ["master"] * 3 + ["slave"] * 3 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert roles == ["master"] * 3 + ["slave"] * 3, lines
            # the compose file's settings are the nodes' (command parsed by a real redis-server)
            assert client.config_get("cluster-require-full-coverage") == {
                "cluster-require-full-coverage": "no"
            }
            assert client.config_get("appendonly") == {"appendonly": "yes"}
            again = run_init(nodes)
            assert again.returncode == 0, again.stdout + again.stderr
            assert "nothing to do" in again.stdout
            after = client.execute_command("CLUSTER", "NODES").decode().splitlines()
            assert sorted(line.split()[0] for line in after) == sorted(
                line.split()[0] for line in lines
            )
        finally:
            client.close()


def test_the_runbook_names_what_exists() -> None:
    """The runbook's commands name this repository's files and `solrace serve`'s flags."""
    text = (ROOT / "docs" / "OPERATIONS.md").read_text()
    runbook = text[text.index("## Runbook") :]
    for path in re.findall(r"`((?:server|docs|tests|bench)/[\w./-]+)`", runbook):
        assert (ROOT / path).exists(), path
    for name in re.findall(r"docker-compose[\w.]*\.yml", runbook):
        assert (ROOT / name).exists(), name
    flags = {a for action in _serve_parser()._actions for a in action.option_strings}
    for line in runbook.splitlines():
        if "solrace serve" in line:
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", line):
                assert flag in flags, (flag, line)


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="solrace serve")
    serve_main.add_arguments(parser)
    return parser


def test_the_scale_out_benchs_proxy_is_the_shipped_config_without_tls(tmp_path: Path) -> None:
    """`bench load --scenario scale-out --scale-proxy` runs the shipped nginx config in plain
    http: only the upstreams, listen addresses, TLS lines and nginx's own paths differ, and
    nginx accepts it."""
    from solrace.bench.load_scale import Nginx

    proxy = Nginx(tmp_path, [9001, 9002, 9003])
    text = proxy.config()
    shipped = (ROOT / "server" / "deploy" / "nginx.conf").read_text()
    assert upstreams(text) == [f"127.0.0.1:{p}" for p in (9001, 9002, 9003)]
    directives = [line for line in text.splitlines() if not line.strip().startswith("#")]
    assert not [line for line in directives if "ssl" in line], "TLS left in the bench's config"
    for directive in (
        "hash $solrace_route consistent;",
        "proxy_read_timeout 120s;",
        "worker_connections 16384;",
        "location = /metrics {",
    ):
        assert directive in shipped and directive in text, directive
    conf = tmp_path / "bench-nginx.conf"
    conf.write_text(text)
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    out = subprocess.run(
        [binary, "-t", "-c", str(conf), "-p", str(tmp_path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def test_the_image_builds_the_move_path_compiled() -> None:
    """The server image installs the package with the move path compiled (setup.py's
    SOLRACE_MYPYC=1), with the C compiler mypyc needs installed first and removed after:
    without either, the install would quietly run the .py files."""
    text = (ROOT / "server" / "deploy" / "Dockerfile").read_text()
    run = re.search(r"^RUN (.*?)(?=^\S)", text, re.M | re.S)
    assert run, "the Dockerfile has no RUN step"
    steps = [s.strip(" \\\n") for s in run.group(1).split("&&")]
    installs = [i for i, s in enumerate(steps) if re.search(r"\bpip install\b.*\s\.$", s)]
    assert len(installs) == 1, steps
    assert steps[installs[0]].startswith("SOLRACE_MYPYC=1 "), steps[installs[0]]
    compiler = [i for i, s in enumerate(steps) if "apt-get install" in s and " gcc " in f"{s} "]
    assert compiler and compiler[0] < installs[0], steps
