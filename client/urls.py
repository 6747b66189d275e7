"""Where to connect and which room: one parser for every way a user names a room.

A user pastes whatever they were sent: a share link of the web client
(`http://host:8765/r/KX7QF` or `http://host:8765/#KX7QF`), a watch link
(`http://host:8765/?watch=KX7QF`), the WebSocket endpoint itself
(`ws://host:8765/ws`, optionally `#ROOM`), or just the code. All of them
reduce to a WebSocket URL plus an optional room code. Every link printed here
opens the room in a browser: the server redirects `/r/CODE` to `/#CODE`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

#: `solrace serve` listens on this port by default; the endpoint is at /ws.
DEFAULT_PORT = 8765
DEFAULT_SERVER = f"ws://127.0.0.1:{DEFAULT_PORT}/ws"

_ROOM_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


@dataclass(frozen=True)
class Target:
    """A server endpoint and, when the user named one, a room code."""

    url: str
    room: str | None = None

    def share_link(self, room: str | None = None) -> str:
        """The web client link a friend can open (or paste into `solrace play`)."""
        return share_link(self.url, room if room is not None else self.room)


def _ws_url(scheme: str, netloc: str) -> str:
    return urlunsplit((_SCHEMES[scheme], netloc, "/ws", "", ""))


def _room_or_none(text: str) -> str | None:
    text = text.strip().strip("/")
    if not text:
        return None
    if not _ROOM_RE.match(text):
        raise ValueError(f"not a room code: {text!r}")
    return text


def parse_target(text: str | None, server: str = DEFAULT_SERVER) -> Target:
    """Turn a URL, a share link or a bare room code into a Target.

    A bare code (or nothing, for creating a room) uses `server`, itself any
    of the accepted URL forms. Raises ValueError for anything else.
    """
    text = (text or "").strip()
    if "://" not in text:
        base = parse_target(server) if "://" in server else None
        if base is None:
            raise ValueError(f"server must be a URL: {server!r}")
        return Target(base.url, _room_or_none(text) if text else base.room)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in _SCHEMES:
        raise ValueError(f"unsupported URL scheme: {parts.scheme!r}")
    if not parts.netloc:
        raise ValueError(f"URL without a host: {text!r}")
    room: str | None = None
    path = parts.path or "/"
    if path.startswith("/r/"):
        room = _room_or_none(path[3:])
    elif path not in ("/", "/ws", "/ws/", "/index.html"):
        raise ValueError(f"unexpected path in URL: {path!r}")
    query = parse_qs(parts.query)
    for key in ("room", "watch"):
        if query.get(key):
            room = _room_or_none(query[key][0]) or room
    if parts.fragment:
        room = _room_or_none(parts.fragment) or room
    return Target(_ws_url(scheme, parts.netloc), room)


def with_room(ws_url: str, room: str | None) -> str:
    """The WebSocket URL naming the room the connection is for (`/ws?room=CODE`): the server
    routes every connection of a room to the process serving it by this code (`solrace serve
    --workers N`, or a proxy hashing it). Without a room any process serves the connection."""
    if not room:
        return ws_url
    parts = urlsplit(ws_url)
    query = {k: v for k, v in parse_qs(parts.query).items() if k != "room"}
    query["room"] = [room]
    return urlunsplit(parts._replace(query=urlencode(query, doseq=True)))


def share_link(ws_url: str, room: str | None) -> str:
    """The http(s) link of the web client for `room` on the server at `ws_url`."""
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme in ("wss", "https") else "http"
    path = f"/r/{room}" if room else "/"
    return urlunsplit((scheme, parts.netloc, path, "", ""))


def watch_link(ws_url: str, room: str) -> str:
    """The web client's link that opens `room` as a spectator (no name asked)."""
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme in ("wss", "https") else "http"
    return urlunsplit((scheme, parts.netloc, "/", urlencode({"watch": room}), ""))
