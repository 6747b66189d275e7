"""Every game played in the browser, solo, with moves the engine chooses and the mouse makes.

For each step the test asks the engine (same text seed as the room) for a legal move,
makes it on the rendered cards (click-click, drag and drop, or the stock), and then checks
that the page's board is exactly the engine's view after that move: the UI produced the
intended canonical move, including multi-card runs (`tX-tY:N`) and the Tabby Cat tail.
"""

from __future__ import annotations

import pytest
from helpers.deals import dealt
from helpers.timing import scaled
from playwright.sync_api import Page, expect
from solrace.engine import new_game

pytestmark = pytest.mark.browser
TIMEOUT = int(scaled(10_000))  # ms: a hang bound (helpers/timing.py)


def choose(game, step: int) -> str:
    """Prefer run moves (tX-tY:N), then alternate plain and tail moves; deal when nothing else."""
    moves = [str(m) for m in game.legal_moves()]
    runs = [m for m in moves if ":" in m and not m.endswith(":13")]
    tail = [m for m in moves if "-r" in m or m.startswith("r-")]
    plain = [m for m in moves if m not in runs and m not in tail and m != "deal"]
    for pool in (runs, plain, tail) if step % 3 else (runs, tail, plain):
        if pool:
            return pool[step % len(pool)]
    return moves[0]


def pile_size(view: dict, pile: str) -> int:
    return sum(1 if isinstance(x, str) else x["hidden"] for x in view["piles"][pile])


def make_move(page: Page, view: dict, move: str, drag: bool) -> None:
    board = ".board-wrap.mine"
    if move in ("deal", "recycle"):
        page.click(f'{board} [data-pile="s"] .card, {board} [data-pile="s"] .slot')
        return
    src, rest = move.split("-")
    dst, _, count = rest.partition(":")
    n = int(count or 1)
    index = pile_size(view, src) - n if src.startswith("t") else pile_size(view, src) - 1
    card = page.locator(f'{board} .pile[data-pile="{src}"] .card[data-index="{index}"]')
    target = page.locator(f'{board} .pile[data-pile="{dst}"]')
    if drag:
        box = card.bounding_box()
        tbox = target.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 12)
        page.mouse.down()
        page.mouse.move(tbox["x"] + tbox["width"] / 2, tbox["y"] + tbox["height"] / 2, steps=10)
        page.mouse.up()
    else:
        card.click(position={"x": 12, "y": 10})
        target.click(position={"x": 10, "y": 10})


@pytest.mark.parametrize("game_name", ["puttputt", "tabbycat", "manx", "leapyear", "klondike"])
def test_solo_race_moves_match_the_engine(browser, web_server, game_name: str) -> None:
    solo_race(browser, web_server.url, game_name)


def test_the_whole_chromium_browser_plays_a_solo_race(full_browser, web_server) -> None:
    """The other browser tests run Chromium's headless shell; this one, the browser people
    run: the same race, so a page the shell renders but the browser does not fails here."""
    solo_race(full_browser, web_server.url, "klondike")


def solo_race(browser, url: str, game_name: str) -> None:
    """A solo race of `game_name`, moved with the mouse, checked against the engine."""
    seed = f"web-solo-{game_name}"
    game = new_game(
        game_name, seed=dealt(seed), options={"moves": "build"} if game_name == "klondike" else None
    )
    ctx = browser.new_context(viewport={"width": 1100, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url + "/")
        page.fill("#name", "Solo")
        page.click("[data-action=create]")
        expect(page.locator("[data-testid=share-code]")).to_be_visible(timeout=TIMEOUT)
        page.select_option("[data-option=game]", game_name)
        page.wait_for_function(
            f"window.solrace.state.snap.options.game === '{game_name}'", timeout=TIMEOUT
        )
        if game_name == "klondike":
            page.select_option("[data-option='game_options.moves']", "build")
            page.wait_for_function(
                "window.solrace.state.snap.options.game_options.moves === 'build'", timeout=TIMEOUT
            )
        if game_name == "puttputt":
            page.select_option("[data-option=undo]", "safe")
            page.wait_for_function(
                "window.solrace.state.snap.options.undo === 'safe'", timeout=TIMEOUT
            )
        page.fill("[data-option=seed]", seed)
        page.press("[data-option=seed]", "Enter")
        page.wait_for_function(
            "window.solrace.state.snap.options.text_seed === true", timeout=TIMEOUT
        )
        page.click("[data-testid=ready]")
        expect(page.locator(".player[data-ready=true]")).to_have_count(1, timeout=TIMEOUT)
        page.click("[data-testid=start]")
        page.wait_for_function(
            "window.solrace.state.view && window.solrace.state.snap.state === 'racing'",
            timeout=TIMEOUT,
        )
        assert page.evaluate("window.solrace.state.view.piles") == game.view()["piles"]
        expect(page.locator(".board-wrap.mine .pile[data-kind=foundation]")).to_have_count(
            {"puttputt": 1, "leapyear": 16}.get(game_name, 4)
        )

        for step in range(8):
            if game.is_won() or game.is_dead():
                break
            move = choose(game, step)
            view = game.view()
            make_move(page, view, move, drag=step % 2 == 1)
            game.play(move)
            page.wait_for_function(
                f"window.solrace.state.view.moves === {step + 1}", timeout=TIMEOUT
            )
            got = page.evaluate("window.solrace.state.view")
            assert got["piles"] == game.view()["piles"], (step, move)
            assert page.locator("[data-testid=notice]").count() == 0, page.locator(
                "[data-testid=notice]"
            ).inner_text()
            if game_name == "puttputt" and step == 0:
                # Undo (room option "safe"): a move that revealed nothing is taken back, then replayed.
                page.click("[data-action=undo]")
                page.wait_for_function("window.solrace.state.view.moves === 0", timeout=TIMEOUT)
                game.undo()
                assert page.evaluate("window.solrace.state.view.piles") == game.view()["piles"]
                make_move(page, game.view(), move, drag=False)
                game.play(move)
                page.wait_for_function("window.solrace.state.view.moves === 1", timeout=TIMEOUT)
        assert len(game.history) >= 3
        if (
            game_name == "tabbycat"
        ):  # this seed's line includes whole-run moves to and from the tail
            assert any(":" in str(m) for m in game.history), game.history
        expect(page.locator("[data-testid=my-moves]")).to_have_text(f"{len(game.history)} moves")
        assert errors == []
    finally:
        ctx.close()
