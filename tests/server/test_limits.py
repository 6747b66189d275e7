"""Limits per client address and for the whole server (issue 10, items 6, 9 and 10), over real
sockets on a real Redis. The tests' servers exempt 127.0.0.1 (every test connects from it), so
these clients connect from other loopback addresses: 127.0.0.2, 127.0.0.3, ... are each a
client address of their own."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from helpers.race import until
from helpers.timing import scaled
from solrace.bench.server_process import ServerProcess
from solrace.server.common.codes import CODE_LENGTH, PRIVATE_CODE_LENGTH
from solrace.server.net.conn import address_key, forwarded_for, networks
from solrace.server.net.guard import Guard, GuardLimits

A, B, C = "127.0.0.2", "127.0.0.3", "127.0.0.4"


def refused(reply: dict, limit: str) -> bool:
    return reply["type"] == "error" and reply["code"] == "rate_limited" and reply["limit"] == limit


@pytest.fixture
def limited(redis_url: str, key_prefix: str, request: pytest.FixtureRequest):
    """A server with the limits the test's `limits` marker gives (flags)."""
    marker = request.node.get_closest_marker("limits")
    args = list(marker.args) if marker else []
    with ServerProcess(redis_url, key_prefix, extra_args=args) as srv:
        yield srv


@pytest.mark.limits("--conns-per-address", "3")
async def test_connections_per_address_are_capped(limited, wire) -> None:
    url = limited.ws_url
    held = [await wire(url, source=A) for _ in range(3)]
    extra = await wire(url, hello=False, source=A)
    code, _ = await asyncio.wait_for(extra.closed, scaled(10))
    assert code == 1008
    assert refused(extra.received[0], "connections")
    other = await wire(url, source=B)  # another address is not concerned
    assert (await other.request({"type": "ping"}))["type"] == "pong"
    await held[0].close()
    await until(lambda: limited_health(limited) < 4, "the closed connection counted out")
    again = await wire(url, source=A)  # a freed place can be taken again
    assert (await again.request({"type": "ping"}))["type"] == "pong"


def limited_health(srv: ServerProcess) -> int:
    import json
    import urllib.request

    with urllib.request.urlopen(f"{srv.url}/healthz", timeout=scaled(5)) as resp:
        return int(json.load(resp)["connections"])


@pytest.mark.limits("--rooms-per-address", "2", "--rooms-window", "600")
async def test_rooms_created_per_address_are_capped(limited, wire) -> None:
    c = await wire(limited.ws_url, source=A)
    for i in range(2):
        c2 = await wire(limited.ws_url, source=A)
        assert (await c2.request_once({"type": "create", "name": f"h{i}"}))["type"] == "joined"
    third = await c.request_once({"type": "create", "name": "h3"})
    assert refused(third, "rooms") and third["retry_after"] > 0
    other = await wire(limited.ws_url, source=B)
    assert (await other.request_once({"type": "create", "name": "b"}))["type"] == "joined"


@pytest.mark.limits("--guesses-burst", "3", "--guesses-rate", "0.001")
async def test_guessing_codes_is_limited_per_address(limited, wire) -> None:
    host = await wire(limited.ws_url, source=B)
    made = await host.request_once({"type": "create", "name": "host", "options": {"public": True}})
    code = made["room"]
    g = await wire(limited.ws_url, source=A)
    for guess in ("ZZZZZ", "ZZZZY", "ZZZZX"):
        assert (await g.request_once({"type": "join", "room": guess, "name": "g"}))[
            "code"
        ] == "no_room"
    # the bucket is empty: the next lookup is refused, even of a room that exists (a refusal
    # must not tell which codes exist), and so are spectate and resume
    assert refused(await g.request_once({"type": "join", "room": code, "name": "g"}), "guesses")
    assert refused(await g.request_once({"type": "spectate", "room": code}), "guesses")
    assert refused(
        await g.request_once({"type": "resume", "room": code, "token": "x" * 43}), "guesses"
    )
    # a found room costs no guess: another address joins as often as it likes
    j = await wire(limited.ws_url, source=C)
    assert (await j.request_once({"type": "join", "room": code, "name": "j"}))["type"] == "joined"


