"""What the room supervision's parts (presence, clocks, janitor) share: the room service and
its store, the hub, the limits, this process's id and room leases, their background tasks,
and whether the process is closing."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from solrace.server.net.conn import Limits
from solrace.server.net.fanout import Hub
from solrace.server.race.service import RoomService
from solrace.server.store.lease import Leases


class Supervision:
    """The parts' common ground (one per process: `supervisor.RoomSupervisor` makes it)."""

    def __init__(
        self,
        service: RoomService,
        hub: Hub,
        limits: Limits,
        leases: Leases | None,
        proc_id: str,
    ) -> None:
        self.service = service
        self.store = service.store
        self.hub = hub
        self.limits = limits
        self.proc_id = proc_id
        #: the leases of the rooms this process serves (None: no leases, no fencing)
        self.leases = leases
        self.tasks: set[asyncio.Task[Any]] = set()
        #: set by close(): the janitor ends even if its cancellation was swallowed
        self.closing = False

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


class Part:
    """A part of the room supervision (presence, clocks, janitor): the common ground's parts
    under their own names, taken once here rather than copied by each part."""

    def __init__(self, sv: Supervision) -> None:
        self.sv = sv
        self.service = sv.service
        self.store = sv.store
        self.hub = sv.hub
        self.limits = sv.limits
        self.proc_id = sv.proc_id
        self.leases = sv.leases
        self.spawn = sv.spawn
