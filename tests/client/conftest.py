"""A real `solrace serve` for the client's end-to-end tests.

Started once per session on a free port, against the session's private
Redis with a key prefix of its own; `server_url` is its WebSocket URL.
(The shared `race_server` fixture of tests/conftest.py is preferred when
it exists; this one keeps the client tests self-contained meanwhile.)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLRACE = [sys.executable, "-m", "solrace"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server_url(redis_url: str) -> Iterator[str]:
    port = _free_port()
    prefix = f"solrace-test-client-{uuid.uuid4().hex[:8]}:"
    proc = subprocess.Popen(
        SOLRACE + ["serve", "--port", str(port), "--redis-url", redis_url, "--redis-prefix", prefix,
                   "--grace", "5", "--log-level", "WARNING"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            out = proc.stdout.read() if proc.stdout else ""
            proc.kill()
            raise RuntimeError(f"solrace serve did not start:\n{out}")
        time.sleep(0.1)
    try:
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def solrace_cmd() -> list[str]:
    return list(SOLRACE)


@pytest.fixture
def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env
