"""Pub/sub, the one place that knows the published format: which rooms this process listens
to (and lists itself in, so that other processes publish their moves to it), and what comes
in, handed to the event sink unless it is this process's own."""

from __future__ import annotations

import contextlib
import logging

from solrace.server.common.codes import shown_in
from solrace.server.common.metrics import METRICS
from solrace.server.common.room_locks import RoomLocks
from solrace.server.store.base import ACTIVE_TTL_MS, ORIGIN_LEN, StoreBase, code_of
from solrace.server.store.pubsub import Reader, make_reader
from solrace.server.store.scripts import folding

log = logging.getLogger("solrace.server")


class Channels(StoreBase):
    """Room channels: subscribe, unsubscribe, and the reader's messages."""

    def _init_channels(self) -> None:
        self._reader: Reader | None = None
        self._channels: set[str] = set()
        #: one subscribe/unsubscribe per room at a time: an unsubscribe's SREM landing after a
        #: subscribe's SADD would unlist a process that listens again
        self._membership = RoomLocks()
        self._here_script = self._script(folding("here", self.max_events, ACTIVE_TTL_MS))

    async def _close_channels(self) -> None:
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader.aclose()

    async def subscribe(self, code: str) -> None:
        """Hear the room's events from other processes (until `unsubscribe`)."""
        channel = self.channel(code)
        async with self._membership.hold(code):
            if channel in self._channels:
                return
            self._channels.add(channel)
            # listed before listening: other processes publish this room's moves from now on,
            # and what they stored before is in what this process reads after subscribing
            await self._here(code, True)
            if self._reader is None:
                self._reader = make_reader(self.redis, self.receive, self._lost, self._error)
            await self._reader.subscribe(channel)

    async def unsubscribe(self, code: str) -> None:
        channel = self.channel(code)
        async with self._membership.hold(code):
            if channel in self._channels and self._reader is not None:
                self._channels.discard(channel)
                await self._reader.unsubscribe(channel)
                await self._here(code, False)

    async def _here(self, code: str, here: bool) -> None:
        """List (or unlist) this process among those listening to the room: the append script
        publishes a move only when another process is listed."""
        keys = [self.key(code, "here"), self.key(code, "fence")]
        await self._here_script(keys=keys, args=[self.origin, 1 if here else 0, ACTIVE_TTL_MS])

    def _lost(self, channels: list[bytes]) -> None:
        """A pub/sub connection came back: what it missed meanwhile is only in the streams."""
        METRICS.redis_retries.labels("pubsub").inc(len(channels))
        if self.sink is None:
            return
        for channel in channels:
            try:
                self.sink.lost(code_of(channel))
            except Exception:
                log.exception("catch-up after a pub/sub gap on %s", shown_in(channel))

    @staticmethod
    def _error(where: str) -> None:
        METRICS.redis_errors.labels(where).inc()

    def receive(self, channel: bytes | str, data: bytes) -> None:
        """One published message: b"e<origin><n>:<event>" or b"b<origin><delay>:<frame>".

        Our own (same origin) were handed to the sink when they were stored: dropped here
        without decoding them."""
        if self.sink is None or data[1 : 1 + ORIGIN_LEN] == self.origin:
            return
        code = code_of(channel)
        head, body = data[1 + ORIGIN_LEN :].split(b":", 1)
        if data[:1] == b"e":
            self.sink.remote_event(code, int(head), body)
        elif data[:1] == b"b":
            self.sink.board(code, int(head), body)
