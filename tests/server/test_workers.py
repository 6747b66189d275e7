"""`solrace serve --workers 2`: one port, two worker processes, every connection of a room on
the worker that serves it; a worker SIGKILLed mid-race is replaced and no acked move is lost.

Which worker answered is what /healthz says (`worker`, `pid`); `/healthz?room=CODE` is routed
exactly like `/ws?room=CODE`, so it names the worker that serves the room."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request

from helpers.race import current_view, play
from helpers.servers import serving
from helpers.timing import scaled
from solrace.client import Client
from solrace.client.urls import with_room
from solrace.server.app import build
from solrace.server.net.front import owns, rendezvous, room_of, worker_argv
from solrace.server.net.ws_server import serve
from solrace.server.race.service import new_code
from solrace.server.store.redis_process import free_port
from solrace.server.store.store import Store
from websockets.exceptions import InvalidMessage, InvalidStatus

WORKERS = ["--workers", "2"]


def health(srv, room: str | None = None) -> dict:
    url = f"{srv.url}/healthz" + (f"?room={room}" if room else "")
    with urllib.request.urlopen(url, timeout=scaled(10)) as r:
        return json.loads(r.read())


def code_on(worker: int) -> str:
    """A room code (of no room) that the front routes to `worker` while both are up."""
    while True:
        code = new_code()
        if rendezvous(code, [0, 1]) == worker:
            return code


async def reconnect(wire, url: str):
    """Connect as a client does after losing its server: again after a failed attempt (a
    connection handed to the worker in the instant it died is closed with it)."""
    for attempt in range(20):
        try:
            return await wire(url)
        except (OSError, InvalidMessage, InvalidStatus):
            if attempt == 19:
                raise
            await asyncio.sleep(0.1)
    raise AssertionError("unreachable")


# --- units ----------------------------------------------------------------------------------


def test_room_of_reads_the_request_target() -> None:
    assert room_of(b"GET /ws?room=abcd HTTP/1.1\r\nHost: x\r\n") == "ABCD"
    assert room_of(b"GET /?watch=QW12 HTTP/1.1\r\n") == "QW12"
    assert room_of(b"GET /r/zz9 HTTP/1.1\r\n") == "ZZ9"
    assert room_of(b"GET /ws HTTP/1.1\r\n") is None
    assert room_of(b"GET /ws?room=no%20way HTTP/1.1\r\n") is None
    assert room_of(b"") is None and room_of(b"garbage") is None


def test_rendezvous_moves_only_the_rooms_of_a_worker_that_is_down() -> None:
    codes = [secrets.token_hex(3).upper() for _ in range(400)]
    three = {c: rendezvous(c, [0, 1, 2]) for c in codes}
    assert all(sum(1 for w in three.values() if w == i) > 80 for i in range(3))
    two = {c: rendezvous(c, [0, 2]) for c in codes}
    assert all(two[c] == three[c] for c in codes if three[c] != 1)
    assert all(owns(three[c], 3)(c) for c in codes)


def test_worker_argv_drops_workers_and_pins_the_redis() -> None:
    argv = ["--port", "9", "--workers", "2", "--workers=3", "--grace", "1"]
    assert worker_argv(argv, "redis://r") == [
        "--port",
        "9",
        "--grace",
        "1",
        "--redis-url",
        "redis://r",
    ]


async def test_a_handed_over_socket_is_served_as_if_it_was_accepted(
    redis_url, key_prefix, wire
) -> None:
    """A worker's server listens nowhere: the sockets the front hands over go through
    `connect_accepted_socket` with its protocol factory (front.HandOver), handshake and all."""
    transport = build(lambda sink: Store.from_url(redis_url, key_prefix, sink=sink))
    loop = asyncio.get_running_loop()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        port = listener.getsockname()[1]
        async with serve(transport, **transport.serve_options()) as server:
            await transport.start()
            assert server.sockets == ()
            connecting = asyncio.create_task(wire(f"ws://127.0.0.1:{port}/ws"))
            sock, _ = await loop.sock_accept(listener)
            await loop.connect_accepted_socket(server.protocol_factory, sock)
            client = await connecting
            assert (await client.request({"type": "ping", "t": 3}))["t"] == 3
            assert len(transport.conns) == 1
            await client.close()
            await transport.close()
    await transport.store.close()


# --- a real front and two workers -----------------------------------------------------------


async def test_a_rooms_connections_land_on_its_worker(redis_url, key_prefix, wire) -> None:
    async with serving(redis_url, key_prefix, extra_args=WORKERS) as (srv,):
        answered = {health(srv)["worker"] for _ in range(4)}
        assert answered == {0, 1}  # no room: round robin
        host = await wire(srv.ws_url)
        created = await host.request({"type": "create", "name": "ann", "options": {"countdown": 0}})
        code = created["room"]
        home = health(srv, code)
        # the creating worker drew a code routed to itself: the host is on the room's worker
        assert home["connections"] == 1 and home["rooms"] == 1
        for name in ("bob", "cy"):
            guest = await wire(f"{srv.ws_url}?room={code}")
            await guest.request({"type": "join", "room": code, "name": name})
        eve = await wire(f"{srv.ws_url}?watch={code}")
        await eve.request({"type": "spectate", "room": code})
        here = health(srv, code)
        assert here["worker"] == home["worker"] and here["pid"] == home["pid"]
        assert here["connections"] == 4 and here["rooms"] == 1
        other = health(srv, code_on(1 - home["worker"]))
        assert other["worker"] != home["worker"] and other["connections"] == 0


async def test_rooms_spread_over_the_workers(redis_url, key_prefix, wire) -> None:
    async with serving(redis_url, key_prefix, extra_args=WORKERS) as (srv,):
        codes = []
        for i in range(6):  # each create reaches a worker round robin, which draws its own code
            c = await wire(srv.ws_url)
            codes.append((await c.request({"type": "create", "name": f"h{i}"}))["room"])
        homes = [rendezvous(code, [0, 1]) for code in codes]
        assert sorted(set(homes)) == [0, 1], codes
        for w in (0, 1):
            assert health(srv, code_on(w))["rooms"] == homes.count(w)


async def test_sigkill_of_a_worker_mid_race_loses_no_acked_move(
    redis_url, key_prefix, wire
) -> None:
    async with serving(redis_url, key_prefix, extra_args=WORKERS) as (srv,):
        host = await wire(srv.ws_url)
        created = await host.request(
            {"type": "create", "name": "p0", "options": {"game": "puttputt", "countdown": 0}}
        )
        code = created["room"]
        url = f"{srv.ws_url}?room={code}"
        guest = await wire(url)
        joined = await guest.request({"type": "join", "room": code, "name": "p1"})
        await host.request({"type": "start", "host_token": created["host_token"]})
        for c in (host, guest):
            await c.wait_for(lambda x: x["type"] == "snapshot")
        acks = {0: await play(host, 5), 1: await play(guest, 3)}
        victim = health(srv, code)
        os.kill(victim["pid"], signal.SIGKILL)
        for c in (host, guest):
            close_code, _ = await asyncio.wait_for(c.closed, scaled(10))
            assert close_code != 1000
        # the players resume at once: the room routes to the surviving worker (or to the
        # restarted one); either serves it from the Redis log
        resumed = {}
        for seat, token in ((0, created["token"]), (1, joined["token"])):
            c = await reconnect(wire, url)
            j = await c.request({"type": "resume", "room": code, "token": token})
            assert j["type"] == "joined", j
            assert j["snapshot"]["you"]["view"] == acks[seat][-1]["view"]
            assert j["snapshot"]["players"][1 - seat]["moves"] == len(acks[1 - seat])
            resumed[seat] = c
        more = await play(resumed[0], 2)  # the race goes on
        assert more and more[0]["n"] == len(acks[0]) + 1
        assert current_view(resumed[0])["moves"] == len(acks[0]) + len(more)
        # the front started the dead worker again: both answer, one with a new pid
        seen: dict[int, int] = {}
        for _ in range(200):
            h = health(srv)
            seen[h["worker"]] = h["pid"]
            if len(seen) == 2 and victim["pid"] not in seen.values():
                break
            await asyncio.sleep(0.05)
        assert sorted(seen) == [0, 1] and victim["pid"] not in seen.values(), seen


def test_the_python_client_names_its_room_in_the_url() -> None:
    assert with_room("ws://h:1/ws", "AB12") == "ws://h:1/ws?room=AB12"
    assert with_room("ws://h:1/ws?room=OLD&x=1", "AB12") == "ws://h:1/ws?x=1&room=AB12"
    assert with_room("ws://h:1/ws", None) == "ws://h:1/ws"


async def test_python_clients_of_a_room_reach_its_worker(redis_url, key_prefix) -> None:
    async with serving(redis_url, key_prefix, extra_args=WORKERS) as (srv,):
        host = Client(srv.ws_url)
        await host.connect()
        created = await host.create("ann", {"game": "puttputt", "countdown": 0})
        guests = []
        for name in ("bob", "cy"):
            guest = Client(srv.ws_url, room=created.room)
            await guest.connect()
            await guest.join(created.room, name)
            guests.append(guest)
        assert health(srv, created.room)["connections"] == 3
        for c in (host, *guests):
            await c.close()


def test_a_front_whose_workers_cannot_start_exits_with_an_error() -> None:
    """Workers that die before they are ever up (here: no Redis at the URL) are not restarted
    forever: the front gives up, says why, and exits 1."""
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    cmd = [sys.executable, "-m", "solrace", "serve", "--workers", "2", "--port", str(free_port())]
    done = subprocess.run(
        [*cmd, "--redis-url", dead_redis], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1
    assert "does not start; stopping" in done.stderr


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its new parent to reap it counts)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


async def test_workers_do_not_outlive_a_killed_front(redis_url, key_prefix) -> None:
    async with serving(redis_url, key_prefix, extra_args=WORKERS) as (srv,):
        pids = {health(srv, code_on(w))["pid"] for w in (0, 1)}
        assert len(pids) == 2
        srv.kill()  # SIGKILL: the front has no chance to stop its workers
        for _ in range(400):
            if all(gone(p) for p in pids):
                break
            await asyncio.sleep(0.05)
        assert all(gone(p) for p in pids), pids


def answered_within(socks: list[socket.socket], seconds: float) -> int:
    """How many of the sockets got an HTTP 429 within `seconds` of now (all waited on at once)."""
    deadline = time.monotonic() + seconds
    waiting, answered = list(socks), 0
    while waiting and (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select(waiting, [], [], left)
        for s in readable:
            waiting.remove(s)
            answered += s.recv(200).startswith(b"HTTP/1.1 429")
    return answered


async def test_idle_sockets_of_one_address_do_not_pile_up_in_the_front(
    redis_url, key_prefix
) -> None:
    """The front waits up to 5 s for a socket's request line (to route it by its room), but
    only for `--handshakes-per-address` sockets of one address at once: the others go to a
    worker at once, whose own cap answers them 429. Before, every idle socket was held in the
    front for the whole 5 s (a stranger could hold its descriptors), and none was answered."""
    args = (*WORKERS, "--handshakes-per-address", "3")
    async with serving(redis_url, key_prefix, extra_args=args) as (srv,):
        socks = []
        try:
            for _ in range(20):
                s = socket.create_connection((srv.host, srv.port), source_address=("127.0.0.2", 0))
                socks.append(s)
            answered = await asyncio.to_thread(answered_within, socks, 2.5)
            # 3 held in the front, 3 in each worker's handshake (its own cap), the rest refused
            assert answered >= len(socks) - 3 * 3, answered
            assert health(srv)["ok"]  # and others are served meanwhile
        finally:
            for s in socks:
                s.close()
