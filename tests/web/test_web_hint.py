"""The page's practice hint (issue 11): a Hint button in a solo room with hints on that names
the move and highlights the cards it picks up; the results say whether the deal was winnable."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.pages import TIMEOUT, configure, create_room, js, new_page, racing_with_board, ready, start

pytestmark = pytest.mark.browser


def test_hint_button_highlights_the_move_and_results_say_winnable(browser, web_server):
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        create_room(page, web_server.url, "Solo")
        configure(page, game="puttputt", countdown=0, deal="winnable")
        expect(page.locator("[data-option=deal]")).to_have_value("winnable")
        # the host's control, as a person sets it; a click, not `check`: a message drawn from
        # the room before the server has the change (at load 25 one came in between) shows
        # the box as the room still has it until the change comes back, and `check` reads
        # the box at once
        page.click("[data-option=hints]")
        js(page, "S.snap.options.hints === true")
        expect(page.locator("[data-option=hints]")).to_be_checked()
        ready(page)
        start(
            page, TIMEOUT * 4
        )  # the winnable deal is drawn first (Putt Putt: 2,000,000 positions)
        racing_with_board(page)
        hint_button = page.locator("[data-testid=hint]")
        for n in (1, 2):
            hint_button.click()
            page.wait_for_function(f"window.solrace.ui.hint && window.solrace.ui.hint.n === {n}")
            hint = page.evaluate("window.solrace.ui.hint")
            text = page.locator("[data-testid=hint-text]")
            expect(text).to_have_text(f"Hint: {hint['move']}")
            assert hint["verdict"] == "won" and hint["n"] == n
            source = "s" if hint["move"] == "deal" else hint["move"].split("-")[0]
            marked = page.locator(".board-wrap.mine .hint-card")
            expect(marked).to_have_count(1)
            assert marked.first.get_attribute("data-pile") == source
            page.evaluate(
                "h => window.solrace.conn.request({type: 'move', move: h.move, n: h.n})", hint
            )
            js(page, f"S.view.moves === {n}")
            # the hint was for the position before the move: it is gone from the table
            expect(text).to_have_count(0)
            expect(marked).to_have_count(0)
        page.once("dialog", lambda d: d.accept())
        page.click("[data-action=resign]")
        verdicts = page.locator("[data-testid=verdicts]")
        expect(verdicts).to_contain_text("The deal was winnable", timeout=TIMEOUT * 4)
        expect(verdicts).to_contain_text("Solo's final position: winnable")
        assert errors == []
    finally:
        page.context.close()
