"""Browser fixtures for the web client's tests: Debian's Chromium driven by Playwright.

Playwright's own browser download does not work here, so the tests use Debian's Chromium:
its headless shell (package chromium-headless-shell, /usr/bin/chromium-headless-shell; CHROMIUM
overrides), the same Blink and V8 as the browser without the browser's window machinery, which
is what Playwright itself runs for headless tests; and for the tests that take `full_browser`,
the whole browser (package chromium, /usr/bin/chromium; FULL_CHROMIUM overrides), so the app is
also seen working in what people run. The shell costs about a third of the browser's CPU per
page (a new context and the app loaded, eight times: 0.32-0.35 CPU-s a page against 0.86, at
load 20-24). A missing browser is a failure, never a skip: a green run must mean the page was
really exercised.
"""

from __future__ import annotations

import functools
import http.server
import os
import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, ClassVar

import pytest
from helpers.timing import scaled
from solrace.bench.server_process import ServerProcess
from web.pages import SCREENSHOTS

WEB_DIR = Path(__file__).resolve().parents[2] / "client" / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell")
FULL_CHROMIUM = os.environ.get("FULL_CHROMIUM", "/usr/bin/chromium")
#: the Debian package that installs each default executable (for the message when it is missing)
PACKAGES = {
    "/usr/bin/chromium-headless-shell": "chromium-headless-shell",
    "/usr/bin/chromium": "chromium",
}
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class PlaywrightThread:
    """Playwright's sync API and one headless Chromium, run in a thread of their own.

    The sync API runs its event loop in the thread that started it and marks that loop as the
    thread's running loop between calls, so in pytest's thread an asyncio test after a
    browser test (pytest-xdist runs both kinds on one worker) could not start its own loop.
    Here the loop, the driver and the browser live in `playwright-N`; a test's calls (every
    sync call goes through `SyncBase._sync`, patched below) are handed to that thread and
    waited for, one at a time, as the sync API itself runs them. pytest's thread keeps no
    loop, and the browser lives for the whole worker session: one Chromium start per worker.

    A call that does not come back within `CALL_BOUND` (Playwright's own bounds are shorter;
    `evaluate` has none) fails the test and retires this thread: the next test gets a new
    thread and a new browser, so one hung Chromium fails one test, not the run.
    """

    #: seconds a single call may take before it counts as hung
    CALL_BOUND = scaled(120)
    _count = 0

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        PlaywrightThread._count += 1
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self.broken = False
        self.thread = threading.Thread(
            target=self._serve, name=f"playwright-{self._count}", daemon=True
        )
        self.thread.start()
        self.playwright = self.call(lambda: sync_playwright().start())
        _OWNERS[self.playwright._loop] = self
        self.browsers: dict[str, Any] = {}

    def browser(self, executable: str) -> Any:
        """The worker's browser run from `executable`, launched by the first test that asks
        for it (most workers never start the full browser)."""
        if executable not in self.browsers:
            if not Path(executable).exists():
                package = PACKAGES.get(executable, "chromium-headless-shell chromium")
                pytest.fail(
                    f"{executable} is missing: apt-get install -y {package} (the browser tests need it)"
                )
            self.browsers[executable] = self.call(
                lambda: self.playwright.chromium.launch(
                    executable_path=executable, headless=True, args=LAUNCH_ARGS
                )
            )
        return self.browsers[executable]

    def _serve(self) -> None:
        while (item := self._calls.get()) is not None:
            fn, done = item
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` in the Playwright thread and return what it returned (or raise)."""
        if threading.current_thread() is self.thread:
            return fn()
        if self.broken:
            raise RuntimeError("this Playwright thread hung before; the next test gets another")
        done: Future[Any] = Future()
        self._calls.put((fn, done))
        try:
            return done.result(timeout=self.CALL_BOUND)
        except BaseException:
            if not done.done():  # hung, or the test was stopped (pytest-timeout) meanwhile
                self.broken = True
                self._calls.put(None)
            raise

    def close(self) -> None:
        if not self.broken:
            try:
                for browser in self.browsers.values():
                    self.call(browser.close)
            finally:
                self.call(self.playwright.stop)
                self._calls.put(None)
                self.thread.join(timeout=scaled(10))


#: the Playwright thread that owns each event loop (see `_sync`)
_OWNERS: dict[object, PlaywrightThread] = {}


def _install_thread_hop() -> None:
    """Every sync call (and listener change: it may tell the driver) of an object whose loop
    a `PlaywrightThread` owns runs in that thread."""
    from playwright._impl._sync_base import SyncBase

    if getattr(SyncBase._sync, "hops_threads", False):
        return

    def hop(method: Callable[..., Any]) -> Callable[..., Any]:
        def in_owner(self: Any, *args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            owner = _OWNERS.get(self._loop)
            if owner is None or threading.current_thread() is owner.thread:
                return method(self, *args, **kwargs)
            return owner.call(lambda: method(self, *args, **kwargs))

        in_owner.hops_threads = True  # type: ignore[attr-defined]
        return in_owner

    for name in ("_sync", "on", "once", "remove_listener"):
        setattr(SyncBase, name, hop(getattr(SyncBase, name)))


def _install_interval_polling() -> None:
    """`wait_for_function` polls every 25 ms unless a test says otherwise, not on every
    animation frame (Playwright's default): a frame-paced poll makes Chromium produce a frame
    for each check, ~0.15 s of CPU per second of waiting and page, and on a loaded machine
    the waits, and so that cost, grow long (measured: 5 s of waiting, 1.1 s of CPU per
    frame against 0.4 s every 50 ms)."""
    from playwright.sync_api import Frame, Page

    for cls in (Page, Frame):
        wait = cls.wait_for_function
        if getattr(wait, "interval_polling", False):
            continue

        def wait_for_function(
            self: Any, expression: str, *, wait: Any = wait, polling: Any = 25, **kwargs: Any
        ) -> Any:
            return wait(self, expression, polling=polling, **kwargs)

        wait_for_function.interval_polling = True  # type: ignore[attr-defined]
        cls.wait_for_function = wait_for_function  # type: ignore[method-assign]


class _Chromium:
    """The worker's one browser: started by the first test that asks for it, replaced when
    its thread hung, closed when the session ends."""

    current: PlaywrightThread | None = None

    @classmethod
    def get(cls) -> PlaywrightThread:
        if cls.current is None or cls.current.broken:
            from playwright.sync_api import expect

            _install_thread_hop()
            _install_interval_polling()
            expect.set_options(timeout=scaled(5) * 1000)  # expect()'s own bound (5 s), stretched
            cls.current = PlaywrightThread()
        return cls.current

    @classmethod
    def close(cls) -> None:
        if cls.current is not None:
            cls.current.close()
            cls.current = None


@pytest.fixture(scope="session")
def _chromium_session() -> Iterator[None]:
    try:
        yield
    finally:
        _Chromium.close()


def _browser_of(executable: str) -> Iterator[object]:
    chromium = _Chromium.get()
    browser = chromium.browser(executable)
    yield StillBrowser(browser)
    if not chromium.broken:
        for context in list(browser.contexts):
            context.close()


@pytest.fixture
def browser(_chromium_session: None) -> Iterator[object]:
    """Chromium's headless shell, one per worker session (`PlaywrightThread`); each test makes
    its own contexts (another person's browser: its own storage), and whatever it leaves open
    is closed after it, so the next test starts with none."""
    yield from _browser_of(CHROMIUM)


@pytest.fixture
def full_browser(_chromium_session: None) -> Iterator[object]:
    """The whole Chromium browser (headless), as `browser`: for the tests that show the app
    working in the browser people run, not only in the shell the other tests use."""
    yield from _browser_of(FULL_CHROMIUM)


#: A style sheet every test page adopts (no element in the DOM): the panels' backdrop blur
#: off. It is paint only (no layout, no colour a test or axe-core reads), and Chromium without
#: a GPU redraws it in software for every frame under a panel: measured, it is two thirds of
#: the GPU process's CPU and a third of Chromium's per page load (0.42 -> 0.14 CPU-s of the
#: GPU process per load). Runs that take pictures (web.pages.SCREENSHOTS) keep it.
CHEAP_PAINT = """(() => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync("*, *::before, *::after { backdrop-filter: none !important; }");
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
})();"""


def _cheap_paint(target: Any) -> None:
    """Adopt `CHEAP_PAINT` in every document of `target` (a context or a page)."""
    if not SCREENSHOTS:
        target.add_init_script(CHEAP_PAINT)


class StillBrowser:
    """The browser, whose pages ask for reduced motion unless a test says otherwise (a card
    still sliding to its pile, the page's move animation, is not where a test clicks next)
    and paint without the panels' blur (`CHEAP_PAINT`)."""

    def __init__(self, browser: object) -> None:
        self._browser = browser

    def new_context(self, **options: object) -> object:
        options.setdefault("reduced_motion", "reduce")
        context = self._browser.new_context(**options)
        context.set_default_timeout(scaled(30) * 1000)  # Playwright's own bound, stretched
        _cheap_paint(context)
        return context

    def new_page(self, **options: object) -> object:
        options.setdefault("reduced_motion", "reduce")
        page = self._browser.new_page(**options)
        page.set_default_timeout(scaled(30) * 1000)
        _cheap_paint(page)
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
