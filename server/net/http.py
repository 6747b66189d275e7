"""Plain HTTP on the WebSocket port: `/healthz`, `/metrics`, the web client's static files
(and its pages `/replay/ID`, `/player/ID`), and `/api/` (records, replays and players:
server/net/api.py).

websockets hands every request to `process_request` first; answering here keeps
one port for everything (the web client connects back to the same origin's /ws).

The page's `hello` must name the protocol version before the server can tell the page
anything, so the served HTML carries it: `{{PROTOCOL_VERSION}}` in an .html file is
replaced by `protocol.messages.VERSION` (the web client reads it from a <meta> tag).
Everything else the page needs (games, titles, options) comes in `welcome`.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from solrace.protocol.messages import VERSION
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

WS_PATH = "/ws"
API_PREFIX = "/api/"
#: a live status (`/healthz`, `/metrics`): never kept by a cache
NO_STORE = {"Cache-Control": "no-store"}
#: in served HTML, stands for the protocol version
PROTOCOL_PLACEHOLDER = b"{{PROTOCOL_VERSION}}"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".woff2": "font/woff2",
}


def web_root() -> Path:
    """The web client's folder (shipped as `solrace.client.web` package data).

    Found from the client package's spec, without importing it: the server needs the files,
    not the Python client (its connection, terminal UI and their imports)."""
    spec = importlib.util.find_spec("solrace.client")
    if spec is None or spec.origin is None:
        raise RuntimeError("the solrace.client package (the web client's files) is not installed")
    # resolve(): an editable (strict) install links each file; the web folder is beside the real one
    return Path(spec.origin).resolve().parent / "web"


def response(
    status: HTTPStatus, body: bytes, content_type: str, extra: dict[str, str] | None = None
) -> Response:
    """An HTTP answer. `Cache-Control` is `no-cache` (revalidate: the files and pages have no
    versioned names) unless `extra` names its own: exactly one, since websockets' `Headers`
    is a multidict whose `headers[k] = v` adds a header rather than replacing it (two of
    them made a cache apply the stricter one, so `immutable` never did)."""
    fields = {"Content-Type": content_type, "Content-Length": str(len(body))}
    fields.update(extra or {})
    fields.setdefault("Cache-Control", "no-cache")
    headers = Headers()
    for k, v in fields.items():
        headers[k] = v
    return Response(status.value, status.phrase, headers, body)


def text(status: HTTPStatus, body: str) -> Response:
    return response(status, body.encode(), "text/plain; charset=utf-8")


def resolve_static(root: Path, url_path: str) -> Path | None:
    """The file a URL path names inside root, or None: never a path outside root."""
    path = unquote(url_path)
    if "\x00" in path or "\\" in path:
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    candidate = root.joinpath(*parts) if parts else root
    if candidate.is_dir():
        candidate = candidate / "index.html"
    try:
        resolved = candidate.resolve(strict=True)
        root_resolved = root.resolve(strict=True)
    except (FileNotFoundError, OSError):
        return None
    if root_resolved != resolved and root_resolved not in resolved.parents:
        return None
    return resolved if resolved.is_file() else None


#: `/r/CODE`, the room link the command-line tools print, opens the page on that room
ROOM_LINK = "/r/"
_ROOM_CODE = re.compile(r"^[A-Za-z0-9]{1,32}/?$")


def room_link(code: str) -> Response:
    """A redirect to `/#CODE`, the one address the page reads a room from (its relative
    asset paths would not resolve below /r/)."""
    if not _ROOM_CODE.match(code):
        return text(HTTPStatus.NOT_FOUND, "not a room link\n")
    return response(
        HTTPStatus.FOUND, b"", "text/plain; charset=utf-8", {"Location": f"/#{code.strip('/')}"}
    )


#: pages of the web app with their own address: `/replay/ID` (a race record's replay),
#: `/player/ID` (a player's races), `/broadcast/CODE` (a room's broadcast view, a
#: spectator), `/event/ID` and `/broadcast/event/ID` (an arena's leaderboard), `/leaderboard[/GAME[/KIND]]` (the all-time boards), `/daily/DATE/GAME` (a
#: daily's board), `/dailies` (the archive of past dailies) and `/ratings` (how ratings
#: work); the app reads which from the path
APP_PAGE = re.compile(
    r"^/(?:(?:replay|player|broadcast|event|broadcast/event)/[A-Za-z0-9_-]{1,64}"
    r"|leaderboard(?:/[a-z]{1,32}(?:/[a-z]{1,16})?)?"
    r"|daily/\d{4}-\d{2}-\d{2}/[a-z]{1,32}"
    r"|dailies|ratings)$"
)
#: the HTML of those pages: index.html's head, with js/boot.js (which picks the page by the
#: path) instead of the racing app
APP_PAGE_FILE = "page.html"


#: the operators' page (server/net/admin.py), also by its file name
ADMIN_PATHS = frozenset({"/admin", "/admin.html"})


def admin_page(root: Path) -> Response:
    body = (root / "admin.html").read_bytes().replace(PROTOCOL_PLACEHOLDER, str(VERSION).encode())
    return response(HTTPStatus.OK, body, CONTENT_TYPES[".html"], NO_STORE)


def app_page(root: Path, path: str = "/player/x") -> Response:
    """page.html for an APP_PAGE path, with a <base> that makes its relative asset paths
    (`style.css`, `js/...`) resolve at the site's root, however deep the path is."""
    body = (root / APP_PAGE_FILE).read_bytes().replace(PROTOCOL_PLACEHOLDER, str(VERSION).encode())
    depth = path.count("/") - 1  # the folders the browser resolves relative paths in
    base = f'<base href="{"../" * depth or "./"}">'.encode()
    body = body.replace(b"<head>", b"<head>\n  " + base, 1)
    return response(HTTPStatus.OK, body, CONTENT_TYPES[".html"])


