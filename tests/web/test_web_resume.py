"""The page survives its server dying mid-race: it reconnects on its own and resumes the seat.

The server is killed with SIGKILL (a crash) and started again on the same port and Redis;
the page's link drops, it retries with backoff, sends `resume` with its stored token, gets its
board back as it was, and the next move made with the mouse is accepted.
"""

from __future__ import annotations

import pytest
from helpers.deals import dealt
from helpers.timing import scaled
from playwright.sync_api import expect
from solrace.engine import new_game

pytestmark = pytest.mark.browser
TIMEOUT = int(scaled(15_000))  # ms: a hang bound (helpers/timing.py)
SEED = "web-resume"


def golf_move(game) -> str:
    moves = [str(m) for m in game.legal_moves()]
    plays = [m for m in moves if m.endswith("-f1")]
    return plays[0] if plays else "deal"


def click_move(page, move: str) -> None:
    board = ".board-wrap.mine"
    if move == "deal":
        page.click(f'{board} [data-pile="s"] .card')
        return
    src = move.split("-")[0]
    page.locator(f'{board} .pile[data-pile="{src}"] .card').last.click()
    page.click(f'{board} .pile[data-pile="f1"]')


def test_page_resumes_after_the_server_restarts(browser, race_server) -> None:
    game = new_game("puttputt", seed=dealt(SEED))
    ctx = browser.new_context(viewport={"width": 1000, "height": 800})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(race_server.url + "/")
        page.fill("#name", "Rex")
        page.click("[data-action=create]")
        expect(page.locator("[data-testid=share-code]")).to_be_visible(timeout=TIMEOUT)
        page.select_option("[data-option=game]", "puttputt")
        page.fill("[data-option=seed]", SEED)
        page.press("[data-option=seed]", "Enter")
        page.wait_for_function(
            "window.solrace.state.snap.options.text_seed === true && window.solrace.state.snap.options.game === 'puttputt'",
            timeout=TIMEOUT,
        )
        expect(page.locator("[data-option=seed]")).to_have_value(SEED)
        page.click("[data-testid=ready]")
        # the ready acknowledged first: a start with a player unready asks to confirm, and a
        # dialog nobody answers is dismissed (the race did not start, once under load)
        expect(page.locator(".player[data-ready=true]")).to_have_count(1, timeout=TIMEOUT)
        page.click("[data-testid=start]")
        page.wait_for_function(
            "window.solrace.state.view && window.solrace.state.snap.state === 'racing'",
            timeout=TIMEOUT,
        )
        for n in (1, 2):
            move = golf_move(game)
            click_move(page, move)
            game.play(move)
            page.wait_for_function(f"window.solrace.state.view.moves === {n}", timeout=TIMEOUT)

        race_server.kill()
        page.wait_for_function("window.solrace.state.conn !== 'open'", timeout=TIMEOUT)
        expect(page.locator(".conn")).not_to_have_class("conn open")
        race_server.restart()
        page.wait_for_function("window.solrace.state.conn === 'open'", timeout=TIMEOUT)
        page.wait_for_function(
            "window.solrace.state.view && window.solrace.state.view.moves === 2", timeout=TIMEOUT
        )
        assert page.evaluate("window.solrace.state.view.piles") == game.view()["piles"]

        move = golf_move(game)
        click_move(page, move)
        game.play(move)
        page.wait_for_function("window.solrace.state.view.moves === 3", timeout=TIMEOUT)
        assert page.evaluate("window.solrace.state.view.piles") == game.view()["piles"]
        assert errors == []
    finally:
        ctx.close()
