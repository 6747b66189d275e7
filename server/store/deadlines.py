"""Deadlines (grace periods, race clocks, owed records), bucketed over the cluster's slots: a
room's in bucket crc32(code) % DEADLINE_BUCKETS; a script leases the due ones to exactly one
caller, so a crash loses none."""

from __future__ import annotations

import asyncio
import zlib
from typing import NamedTuple

from solrace.server.common.metrics import METRICS
from solrace.server.store import keys
from solrace.server.store.base import ScriptArg, StoreBase, as_text
from solrace.server.store.scripts import source

#: deadline buckets: a few, so that no one slot is every process's poll target
DEADLINE_BUCKETS = 8
#: how long a claimed deadline is its claimer's: if the claimer has neither settled it by then
#: (its handler still running, or failed with Redis away, or its process dead), it is due again
DEADLINE_LEASE_MS = 5000


class Due(NamedTuple):
    """A claimed deadline: its member, and the score its lease holds it at (`settle_deadline`)."""

    member: str
    lease: int


class Deadlines(StoreBase):
    """Set, read, claim and settle deadlines."""

    def _init_deadlines(self) -> None:
        self._claim_due = self._script(source("claim_due"))
        self._settle_deadline = self._script(source("settle_deadline"))

    def deadline_key(self, bucket: int) -> str:
        return keys.deadlines(self.prefix, bucket)

    def deadline_bucket(self, member: str) -> int:
        """A room's deadlines share a bucket: "grace|<code>|<seat>", "tick|<code>"."""
        code = member.split("|")[1] if "|" in member else member
        return zlib.crc32(code.encode()) % DEADLINE_BUCKETS

    async def add_deadline(self, member: str, at_ms: int, *, keep: bool = False) -> None:
        """Set a deadline; with `keep`, one already pending stays as it is (ZADD NX)."""
        await self.redis.zadd(
            self.deadline_key(self.deadline_bucket(member)), {member: at_ms}, nx=keep
        )

    async def remove_deadline(self, member: str) -> None:
        await self.redis.zrem(self.deadline_key(self.deadline_bucket(member)), member)

    async def deadline_at(self, member: str) -> int | None:
        """When a deadline is due (ms), None if none is pending."""
        at = await self.redis.zscore(self.deadline_key(self.deadline_bucket(member)), member)
        return None if at is None else int(at)

    async def claim_due(
        self, now: int, limit: int = 100, lease_ms: int = DEADLINE_LEASE_MS
    ) -> list[Due]:
        """Deadlines that are due, each leased to exactly one caller until `now + lease_ms`: it
        is not taken out, so a handler that fails (the room's Redis failing over) or a claimer
        that dies leaves it to fire again then; the caller settles it once its handler ran
        (`settle_deadline`). The buckets are read in parallel; one whose node is away is
        skipped this round (its deadlines wait)."""
        lease = now + lease_ms
        got = await asyncio.gather(
            *(
                self._claim_due(keys=[self.deadline_key(b)], args=[now, limit, lease])
                for b in range(DEADLINE_BUCKETS)
            ),
            return_exceptions=True,
        )
        claimed: list[Due] = []
        for due in got:
            if isinstance(due, BaseException):
                METRICS.redis_errors.labels("deadlines").inc()
                continue
            claimed.extend(Due(as_text(m), lease) for m in due)
        return claimed

    async def settle_deadline(self, due: Due, again_at: int | None = None) -> bool:
        """A claimed deadline's handler ran: remove it (or, with `again_at`, make it due again
        then: a handler that failed retries sooner than its lease). A deadline set anew since
        the claim (another score) is left as it is. True when this one was settled."""
        args: list[ScriptArg] = [due.member, due.lease]
        if again_at is not None:
            args.append(again_at)
        key = self.deadline_key(self.deadline_bucket(due.member))
        return bool(await self._settle_deadline(keys=[key], args=args))
