"""Where the benchmark's processes run: sessions of their own when measured, the caller's in
the test suite (solrace.bench.server_process.own_sessions)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from solrace.bench.load_procs import EchoServer
from solrace.bench.server_process import SHARE_CPU_ENV, favour_autogroup, own_sessions


@pytest.mark.parametrize(("value", "own"), [(None, True), ("0", True), ("", True), ("1", False)])
def test_the_switch(monkeypatch: pytest.MonkeyPatch, value: str | None, own: bool) -> None:
    if value is None:
        monkeypatch.delenv(SHARE_CPU_ENV, raising=False)
    else:
        monkeypatch.setenv(SHARE_CPU_ENV, value)
    assert own_sessions() is own


@pytest.mark.parametrize("share", [False, True])
def test_a_measured_child_takes_a_session_of_its_own_unless_told_to_share(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, share: bool
) -> None:
    monkeypatch.setenv(SHARE_CPU_ENV, "1" if share else "0")
    with EchoServer(tmp_path) as echo:
        apart = os.getsid(echo.pid) == echo.pid != os.getsid(0)
        assert apart is not share
        if share:  # nor is any autogroup favoured: the suite's other tests keep their share
            assert favour_autogroup(echo.pid) is False
