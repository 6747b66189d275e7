"""Browser fixtures for the web client's tests: Debian's Chromium driven by Playwright.

Playwright's own browser download does not work here, so the tests use /usr/bin/chromium
(CHROMIUM overrides). A missing browser is a failure, never a skip: a green run must mean
the page was really exercised.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from helpers.timing import scaled
from solrace.bench.server_process import ServerProcess

WEB_DIR = Path(__file__).resolve().parents[2] / "client" / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One Chromium per test module, not per session: Playwright's sync API runs an event loop
    in this thread while it is open, and an asyncio test that runs after a browser module in
    the same process (as pytest-xdist may schedule it) could not start its own loop."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: apt-get install -y chromium (the browser tests need it)"
        )
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=scaled(5) * 1000)  # expect()'s own bound (5 s), stretched
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            yield StillBrowser(b)
        finally:
            b.close()


class StillBrowser:
    """The browser, whose pages ask for reduced motion unless a test says otherwise: a card
    still sliding to its pile (the page's move animation) is not where a test clicks next."""

    def __init__(self, browser: object) -> None:
        self._browser = browser

    def new_context(self, **options: object) -> object:
        options.setdefault("reduced_motion", "reduce")
        context = self._browser.new_context(**options)
        context.set_default_timeout(scaled(30) * 1000)  # Playwright's own bound, stretched
        return context

    def new_page(self, **options: object) -> object:
        options.setdefault("reduced_motion", "reduce")
        page = self._browser.new_page(**options)
        page.set_default_timeout(scaled(30) * 1000)
        return page

    def __getattr__(self, name: str) -> object:
        return getattr(self._browser, name)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
    }

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def static_url() -> Iterator[str]:
    """client/web/ over plain HTTP, for tests of the pure rendering modules without a game server."""
    handler = functools.partial(_QuietHandler, directory=str(WEB_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def web_server(redis_url: str) -> Iterator[ServerProcess]:
    """One `solrace serve` for a whole test module (rooms are independent, so tests share it;
    a test that kills or restarts its server uses `race_server` instead). It believes the
    X-Forwarded-For of connections from 127.0.0.1, as it would a proxy's: a spectator's page
    (pages.SPECTATOR) says it is on another network than the racers, who all come from
    127.0.0.1, since no board of a race goes to a racer's address."""
    prefix = f"solrace-test-web-{uuid.uuid4().hex[:8]}:"
    with ServerProcess(redis_url, prefix) as server:
        yield server