@pytest.mark.limits("--guesses-burst", "2", "--guesses-rate", "0.001")
async def test_bad_tokens_count_as_guesses(limited, wire) -> None:
    host = await wire(limited.ws_url, source=B)
    code = (await host.request_once({"type": "create", "name": "host"}))["room"]
    g = await wire(limited.ws_url, source=A)
    for _ in range(2):
        bad = {"type": "resume", "room": code, "token": "y" * 43}
        assert (await g.request_once(bad))["code"] == "bad_token"
    assert refused(await g.request_once(bad), "guesses")


@pytest.mark.limits("--requests-burst", "4", "--requests-rate", "0.001")
async def test_expensive_requests_per_address(limited, wire) -> None:
    """Each connection keeps to its own rate; the address's budget is shared by all of them."""
    conns = [await wire(limited.ws_url, source=A) for _ in range(2)]
    replies = [await conns[i % 2].request_once({"type": "lobby"}) for i in range(4)]
    assert [r["type"] for r in replies] == ["lobby"] * 4
    over = await conns[0].request_once({"type": "lobby"})
    assert refused(over, "address") and over["retry_after"] > 0
    assert (await conns[1].request_once({"type": "ping"}))["type"] == "pong"  # cheap: not counted
    other = await wire(limited.ws_url, source=B)
    assert (await other.request_once({"type": "lobby"}))["type"] == "lobby"


@pytest.mark.limits("--server-rate", "2")  # a burst of 4 for the whole process
async def test_the_server_budget_is_shared_by_every_address(limited, wire) -> None:
    sources = [f"127.0.0.{i}" for i in range(2, 7)]
    replies = []
    for src in sources:
        c = await wire(limited.ws_url, source=src)
        replies.append(await c.request_once({"type": "lobby"}))
    assert [r["type"] for r in replies[:4]] == ["lobby"] * 4
    assert refused(replies[4], "server")
    exempt = await wire(limited.ws_url)  # 127.0.0.1: exempt from every budget
    assert (await exempt.request_once({"type": "lobby"}))["type"] == "lobby"


@pytest.mark.limits("--lobby-burst", "3", "--lobby-rate", "0.5")
async def test_a_connection_in_no_room_has_the_lobby_rate_then_a_racers(limited, wire) -> None:
    c = await wire(limited.ws_url, hello=False, source=A)
    welcome = await c.request_once({"type": "hello", "version": 1})
    assert welcome["limits"]["lobby_burst"] == 3
    assert [(await c.request_once({"type": "ping"}))["type"] for _ in range(2)] == ["pong"] * 2
    assert (await c.request_once({"type": "ping"}))["code"] == "rate_limited"
    host = await wire(limited.ws_url, source=B)
    code = (await host.request_once({"type": "create", "name": "h", "options": {"public": True}}))[
        "room"
    ]
    while True:  # retried after pauses, as a client keeping to the rate would
        joined = await c.request_once({"type": "join", "room": code, "name": "c"})
        if joined.get("code") != "rate_limited":
            break
        await asyncio.sleep(1.0)
    assert joined["type"] == "joined"
    pongs = [(await c.request_once({"type": "ping"}))["type"] for _ in range(10)]
    assert pongs == ["pong"] * 10  # a racer's credits now


async def test_private_rooms_get_long_codes_public_rooms_short(race_server, wire) -> None:
    c = await wire(race_server.ws_url)
    private = (await c.request({"type": "create", "name": "p"}))["room"]
    c2 = await wire(race_server.ws_url)
    public = await c2.request({"type": "create", "name": "q", "options": {"public": True}})
    assert len(private) == PRIVATE_CODE_LENGTH and len(public["room"]) == CODE_LENGTH
    # a room created public cannot turn private: its short code stays guessable
    bad = await c2.request(
        {"type": "configure", "host_token": public["host_token"], "options": {"public": False}}
    )
    assert bad["code"] == "bad_options"
    # the long code works everywhere a code does
    j = await wire(f"{race_server.ws_url}?room={private}")
    assert (await j.request({"type": "join", "room": private.lower(), "name": "j"}))[
        "room"
    ] == private
    assert private not in race_server.log()  # a private room's code is its link's secret


