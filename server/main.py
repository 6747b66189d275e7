"""`solrace serve`: the race server, WebSockets at /ws plus the web client over HTTP, one port."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from solrace.compiled import move_path_compiled
from solrace.protocol.messages import GAME_NAMES
from solrace.protocol.record_sign import key_info
from solrace.server.app import build
from solrace.server.common import gctime, redact
from solrace.server.common.metrics import METRICS
from solrace.server.config import ServerConfig, any_code
from solrace.server.league.daily import DEFAULT_BOARD_DAYS
from solrace.server.league.deal_stock import DEFAULT_SIZE as DEFAULT_STOCK
from solrace.server.league.records import DEFAULT_RECORD_DAYS, RECORD_DUE_MS
from solrace.server.league.signing import ENV, signing_key
from solrace.server.net import front
from solrace.server.net.admin import DEFAULT_NETWORKS, AdminSettings
from solrace.server.net.admin import ENV as ADMIN_ENV
from solrace.server.net.api import Api
from solrace.server.net.conn import networks
from solrace.server.net.fanout import PLAYER_TICK_S
from solrace.server.net.guard import GuardLimits
from solrace.server.net.http import make_process_request, port_taken, quiet_request_logs
from solrace.server.net.transport import SERVER_NAME, Limits
from solrace.server.net.ws_limits import SendLimits
from solrace.server.net.ws_server import serve
from solrace.server.race.quick import QuickConfig
from solrace.server.rules.matchmaking import Rules
from solrace.server.solver.deal_pool import DEFAULT_MODE, MODES
from solrace.server.store.batch import SPACING_S
from solrace.server.store.redis_process import RedisProcess
from solrace.server.store.store import Store
from websockets.frames import CloseCode

log = logging.getLogger("solrace.server")


def draw_budget(text: str) -> tuple[str, int]:
    """`--draw-budget GAME=POSITIONS`: a known game and a positive budget."""
    game, _, value = text.partition("=")
    if game not in GAME_NAMES or not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: GAME=POSITIONS, GAME one of {', '.join(GAME_NAMES)}, POSITIONS > 0"
        )
    return game, int(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="port for HTTP and WebSockets (default 8765)"
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL"),
        help="redis://host:port[/db] (one Redis) or redis+cluster://host:port[,host:port...] "
        "(a Redis Cluster); default $REDIS_URL; unset: start an embedded redis-server",
    )
    parser.add_argument(
        "--redis-prefix",
        default=os.environ.get("SOLRACE_REDIS_PREFIX", "solrace:"),
        help="prefix of every Redis key (default solrace:)",
    )
    parser.add_argument(
        "--finished-ttl", type=int, default=3600, help="seconds a finished room is kept"
    )
    parser.add_argument(
        "--max-events", type=int, default=500, help="room events kept for resuming clients"
    )
    parser.add_argument(
        "--record-days",
        type=int,
        default=DEFAULT_RECORD_DAYS,
        help=f"days a race record (and a player's history) is kept; 0: for good (default {DEFAULT_RECORD_DAYS})",
    )
    parser.add_argument(
        "--record-due",
        type=float,
        default=RECORD_DUE_MS / 1000,
        help="seconds after a race ends that its record's reminder is due: the record is "
        "written then by any live process if the finishing one died before writing it "
        f"(default {RECORD_DUE_MS / 1000:g})",
    )
    parser.add_argument(
        "--redis-spacing",
        type=float,
        default=SPACING_S * 1000,
        help="milliseconds a lone move (one not waiting behind its room's previous move) "
        "waits after the last pipeline of the move path's Redis writes, for what comes "
        "meanwhile to go with it (default %(default)g; 0: none). See server/store/batch.py",
    )
    parser.add_argument(
        "--progress-tick",
        type=float,
        default=PLAYER_TICK_S * 1000,
        help="milliseconds a room's routine progress (a racing seat's move) is held for its "
        "players, then sent as one frame each (default %(default)g; 0: at the end of the "
        "loop's turn). See server/net/fanout.py",
    )
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop"),
        default="asyncio",
        help="the event loop: asyncio's own, or uvloop's (libuv's, in C; the package "
        "`uvloop`, the extra `solrace[uvloop]`): less CPU a message (default %(default)s)",
    )
    parser.add_argument(
        "--gc-threshold",
        type=int,
        default=gctime.GC_THRESHOLD,
        help="net allocations between two of the garbage collector's youngest passes; what "
        "the start-up made is frozen first (default %(default)s; 0: Python's own 700, "
        "nothing frozen). See server/common/gctime.py",
    )
    parser.add_argument(
        "--predraw-daily",
        action=argparse.BooleanOptionalAction,
        default=os.environ.get("SOLRACE_PREDRAW_DAILY", "1") != "0",
        help="draw the daily deals of today and the next two days in the background at "
        "start-up and as each UTC day begins, kept in Redis, so the first player of a day "
        "does not wait for the solver (default on; SOLRACE_PREDRAW_DAILY=0 turns it off, as "
        "the test suite does)",
    )
    parser.add_argument(
        "--daily-days",
        type=int,
        default=DEFAULT_BOARD_DAYS,
        help=f"days a daily race's board and deal (the archive practice plays) are kept after "
        f"its day (default {DEFAULT_BOARD_DAYS})",
    )
    parser.add_argument("--burst", type=int, default=60, help="player messages allowed at once")
    parser.add_argument(
        "--rate", type=float, default=20.0, help="player messages per second, sustained"
    )
    parser.add_argument("--spectator-burst", type=int, default=20)
    parser.add_argument("--spectator-rate", type=float, default=5.0)
    parser.add_argument(
        "--grace", type=float, default=30.0, help="seconds a disconnected racer keeps the seat"
    )
    add_limit_arguments(parser)
    parser.add_argument(
        "--heartbeat",
        type=float,
        default=2.0,
        help="seconds between liveness beats in Redis; 5 missed = process dead",
    )
    parser.add_argument(
        "--max-race",
        type=int,
        default=Limits().max_race,
        help="seconds a race may last at most, time limit or not (0: no cap; default "
        "%(default)s): every race ends then, even if a deadline was lost",
    )
    parser.add_argument(
        "--draw-budget",
        action="append",
        default=[],
        type=draw_budget,
        metavar="GAME=POSITIONS",
        help="the solver's budget for a winnable deal of GAME (repeatable; default: "
        "server/solver/solving.py's Budgets, large so that any winnable deal may be drawn; "
        "a smaller one draws sooner and favours easy deals: docs/SOLVABILITY.md)",
    )
    parser.add_argument(
        "--deal-pool",
        choices=MODES,
        default=DEFAULT_MODE,
        help="where the shipped pools of winnable deals (server/solver/pools: seeds decided "
        "offline at a large budget) deal instead of the solver's search: 'cold' (default) a "
        "daily asked before it was drawn (a new deployment's first minutes), 'always' every "
        "daily and winnable room of a rule set with a pool (no wait, no bias toward easy "
        "deals, but the pools are public: a player can recognise a deal from its first cards "
        "and look up its solution), 'off' never",
    )
    parser.add_argument(
        "--deep-verdicts",
        action=argparse.BooleanOptionalAction,
        default=os.environ.get("SOLRACE_DEEP_VERDICTS", "1") != "0",
        help="search a post-race verdict left 'unknown' again, further (at the dailies' "
        "budget: Klondike 10,000,000 positions, Leap Year 30,000,000, Tabby Cat and Manx "
        "1,000,000), in a solver worker of "
        "its own at the lowest CPU priority, and send what it decides as another 'solved' event "
        "(default on; SOLRACE_DEEP_VERDICTS=0 turns it off, as the test suite does)",
    )
    parser.add_argument(
        "--deal-stock",
        type=int,
        default=int(os.environ.get("SOLRACE_DEAL_STOCK", str(DEFAULT_STOCK))),
        help="winnable deals of each stocked rule set (each game's defaults; Klondike's draw one "
        "or three, top cards or runs, unlimited passes) kept drawn ahead in Redis, searched "
        "in the background at the dailies' budget in a solver worker of their own, so a "
        "winnable room starts at once on a deal "
        "as hard as any winnable one (server/league/deal_stock.py; default %(default)s; 0: "
        "off, every winnable room draws on demand; SOLRACE_DEAL_STOCK sets the default, 0 in "
        "the test suite)",
    )
    parser.add_argument(
        "--solver-workers",
        type=int,
        default=0,
        help="solver processes of each server process (each worker of --workers), at nice 10 "
        "(default 0: min(4, cores)); the host's solver budget (docs/OPERATIONS.md, The solver)",
    )
    parser.add_argument(
        "--idle-timeout", type=float, default=60.0, help="close connections silent this long"
    )
    sends = SendLimits()
    parser.add_argument(
        "--send-buffer",
        type=int,
        default=sends.send_buffer,
        help="SO_SNDBUF of each WebSocket, bytes (default %(default)s)",
    )
    parser.add_argument(
        "--write-limit",
        type=int,
        default=sends.write_limit,
        help="bytes a connection's write buffer may hold before its slow-reader clock runs "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--max-buffered",
        type=int,
        default=sends.max_buffered,
        help="bytes a connection's write buffer may hold at all: over it, dropped at once "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--slow-reader-timeout",
        type=float,
        default=sends.slow_reader_s,
        help="seconds a connection may stay over --write-limit before it is dropped "
        "(default %(default)s)",
    )
    parser.add_argument(
        "--seats-per-address",
        type=int,
        default=8,
        help="seats one client address may hold in one room (0: no limit)",
    )
    parser.add_argument(
        "--admin-from",
        default=DEFAULT_NETWORKS,
        help="comma-separated networks the admin page (/admin) is served to; the page is on "
        f"only when ${ADMIN_ENV} holds the admin token (at least 16 characters)",
    )
    parser.add_argument(
        "--trusted-proxies",
        default="127.0.0.1,::1",
        help="comma-separated peer addresses or networks whose X-Forwarded-For names the "
        "client (the proxy in front of the server); empty: trust none",
    )
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("SOLRACE_DATA_DIR", default_data_dir()),
        help="where the embedded Redis keeps its append-only file (used without --redis-url)",
    )
    parser.add_argument(
        "--embedded-redis-port",
        type=int,
        default=6390,
        help="loopback port of the embedded Redis (used without --redis-url)",
    )
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument(
        "--print-public-key",
        action="store_true",
        help="print the public key race records are signed with (the JSON of /api/key: "
        "$SOLRACE_SIGNING_KEY's, else the one kept in Redis, made now if there is none) "
        "and exit",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes on the one port, connections routed by room (default 1: "
        "this process serves; N >= 2: a front hands each connection to a worker, "
        "server/net/front.py)",
    )
    parser.add_argument(
        "--quick-gather",
        type=float,
        default=1.0,
        help="quick match: a group of two or more waits for more players until this many seconds "
        "after its first player asked (at least 0.25 s; PROTOCOL.md, Quick match)",
    )
    parser.add_argument(
        "--quick-bots",
        type=float,
        default=0.0,
        help="quick match: seconds a player waits alone before it races the marked bots "
        "waiting in the queue (solrace bot --quick GAME); 0: never",
    )
    parser.add_argument(
        "--quick-countdown",
        type=int,
        default=2,
        help="quick match: seconds between a quick room's start and its race",
    )
    # internal: a worker of `--workers N`, taking connections from the front's Unix socket
    parser.add_argument("--worker-fd", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker-index", type=int, default=0, help=argparse.SUPPRESS)


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """Per-address caps and the server's budget (server/net/guard.py, docs/OPERATIONS.md)."""
    g = GuardLimits()
    add = parser.add_argument
    add("--lobby-burst", type=int, default=20, help="messages at once of a connection in no room")
    add("--lobby-rate", type=float, default=1.0, help="per second, of a connection in no room")
    add("--lobby-cache", type=float, default=1.0, help="seconds a lobby page is kept per process")
    add(
        "--lobby-ttl",
        type=int,
        default=900,
        help="seconds a room in its lobby with nobody connected is kept (default 900)",
    )
    add("--conns-per-address", type=int, default=g.conns_per_address)
    add(
        "--handshakes-per-address",
        type=int,
        default=g.handshakes_per_address,
        help="sockets per address not yet through the WebSocket handshake (HTTP requests "
        "included); over it a new socket is answered 429 and closed",
    )
    add(
        "--rooms-per-address",
        type=int,
        default=g.rooms_per_address,
        help="rooms one address may create per --rooms-window",
    )
    add("--rooms-window", type=float, default=g.rooms_window, help="seconds (default 600)")
    add(
        "--requests-burst",
        type=int,
        default=g.requests_burst,
        help="expensive requests (lobby, join, spectate, resume, create) per address at once",
    )
    add("--requests-rate", type=float, default=g.requests_rate, help="... and per second")
    add(
        "--guesses-burst",
        type=int,
        default=g.guesses_burst,
        help="lookups finding no room or seat, per address, at once",
    )
    add("--guesses-rate", type=float, default=g.guesses_rate, help="... and per second")
    add(
        "--keys-per-address",
        type=int,
        default=g.keys_per_address,
        help="distinct player keys one address may say hello with per --keys-window",
    )
    add("--keys-window", type=float, default=g.keys_window, help="seconds (default 3600)")
    add(
        "--rated-per-address",
        type=int,
        default=g.rated_per_address,
        help="seats of rated races one address may start per --rated-window",
    )
    add("--rated-window", type=float, default=g.rated_window, help="seconds (default 3600)")
    add(
        "--server-rate",
        type=float,
        default=g.server_rate,
        help="expensive requests per second, the whole process",
    )
    add(
        "--server-inflight",
        type=int,
        default=g.server_inflight,
        help="expensive requests waiting on Redis at once, the whole process",
    )
    add(
        "--exempt",
        action="append",
        default=[],
        metavar="NETS",
        help="comma-separated addresses or networks no per-address cap or server budget "
        "applies to (repeatable)",
    )


