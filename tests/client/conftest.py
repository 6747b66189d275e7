"""A real `solrace serve` for the client's end-to-end tests.

Started once per session (the server engineer's ServerProcess) against the
session's private Redis with a key prefix of its own; `server_url` is its
WebSocket URL. Tests that kill or restart a server use `race_server`.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLRACE = [sys.executable, "-m", "solrace"]


@pytest.fixture(scope="session")
def server_url(redis_url: str) -> Iterator[str]:
    """One server for the client tests (rooms are independent, so sharing it is safe)."""
    from solrace.bench.server_process import ServerProcess

    prefix = f"solrace-test-client-{uuid.uuid4().hex[:8]}:"
    with ServerProcess(redis_url, prefix, extra_args=["--grace", "5"]) as server:
        yield server.ws_url


@pytest.fixture
def solrace_cmd() -> list[str]:
    return list(SOLRACE)


@pytest.fixture
def child_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a `solrace` child process: its config directory (where `play`
    keeps the player key) is the test's own, never the user's."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env
