"""No page needs sideways scrolling on a 390 px phone: home, how to play, the room's lobby, the
table of every game, the results and the spectator's view (issue 12)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from web.pages import (
    PHONE,
    SPECTATOR,
    TIMEOUT,
    configure,
    create_room,
    js,
    new_page,
    racing_with_board,
    ready,
    start,
    watch_room,
)

pytestmark = pytest.mark.browser
WIDTH = PHONE["viewport"]["width"]


def overflow(page: Page) -> list[str]:
    """Elements whose right edge passes the screen's, and the page's own scroll width."""
    return page.evaluate(
        """w => {
        const out = [];
        if (document.documentElement.scrollWidth > w) out.push("page " + document.documentElement.scrollWidth);
        for (const el of document.querySelectorAll("#app *")) {
          const r = el.getBoundingClientRect();
          if (r.width && r.right > w + 0.5 && getComputedStyle(el).visibility !== "hidden") {
            out.push(`${el.tagName}.${el.className} ${Math.round(r.right)}`);
          }
        }
        return out.slice(0, 5);
    }""",
        WIDTH,
    )


def test_every_page_fits_a_phone(browser, web_server):
    errors: list[str] = []
    phone = new_page(browser, errors, "phone", **PHONE)
    fan = new_page(browser, errors, "fan", **PHONE, **SPECTATOR)
    seen: dict[str, list[str]] = {}
    try:
        phone.goto(web_server.url + "/")
        js(phone, "S.conn === 'open' && S.games.length === 5")
        seen["home"] = overflow(phone)
        phone.click("[data-action=how-to-play]")
        seen["how to play"] = overflow(phone)
        phone.keyboard.press("Escape")
        code = create_room(phone, web_server.url, "Phoebe Longname")
        watch_room(fan, web_server.url, code)
        seen["room lobby"] = overflow(phone)
        seen["room lobby, spectator"] = overflow(fan)
        for game in ("tabbycat", "manx", "puttputt", "klondike", "leapyear"):
            configure(phone, game=game, countdown=0)
            ready(phone)
            start(phone)
            racing_with_board(phone)
            js(fan, "S.snap.state === 'racing' && Object.keys(S.boards).length === 1")
            seen[f"table {game}"] = overflow(phone)
            seen[f"spectator {game}"] = overflow(fan)
            phone.click("[data-action=resign]")
            expect(phone.locator("[data-testid=results]")).to_be_visible(timeout=TIMEOUT)
            phone.click("[data-testid=verify] summary")
            seen[f"results {game}"] = overflow(phone)
            expect(fan.locator("[data-testid=results]")).to_be_visible(timeout=TIMEOUT)
            seen[f"results {game}, spectator"] = overflow(fan)
            phone.click("[data-testid=rematch]")
            js(phone, "S.snap.state === 'lobby'")
        assert {k: v for k, v in seen.items() if v} == {}
        assert len(seen) == 4 + 5 * 4
        assert errors == []
    finally:
        phone.context.close()
        fan.context.close()
