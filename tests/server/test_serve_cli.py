"""`solrace serve` as users run it: with no Redis URL it starts an embedded redis-server
that keeps its data on disk, so a restarted server still has every room."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from helpers.timing import scaled
from solrace.server.common.codes import PRIVATE_CODE_LENGTH
from solrace.server.store.redis_process import free_port


def _start_serve(port: int, redis_port: int, data_dir: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "solrace",
            "serve",
            "--port",
            str(port),
            "--embedded-redis-port",
            str(redis_port),
            "--data-dir",
            str(data_dir),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + scaled(15)
    while True:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/healthz", timeout=scaled(0.5)
            ) as resp:
                assert resp.status == 200
                return proc
        except OSError:
            if time.monotonic() >= deadline or proc.poll() is not None:
                proc.kill()  # not left behind, with its embedded Redis, by a failed test
                out, _ = proc.communicate(timeout=scaled(15))
                raise AssertionError(
                    f"server did not come up:\n{out.decode(errors='replace')[-2000:]}"
                ) from None
            time.sleep(0.1)


def _stop(proc: subprocess.Popen[bytes]) -> bytes:
    proc.terminate()
    out, _ = proc.communicate(timeout=scaled(15))
    assert proc.returncode == 0, out.decode(errors="replace")[-2000:]
    return out


async def test_serve_without_redis_url_uses_an_embedded_redis_that_persists(wire, tmp_path) -> None:
    port, redis_port = free_port(), free_port()
    data_dir = tmp_path / "redis"
    proc = _start_serve(port, redis_port, data_dir)
    try:
        c = await wire(f"ws://127.0.0.1:{port}/ws")
        joined = await c.request(
            {"type": "create", "name": "solo", "options": {"game": "tabbycat"}}
        )
        assert joined["type"] == "joined" and len(joined["room"]) == PRIVATE_CODE_LENGTH
        room = joined["room"]
        await c.close()
    finally:
        out = _stop(proc)
    assert b"embedded redis-server" in out
    assert any(data_dir.iterdir()), "the embedded Redis wrote no append-only file"

    proc = _start_serve(port, redis_port, data_dir)
    try:
        c = await wire(f"ws://127.0.0.1:{port}/ws")
        again = await c.request({"type": "join", "room": room, "name": "back"})
        assert again["type"] == "joined" and again["room"] == room and again["seat"] == 1
        await c.close()
    finally:
        _stop(proc)
