"""The Redis key map: every key the server writes, named here and nowhere else.

Every key starts with the deployment's prefix P (`--redis-prefix`, default `solrace:`). The part
in braces is the key's hash tag: on a Redis Cluster, keys with the same tag live on the same
master, so a Lua script may touch all of them at once (a room's move, a board's submit).

    P room:{CODE}:meta      hash     the room document (`doc`) and its version (store.py)
    P room:{CODE}:events    stream   the room's numbered events, for catching up
    P room:{CODE}:revs      hash     each seat's log revision
    P room:{CODE}:log:SEAT  list     a seat's moves
    P room:{CODE}:conn      hash     connections per process, spectator count
    P room:{CODE}:here      set      the processes subscribed to the room (pub/sub origins)
    P room:{CODE}:fence     hash     the lease epoch every write must carry, and `sync` (lease.py)
    P room:{CODE}:tail:SYNC stream   the lease holder's moves not yet folded in (lua/tail.lua)
    P room:{CODE}:lease     str      the room's lease (lease.py)
    P room:{CODE}:pub       channel  the room's live events for other processes (pub/sub)
    P {lobby}:rows|codes|gone        the public rooms' lobby summary
    P processes             set      the ids of live server processes
    P proc:{ID}:alive|conns|out      one process's liveness, its connections, its count-out
    P deadlines:{dlN}       zset     due deadlines (grace, clocks, record reminders), N buckets
    P record:{ID}           str      a race record (records.py, docs/RECORDS.md)
    P series:{ID}           str      a series record, JSON (records.py, docs/RECORDS.md)
    P player:{PID}          hash     a player's entry (name, last seen)
    P player:{PID}:races    zset     a player's history of records
    P player:{PID}:games    hash     a player's figures per game (standings.py)
    P player:{PID}:counted  str      the races already counted in them (marks.py)
    P board:{NAME}[:rows]            a leaderboard: the order and the rows (boards.py)
    P daily:{DATE/GAME}:deal|live|done  a daily's deal, its live attempts, scored count (daily.py)
    P stock:{GAME:RULES}    list     winnable deals drawn ahead for winnable rooms (deal_stock.py)
    P quick:{QUEUE}:tickets|seen     a quick-match queue: its tickets, when each was vouched for
    P quickbox:{PROC}       list     what a process's quick-match tickets became (quick.py)
    P quick:lease           str      the quick-match matcher's lease (quick.py)
    P arena:{ID}:meta       hash     an arena event: its settings, state, version (race/arena.py)
    P arena:{ID}:members    hash     an arena's members: player id -> standing (JSON)
    P arena:{ID}:races      list     an arena's scored races, in order (JSON: record id, points)
    P arena:{ID}:scored     set      the rooms/rounds already scored (applied once)
    P arenas                zset     the running arenas: id -> when they end (ms)
    P arenahost:{ADDR}      str      arenas an address created lately (a counter, expiring)
    P secret                str      the server secret (secret.py)
    P signing-key           str      the record-signing key (signing.py)
"""

from __future__ import annotations

__all__ = [
    "arena",
    "arena_host",
    "arenas",
    "board",
    "daily",
    "deadlines",
    "lobby",
    "player",
    "proc",
    "processes",
    "quick",
    "quick_inbox",
    "quick_lease",
    "record",
    "room",
    "secret",
    "series",
    "signing_key",
    "stock",
]


def room(prefix: str, code: str, part: str) -> str:
    """One of a room's keys (`meta`, `events`, `log:SEAT`, ...), all on its hash tag."""
    return f"{prefix}room:{{{code}}}:{part}"


def lobby(prefix: str, part: str) -> str:
    """The lobby summary's keys (`rows`, `codes`, `gone`), on one hash tag."""
    return f"{prefix}{{lobby}}:{part}"


def processes(prefix: str) -> str:
    return f"{prefix}processes"


def proc(prefix: str, proc_id: str, part: str) -> str:
    """A server process's keys (`alive`, `conns`, `out`)."""
    return f"{prefix}proc:{{{proc_id}}}:{part}"


def deadlines(prefix: str, bucket: int) -> str:
    return f"{prefix}deadlines:{{dl{bucket}}}"


def record(prefix: str, rid: str) -> str:
    return f"{prefix}record:{{{rid}}}"


def series(prefix: str, sid: str) -> str:
    return f"{prefix}series:{{{sid}}}"


def player(prefix: str, pid: str, part: str = "") -> str:
    """A player's entry (no part), or its `races`, `games` or `counted` key."""
    base = f"{prefix}player:{{{pid}}}"
    return f"{base}:{part}" if part else base


def board(prefix: str, name: str) -> list[str]:
    """A leaderboard's two keys: its order (a sorted set) and its rows (a hash)."""
    base = f"{prefix}board:{{{name}}}"
    return [base, f"{base}:rows"]


def daily(prefix: str, daily_id: str, part: str) -> str:
    """A daily's keys (`deal`, `live`, `done`); `daily_id` is `DATE/GAME`."""
    return f"{prefix}daily:{{{daily_id}}}:{part}"


def quick(prefix: str, queue: str, part: str) -> str:
    """A quick-match queue's keys (`tickets`, `seen`), on one hash tag; `queue` is
    `GAME.rated` or `GAME.casual`."""
    return f"{prefix}quick:{{{queue}}}:{part}"


def quick_inbox(prefix: str, proc_id: str) -> str:
    """A server process's quick-match inbox: what its tickets became."""
    return f"{prefix}quickbox:{{{proc_id}}}"


def quick_lease(prefix: str) -> str:
    """The quick-match matcher's lease: the id of the process that pairs."""
    return f"{prefix}quick:lease"


def arena(prefix: str, arena_id: str, part: str) -> str:
    """An arena's keys (`meta`, `members`, `races`, `scored`), on one hash tag."""
    return f"{prefix}arena:{{{arena_id}}}:{part}"


def arenas(prefix: str) -> str:
    """The running arenas (the matcher pairs their queues): id -> end time (ms)."""
    return f"{prefix}arenas"


def arena_host(prefix: str, addr: str) -> str:
    """How many arenas an address (its keyed hash) created lately."""
    return f"{prefix}arenahost:{{{addr}}}"


def stock(prefix: str, rule_set: str) -> str:
    """A rule set's stock of winnable deals (server/league/deal_stock.py)."""
    return f"{prefix}stock:{{{rule_set}}}"


def secret(prefix: str) -> str:
    return f"{prefix}secret"


def signing_key(prefix: str) -> str:
    return f"{prefix}signing-key"
