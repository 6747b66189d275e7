"""The store's Lua scripts, as files of the package (server/store/lua/*.lua).

Each script is read once, with `importlib.resources` (so it works from a wheel, a zip or the
strict editable install alike), and registered by the part of the store that runs it. The
append scripts get the store's stream length and key lifetime written in as their first line
(`MAXLEN`, `TTL`): fewer arguments to send per move. The scripts that number a room's events
get `top` (lua/top.lua: the stream's last number) written in before them (`numbering`)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files


@cache
def source(name: str, package: str = "solrace.server.store") -> str:
    """The text of lua/<name>.lua in `package` (the store's by default; the league keeps its
    own scripts beside its modules)."""
    return files(package).joinpath("lua", f"{name}.lua").read_text()


def numbering(name: str) -> str:
    """A script that numbers a room's events, after the function that reads the last number."""
    return source("top") + source(name)


def folding(name: str, max_events: int, ttl_ms: int) -> str:
    """A script that folds the lease holder's tail (lua/tail.lua) before it reads or writes
    the room, with this store's stream length and key lifetime written in, and `top`."""
    head = f"local MAXLEN, TTL = {int(max_events)}, {int(ttl_ms)}\n"
    return head + source("top") + source("tail") + source(name)


def append_script(max_events: int, ttl_ms: int) -> str:
    """The append script with this store's stream length and key lifetime written in."""
    return folding("append", max_events, ttl_ms)


#: the lease holder folds its tail (lua/tail.lua) into the seat logs and the room's stream
#: once every this many events (`Store.append_native`)
FOLD_EVERY = 32

#: the lease holder's append trims the room's stream once every this many events (owned.lua)
TRIM_EVERY = 16


def owned_script(max_events: int, ttl_ms: int) -> str:
    """The lease holder's append script, the same way, and how often it trims the stream."""
    head = f"local MAXLEN, TTL, TRIM = {int(max_events)}, {int(ttl_ms)}, {TRIM_EVERY}\n"
    return head + numbering("owned")