async def test_an_idle_lobby_room_expires_sooner(redis_url, key_prefix, wire) -> None:
    """A room in its lobby with nobody connected lives --lobby-ttl seconds, and a day again as
    soon as someone comes back."""
    r = aioredis.from_url(redis_url)
    with ServerProcess(redis_url, key_prefix, extra_args=["--lobby-ttl", "120"]) as srv:
        c = await wire(srv.ws_url)
        made = await c.request({"type": "create", "name": "h"})
        meta = f"{key_prefix}room:{{{made['room']}}}:meta"
        assert await r.pttl(meta) > 3600_000
        await c.close()
        await until(lambda: _pttl_at_most(r, meta, 120_000), "the idle lifetime set")
        back = await wire(srv.ws_url)
        resumed = await back.request(
            {"type": "resume", "room": made["room"], "token": made["token"]}
        )
        assert resumed["type"] == "joined"
        await until(lambda: _pttl_above(r, meta, 3600_000), "a day again")
    await r.aclose()


async def _pttl_at_most(r: aioredis.Redis, key: str, ms: int) -> bool:
    return 0 < await r.pttl(key) <= ms


async def _pttl_above(r: aioredis.Redis, key: str, ms: int) -> bool:
    return await r.pttl(key) > ms


# --- the guard's own bookkeeping, no sockets --------------------------------------------------


def test_addresses_behind_a_trusted_proxy_and_ipv6_prefixes() -> None:
    proxies = networks("10.0.0.0/8")
    fwd = "203.0.113.9, 10.1.2.3"  # the last hop is the address the trusted proxy saw
    assert forwarded_for("10.0.0.5", fwd, proxies) == "10.1.2.3"
    assert forwarded_for("198.51.100.7", fwd, proxies) == "198.51.100.7"  # not a proxy
    assert forwarded_for("10.0.0.5", None, proxies) == "10.0.0.5"
    assert forwarded_for("::ffff:10.0.0.5", "203.0.113.9", proxies) == "203.0.113.9"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::2")
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:192.0.2.1") == "192.0.2.1"


def test_the_table_forgets_addresses_that_are_gone_and_rested() -> None:
    g = Guard(GuardLimits(conns_per_address=2))
    keys = [g.connect(f"192.0.2.{i}") for i in range(50)]
    assert len(g.addresses) == 50
    for key in keys:
        g.disconnect(key)
    assert g.addresses == {}  # full buckets, no connection: nothing to remember
    key = g.connect("192.0.2.1")
    g.check(key, "lobby")
    g.disconnect(key)
    assert key in g.addresses  # its spent budget is remembered until it refills
    assert g.exempt("192.0.2.1") is False


def keyed_hello(key: str | None) -> dict:
    msg = {"type": "hello", "version": 1, "client": "solrace-tests"}
    return msg if key is None else {**msg, "player_key": key}


@pytest.mark.limits("--keys-per-address", "3", "--keys-window", "3600")
async def test_fresh_player_keys_per_address_are_limited(limited, wire) -> None:
    """Rating farmers spend fresh keys (docs/LEADERBOARDS.md, Provisional ratings): an
    address says hello with at most 3 distinct keys here; a key it used lately is free."""
    url = limited.ws_url
    keys = [f"{'K' * 22}-fresh-{i}" for i in range(4)]
    for key in keys[:3]:
        c = await wire(url, hello=False, source=A)
        assert (await c.request_once(keyed_hello(key)))["type"] == "welcome"
    c = await wire(url, hello=False, source=A)
    fourth = await c.request_once(keyed_hello(keys[3]))
    assert refused(fourth, "keys") and fourth["retry_after"] > 0
    assert (await c.request_once(keyed_hello(keys[0])))["type"] == "welcome"  # a known key
    anon = await wire(url, hello=False, source=A)
    assert (await anon.request_once(keyed_hello(None)))["type"] == "welcome"
    other = await wire(url, hello=False, source=B)  # another address has its own budget
    assert (await other.request_once(keyed_hello(keys[3])))["type"] == "welcome"


