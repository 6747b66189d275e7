"""What players of good solitaire sites expect (issue 12): how to play, keyboard play,
auto-move to the foundations, the opponent-finished toast, sound. One server for the module."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.pages import configure, create_room, js, new_page, racing_with_board, ready, start

pytestmark = pytest.mark.browser


def test_how_to_play_is_reachable_from_the_lobby_the_room_and_the_table(browser, web_server):
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        page.goto(web_server.url + "/")
        js(page, "S.conn === 'open' && S.games.length === 5")
        page.click("[data-action=how-to-play]")  # the home page
        help_ = page.locator("[data-testid=help]")
        expect(help_).to_be_visible()
        titles = page.locator(".help-games button").all_inner_texts()
        assert titles == ["Tabby Cat", "Manx", "Putt Putt", "Klondike", "Leap Year"], titles
        page.click(".help-games [data-game=puttputt]")
        expect(help_).to_have_attribute("data-game", "puttputt")
        expect(help_).to_contain_text("one rank above or below")
        page.keyboard.press("Escape")
        expect(help_).to_have_count(0)

        create_room(page, web_server.url, "Ria")
        configure(page, game="leapyear", countdown=0)
        page.click("main.room [data-action=how-to-play]")  # the room's lobby: its game
        expect(help_).to_have_attribute("data-game", "leapyear")
        expect(help_).to_contain_text("16 foundations")
        page.click(".help [data-action=close-help]")
        expect(help_).to_have_count(0)
        ready(page)
        start(page)
        racing_with_board(page)
        page.click(".race-bar [data-action=how-to-play]")  # at the table
        expect(help_).to_contain_text("How to play Leap Year")
        page.mouse.click(5, 5)  # outside the dialog closes it
        expect(help_).to_have_count(0)
        assert errors == []
    finally:
        page.context.close()
