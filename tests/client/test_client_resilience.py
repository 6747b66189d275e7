"""The Python client and `solrace bot` ride out what the server calls normal: `busy` while
Redis fails over, a server SIGKILLed and restarted mid-race, a server not up yet when the
client first connects. Each test fails on a client that treats these as errors."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid

from helpers.race import until
from helpers.timing import scaled
from solrace.bench.server_process import ServerProcess
from solrace.client import Client
from solrace.client.bot import run_bot
from solrace.client.connection import ConnectionLost
from solrace.client.moves import legal_moves
from solrace.server.store.redis_process import RedisProcess


class Front:
    """A stand-in for nginx in front of the server: each connection is piped through to it,
    and while it is down a connection is answered `502 Bad Gateway`, as nginx does."""

    def __init__(self, backend_port: int) -> None:
        self.backend_port = backend_port
        self.port = 0
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    async def __aenter__(self) -> Front:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        try:
            try:
                back_r, back_w = await asyncio.open_connection("127.0.0.1", self.backend_port)
            except OSError:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                await writer.drain()
                return
            pipes = [
                asyncio.create_task(_pipe(reader, back_w)),
                asyncio.create_task(_pipe(back_r, writer)),
            ]
            try:
                await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pipe in pipes:
                    pipe.cancel()
                back_w.close()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            self.tasks.discard(task)


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()


async def test_a_request_refused_busy_is_sent_again(tmp_path) -> None:
    """Redis stops answering (frozen, as a master failing over): the server answers a join
    `busy`. The client waits and sends it again, and once Redis is back the join succeeds;
    the caller never sees the `busy`."""
    with RedisProcess(data_dir=str(tmp_path)) as redis:
        prefix = f"solrace-test-{uuid.uuid4().hex[:8]}:"
        url = f"{redis.url}?socket_timeout=0.3&socket_connect_timeout=0.3"
        with ServerProcess(url, prefix) as server:
            host, guest = Client(server.ws_url), Client(server.ws_url, record=True)
            await host.connect()
            await guest.connect()
            frozen = False
            try:
                created = await host.create("ann", {"game": "puttputt"})
                assert redis.proc is not None
                os.kill(redis.proc.pid, signal.SIGSTOP)
                frozen = True
                join = asyncio.create_task(guest.join(created.room, "bob"))
                received = guest.received
                assert received is not None
                await until(lambda: any(m.get("code") == "busy" for m in received), "busy")
                os.kill(redis.proc.pid, signal.SIGCONT)
                frozen = False
                joined = await asyncio.wait_for(join, scaled(30))
                assert joined.room == created.room and joined.seat == 1
            finally:
                if frozen:
                    os.kill(redis.proc.pid, signal.SIGCONT)
                await host.close()
                await guest.close()


async def test_the_first_connect_waits_for_a_restarting_server(race_server) -> None:
    """A client started while its server is down (being restarted) connects once it is up,
    instead of failing at the first refused connection."""
    race_server.kill()
    # the client's tries (about 9 s of backoff) stretched as the machine's hang bounds are:
    # a restart took longer under a hog
    client = Client(race_server.ws_url, connect_tries=int(scaled(8)))
    restart = asyncio.create_task(asyncio.to_thread(race_server.restart))
    try:
        welcome = await asyncio.wait_for(client.connect(), scaled(60))
        assert welcome.version >= 1
        await restart
        assert (await client.ping()).type == "pong"
    finally:
        await restart
        await client.close()


async def test_nothing_is_sent_on_a_new_socket_before_its_resume(race_server) -> None:
    """The server is SIGKILLed mid-race and restarted. A move the player sends while the
    client reconnects goes out only once the seat is resumed on the new socket: it is acked,
    never refused `not_player` (sent before the resume, it reached a connection with no
    seat)."""
    a, b = Client(race_server.ws_url, auto_resume=True), Client(race_server.ws_url)
    await a.connect()
    await b.connect()
    try:
        joined = await a.create("ann", {"game": "klondike", "countdown": 0})
        await b.join(joined.room, "bob")
        await a.ready()
        await b.ready()
        await a.start()
        await a.wait_board()
        await a.move(legal_moves(a.room.view)[0], n=1)
        race_server.kill()
        await until(lambda: not a.connected, "the drop seen")
        restart = asyncio.create_task(asyncio.to_thread(race_server.restart))
        move = legal_moves(a.room.view)[0]
        try:
            while True:  # as a player hammering the key: again at once after each loss
                try:
                    ack = await a.move(move, n=2)
                    break
                except ConnectionLost:
                    await asyncio.sleep(0.001)
        finally:
            await restart
        assert ack.n == 2
    finally:
        await a.close()
        await b.close()


async def test_bots_race_on_through_a_server_restart(race_server) -> None:
    """Two bots racing through a proxy (nginx answers 502 while the server is down); the
    server is SIGKILLed mid-race and restarted. Both reconnect, resume and play the race to
    its end: they make moves after the restart, and neither quits with an error."""
    async with Front(race_server.port) as front:
        await _bots_through_a_restart(race_server, front.ws_url)


async def _bots_through_a_restart(race_server: ServerProcess, url: str) -> None:
    stop = asyncio.Event()
    rooms: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    host = asyncio.create_task(
        run_bot(
            url,
            None,
            "b1",
            0.05,
            stop,
            create_options={"game": "klondike", "countdown": 0},
            start_when=2,
            on_joined=lambda j: rooms.set_result(j.room),
            seed=1,
        )
    )
    code = await asyncio.wait_for(rooms, scaled(30))
    guest = asyncio.create_task(run_bot(url, code, "b2", 0.05, stop, seed=2))
    watcher = Client(race_server.ws_url, auto_resume=True)
    await watcher.connect()
    try:
        await watcher.spectate(code)

        def moved(k: int) -> bool:
            players = watcher.room.players
            return len(players) == 2 and all(p.get("moves", 0) >= k for p in players.values())

        await watcher.wait_until(lambda: moved(3), scaled(30))
        before = {s: p["moves"] for s, p in watcher.room.players.items()}
        race_server.kill()
        await asyncio.to_thread(race_server.restart)
        results = await asyncio.wait_for(asyncio.gather(host, guest), scaled(90))
    finally:
        stop.set()
        await watcher.close()
    for result in results:
        assert result.races == 1, result
        assert set(result.errors) <= {"out_of_sync", "illegal_move", "bad_state"}, result
        assert result.statuses[0] in ("won", "dead", "resigned"), result
        assert result.seat is not None and result.moves > before[result.seat], result
