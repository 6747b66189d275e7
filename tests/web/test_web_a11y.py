"""Accessibility checked by axe-core in the browser: no serious or critical violation on the
home page, the room's lobby, the table, the results and the spectator's pages (issue 12).

axe-core comes from the web client's devDependencies (client/web/node_modules); its script is
injected into each page under test. Also checked by hand here: the cards say their names to a
screen reader, and keyboard focus is visible.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.deals import KLONDIKE_TEXT
from playwright.sync_api import Page, expect
from web.pages import (
    SPECTATOR,
    TIMEOUT,
    configure,
    create_room,
    deal,
    join_room,
    js,
    new_page,
    racing_with_board,
    ready,
    start,
    watch_room,
)

pytestmark = pytest.mark.browser
AXE = (
    Path(__file__).resolve().parents[2]
    / "client"
    / "web"
    / "node_modules"
    / "axe-core"
    / "axe.min.js"
)


def serious_violations(page: Page) -> list[str]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        assert AXE.exists(), f"{AXE} is missing: npm ci in client/web (axe-core is a devDependency)"
        page.add_script_tag(path=str(AXE))
        # axe cannot measure contrast over the felt's gradient (it reports "incomplete"):
        # paint the page in the felt's lightest colour so every text is measured at its worst.
        page.add_style_tag(
            content="body { background: #1f7a4a !important; } body::before { display: none !important; }"
        )
    found = page.evaluate(
        """async () => {
        const r = await axe.run(document, { resultTypes: ["violations"] });
        return r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
          .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")}`);
    }"""
    )
    return found


def test_no_serious_violations_on_any_page(browser, web_server):
    errors: list[str] = []
    found: dict[str, list[str]] = {}
    host = new_page(browser, errors, "host")
    bob = new_page(browser, errors, "bob", viewport={"width": 390, "height": 844})
    fan = new_page(browser, errors, "fan", **SPECTATOR)
    try:
        host.goto(web_server.url + "/")
        js(host, "S.conn === 'open'")
        found["home"] = serious_violations(host)
        code = create_room(host, web_server.url, "Ada")
        configure(host, game="klondike", countdown=0, undo="safe", seed=KLONDIKE_TEXT)
        join_room(bob, web_server.url, code, "Bob")
        watch_room(fan, web_server.url, code)
        for name, page in (
            ("room lobby, host", host),
            ("room lobby, player", bob),
            ("room lobby, spectator", fan),
        ):
            found[name] = serious_violations(page)
        host.click("[data-action=how-to-play]")
        expect(host.locator("[data-testid=help]")).to_be_visible()
        found["how to play"] = serious_violations(host)
        host.keyboard.press("Escape")
        ready(host)
        ready(bob)
        start(host)
        racing_with_board(host)
        racing_with_board(bob)
        deal(host)
        js(fan, "Object.keys(S.boards).length === 2")
        for name, page in (("table", host), ("table, phone", bob), ("spectator", fan)):
            found[name] = serious_violations(page)
        host.click("[data-action=resign]")
        bob.click("[data-action=resign]")
        for page in (host, bob, fan):
            expect(page.locator("[data-testid=results]")).to_be_visible(timeout=TIMEOUT)
        host.click("[data-testid=verify] summary")
        for name, page in (("results", host), ("results, phone", bob), ("results, spectator", fan)):
            found[name] = serious_violations(page)
        assert {k: v for k, v in found.items() if v} == {}
        assert len(found) == 11
        assert errors == []
    finally:
        for page in (host, bob, fan):
            page.context.close()


def test_cards_are_named_for_screen_readers_and_focus_is_visible(browser, web_server):
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        create_room(page, web_server.url, "Cy")
        # an edit typed into an option field outlives a redraw (a message) before the field is
        # left: leaving it still sends it (Chromium counts the edit though the field is new)
        page.locator('[data-option="time_limit"]').fill("1234")
        page.evaluate("window.solrace.redraw()")
        expect(page.locator('[data-option="time_limit"]')).to_be_focused()
        page.keyboard.press("Tab")
        js(page, "S.snap.options.time_limit === 1234")
        configure(page, game="klondike", countdown=0, seed=KLONDIKE_TEXT)
        ready(page)
        start(page)
        racing_with_board(page)
        ah = page.get_by_role("img", name="Ace of hearts")
        expect(ah).to_have_count(1)
        expect(ah).to_have_attribute("data-pile", "t3")
        expect(page.get_by_role("img", name="face-down card").first).to_be_visible()
        expect(page.get_by_role("button", name="Stock: 24 in stock")).to_have_count(1)
        # a button with no id keeps the focus through a redraw (app.js focusKey)
        page.locator("[data-action=resign]").focus()
        page.evaluate("window.solrace.redraw()")
        expect(page.locator("[data-action=resign]")).to_be_focused()
        # the page redraws on every message; a message between the Tab and the look (a loaded
        # machine) may still find the focus on the body, so Tab again, a few times at most
        for _ in range(5):
            page.keyboard.press("Tab")
            focused = page.evaluate(
                """() => { const el = document.activeElement; const s = getComputedStyle(el);
                return [el.tagName, s.outlineStyle, parseFloat(s.outlineWidth)]; }"""
            )
            if focused[0] != "BODY":
                break
        assert focused[1] != "none" and focused[2] >= 2, focused
        assert errors == []
    finally:
        page.context.close()