def guard_limits(args: argparse.Namespace) -> GuardLimits:
    return GuardLimits(
        conns_per_address=args.conns_per_address,
        handshakes_per_address=args.handshakes_per_address,
        rooms_per_address=args.rooms_per_address,
        rooms_window=args.rooms_window,
        requests_burst=args.requests_burst,
        requests_rate=args.requests_rate,
        guesses_burst=args.guesses_burst,
        guesses_rate=args.guesses_rate,
        keys_per_address=args.keys_per_address,
        keys_window=args.keys_window,
        rated_per_address=args.rated_per_address,
        rated_window=args.rated_window,
        server_rate=args.server_rate,
        server_inflight=args.server_inflight,
        exempt=networks(",".join(args.exempt)),
    )


def default_data_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(base, "solrace", "redis")


async def serve_forever(
    args: argparse.Namespace, redis_url: str, ready: asyncio.Event | None = None
) -> None:
    limits = Limits(
        burst=args.burst,
        rate=args.rate,
        spectator_burst=args.spectator_burst,
        spectator_rate=args.spectator_rate,
        grace=args.grace,
        max_race=args.max_race,
        solver_workers=args.solver_workers,
        idle_timeout=args.idle_timeout,
        heartbeat=args.heartbeat,
        lobby_burst=args.lobby_burst,
        lobby_rate=args.lobby_rate,
        lobby_cache=args.lobby_cache,
        lobby_ttl=args.lobby_ttl,
        seats_per_address=args.seats_per_address,
        trusted_proxies=networks(args.trusted_proxies),
        sends=SendLimits(
            send_buffer=args.send_buffer,
            write_limit=args.write_limit,
            max_buffered=args.max_buffered,
            slow_reader_s=args.slow_reader_timeout,
        ),
    )
    config = ServerConfig(
        limits=limits,
        guard=guard_limits(args),
        admin=AdminSettings.from_env(args.admin_from),
        quick=QuickConfig(
            rules=Rules(gather=args.quick_gather, bots_after=args.quick_bots),
            countdown=args.quick_countdown,
        ),
        record_days=args.record_days,
        record_due_ms=int(args.record_due * 1000),
        daily_days=args.daily_days,
        draw_budgets=dict(args.draw_budget),
        deal_pool=args.deal_pool,
        deal_stock=args.deal_stock,
        deep_verdicts=args.deep_verdicts,
        # with --workers, draw room codes that the front routes back to this worker
        owns=front.owns(args.worker_index, args.workers)
        if args.worker_fd is not None
        else any_code,
    )
    admin = config.admin
    transport = build(
        lambda sink: Store.from_url(
            redis_url,
            args.redis_prefix,
            finished_ttl=args.finished_ttl,
            max_events=args.max_events,
            sink=sink,
            liveness_ms=int(args.heartbeat * 5 * 1000),  # the janitor's "5 missed beats"
        ),
        config,
    )
    store = transport.store
    store.batcher.spacing = args.redis_spacing / 1000
    transport.hub.player_tick = args.progress_tick / 1000
    await store.ready()
    METRICS.bind(
        connections=lambda: len(transport.conns),
        rooms_by_state=lambda: Counter(c.room.state for c in transport.service.cache.values()),
        rooms_owned=lambda: len(transport.store.fences),  # the leases it holds (lease.py)
    )
    # the secret that keys client addresses and the key that signs records, loaded before the
    # port opens: the first connection's address and the first /api/key answer need them
    await transport.start()
    METRICS.gc.install()
    gctime.tune(args.gc_threshold)
    METRICS.loop_lag.start()
    stop = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, AttributeError):
        loop.add_signal_handler(signal.SIGUSR1, dump_tasks)  # an operator's view of a stuck server

    def request_stop() -> None:
        if not stop.done():
            stop.set_result(None)

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, request_stop)
    async with (
        serve(
            transport,
            **_listen(args),
            process_request=make_process_request(
                lambda: {**transport.health(), **_whoami(args)},
                metrics=METRICS.render,
                api=Api(
                    transport.records,
                    transport.standings,
                    dailies=transport.dailies,
                    guard=transport.guard,
                    trusted_proxies=transport.limits.trusted_proxies,
                    rooms=transport.store.doc,  # /api/room/CODE: an invite link's room
                    arenas=transport.arena_results,  # /api/event/ID
                ).handle,
                admin=lambda peer, forwarded: admin.allows_request(
                    peer, forwarded, transport.limits.trusted_proxies
                ),
            ),
            # frames over max_frame get `frame_too_large`, then 1009; slow readers are dropped
            **transport.serve_options(),
            ping_interval=20,
            ping_timeout=20,
            close_timeout=2,  # a client that does not answer the close handshake must not hold up shutdown
            server_header=SERVER_NAME,
        ) as server
    ):
        log.info(
            "solrace serving on http://%s:%d (ws at /ws), redis %s prefix %r, move path %s",
            args.host,
            args.port,
            _without_password(redis_url),
            args.redis_prefix,
            "compiled" if move_path_compiled() else "interpreted",
        )
        if args.worker_fd is None:
            print(f"solrace serving on http://{args.host}:{args.port}", flush=True)
        if args.predraw_daily and not args.worker_index:  # one worker draws for all
            transport.dailies.predraw()
        handover = None
        if args.worker_fd is not None:
            handover = front.HandOver(args.worker_fd, server.protocol_factory, request_stop)
            handover.start()
        if ready:
            ready.set()
        await stop
        log.info("shutting down: closing connections with 1001")
        server.close()
        if handover is not None:
            handover.close()
        await asyncio.gather(
            *(
                conn.ws.close(CloseCode.GOING_AWAY, "server shutting down")
                for conn in list(transport.conns)
            ),
            return_exceptions=True,
        )
        await server.wait_closed()
    await transport.close()
    await store.close()


