"""A worker that crashes fails its test, and the run goes on to the end (helpers/xdist_recovery.py).

pytest-xdist 3.8.0's `--dist loadgroup` (the suite's) hangs after a crash: the dead worker's
finished groups go out again as empty units and no worker is ever given more. A hung suite
runs into CI's time limit with no result, so a crash anywhere (a segmentation fault, the
out-of-memory killer) must stay one failed test. These runs are real inner pytest sessions,
one worker each, whose worker really dies (`os._exit`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.timing import scaled

TESTS = Path(__file__).resolve().parent

CONFTEST = """
from helpers.xdist_recovery import make_scheduler


def pytest_xdist_make_scheduler(config, log):
    return make_scheduler(config, log)
"""

#: groups finished before the crash (each ungrouped test is a group of its own under
#: loadgroup), the crash in the middle of a group, and groups after it
FILES = {
    "test_1_first.py": """
        def test_one(): pass
        def test_two(): pass
    """,
    "test_2_crash.py": """
        import os
        import pytest
        pytestmark = pytest.mark.xdist_group("crash")
        def test_before(): pass
        def test_dies(): os._exit(3)
        def test_after(): pass
    """,
    "test_3_then.py": """
        import pytest
        @pytest.mark.xdist_group("then")
        def test_grouped(): pass
        def test_alone(): pass
    """,
}


def run_inner(
    tmp_path: Path, *args: str, conftest: str = CONFTEST, files: dict[str, str] = FILES
) -> subprocess.CompletedProcess[str]:
    """An inner pytest session in tmp_path with `conftest` and test `files`."""
    (tmp_path / "conftest.py").write_text(conftest)
    for name, body in files.items():
        (tmp_path / name).write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(90),
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_a_crashed_worker_fails_its_test_and_the_rest_runs(tmp_path: Path, workers: int) -> None:
    """One worker: its replacement runs what is left; two: both share it."""
    done = run_inner(tmp_path, "-n", str(workers), "--dist", "loadgroup", "-rA")
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "replacing crashed worker" in out, out
    assert "FAILED test_2_crash.py::test_dies" in out, out
    # the node ids carry their groups: the groups were in force
    crashed = re.search(
        r"worker '(gw\d+)' crashed while running 'test_2_crash.py::test_dies@crash'", out
    )
    assert crashed is not None, out
    if workers == 1:
        assert crashed.group(1) == "gw0", out
    # every other test ran once, on the first workers or a replacement
    for test in (
        "test_1_first.py::test_one",
        "test_1_first.py::test_two",
        "test_2_crash.py::test_before@crash",
        "test_2_crash.py::test_after@crash",
        "test_3_then.py::test_grouped@then",
        "test_3_then.py::test_alone",
    ):
        assert out.count(f"PASSED {test}") == 1, (test, out)
    assert "1 failed, 6 passed" in out, out


def test_a_suite_whose_tests_all_have_groups_refuses_one_that_arrives_without(
    tmp_path: Path,
) -> None:
    """The suite's scheduler (`all_grouped`) stops a run whose groups did not take, as with
    pytest 9.2 and pytest-xdist 3.8.0, instead of running every test alone."""
    done = run_inner(
        tmp_path,
        "-n",
        "1",
        "--dist",
        "loadgroup",
        conftest=CONFTEST.replace(
            "return make_scheduler(config, log)", "return make_scheduler(config, log, True)"
        ),
        files={"test_plain.py": "def test_alone(): pass\n"},
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "1 tests arrived without their xdist group (e.g. test_plain.py::test_alone)" in (
        done.stderr
    ), done.stdout + done.stderr


class _DeadWorker:
    """A worker whose channel closed: every send fails as execnet's does."""

    shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        raise OSError("cannot send (already closed?)")

    def shutdown(self) -> None:
        raise OSError("cannot send (already closed?)")


def test_work_sent_to_a_worker_that_just_died_goes_back_when_its_death_is_reported(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controller may hand out work between a worker's death and the report of it (a
    test it finished was reported in between; seen once in CI as an INTERNALERROR): the send
    fails, the run goes on, and the work returns to the queue with the death."""
    from collections import OrderedDict

    import xdist.scheduler.loadscope
    from helpers.xdist_recovery import RecoveringLoadGroupScheduling

    # the worker count from the command line, which a test run in one process has not got
    monkeypatch.setattr(xdist.scheduler.loadscope, "parse_tx_spec_config", lambda config: [1])
    sched = RecoveringLoadGroupScheduling(pytestconfig, None)
    node = _DeadWorker()
    ids = ["a.py::t1@g", "a.py::t2@g", "b.py::t3@h"]
    sched.collection = ids
    sched.registered_collections[node] = ids
    sched.assigned_work[node] = {}
    sched.workqueue = OrderedDict([("g", {ids[0]: False, ids[1]: False}), ("h", {ids[2]: False})])
    sched._assign_work_unit(node)  # the send fails: no exception
    assert list(sched.assigned_work[node]) == ["g"]
    assert sched.remove_node(node) == ids[0]  # reported failed by pytest-xdist, not run again
    assert sched.workqueue == {"h": {ids[2]: False}, "g": {ids[0]: True, ids[1]: False}}