def port_taken(host: str, port: int) -> str | None:
    """A one-line reason when `host:port` cannot be listened on (another server has it), else
    None: `solrace serve` says this instead of a traceback."""
    import errno
    import socket

    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return f"solrace serve: port {port} on {host} is in use (another solrace serve?); choose another with --port"
        return f"solrace serve: cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def quiet_request_logs(level: int) -> None:
    """websockets logs two INFO lines per HTTP request (response sent, connection closed):
    keep them for --log-level DEBUG, so INFO shows what the server does, not every file.
    Never its DEBUG lines: they dump every frame, tokens and all (`joined`, `resume`)."""
    import logging

    logging.getLogger("websockets.server").setLevel(
        logging.INFO if level <= logging.DEBUG else logging.WARNING
    )


def make_process_request(
    health: Callable[[], dict[str, Any]],
    root: Path | None = None,
    metrics: Callable[[], tuple[bytes, str]] | None = None,
    api: Callable[[Request, str], Awaitable[Response]] | None = None,
    admin: Callable[[str, str | None], bool] | None = None,
) -> Callable[..., Any]:
    """The `process_request` hook: /ws goes on to the WebSocket handshake, the rest is HTTP
    (`/api/...`, which reads Redis, is answered by a coroutine: server/net/api.py)."""
    static_root = root or web_root()

    def process_request(connection: Any, request: Request) -> Response | Awaitable[Response] | None:
        path = urlsplit(request.path).path
        if api is not None and path.startswith(API_PREFIX):
            peer = connection.remote_address
            return api(request, str(peer[0]) if peer else "")
        if path == WS_PATH:
            if request.headers.get("Upgrade", "").lower() != "websocket":
                return text(
                    HTTPStatus.UPGRADE_REQUIRED,
                    "WebSocket endpoint: connect with a WebSocket client\n",
                )
            return None
        if path in ADMIN_PATHS:  # only to the admin networks of a server with an admin token
            peer = connection.remote_address
            host = str(peer[0]) if peer else ""
            if admin is None or not admin(host, request.headers.get("X-Forwarded-For")):
                return text(HTTPStatus.NOT_FOUND, "not found\n")
            return admin_page(static_root)
        if path == "/healthz":
            body = json.dumps({"ok": True, **health()}).encode()
            return response(HTTPStatus.OK, body, "application/json", NO_STORE)
        if path == "/metrics" and metrics is not None:
            body, content_type = metrics()  # the Prometheus text format (server/common/metrics.py)
            return response(HTTPStatus.OK, body, content_type, NO_STORE)
        if path.startswith(ROOM_LINK):
            return room_link(path[len(ROOM_LINK) :])
        if APP_PAGE.match(path):
            return app_page(static_root, path)
        file = resolve_static(static_root, path)
        if file is None:
            return text(HTTPStatus.NOT_FOUND, "not found\n")
        suffix = file.suffix.lower()
        body = file.read_bytes()
        if suffix == ".html":
            body = body.replace(PROTOCOL_PLACEHOLDER, str(VERSION).encode())
        return response(HTTPStatus.OK, body, CONTENT_TYPES.get(suffix, "application/octet-stream"))

    return process_request
