"""Plain HTTP on the WebSocket port: /healthz, the web client's files, no path traversal."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest
from helpers.timing import scaled
from solrace.protocol.messages import VERSION
from solrace.server.net.http import PROTOCOL_PLACEHOLDER, resolve_static, web_root
from solrace.server.net.transport import SERVER_NAME


def get(server, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=scaled(5))
    conn.putrequest(method, path, skip_accept_encoding=True)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body


def test_healthz_index_and_content_types(shared_server) -> None:
    status, headers, body = get(shared_server, "/healthz")
    assert status == 200 and json.loads(body)["ok"] is True
    status, headers, body = get(shared_server, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["server"] == SERVER_NAME
    page = (web_root() / "index.html").read_bytes()
    assert PROTOCOL_PLACEHOLDER in page
    assert body == page.replace(PROTOCOL_PLACEHOLDER, str(VERSION).encode())
    # the page's hello reads its protocol version from here (client/web/js/net.js)
    assert f'<meta name="solrace-protocol" content="{VERSION}">'.encode() in body
    mjs = "/node_modules/@msgpack/msgpack/dist.esm/index.mjs"
    if (web_root() / mjs.lstrip("/")).exists():
        status, headers, _ = get(shared_server, mjs)
        assert status == 200 and headers["content-type"].startswith("text/javascript")
    js = sorted((web_root() / "js").glob("*.js"))
    if js:
        status, headers, _ = get(shared_server, "/js/" + js[0].name)
        assert status == 200 and headers["content-type"].startswith("text/javascript")


def test_every_vendored_module_the_page_imports_is_served_and_shipped(shared_server) -> None:
    """Each `../node_modules/...` file a web module imports (msgpack, uqr, morphdom) is served
    as JavaScript, and pyproject's package-data lists it, so an installed package has it too
    (an import missing there breaks the whole page of an installed server, not of a checkout)."""
    import fnmatch
    import re
    import tomllib

    root = Path(__file__).resolve().parents[2]
    imported = sorted(
        {
            m
            for js in (root / "client" / "web" / "js").glob("*.js")
            for m in re.findall(r"""from\s+["']\.\./(node_modules/[^"']+)["']""", js.read_text())
        }
    )
    assert "node_modules/morphdom/dist/morphdom-esm.js" in imported, imported
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = data["package-data"]["solrace.client.web.node_modules"]
    for path in imported:
        inside = path.removeprefix("node_modules/")
        assert any(fnmatch.fnmatch(inside, glob) for glob in shipped), (path, shipped)
        status, headers, body = get(shared_server, "/" + path)
        assert status == 200 and headers["content-type"].startswith("text/javascript"), path
        assert body


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/%2e%2e/pyproject.toml",
        "/js/../../server/main.py",
        "/..%2f..%2fserver%2fmain.py",
        "/nope.html",
        "/%00",
    ],
)
def test_no_traversal_and_404(shared_server, path: str) -> None:
    status, _, body = get(shared_server, path)
    assert status == 404 and b"import" not in body


def test_ws_path_without_upgrade(shared_server) -> None:
    status, _, _ = get(shared_server, "/ws")
    assert status == 426


def test_resolve_static_stays_inside(tmp_path: Path) -> None:
    root = tmp_path / "web"
    root.mkdir()
    (root / "index.html").write_text("hi")
    (tmp_path / "secret.txt").write_text("no")
    (root / "link").symlink_to(tmp_path / "secret.txt")
    assert resolve_static(root, "/") == (root / "index.html").resolve()
    assert resolve_static(root, "/../secret.txt") is None
    assert resolve_static(root, "/link") is None  # a symlink out of the root is refused too


def test_only_get_is_served(shared_server) -> None:
    """websockets parses GET requests only; anything else is dropped without a response."""
    conn = http.client.HTTPConnection("127.0.0.1", shared_server.port, timeout=scaled(5))
    conn.request("POST", "/", body=b"x")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError)):
        conn.getresponse()
    conn.close()


def test_replay_and_player_pages_are_the_app_with_assets_one_folder_up(shared_server) -> None:
    """/replay/ID and /player/ID answer the web app's page.html (js/boot.js, not the racing
    app), its relative asset paths based one folder up (they would not resolve below
    /replay/); other paths below them are not pages."""
    page = (web_root() / "page.html").read_bytes()
    assert b'src="js/boot.js"' in page
    page = page.replace(PROTOCOL_PLACEHOLDER, str(VERSION).encode())
    for path in ("/replay/0123456789abcdef", "/player/mfrggzdfmztwq2lk"):
        status, headers, body = get(shared_server, path)
        assert status == 200 and headers["content-type"].startswith("text/html")
        assert body == page.replace(b"<head>", b'<head>\n  <base href="../">', 1)
    for path in ("/replay/", "/replay/a/b", "/player/x.y", "/replay/0123456789abcdef/"):
        assert get(shared_server, path)[0] == 404
    # issue 23's pages: the same page, its base as many folders up as the path is deep
    for path, base in (
        ("/leaderboard", "./"),
        ("/leaderboard/klondike/wins", "../../"),
        ("/daily/2026-11-23/klondike", "../../"),
        ("/dailies", "./"),
        ("/ratings", "./"),
    ):
        status, _, body = get(shared_server, path)
        assert status == 200
        assert body == page.replace(b"<head>", f'<head>\n  <base href="{base}">'.encode(), 1)
    for path in ("/leaderboard/Klondike", "/daily/today/klondike", "/ratings/x"):
        assert get(shared_server, path)[0] == 404


def cache_controls(server, path: str) -> tuple[int, list[str]]:
    """Every Cache-Control header of the answer (a dict would keep only one of them)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=scaled(5))
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    conn.close()
    return resp.status, [v for k, v in resp.getheaders() if k.lower() == "cache-control"]


