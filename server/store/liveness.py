"""Server processes: liveness and what each holds.

A process beats every few seconds (its `alive` key, with a TTL). Another counts it out (its
connections, so their seats get their grace periods) only after seeing it missing on
successful reads for a further window, and only while its own beats succeed: a Redis node
that fails over briefly makes nobody resign live players."""

from __future__ import annotations

import asyncio
import logging
import time

from solrace.server.common.metrics import METRICS
from solrace.server.store import keys
from solrace.server.store.base import ACTIVE_TTL_MS, StoreBase, as_text

log = logging.getLogger("solrace.server")


class Liveness(StoreBase):
    """Heartbeats, the process registry, and counting dead processes out."""

    def _init_liveness(self, liveness_ms: int) -> None:
        #: how long a process's `alive` key outlives its last beat
        self.liveness_ms = liveness_ms
        self._proc: str | None = None
        self._beat_ok = float("-inf")  # time.monotonic() of this process's last good beat
        self._suspects: dict[str, float] = {}  # process -> since when seen missing (monotonic)

    @property
    def procs_key(self) -> str:
        return keys.processes(self.prefix)

    def proc_alive_key(self, proc: str) -> str:
        return keys.proc(self.prefix, proc, "alive")

    def proc_conns_key(self, proc: str) -> str:
        return keys.proc(self.prefix, proc, "conns")

    def proc_out_key(self, proc: str) -> str:
        """Set by whoever counts the process out, taken by the process's next beat."""
        return keys.proc(self.prefix, proc, "out")

    async def heartbeat(self, proc: str, now: int) -> bool:
        """This process is alive: its `alive` key for `liveness_ms`, its name in the registry.

        Returns True when another process counted this one out since its last beat (it
        could not beat for a while: a long pause, a partition): its connections, still open,
        must count in again (`reset_connections`, presence). Never raises: a beat that
        fails only stops this process from counting others out until one succeeds.
        """
        self._proc = proc
        try:
            pipe = self.redis.pipeline(transaction=False)
            pipe.set(self.proc_alive_key(proc), now, px=self.liveness_ms)
            pipe.pexpire(self.proc_conns_key(proc), ACTIVE_TTL_MS)
            pipe.getdel(self.proc_out_key(proc))
            pipe.sadd(self.procs_key, proc)
            got = await pipe.execute()
        except Exception as exc:
            METRICS.redis_errors.labels("heartbeat").inc()
            log.warning("heartbeat failed (%r): counting nobody out until one succeeds", exc)
            return False
        self._beat_ok = time.monotonic()
        return got[2] is not None

    async def reset_connections(self, proc: str, held: dict[str, int]) -> None:
        """Record what this process holds from scratch (after it was counted out)."""
        key = self.proc_conns_key(proc)
        pipe = self.redis.pipeline(transaction=False)  # one key: one node on a cluster
        pipe.delete(key)
        if held:
            pipe.hset(key, mapping=held)  # type: ignore[arg-type]
            pipe.pexpire(key, ACTIVE_TTL_MS)
        await pipe.execute()

    async def note_connection(self, proc: str, code: str, field: str, delta: int) -> None:
        """What this process holds, so that another can undo its presence if it dies."""
        await self.redis.hincrby(self.proc_conns_key(proc), f"{code}|{field}", delta)

    async def claim_dead(self, now: int, max_silence_ms: int) -> list[tuple[str, dict[str, int]]]:
        """Processes gone silent, each claimed by exactly one caller, with what they held.

        A process is gone when its `alive` key (kept `liveness_ms` after each beat) has been
        missing on every read for a further `max_silence_ms` by this process's clock; a
        read that fails starts that over (its node may be failing over, and the process may
        be beating again the moment it is back). And nobody is counted out unless this
        process's own last beat succeeded within that window: a process that cannot reach
        Redis cannot tell a dead peer from its own trouble.
        """
        window = max_silence_ms / 1000
        mono = time.monotonic()
        if mono - self._beat_ok > window:
            self._suspects.clear()
            return []
        try:
            members = [as_text(p) for p in await self.redis.smembers(self.procs_key)]
        except Exception:
            METRICS.redis_errors.labels("liveness").inc()
            return []
        others = [p for p in members if p != self._proc]
        seen = await asyncio.gather(
            *(self.redis.exists(self.proc_alive_key(p)) for p in others), return_exceptions=True
        )
        out = []
        for pid, alive in zip(others, seen, strict=True):
            if isinstance(alive, BaseException) or alive:
                self._suspects.pop(pid, None)
                continue
            since = self._suspects.setdefault(pid, mono)
            if mono - since < window:
                continue
            del self._suspects[pid]
            if await self.redis.srem(self.procs_key, pid) != 1:
                continue  # another process claimed it first
            key = self.proc_conns_key(pid)
            held = {as_text(k): int(v) for k, v in (await self.redis.hgetall(key)).items()}
            await self.redis.delete(key)
            # if it was only paused, its next beat learns it was counted out
            await self.redis.set(self.proc_out_key(pid), 1, px=ACTIVE_TTL_MS)
            METRICS.rooms_taken_over.inc(len({k.partition("|")[0] for k in held}))
            out.append((pid, held))
        for pid in set(self._suspects) - set(others):
            del self._suspects[pid]
        return out

    async def retire(self, proc: str) -> None:
        await self.redis.srem(self.procs_key, proc)
        await self.redis.delete(
            self.proc_alive_key(proc), self.proc_conns_key(proc), self.proc_out_key(proc)
        )
