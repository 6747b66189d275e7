"""What every part of the room store shares: the client, the key prefix, this process's
origin tag, the event sink, the room's keys, script registration and the hand-over of stored
events to the sink. The parts (room_log, channels, presence, lobby_rows, liveness, deadlines)
each add one job; `store.Store` is all of them on one client."""

from __future__ import annotations

import logging
import secrets
from typing import Any, Protocol

from solrace.server.common.codes import shown
from solrace.server.store import keys
from solrace.server.store.redis_conn import Client, is_cluster

log = logging.getLogger("solrace.server")

ACTIVE_TTL_MS = 24 * 3600 * 1000  # a room nobody touches for a day goes away

ORIGIN_LEN = 8
#: what a Lua script's ARGV may hold
ScriptArg = bytes | str | int


class EventSink(Protocol):
    """Who fans out room events and boards to this process's connections (the hub)."""

    def local_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        """An event this store just stored (not read back from pub/sub)."""

    def remote_event(self, code: str, n: int, payload: bytes) -> None:
        """Another process's event off pub/sub, still encoded."""

    def board(self, code: str, delay: int, frame: bytes) -> None:
        """A spectator board frame, to send `delay` seconds from now."""

    def lost(self, code: str) -> None:
        """Pub/sub messages of this room may have been lost: catch up from the stream."""

    def watchers(self, code: str) -> int:
        """This process's spectators of the room (the lease holder's native append: nobody
        else listens, so they are all of them)."""


def as_text(value: bytes | str) -> str:
    """A Redis reply as text (this client does not decode replies: they come as bytes)."""
    return value.decode() if isinstance(value, bytes) else value


def as_bytes(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def code_of(channel: bytes | str) -> str:
    """The room code in a room's key or channel: what its hash tag holds."""
    return as_text(channel).rsplit("{", 1)[1].split("}", 1)[0]


class StoreBase:
    """The client and what each part of the store needs of it (see the module's docstring)."""

    def __init__(
        self, redis: Client, prefix: str, *, max_events: int, sink: EventSink | None
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.max_events = max_events
        #: a cluster: shard channels (SPUBLISH/SSUBSCRIBE), one reader per master
        self.cluster = is_cluster(redis)
        self._scripts: list[Any] = []
        #: tags what this store publishes, so its own process can skip it on pub/sub
        self.origin: bytes = secrets.token_hex(ORIGIN_LEN // 2).encode()
        #: None: nobody in this process watches rooms (tools, tests of the store alone)
        self.sink = sink

    def _script(self, source: str) -> Any:
        """A registered Lua script; on a cluster its PUBLISH calls are SPUBLISH (the room's
        channel is a shard channel in the room's slot, so the script stays on one node)."""
        if self.cluster:
            source = source.replace("'PUBLISH'", "'SPUBLISH'")
        script = self.redis.register_script(source)
        self._scripts.append(script)
        return script

    async def _publish(self, channel: str, data: bytes) -> None:
        if self.cluster:
            await self.redis.spublish(channel, data)
        else:
            await self.redis.publish(channel, data)

    def _fan_event(self, code: str, n: int, event: dict[str, Any]) -> None:
        """Hand a stored event to this process's own connections; a failure here must not
        make a stored write look failed (the listener-side catch-up still repairs gaps)."""
        if self.sink is not None:
            try:
                self.sink.local_event(code, n, event)
            except Exception:
                log.exception("local fan-out of event %d in %s", n, shown(code))

    def _fan_board(self, code: str, delay: int, frame: bytes) -> None:
        if self.sink is not None:
            try:
                self.sink.board(code, delay, frame)
            except Exception:
                log.exception("local fan-out of a board in %s", shown(code))

    # --- keys ---------------------------------------------------------------------------

    def key(self, code: str, part: str) -> str:
        return keys.room(self.prefix, code, part)

    def log_key(self, code: str, seat: int) -> str:
        return self.key(code, f"log:{seat}")

    def channel(self, code: str) -> str:
        return self.key(code, "pub")

    def room_keys(self, code: str, seats: int) -> list[str]:
        return [self.key(code, p) for p in ("meta", "events", "revs", "conn", "fence")] + [
            self.log_key(code, s) for s in range(seats)
        ]
