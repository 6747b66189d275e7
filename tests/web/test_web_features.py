"""What players of good solitaire sites expect (issue 12): how to play, keyboard play,
auto-move to the foundations, the opponent-finished toast, sound. One server for the module."""

from __future__ import annotations

import re

import pytest
from helpers.deals import KLONDIKE_TEXT, PUTT_TEXT, dealt
from playwright.sync_api import expect
from solrace.engine import new_game
from web.pages import (
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
)

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


def board_matches(page, game) -> None:
    assert page.evaluate("window.solrace.state.view.piles") == game.view()["piles"]


def test_keyboard_play_digits_space_undo_and_escape(browser, web_server):
    game = new_game("puttputt", seed=dealt(PUTT_TEXT))
    assert [str(m) for m in game.legal_moves()] == ["t2-f1", "t3-f1", "deal"]
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        create_room(page, web_server.url, "Kai")
        configure(page, game="puttputt", countdown=0, undo="safe", seed=PUTT_TEXT)
        ready(page)
        start(page)
        racing_with_board(page)
        page.keyboard.press("2")  # pick up pile 2's top card
        expect(page.locator(".board-wrap.mine .card.selected")).to_have_count(1)
        page.keyboard.press("Escape")  # drop it
        expect(page.locator(".board-wrap.mine .card.selected")).to_have_count(0)
        page.keyboard.press("2")
        page.keyboard.press("0")  # to the foundation
        js(page, "S.view.moves === 1")
        game.play("t2-f1")
        board_matches(page, game)
        page.keyboard.press("Control+z")  # it revealed nothing: undo
        js(page, "S.view.moves === 0")
        game.undo()
        board_matches(page, game)
        page.keyboard.press(" ")  # deal
        js(page, "S.view.moves === 1")
        game.play("deal")
        board_matches(page, game)
        page.keyboard.press("Control+z")  # a deal cannot be taken back: nothing is asked
        assert (
            page.evaluate("window.solrace.received.filter(m => m.code === 'undo_refused').length")
            == 0
        )
        assert errors == []
    finally:
        page.context.close()


def test_keyboard_moves_between_piles(browser, web_server):
    game = new_game("klondike", seed=dealt(KLONDIKE_TEXT))
    assert "t7-t6" in {str(m) for m in game.legal_moves()}
    errors: list[str] = []
    page = new_page(browser, errors, reduced_motion="no-preference")  # cards slide
    try:
        create_room(page, web_server.url, "Lou")
        configure(page, game="klondike", countdown=0, seed=KLONDIKE_TEXT)
        ready(page)
        start(page)
        racing_with_board(page)
        page.keyboard.press("7")
        page.keyboard.press("6")
        js(page, "S.view.moves === 1")
        game.play("t7-t6")
        board_matches(page, game)
        # The card slid from its old pile to the new one (a move animation was played).
        assert page.evaluate("window.solrace.animated.count") == 1
        assert errors == []
    finally:
        page.context.close()


def test_auto_move_sends_safe_cards_home_when_the_player_asks(browser, web_server):
    game = new_game("klondike", seed=dealt(KLONDIKE_TEXT))
    assert game.view()["piles"]["t3"][-1] == "AH"
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        create_room(page, web_server.url, "Max")
        configure(page, game="klondike", countdown=0, seed=KLONDIKE_TEXT)
        ready(page)
        start(page)
        racing_with_board(page)
        assert page.locator("[data-testid=auto-move]").input_value() == "off"
        page.wait_for_timeout(500)
        assert page.evaluate("window.solrace.state.view.moves") == 0  # off: nothing moves alone
        page.select_option("[data-testid=auto-move]", "safe")
        js(page, "S.view.moves === 1")
        expect(
            page.locator('.board-wrap.mine .pile[data-pile=f1] [data-card="AH"]')
        ).to_be_visible()
        page.reload()  # the setting is the player's, kept in this browser
        racing_with_board(page)
        assert page.locator("[data-testid=auto-move]").input_value() == "safe"
        assert errors == []
    finally:
        page.context.close()


def test_a_toast_says_when_an_opponent_finishes_and_sound_can_be_on(browser, web_server):
    errors: list[str] = []
    host = new_page(browser, errors, "host")
    bob = new_page(browser, errors, "bob")
    try:
        code = create_room(host, web_server.url, "Nia")
        configure(host, game="puttputt", countdown=0)
        join_room(bob, web_server.url, code, "Bob")
        ready(bob)
        ready(host)
        start(host)
        racing_with_board(host)
        racing_with_board(bob)
        expect(host.locator("[data-testid=sound]")).to_have_attribute("aria-pressed", "false")
        host.click("[data-testid=sound]")
        expect(host.locator("[data-testid=sound]")).to_have_attribute("aria-pressed", "true")
        deal(host)
        assert "move" in host.evaluate("window.solrace.sounds")
        bob.click("[data-action=resign]")
        toast = host.locator("[data-testid=notice][data-code=finish]")
        expect(toast).to_have_text(re.compile(r"Bob resigned at 0%"), timeout=TIMEOUT)
        assert "finish" in host.evaluate("window.solrace.sounds")
        assert errors == []
    finally:
        host.context.close()
        bob.context.close()
