"""The composition root: every part of a server process built here, once, in the one order
their needs allow, each given what it uses through its constructor.

The hub comes first (it is the store's event sink), the store with it, then the competitive
layer, the room service (told how to keep rooms, the solver, the records and what a finished
race owes), the room supervision and the sockets. Where two parts need each other (the records
and the standings, the verdicts and the service, the dailies and the service's secret) one is
given a closure over the other, made before anything calls it; one link is made once both
exist: the hub reads rooms through the service (`Hub.attach`).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace

from solrace.protocol import messages as m
from solrace.server.config import ServerConfig
from solrace.server.league.boards import Boards
from solrace.server.league.daily import Dailies
from solrace.server.league.deal_stock import DealStock
from solrace.server.league.records import Records
from solrace.server.league.standings import Standings
from solrace.server.net.admin import Admin
from solrace.server.net.fanout import Hub
from solrace.server.net.guard import Guard
from solrace.server.net.supervisor import RoomSupervisor
from solrace.server.net.transport import Transport
from solrace.server.net.ws_server import broadcast
from solrace.server.race.arena import ArenaService
from solrace.server.race.quick import QuickMatch
from solrace.server.race.service import RoomService
from solrace.server.rules.room import Room
from solrace.server.solver.solving import Budgets, RaceVerdicts, SolverPool
from solrace.server.store.lease import Leases
from solrace.server.store.store import EventSink, Store


def build(
    make_store: Callable[[EventSink], Store], config: ServerConfig | None = None
) -> Transport:
    """A server process's parts, ready to `start` (server/main.py serves them), set up as
    `config` says (server/config.py; None: the defaults)."""
    config = config or ServerConfig()
    limits = config.limits
    proc_id = secrets.token_hex(8)  # this process, in Redis (liveness, leases, summaries)
    hub = Hub()
    store = make_store(hub)
    budgets = Budgets()
    budgets = replace(  # a game's --draw-budget is its dailies' too
        budgets,
        draw={**budgets.draw, **config.draw_budgets},
        daily={g: n for g, n in budgets.daily.items() if g not in config.draw_budgets},
    )
    solver = SolverPool(
        limits.solver_workers or None, budgets, pool_mode=config.deal_pool
    )  # processes start at the first solve
    stock = (
        DealStock(store.redis, store.prefix, solver, config.deal_stock)
        if config.deal_stock
        else None
    )
    # `service` and `standings` close cycles: each is made below, before anything calls these
    records = Records(
        store.redis,
        store.prefix,
        days=config.record_days,
        deadlines=store,
        due_ms=config.record_due_ms,
        also=lambda room: _both(standings.owed(room), arena.owed(room)),  # under its reminder
    )
    standings = Standings(records, Boards(store.redis, store.prefix))
    verdicts = RaceVerdicts(
        solver,
        lambda code, rule: service.update(code, rule),
        deal_ahead=lambda options: service.ahead(options),
        deep=config.deep_verdicts,
    )
    dailies = Dailies(
        store.redis,
        store.prefix,
        Boards(store.redis, store.prefix),
        board_days=config.daily_days,
        solver=solver,
        secret=lambda: service.secret,
        max_race=limits.max_race,
    )

    def finished(room: Room) -> None:
        verdicts.finished(room)
        records.finished(room)  # and the standings (records.also)
        dailies.finished(room)
        arena.finished(room)  # scored now; again (a no-op) under the record's reminder

    service = RoomService(
        store,
        seats_per_address=limits.seats_per_address,
        max_race=limits.max_race,
        keep=hub.rooms.__contains__,  # rooms with a connection here stay cached
        solver=solver,
        stock=stock,
        records=records,
        finished=finished,
        loaded=verdicts.owed,
        lobby_ttl=limits.lobby_cache,
        owns=config.owns,
    )
    # a room's lease lasts the liveness window: a dead owner's rooms are free as it is counted out
    leases = Leases(store, proc_id, limits.heartbeat * 5, serves=hub.rooms.__contains__)
    # arena.end: the arena's end deadline (`arena|ID`), fired by any process's janitor
    rooms = RoomSupervisor(service, hub, limits, leases, proc_id, lambda aid: arena.end(aid))
    hub.attach(service, rooms.on_room_event)
    checks = Guard(config.guard)
    matcher = QuickMatch(
        service,
        proc_id,
        rooms.arm,
        standings.ratings.get,
        config.quick,
        # a rated match spends its seats from the address's budget (the guard's)
        matched=lambda w: checks.rated_spend(w.limit_key, 1 if w.rated else 0),
        # an arena's queues and the rooms made for its members (server/race/arena.py)
        extra_queues=lambda: arena.queues(),
        made=lambda aid, code, members: arena.made(aid, code, members),
    )
    arena = ArenaService(
        service, matcher, lambda conns, msg: broadcast([c.ws for c in conns], m.encode(msg))
    )
    operators = Admin(
        config.admin,
        service,
        store,
        proc_id,
        lambda: ((code, [(c.role, c.seat) for c in conns]) for code, conns in hub.rooms.items()),
    )
    return Transport(
        service,
        hub,
        rooms,
        limits,
        records=records,
        standings=standings,
        dailies=dailies,
        guard=checks,
        admin=operators,
        quick=matcher,
        arena=arena,
    )


def _both(
    first: Callable[[], Awaitable[None]] | None, second: Callable[[], Awaitable[None]] | None
) -> Callable[[], Awaitable[None]] | None:
    """Two owed writes of a finished race as one (either may be None)."""
    if first is None or second is None:
        return first or second
    a, b = first, second

    async def both() -> None:
        await a()
        await b()

    return both
