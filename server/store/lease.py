"""Room leases: which process serves a room, and the fencing version that stops a stale one.

With room affinity (`solrace serve --workers N`, or a proxy hashing the room code) every
connection of a room lands on one process, its owner. The owner holds the room's lease:

    P room:{C}:lease   str   "<epoch>:<process id>", with a TTL the owner renews every beat
    P room:{C}:fence   hash  epoch (bumped by every acquisition), owner, released (0/1),
                             here and watching (who listens, how many spectators: store.py)

Both keys share the room's hash tag, so one script reads and writes them on one node of a
cluster. A process acquires the lease when it serves the room's first local connection (and
on every beat while it serves the room and the lease is free); a dead or paused owner's
lease expires after the liveness window and the next process to serve the room takes it,
with a higher epoch.

Fencing: while a process holds a lease its writes to the room (`Store.commit`, `Store.append`)
carry the epoch, and the scripts refuse them when the room's fence has moved on: an owner
that was paused past its lease (a stall, a partition) cannot write on the strength of what
it cached once another process took the room over. The refusal is a `Conflict("fence")`: the
store forgets the epoch, the service drops its cached room, reloads it from Redis and judges
the command again, now as a process without the lease.

The holder is the room's one writer: it judges moves on its copy in memory and stores each
with one native command (`Store.append_native`: `XADD ... NOMKSTREAM` to its tail,
`room:{C}:tail:<sync>`, which only its own load makes and every write without the lease, and
every acquisition, folds in and deletes: lua/tail.lua), or, while another process listens to
the room, with the lean script (`Store.append_owned`), which checks the fence's epoch and its
`sync` counter instead of the room's version, log length and revision. `sync` moves with
every acquisition here and with every write made without the lease (and every `outcome` of a
lost answer: store.py), so a holder whose copy was loaded under the current `sync` knows that
nobody else wrote the room since; when the counter moved, its append is refused
(`Conflict("sync")`) and it reloads, keeping its lease.

A process without the lease still serves a connection that reached it (epoch 0: no fence
check). That is the documented slow path (a client that did not put the room in its URL, a
proxy that hashes differently, a worker that was down): it works through Redis as any two
processes sharing a room do, with the scripts' version checks keeping it exact.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from solrace.server.common.codes import shown
from solrace.server.common.metrics import METRICS
from solrace.server.store.base import ACTIVE_TTL_MS
from solrace.server.store.scripts import folding, source

if TYPE_CHECKING:
    from solrace.server.store.store import Store

log = logging.getLogger("solrace.server")


_RELEASE = source("lease_release")

#: how long the fence hash outlives its last acquisition (a room nobody touches goes in a day)
KEEP_MS = 24 * 3600 * 1000
#: leases renewed at once, in one pipeline: 250 paced rooms renewed one round trip after the
#: other (every 2 s) cost ~6 µs of the server's CPU a move (BENCHMARKS.md, issue 21, 2026-12-05)
RENEW_BATCH = 128


class Leases:
    """This process's room leases; the epochs it holds are the store's `fences`."""

    def __init__(
        self,
        store: Store,
        owner: str,
        ttl_s: float,
        serves: Callable[[str], bool] | None = None,
    ) -> None:
        self.store = store
        self.owner = owner
        self.ttl_ms = max(1, int(ttl_s * 1000))
        # a new epoch folds the last holder's tail in and deletes it (lua/tail.lua)
        self._acquire: Any = store.redis.register_script(
            folding("lease_acquire", store.max_events, ACTIVE_TTL_MS)
        )
        self._release = store.redis.register_script(_RELEASE)
        self._task: asyncio.Task[None] | None = None
        #: set by close(): the renewal loop ends even if its cancellation was swallowed
        self.closing = False
        #: whether this process still serves the room (`app.build`: a connection here)
        self.serves: Callable[[str], bool] = serves or (lambda code: True)

    @property
    def held(self) -> dict[str, int]:
        """Room code -> the epoch this process writes with."""
        return self.store.fences

    def _keys(self, code: str) -> list[str]:
        return [self.store.key(code, "lease"), self.store.key(code, "fence")]

    async def acquire(self, code: str) -> int:
        """Take (or renew) the room's lease: its epoch, or 0 when another process holds it."""
        keys = [*self._keys(code), self.store.key(code, "conn"), self.store.key(code, "here")]
        # with the turn's other commands (`Batcher`): a beat's renewals, issued together
        # (`_renew`), go as one pipeline, not a round trip each through the client's pool
        out = await self.store.batcher.evalsha(
            self._acquire, keys, [self.owner, self.ttl_ms, KEEP_MS]
        )
        epoch, took = int(out[0]), int(out[1])
        if epoch and not self.serves(code):
            # the room's last connection here left while this ran (a renewal racing `release`):
            # hand the lease back rather than keep an epoch for a room nobody here serves
            await self.release(code)
            return 0
        if epoch:
            if self.store.fences.get(code) != epoch:
                log.info("room %s: lease taken, epoch %d", shown(code), epoch)
            self.store.fences[code] = epoch
            if took:
                METRICS.rooms_taken_over.inc()
        elif (held := self.store.fences.pop(code, None)) is not None:
            log.warning("room %s: lease lost to another process (held epoch %d)", shown(code), held)
        return epoch

    async def release(self, code: str) -> None:
        """The last local connection of the room left: the next process to serve it needs
        no wait for a TTL."""
        self.store.fences.pop(code, None)
        await self._release(keys=self._keys(code), args=[self.owner])

    def start(self, serving: Callable[[], Iterable[str]], every_s: float) -> None:
        """Renew (or take, when free) the lease of every room this process serves, every beat."""
        self._task = asyncio.create_task(self._renew(serving, every_s))

    async def _renew(self, serving: Callable[[], Iterable[str]], every_s: float) -> None:
        """Until `close`. The loop also checks `closing`: a cancel that lands on a Redis call
        timing out can come back as a TimeoutError (seen with Redis restarting), and a loop
        that took it for a failed renewal ran on with close() waiting for it for ever."""
        while not self.closing:
            await asyncio.sleep(every_s)
            codes = list(serving())
            for at in range(0, len(codes), RENEW_BATCH):
                if self.closing:
                    return
                # a batch's renewals at once: one pipeline (the batcher's turn), one wait
                await asyncio.gather(*(self._renew_one(c) for c in codes[at : at + RENEW_BATCH]))

    async def _renew_one(self, code: str) -> None:
        """One room's renewal; its failure is counted and logged, the others go on."""
        try:
            await self.acquire(code)
        except asyncio.CancelledError:
            raise
        except Exception:
            METRICS.redis_errors.labels("lease").inc()
            log.debug("lease renewal of %s failed", shown(code), exc_info=True)

    async def close(self) -> None:
        """Stop renewing and hand back every lease (a clean shutdown)."""
        self.closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        for code in list(self.store.fences):
            with contextlib.suppress(Exception):
                await self.release(code)
