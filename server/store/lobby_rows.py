"""The lobby: a maintained summary of the listed rooms, on one slot, never touched by a move.

A room's row is written when its public state changes (a join, a start, the end); a failed
write is retried in the background and never fails the command that caused it (the room's
own commit is what counts). A page is one script."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from solrace.protocol.messages import decode_trusted, encode
from solrace.server.common.codes import shown
from solrace.server.common.metrics import METRICS
from solrace.server.common.retry import Backoff
from solrace.server.store import keys
from solrace.server.store.base import ACTIVE_TTL_MS, StoreBase, as_bytes, as_text
from solrace.server.store.scripts import source

log = logging.getLogger("solrace.server")

#: a lobby row or tombstone not rewritten for this long is dropped (its room expired)
LOBBY_KEEP_MS = ACTIVE_TTL_MS
#: seconds between retries of failed lobby writes (doubling up to the cap)
LOBBY_RETRY_S, LOBBY_RETRY_CAP_S = 0.2, 5.0
_UNKNOWN: Any = object()


class LobbyRows(StoreBase):
    """The lobby's rows: written per room version, paged in code order."""

    def _init_lobby(self) -> None:
        self._lobby_put = self._script(source("lobby_put"))
        self._lobby_page = self._script(source("lobby_page"))
        self._lobby_pending: dict[str, tuple[int, bytes]] = {}
        self._lobby_retry: asyncio.Task[None] | None = None

    async def _close_lobby(self) -> None:
        if self._lobby_retry is not None:
            self._lobby_retry.cancel()
            with contextlib.suppress(BaseException):
                await self._lobby_retry
        if self._lobby_pending:
            log.warning("%d lobby updates not written at shutdown", len(self._lobby_pending))

    @property
    def lobby_keys(self) -> list[str]:
        return [keys.lobby(self.prefix, part) for part in ("rows", "codes", "gone")]

    async def set_lobby(
        self, code: str, ver: int, row: dict[str, Any] | None, *, was: Any = _UNKNOWN
    ) -> None:
        """List the room with `row` as of room version `ver` (None: unlist it).

        Nothing is written when the row is `was` (the row before the change): most commits
        (a ready flag, a seat's end) leave the public row as it was. Never raises: the room's
        commit is what counts, so a failed write is logged and retried in the background, and
        a late retry can never overwrite a newer version's row.
        """
        if was is not _UNKNOWN and was == row and code not in self._lobby_pending:
            return
        payload = encode(row) if row is not None else b""
        self._lobby_pending[code] = (ver, payload)
        try:
            await self._write_lobby(code, ver, payload)
        except Exception as exc:
            METRICS.redis_errors.labels("lobby").inc()
            log.warning(
                "lobby update of %s failed (%r); retrying in the background", shown(code), exc
            )
            if self._lobby_retry is None:
                self._lobby_retry = asyncio.create_task(self._retry_lobby())
            return
        if self._lobby_pending.get(code) == (ver, payload):
            del self._lobby_pending[code]

    async def _write_lobby(self, code: str, ver: int, payload: bytes) -> None:
        now = int(time.time() * 1000)
        await self._lobby_put(keys=self.lobby_keys, args=[code, ver, payload, now, LOBBY_KEEP_MS])

    async def _retry_lobby(self) -> None:
        pauses = Backoff(LOBBY_RETRY_S, LOBBY_RETRY_CAP_S)
        try:
            while self._lobby_pending:
                await pauses.pause()
                for code, (ver, payload) in list(self._lobby_pending.items()):
                    METRICS.redis_retries.labels("lobby").inc()
                    try:
                        await self._write_lobby(code, ver, payload)
                    except Exception:
                        METRICS.redis_errors.labels("lobby").inc()
                        break
                    if self._lobby_pending.get(code) == (ver, payload):
                        del self._lobby_pending[code]
                else:
                    pauses.reset()
        finally:
            self._lobby_retry = None

    async def lobby_page(
        self, after: str = "", limit: int = 100
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Listed rooms in code order after `after`, and the cursor of the next page (None at
        the end): one script on the lobby's slot, then each row's spectators in one pipeline
        (per node, in parallel, on a cluster)."""
        now = int(time.time() * 1000)
        out = await self._lobby_page(
            keys=self.lobby_keys[:2], args=[after, limit, now, LOBBY_KEEP_MS]
        )
        nxt = as_text(out[0]) or None
        codes = [as_text(c) for c in out[1::2]]
        rows = [decode_trusted(as_bytes(r)) for r in out[2::2]]
        if rows:
            pipe = self.redis.pipeline(transaction=False)
            for code in codes:
                pipe.hget(self.key(code, "conn"), "spectators")
            for row, watching in zip(rows, await pipe.execute(), strict=True):
                row["spectators"] = int(watching or 0)
        return rows, nxt