def _listen(args: argparse.Namespace) -> dict[str, Any]:
    """Where the WebSocket server listens: the port, or (a worker) nowhere, its connections
    coming from the front (`front.HandOver`)."""
    if args.worker_fd is None:
        return {"host": args.host, "port": args.port}
    return {}


def _whoami(args: argparse.Namespace) -> dict[str, Any]:
    """/healthz names the process (and the worker) that answered: which one a room's
    connections reach is what `--workers` routing is about."""
    info: dict[str, Any] = {"pid": os.getpid()}
    if args.worker_fd is not None:
        info["worker"] = args.worker_index
    return info


def _serve(args: argparse.Namespace, redis_url: str) -> int:
    """This process serves (one process, or a worker), or runs the front of N workers; or,
    with --print-public-key, prints the signing key's public half and exits."""
    if args.print_public_key:
        return asyncio.run(print_public_key(args, redis_url))
    if args.workers >= 2 and args.worker_fd is None:
        return front.run_front(args, redis_url, front.serve_argv())
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    if args.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            print(
                "solrace serve: --loop uvloop: the package uvloop is not installed", file=sys.stderr
            )
            return 2
        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(serve_forever(args, redis_url))
    return 0


async def print_public_key(args: argparse.Namespace, redis_url: str | None) -> int:
    """`--print-public-key`: the key the servers of this Redis (and prefix) sign with, or
    $SOLRACE_SIGNING_KEY's (then `redis_url` is None: no Redis is needed)."""
    try:
        if redis_url is None:
            key = await signing_key(None, args.redis_prefix)
        else:
            store = Store.from_url(redis_url, args.redis_prefix)
            try:
                key = await signing_key(store.redis, store.prefix)
            finally:
                await store.close()
    except ValueError as exc:
        print(f"solrace serve: {ENV}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(key_info(key.public_key()), indent=1), flush=True)
    return 0


def _without_password(url: str) -> str:
    """The Redis URL as logs may show it."""
    head, sep, tail = url.rpartition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, creds = head.partition("//")
    return f"{scheme}//{creds.split(':', 1)[0]}:***@{tail}"


def dump_tasks() -> None:
    import io

    out = io.StringIO()
    for task in asyncio.all_tasks():
        task.print_stack(limit=12, file=out)
    log.warning("tasks:\n%s", out.getvalue())


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    quiet_request_logs(logging.getLogger().level)
    redact.install()
    if os.environ.get(ENV) and args.print_public_key:  # no Redis needed
        return asyncio.run(print_public_key(args, None))
    if (
        getattr(args, "worker_fd", None) is None
        and not args.print_public_key
        and (taken := port_taken(args.host, args.port))
    ):
        print(taken, file=sys.stderr)
        return 1
    if args.redis_url:
        return _serve(args, args.redis_url)
    embedded_url = f"redis://127.0.0.1:{args.embedded_redis_port}/0"
    if redis_answers(args.embedded_redis_port):
        # A previous `solrace serve` that was killed leaves its embedded Redis running on the
        # same data directory: use it rather than start a second one on the same files.
        log.info("embedded redis-server already running at %s; using it", embedded_url)
        return _serve(args, embedded_url)
    os.makedirs(args.data_dir, exist_ok=True)
    with RedisProcess(
        port=args.embedded_redis_port, persist=True, data_dir=args.data_dir
    ) as redis_proc:
        log.info(
            "no REDIS_URL: started an embedded redis-server at %s (data in %s)",
            redis_proc.url,
            args.data_dir,
        )
        return _serve(args, redis_proc.url)


def redis_answers(port: int) -> bool:
    """True when a Redis server answers PING on this loopback port."""
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False
