"""The composition root: every part of a server process built here, once, in the one order
their needs allow, each given what it uses through its constructor.

The hub comes first (it is the store's event sink), the store with it, the room service on the
store (told how to keep rooms, the solver, the records and what a finished race owes), then the
competitive layer, the room supervision and the sockets. Two links close cycles and are made
once everything exists: the hub reads rooms through the service (`Hub.attach`), and the
service's finished-race hook calls parts built after it (through a closure below).
"""

from __future__ import annotations

from collections.abc import Callable

from solrace.server.league.boards import Boards
from solrace.server.league.daily import DEFAULT_BOARD_DAYS, Dailies
from solrace.server.league.records import DEFAULT_RECORD_DAYS, RECORD_DUE_MS, Records
from solrace.server.league.standings import Standings
from solrace.server.net.admin import Admin, AdminSettings
from solrace.server.net.conn import Limits
from solrace.server.net.fanout import Hub
from solrace.server.net.guard import Guard, GuardLimits
from solrace.server.net.supervisor import RoomSupervisor
from solrace.server.net.transport import Transport
from solrace.server.race.quick import QuickConfig, QuickMatch
from solrace.server.race.service import RoomService
from solrace.server.rules.room import Room
from solrace.server.solver.solving import RaceVerdicts, SolverPool
from solrace.server.store.lease import Leases
from solrace.server.store.store import EventSink, Store


def build(
    make_store: Callable[[EventSink], Store],
    limits: Limits | None = None,
    record_days: int = DEFAULT_RECORD_DAYS,
    record_due_ms: int = RECORD_DUE_MS,
    guard: GuardLimits | None = None,
    daily_days: int = DEFAULT_BOARD_DAYS,
    admin: AdminSettings | None = None,
    quick: QuickConfig | None = None,
) -> Transport:
    """A server process's parts, ready to `start` (server/main.py serves them)."""
    limits = limits or Limits()
    hub = Hub()
    store = make_store(hub)
    solver = SolverPool(limits.solver_workers or None)  # its processes start at the first solve
    records = Records(
        store.redis, store.prefix, days=record_days, deadlines=store, due_ms=record_due_ms
    )
    standings = Standings(records, Boards(store.redis, store.prefix))
    records.also = standings.owed  # applied with the record, under its reminder
    service = RoomService(store)
    service.seats_per_address = limits.seats_per_address
    service.max_race = limits.max_race
    service.keep = hub.rooms.__contains__  # rooms with a connection here stay cached
    service.solver = solver
    service.records = records
    service.lobby_cache.ttl = limits.lobby_cache
    verdicts = RaceVerdicts(solver, service.update)
    service.loaded = verdicts.owed
    dailies = Dailies(
        store.redis, store.prefix, Boards(store.redis, store.prefix), board_days=daily_days
    )
    dailies.solver = solver
    dailies.secret = lambda: service.secret

    def finished(room: Room) -> None:
        verdicts.finished(room)
        records.finished(room)  # and the standings (records.also)
        dailies.finished(room)

    service.finished = finished
    rooms = RoomSupervisor(service, hub, limits)
    # a room's lease lasts the liveness window: a dead owner's rooms are free as it is counted out
    rooms.leases = Leases(store, rooms.proc_id, limits.heartbeat * 5)
    rooms.leases.serves = hub.rooms.__contains__
    hub.attach(service, rooms.on_room_event)
    checks = Guard(guard or GuardLimits())
    matcher = QuickMatch(service, rooms.proc_id, rooms.arm, standings.ratings.get, quick)
    operators = Admin(
        admin or AdminSettings(),
        service,
        store,
        rooms.proc_id,
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
    )
