"""Steps the browser tests repeat: create a room, join it, set options, wait for the reducer.

Every wait reads the page's own model (`window.solrace.state`) or its DOM, never a clock.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from helpers.timing import scaled
from playwright.sync_api import Browser, BrowserContext, Dialog, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

TIMEOUT = int(scaled(15_000))  # ms: a hang bound (helpers/timing.py)
#: take the pictures (test-artifacts/; docs/ too with SOLRACE_UPDATE_SCREENSHOT): a screenshot
#: is 0.4-0.7 CPU-s of Chromium that no assertion reads, so the suite takes none unless asked
SCREENSHOTS = bool(
    os.environ.get("SOLRACE_SCREENSHOTS") or os.environ.get("SOLRACE_UPDATE_SCREENSHOT")
)
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}

#: context options of a spectator's browser on another network than the racers' (its
#: connections say so as a proxy would; the web_server fixture believes it)
SPECTATOR = {"extra_http_headers": {"X-Forwarded-For": "198.51.100.7"}}


def new_page(
    browser: Browser,
    errors: list[str],
    name: str = "",
    on_dialog: Callable[[Dialog], object] | None = None,
    **ctx: Any,
) -> Page:
    """A page in a fresh context (its own storage, as another person's browser); page errors
    are collected in `errors`; confirm dialogs are accepted unless `on_dialog` says otherwise."""
    context: BrowserContext = browser.new_context(
        **({"viewport": {"width": 1200, "height": 860}} | ctx)
    )
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(f"{name}: {e}"))
    page.on("dialog", on_dialog or (lambda d: d.accept()))
    return page


def js(page: Page, expr: str, timeout: int = TIMEOUT) -> None:
    """Wait until `expr` (JavaScript, with `S` the page's state) is true. A wait that runs out
    fails with what the page last showed: its notice (a refusal, an error) and its link."""
    try:
        page.wait_for_function(
            f"(() => {{ const S = window.solrace && window.solrace.state; return S && ({expr}); }})()",
            timeout=timeout,
        )
    except PlaywrightTimeout:
        raise AssertionError(f"{expr!r} still false after {timeout} ms; {seen(page)}") from None


def seen(page: Page) -> str:
    """What the page shows of its state, for a failure's message."""
    try:
        return str(
            page.evaluate(
                "(() => { const S = window.solrace && window.solrace.state; return S ? "
                "{notice: S.notice, conn: S.conn, role: S.role, room: S.room,"
                " state: S.snap && S.snap.state} : 'no window.solrace'; })()"
            )
        )
    except Exception as exc:  # the page itself is gone or hung: say so
        return f"the page did not answer ({exc})"


def state(page: Page, expr: str) -> Any:
    return page.evaluate(f"(() => {{ const S = window.solrace.state; return {expr}; }})()")


def create_room(page: Page, url: str, name: str, *, host_only: bool = False) -> str:
    page.goto(url + "/")
    page.fill("#name", name)
    page.click("[data-action=create-host]" if host_only else "[data-action=create]")
    code = page.locator("[data-testid=share-code]").inner_text(timeout=TIMEOUT)
    js(page, "S.snap && S.snap.state === 'lobby'")
    return code


def configure(page: Page, **options: Any) -> None:
    """Set room options as the host, through the page's own request path."""
    page.evaluate(
        "opts => window.solrace.conn.request({type: 'configure', host_token: window.solrace.state.hostToken, options: opts})",
        options,
    )
    for key, value in options.items():
        if key == "seed":
            js(page, "S.snap.options.text_seed === true")
        elif key != "game_options":
            js(
                page,
                f"JSON.stringify(S.snap.options[{json.dumps(key)}]) === {json.dumps(json.dumps(value))}",
            )


def join_room(page: Page, url: str, code: str, name: str) -> None:
    page.goto(f"{url}/#{code}")
    page.fill("#name", name)
    page.click("[data-action=join]")
    expect(page.locator("[data-testid=ready]")).to_be_visible(timeout=TIMEOUT)


def watch_room(page: Page, url: str, code: str) -> None:
    page.goto(f"{url}/#{code}")
    page.click("[data-action=spectate]")
    js(page, "S.role === 'spectator' && S.snap !== null")


def ready(page: Page) -> None:
    page.click("[data-testid=ready]")
    js(page, "S.snap.players.find(p => p.seat === S.seat).ready === true")


def start(page: Page, timeout: int = TIMEOUT) -> None:
    """Start the race (the host's button). `timeout`: a room that deals a winnable deal starts
    once the solver has drawn one, seconds of CPU on a loaded machine."""
    page.click("[data-testid=start]")
    js(page, "S.snap.state === 'countdown' || S.snap.state === 'racing'", timeout)


def racing_with_board(page: Page) -> None:
    js(page, "S.snap && S.snap.state === 'racing' && S.view !== null && S.role === 'player'")


def deal(page: Page) -> int:
    """Click the stock; returns the move count it led to."""
    before = state(page, "S.view.moves")
    page.click('.board-wrap.mine [data-pile="s"] .card')
    js(page, f"S.view.moves === {before + 1}")
    return before + 1