async def test_each_kind_of_answer_has_exactly_one_cache_control(shared_server, redis_url) -> None:
    """Issue 20 item 8: every answer carried `no-cache` besides its own Cache-Control, so a
    record's `immutable` and a board's `max-age` never applied."""
    import asyncio

    import redis.asyncio as aioredis
    from helpers.records import finished_room
    from solrace.server.league.records import Records, build_record
    from solrace.server.net.api import BOARD_MAX_AGE, IMMUTABLE

    r = aioredis.Redis.from_url(redis_url)
    try:
        record = build_record(finished_room("puttputt", players=2, seed=21))
        await Records(r, shared_server.prefix).save(record)
    finally:
        await r.aclose()
    js = sorted((web_root() / "js").glob("*.js"))[0].name
    expected = {
        f"/api/record/{record['id']}": IMMUTABLE,  # api json that never changes
        f"/api/record/{record['id']}.txt": IMMUTABLE,
        "/": "no-cache",  # the index: revalidated (its assets have no versioned names)
        f"/js/{js}": "no-cache",  # a static asset
        "/replay/" + record["id"]: "no-cache",  # an app page
        "/healthz": "no-store",
        "/api/leaderboard/puttputt/wins": f"public, max-age={BOARD_MAX_AGE}",
        "/api/player/" + "a" * 16: "no-cache",  # a 404 in json
        "/nope.html": "no-cache",
    }
    for path, value in expected.items():
        status, found = await asyncio.to_thread(cache_controls, shared_server, path)
        assert status in (200, 404), (path, status)
        assert found == [value], (path, found)


def test_web_root_does_not_import_the_python_client() -> None:
    """The server finds the web files from the client package's spec: importing the client
    (its connection, terminal UI and their imports) would tie the server to them."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from solrace.server.net.http import web_root\n"
        "root = web_root()\n"
        "assert (root / 'index.html').is_file() and (root / 'js' / 'app.js').is_file(), root\n"
        "print(sorted(m for m in sys.modules if m.startswith('solrace.client')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


async def test_an_invite_links_room_over_http(shared_server, wire) -> None:
    """/api/room/CODE: what a room link's invite page shows (game, host, seats, state), and
    nothing secret (no token); an unknown code is 404 (issue 23, invite page)."""
    from helpers.http_get import aget

    host = await wire(shared_server.ws_url)
    joined = await host.request(
        {"type": "create", "name": "Ann", "options": {"game": "puttputt", "max_players": 4}}
    )
    code = joined["room"]
    status, headers, body = await aget(shared_server.port, f"/api/room/{code}")
    assert status == 200, body
    room = json.loads(body)
    assert (room["room"], room["game"], room["title"], room["state"]) == (
        code,
        "puttputt",
        "Putt Putt",
        "lobby",
    )
    assert room["host"] == "Ann" and room["max_players"] == 4
    assert [p["name"] for p in room["players"]] == ["Ann"]
    assert joined["token"].encode() not in body and joined["host_token"].encode() not in body
    assert {k.lower(): v for k, v in headers.items()}["cache-control"] == "no-store"
    for missing in ("A" * 20, "NOT-A-CODE"):
        assert (await aget(shared_server.port, f"/api/room/{missing}"))[0] == 404
