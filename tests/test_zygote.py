"""The tests' servers fork from a zygote (helpers/zygote.py): a forked child must behave as
the fresh interpreter it replaces (output, exit status, signals, directory)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.zygote import ZYGOTE, ForkedChild
from solrace.bench.server_process import ServerProcess
from solrace.server.store.redis_process import free_port


def solrace(*args: str, cwd: str | None = None, **env: str) -> ForkedChild:
    child = ZYGOTE.launch(
        [sys.executable, "-m", "solrace", *args],
        env=dict(os.environ, **env),
        cwd=cwd,
        stdout=None,
        new_session=False,
    )
    assert isinstance(child, ForkedChild)
    return child


def test_a_forked_command_prints_and_exits_as_a_fresh_interpreter_does() -> None:
    args = ["deal", "klondike", "--seed", "7"]
    fresh = subprocess.run(
        [sys.executable, "-m", "solrace", *args], capture_output=True, check=True
    )
    forked = solrace(*args)
    assert forked.wait(30) == 0
    assert forked.stdout is not None and forked.stdout.read() == fresh.stdout

    bad = solrace("deal", "klondike")  # no seed: argparse's usage error, exit status 2
    assert bad.wait(30) == 2
    assert bad.stdout is not None and b"one of the arguments --seed" in bad.stdout.read()


def test_a_forked_child_is_in_its_directory_and_session_when_its_pid_comes(
    tmp_path: Path,
) -> None:
    """The zygote answers once the child has settled: a caller that sets the session's
    autogroup (the benchmark's favour_autogroup) must find the child's own session, not the
    zygote's (it once found the zygote's, and the benchmark's server ran starved)."""
    # (its environment: test_fair_deals.py's servers, each with its own SOLRACE_SECRET)
    serve = ["serve", "--port", str(free_port()), "--redis-url", "redis://127.0.0.1:1"]
    child = ZYGOTE.launch(
        [sys.executable, "-m", "solrace", *serve],
        env=dict(os.environ),
        cwd=str(tmp_path),
        stdout=None,
        new_session=True,
    )
    try:
        assert os.readlink(f"/proc/{child.pid}/cwd") == str(tmp_path)
        assert os.getsid(child.pid) == child.pid != os.getsid(0)
    finally:
        child.kill()
    assert child.wait(30) == -signal.SIGKILL


def test_a_forked_server_is_killed_and_stopped_with_the_statuses_popen_gives(
    redis_url: str, key_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ServerProcess, "launcher", ZYGOTE.launch)  # SOLRACE_TEST_ZYGOTE=0 too
    server = ServerProcess(redis_url, key_prefix).start()
    try:
        assert isinstance(server.proc, ForkedChild)
        with open(f"/proc/{server.pid}/stat") as f:
            parent = int(f.read().rsplit(")", 1)[1].split()[1])
        assert parent != os.getpid()  # the zygote's child, not ours
        server.kill()
        assert server.proc.returncode == -signal.SIGKILL
        server.start()
        assert server.stop() == 0  # SIGTERM: a clean shutdown
        assert "solrace" in server.log()
    finally:
        server.kill()  # nothing left running if an assertion failed