@pytest.mark.limits("--rated-per-address", "3", "--rated-window", "3600")
async def test_rated_seats_started_per_address_are_limited(limited, wire) -> None:
    """The host's address pays one rated seat per seat at each start of a rated race: 3 here,
    so a 2-seat rated race starts and a second does not (nothing changes); unrated races
    are not concerned."""
    url = limited.ws_url

    async def room(rated: bool, n: int) -> tuple:
        host = await wire(url, hello=False, source=A)
        assert (await host.request_once(keyed_hello(f"{'H' * 22}-host")))["type"] == "welcome"
        opts = {"game": "puttputt", "countdown": 0, "rated": rated}
        made = await host.request_once({"type": "create", "name": "h", "options": opts})
        guest = await wire(url, hello=False, source=B)
        hi = await guest.request_once(keyed_hello(f"{'G' * 22}-guest-{n}"))
        assert hi["type"] == "welcome"
        joined = await guest.request_once({"type": "join", "room": made["room"], "name": "g"})
        assert joined["type"] == "joined", joined
        return host, made

    host, made = await room(True, 0)
    started = await host.request_once({"type": "start", "host_token": made["host_token"]})
    assert started["type"] == "ok", started
    host, made = await room(True, 1)
    second = await host.request_once({"type": "start", "host_token": made["host_token"]})
    assert refused(second, "rated") and second["retry_after"] > 0
    watcher = await wire(url, source=C)
    snap = (await watcher.request_once({"type": "spectate", "room": made["room"]}))["snapshot"]
    assert snap["state"] == "lobby"
    host, made = await room(False, 2)
    unrated = await host.request_once({"type": "start", "host_token": made["host_token"]})
    assert unrated["type"] == "ok", unrated


def _raw_socket(port: int, source: str):
    import socket

    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s


def _answer(s) -> bytes:
    """Whatever the server writes before it closes (or the 5 s timeout)."""
    got = b""
    try:
        while chunk := s.recv(4096):
            got += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return got


def _healthz(port: int, source: str) -> bytes:
    s = _raw_socket(port, source)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        return _answer(s)
    finally:
        s.close()


@pytest.mark.limits("--handshakes-per-address", "3")
async def test_sockets_before_the_handshake_are_capped_per_address(limited, wire) -> None:
    """Issue 20 item 10: sockets that never finish a handshake (sending nothing) were not
    counted per address; each held a socket and a task until the handshake timeout. Now 3 from
    one address are held, the 4th is answered 429 with Retry-After at once and closed; another
    address is served; an open WebSocket no longer counts; closing one frees its place."""
    port = limited.port
    idle = [await asyncio.to_thread(_raw_socket, port, A) for _ in range(3)]
    try:

        async def over() -> bool:
            return (await asyncio.to_thread(_healthz, port, A)).startswith(b"HTTP/1.1 429")

        await until(over, "the 4th socket of one address answered 429")
        answer = await asyncio.to_thread(_healthz, port, A)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert b"Retry-After: 1" in head and b"waiting to open" in body, answer
        assert (await asyncio.to_thread(_healthz, port, B)).startswith(b"HTTP/1.1 200")
        # a WebSocket through its handshake no longer counts (connections have their own cap)
        idle[0].close()

        async def free() -> bool:
            return (await asyncio.to_thread(_healthz, port, A)).startswith(b"HTTP/1.1 200")

        await until(free, "a place freed by closing a waiting socket")
        opened = [await wire(limited.ws_url, source=A) for _ in range(3)]
        assert all(c.received[0]["type"] == "welcome" for c in opened)
    finally:
        for s in idle:
            s.close()
