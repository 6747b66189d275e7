"""A TCP proxy between a server and its Redis that can lose Redis's answers: a network that
delivers a command but never its reply, so the command runs and its caller times out, which
no setting of Redis itself produces."""

from __future__ import annotations

import asyncio
import contextlib

from solrace.server.store.redis_process import free_port


class AnswerLosingProxy:
    """Forwards 127.0.0.1:`port` to Redis on `target_port`. Once `lose_answers_to(marker)` is
    called, a connection that sends a request holding `marker` gets no more replies (they are
    dropped); every other connection is served as usual."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.marker: bytes | None = None
        #: requests whose answers were dropped (connections that sent the marker)
        self.lost = 0
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.writers: list[asyncio.StreamWriter] = []

    def url(self, query: str = "") -> str:
        return f"redis://127.0.0.1:{self.port}/0{query}"

    def lose_answers_to(self, marker: bytes | None) -> None:
        self.marker = marker

    async def __aenter__(self) -> AnswerLosingProxy:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for w in self.writers:
            w.close()
        for t in list(self.tasks):
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]
        lost = asyncio.Event()
        for coro in (
            self._requests(reader, up_writer, lost),
            self._replies(up_reader, writer, lost),
        ):
            task = asyncio.ensure_future(coro)
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _requests(
        self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, lost: asyncio.Event
    ) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await src.read(65536):
                if self.marker is not None and self.marker in data and not lost.is_set():
                    lost.set()
                    self.lost += 1
                dst.write(data)
                await dst.drain()
        dst.close()

    @staticmethod
    async def _replies(
        src: asyncio.StreamReader, dst: asyncio.StreamWriter, lost: asyncio.Event
    ) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await src.read(65536):
                if not lost.is_set():
                    dst.write(data)
                    await dst.drain()
        dst.close()
