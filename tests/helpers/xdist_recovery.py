"""`--dist loadgroup` that survives a crashed worker (pytest-xdist 3.8.0 hangs instead).

When a worker dies (a segmentation fault, the kernel's out-of-memory killer), pytest-xdist
reports the test it was running as failed and starts a replacement. Its load-group scheduler
then puts the dead worker's whole workload back in the queue, the groups it had finished
included: a finished group goes out again as an empty unit, which no worker ever reports
done, so the scheduler stops handing out work and every worker idles until CI's time limit
(pytest-xdist issues 1323, 1327, 1378; fixed upstream after 3.8.0, not released). A crash
must fail one test and leave the run to finish, so the suite's controller uses this scheduler:

* only the groups with tests still to run go back in the queue, and the test the worker died
  in is not among them (it is already reported as failed; run again, it may take the next
  worker down too);
* a unit with nothing left to run is never sent;
* a worker always holds two tests to run, or is told there are no more: a worker runs a test
  only once it knows the next one (or that there is none), and the scheduler hands out more
  only when a worker reports a test done, which a replacement given one test never does;
* work sent to a worker that has just died (its channel closed, its death not yet reported)
  stays in its workload until the report comes, instead of failing the run (INTERNALERROR).
"""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadGroupScheduling


def make_scheduler(config: pytest.Config, log: object, all_grouped: bool = False) -> object | None:
    """The `pytest_xdist_make_scheduler` hook's answer: this scheduler for `--dist loadgroup`,
    pytest-xdist's own for the other modes (None). `all_grouped`: every test has an
    `xdist_group`, so one that arrives without it means the groups did not take."""
    if config.getvalue("dist") == "loadgroup":
        return RecoveringLoadGroupScheduling(config, log, all_grouped)
    return None


class RecoveringLoadGroupScheduling(LoadGroupScheduling):  # type: ignore[misc]
    """pytest-xdist's `loadgroup` scheduler, with a crashed worker's work rescheduled whole."""

    def __init__(self, config: pytest.Config, log: object, all_grouped: bool = False) -> None:
        super().__init__(config, log)
        self.all_grouped = all_grouped

    def add_node_collection(self, node: Any, collection: Any) -> None:
        """Refuse a collection whose tests lost their groups: pytest-xdist carries a group in
        the node id (`...::test@group`), which pytest 9.2 no longer lets it change
        (pytest-xdist issue 1386). The run would go on with every test alone, the timing
        tests competing for the CPU, with nothing failing to say so."""
        if self.all_grouped:
            lost = [nodeid for nodeid in collection if "@" not in nodeid]
            if lost:
                raise pytest.UsageError(
                    f"--dist loadgroup: {len(lost)} tests arrived without their xdist group "
                    f"(e.g. {lost[0]}): pytest {pytest.__version__} and this pytest-xdist do "
                    "not work together (pytest-xdist issue 1386); install the versions "
                    "pyproject.toml asks for (./dev setup)"
                )
        super().add_node_collection(node, collection)

    def remove_node(self, node: Any) -> str | None:
        workload: dict[str, dict[str, bool]] = self.assigned_work.pop(node)
        left = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
        if not left:
            return None
        crashed = next(
            nodeid for unit in left.values() for nodeid, done in unit.items() if not done
        )
        for scope, unit in left.items():
            if crashed in unit:
                unit[crashed] = True  # reported failed by pytest-xdist; not run again
            if not all(unit.values()):
                self.workqueue[scope] = unit
        for other in self.assigned_work:
            self._reschedule(other)
        return crashed

    def _assign_work_unit(self, node: Any) -> None:
        while self.workqueue:
            scope, unit = next(iter(self.workqueue.items()))
            if not all(unit.values()):
                break
            del self.workqueue[scope]  # nothing left to run in it
        try:
            if not self.workqueue:
                if not node.shutting_down:
                    node.shutdown()
                return
            super()._assign_work_unit(node)
            if not self.workqueue:
                if not node.shutting_down:
                    node.shutdown()  # the last unit: the worker runs it to the end, then stops
            elif self._pending_of(self.assigned_work[node]) < 2:
                self._assign_work_unit(node)  # a worker runs a test once it knows the next one
        except OSError:
            # the worker died and its channel closed before pytest-xdist saw it go down (a
            # test it had finished was reported in between): the unit is already in its
            # workload, which remove_node puts back in the queue when the news comes
            return
