"""Regression tests of the page bugs of issue 12 (3 to 9 and 12), each driven in the browser.

One server for the module; each test makes its own rooms.
"""

from __future__ import annotations

import pytest
from helpers.deals import KLONDIKE_TEXT, PUTT_TEXT, dealt
from playwright.sync_api import expect
from solrace.engine import new_game
from web.pages import (
    PHONE,
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
    state,
)

pytestmark = pytest.mark.browser


def golf_home(page, seed: str) -> str:
    """Click a Putt Putt card home (the first t-f1 move of the deal); returns the move."""
    game = new_game("puttputt", seed=dealt(seed))
    move = next(str(m) for m in game.legal_moves() if str(m).endswith("-f1"))
    page.locator(f'.board-wrap.mine .pile[data-pile="{move[:2]}"] .card').last.click()
    page.click('.board-wrap.mine .pile[data-pile="f1"]')
    return move


def solo_race(page, url: str, name: str, seed: str, **options) -> str:
    code = create_room(page, url, name)
    configure(page, game="puttputt", countdown=0, seed=seed, **options)
    ready(page)
    start(page)
    racing_with_board(page)
    return code


def test_an_error_of_one_page_is_not_shown_on_the_next(browser, web_server):
    """Bug 7: "Choose a name first." stayed on the room page after the name was given."""
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        page.goto(web_server.url + "/")
        js(page, "S.conn === 'open'")
        page.click("[data-action=create]")
        expect(page.locator("[data-testid=notice]")).to_contain_text("Choose a name first.")
        page.fill("#name", "Ola")
        page.click("[data-action=create]")
        expect(page.locator("[data-testid=share-code]")).to_be_visible(timeout=TIMEOUT)
        expect(page.locator("[data-testid=notice]")).to_have_count(0)
        assert errors == []
    finally:
        page.context.close()


def test_create_before_the_connection_is_open_waits_for_it(browser, race_server):
    """Bug 7: Create while the socket was down said "not connected" and gave up."""
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        page.goto(race_server.url + "/")
        js(page, "S.conn === 'open'")
        race_server.kill()
        js(page, "S.conn !== 'open'")
        page.fill("#name", "Pia")
        page.click("[data-action=create]")
        expect(page.locator("[data-testid=notice]")).to_contain_text("Connecting")
        race_server.restart()
        expect(page.locator("[data-testid=share-code]")).to_be_visible(timeout=TIMEOUT)
        js(page, "S.role === 'player' && S.snap.players.length === 1")
        expect(page.locator("[data-testid=notice]")).to_have_count(0)
        assert errors == []
    finally:
        page.context.close()


def test_a_refused_move_is_explained_with_card_names(browser, web_server):
    """Bug 6: "9H does not go on 3S" (engine notation) instead of the faces the table shows."""
    game = new_game("klondike", seed=dealt(KLONDIKE_TEXT))
    piles = game.view()["piles"]
    assert "t1-t2" not in {str(m) for m in game.legal_moves()}
    one, two = piles["t1"][-1], piles["t2"][-1]
    assert one[0] != "T" and two[0] != "T"  # a face is its rank letter and suit symbol
    suit = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        create_room(page, web_server.url, "Rae")
        configure(page, game="klondike", countdown=0, seed=KLONDIKE_TEXT)
        ready(page)
        start(page)
        racing_with_board(page)
        page.click(f'.board-wrap.mine .pile[data-pile=t1] [data-card="{one}"]')
        page.click(f'.board-wrap.mine .pile[data-pile=t2] [data-card="{two}"]')
        notice = page.locator("[data-testid=notice]")
        expect(notice).to_have_attribute("data-code", "illegal_move", timeout=TIMEOUT)
        text = notice.inner_text()
        assert one[0] + suit[one[1]] in text and two[0] + suit[two[1]] in text, text
        assert one not in text and two not in text and "t1-t2" not in text, text
        assert errors == []
    finally:
        page.context.close()


def test_the_start_rule_is_shown_and_unready_players_are_asked_about(browser, web_server):
    """Bug 8: the host could press Start with nobody ready, or with no player at all."""
    errors: list[str] = []
    dialogs: list[str] = []
    host = new_page(
        browser, errors, "host", on_dialog=lambda d: (dialogs.append(d.message), d.dismiss())
    )
    bob = new_page(browser, errors, "bob")
    try:
        code = create_room(host, web_server.url, "Hal", host_only=True)
        expect(host.locator("[data-testid=start]")).to_be_disabled()
        expect(host.locator("[data-testid=start-hint]")).to_contain_text("at least one player")
        join_room(bob, web_server.url, code, "Bob")
        expect(host.locator("[data-testid=start]")).to_be_enabled(timeout=TIMEOUT)
        expect(host.locator("[data-testid=start]")).to_have_text("Start race (0/1 ready)")
        expect(host.locator("[data-testid=start-hint]")).to_contain_text("Not ready yet: Bob")
        expect(bob.locator("[data-testid=start-hint]")).to_contain_text("everyone seated races")

        host.click("[data-testid=start]")
        assert any("Not ready yet: Bob" in m for m in dialogs), dialogs
        assert state(host, "S.snap.state") == "lobby"
        ready(bob)
        expect(host.locator("[data-testid=start]")).to_have_text("Start race", timeout=TIMEOUT)
        asked = len(dialogs)
        host.click("[data-testid=start]")
        js(host, "S.snap.state !== 'lobby'")
        assert len(dialogs) == asked  # everyone ready: no question
        assert errors == []
    finally:
        host.context.close()
        bob.context.close()


def test_undo_is_offered_only_when_the_server_would_take_the_move_back(browser, web_server):
    """Bug 9: the Undo button was shown after a deal, which revealed cards and cannot be undone."""
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        solo_race(page, web_server.url, "Uli", PUTT_TEXT, undo="safe")
        undo = page.locator("[data-action=undo]")
        expect(undo).to_have_count(0)
        golf_home(page, PUTT_TEXT)  # reveals nothing: can be taken back
        js(page, "S.view.moves === 1")
        expect(undo).to_have_count(1)
        undo.click()
        js(page, "S.view.moves === 0")
        expect(undo).to_have_count(0)
        deal(page)  # a deal reveals the stock's card: the server refuses to undo it
        expect(undo).to_have_count(0)
        assert (
            page.evaluate("window.solrace.conn.request({type: 'undo', n: 1}).then(r => r.code)")
            == "undo_refused"
        )
        assert errors == []
    finally:
        page.context.close()


def test_results_fit_a_phone_explain_the_ranking_and_agree_with_the_race_panel(browser, web_server):
    """Bugs 4 and 5: results 417 px wide on a 390 px phone, raw hex for everyone, no ranking
    rule, and the results' time (final progress) disagreeing with the panel's (last move)."""
    errors: list[str] = []
    page = new_page(browser, errors, "phone", **PHONE)
    try:
        solo_race(page, web_server.url, "Vera Longname-Smith", PUTT_TEXT)
        golf_home(page, PUTT_TEXT)
        js(page, "S.view.moves === 1")
        page.wait_for_timeout(400)  # the next move is measurably later than the progress
        deal(page)  # no progress: the ranking's time stays at the move before
        page.click("[data-action=resign]")
        results = page.locator("[data-testid=results]")
        expect(results.locator("tbody tr")).to_have_count(1, timeout=TIMEOUT)
        ranked = results.locator("tbody tr td.time").inner_text()
        page.click("[data-testid=racers-toggle]")
        expect(page.locator('.racer[data-seat="0"] .time')).to_have_text(ranked)
        assert ranked != "–"
        expect(page.locator(".race-bar .clock").first).to_have_text(ranked)
        expect(page.locator("[data-testid=rank-rule]")).to_contain_text("resigned")
        verify = page.locator("[data-testid=verify]")
        expect(verify.locator("code").first).not_to_be_visible()
        verify.locator("summary").click()
        expect(verify.locator("code").first).to_be_visible()
        # drawn again (the solver's verdicts arriving, a spectator count), it stays open
        page.evaluate("window.solrace.redraw()")
        expect(verify.locator("code").first).to_be_visible()
        expect(verify).to_contain_text(str(state(page, "S.snap.results.seed")))
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        right = page.evaluate(
            "Math.max(...[...document.querySelectorAll('[data-testid=results] *')].map(e => e.getBoundingClientRect().right))"
        )
        assert right <= 390, right
        assert errors == []
    finally:
        page.context.close()


def test_a_player_who_is_not_the_host_can_race_again(browser, web_server):
    """Bug 9: after the results, only the host had any way to a rematch."""
    errors: list[str] = []
    host = new_page(browser, errors, "host")
    bob = new_page(browser, errors, "bob")
    try:
        code = create_room(host, web_server.url, "Hugo")
        configure(host, game="leapyear", countdown=0)
        join_room(bob, web_server.url, code, "Bob")
        ready(bob)
        ready(host)
        start(host)
        racing_with_board(bob)
        host.click("[data-action=resign]")
        bob.click("[data-action=resign]")
        expect(bob.locator("[data-testid=results]")).to_be_visible(timeout=TIMEOUT)
        expect(bob.locator("[data-testid=rematch]")).to_have_count(0)
        expect(bob.locator("[data-testid=results]")).to_contain_text(
            "Hugo (the host) can start a rematch"
        )
        bob.click("[data-testid=new-room]")
        js(
            bob,
            f"S.room !== '{code}' && S.snap && S.snap.state === 'lobby' && Boolean(S.hostToken)",
        )
        assert state(bob, "S.snap.options.game") == "leapyear"
        assert state(bob, "S.snap.players.map(p => p.name)") == ["Bob"]
        expect(host.locator('.racer[data-seat="1"]')).to_have_attribute(
            "data-status", "left", timeout=TIMEOUT
        )
        assert errors == []
    finally:
        host.context.close()
        bob.context.close()


def test_the_phone_race_panel_folds_to_one_line(browser, web_server):
    """Bug 12: on a phone the race panel took a third of the screen above the board."""
    errors: list[str] = []
    host = new_page(browser, errors, "host")
    bob = new_page(browser, errors, "bob", **PHONE)
    try:
        code = create_room(host, web_server.url, "Ivo")
        configure(host, game="klondike", countdown=0)
        join_room(bob, web_server.url, code, "Bob")
        ready(bob)
        ready(host)
        start(host)
        racing_with_board(bob)
        # measured in one script: the page redraws on every message (a locator's element
        # can be replaced between finding it and measuring it)
        height = "document.querySelector('.racers').getBoundingClientRect().height"
        toggle = bob.locator("[data-testid=racers-toggle]")
        expect(toggle).to_have_attribute("aria-expanded", "false")
        folded = bob.evaluate(height)
        assert folded < 60, folded
        assert bob.locator(".racers .racer").first.is_hidden()
        expect(toggle).to_contain_text("you 0%")
        # a tap while the race redraws the page: the host moves between press and release.
        # The page holds its redraws for a pressed button 1 s at most; here the press lasts
        # as long as the host's move takes to reach it, longer on a loaded machine.
        bob.evaluate(f"solrace.ui.holdMs = {TIMEOUT}")
        seen = len(bob.evaluate("solrace.received"))
        toggle.hover()
        bob.mouse.down()
        deal(host)
        js(
            bob,
            f"solrace.received.slice({seen}).some((m) => m.kind === 'progress' || m.type === 'progress')",
        )
        bob.mouse.up()
        expect(toggle).to_have_attribute("aria-expanded", "true")
        expect(bob.locator(".racers .racer")).to_have_count(2)
        assert bob.evaluate(height) > folded
        host_toggle = host.locator("[data-testid=racers-toggle]")
        expect(host_toggle).to_be_hidden()  # a desktop shows the whole panel beside the board
        expect(host.locator(".racers .racer")).to_have_count(2)
        assert errors == []
    finally:
        host.context.close()
        bob.context.close()


def test_requests_refused_for_the_rate_are_sent_again(browser, web_server):
    """A request the server refuses `rate_limited` (or `busy`) did nothing: the page sends it
    again after a pause, as the Python client does (client/retry.py), instead of dropping it
    with a notice. 100 requests at once overrun a racer's budget (60 at once, then 20 a
    second; PROTOCOL.md, Limits), and every one of them is answered."""
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        create_room(page, web_server.url, "Rita")
        out = page.evaluate(
            """async () => {
                const conn = window.solrace.conn;
                const asks = Array.from({length: 100}, (_, i) => conn.request({type: 'ping', t: i}));
                const replies = await Promise.all(asks);
                return {replies: replies.map(r => r.type + ':' + (r.t ?? r.code)), retries: conn.retries};
            }"""
        )
        assert out["replies"] == [f"pong:{i}" for i in range(100)]
        assert out["retries"] > 0  # some were refused, and sent again
        expect(page.locator("[data-testid=notice]")).to_have_count(0)
        js(page, "S.conn === 'open' && S.snap.state === 'lobby'")
        assert errors == []
    finally:
        page.context.close()


def test_a_field_being_typed_in_keeps_its_selection_when_an_update_redraws_the_page(
    browser, web_server
):
    """The host selected a number setting's text and typed over it, and an update redrew the
    page in between: the new copy of the field had lost the selection, so typing "4" over
    "8" gave "48" (the two-browser race test failed on it under load, and on "0" over "180",
    which sent 180). The field being typed in is now kept across the redraw."""
    errors: list[str] = []
    page = new_page(browser, errors, "host")
    try:
        create_room(page, web_server.url, "Host")
        field = page.locator("[data-option=max_players]")
        expect(field).to_have_value("8")
        field.select_text()  # focus and select all, as a person would before typing over it
        page.evaluate("window.solrace.redraw()")  # an update arriving now
        page.keyboard.type("4")
        expect(page.locator("[data-option=max_players]")).to_have_value("4")
        page.keyboard.press("Tab")
        js(page, "S.snap.options.max_players === 4")
        assert not errors, errors
    finally:
        page.context.close()


HOLD_SENDS = """() => {
  const ws = window.solrace.conn.ws, held = [], real = ws.send.bind(ws);
  ws.send = (frame) => { held.push(frame); };
  window.releaseSends = () => { ws.send = real; held.splice(0).forEach(real); };
}"""


def test_a_host_change_shows_as_made_until_the_room_echoes_or_refuses_it(browser, web_server):
    """Under load a room message came between the host's click on a box and the room's echo
    of the change, and the page drew the box as the room still had it: the click seemed
    undone (the hint test read it so at load 25). A change now shows as made until the
    room's options echo it, and a refused one goes back to the room's value."""
    errors: list[str] = []
    host = new_page(browser, errors, "host")
    other = new_page(browser, errors, "other")
    try:
        code = create_room(host, web_server.url, "Host")
        box = host.locator("[data-option=public]")
        expect(box).not_to_be_checked()
        host.evaluate(HOLD_SENDS)  # the change is on its way, and stays there
        box.click()
        host.evaluate("window.solrace.redraw()")  # a room message arriving now
        expect(box).to_be_checked()
        assert host.evaluate("window.solrace.state.snap.options.public") is False
        host.evaluate("window.releaseSends()")
        js(host, "S.snap.options.public === true")
        expect(box).to_be_checked()
        assert host.evaluate("Object.keys(window.solrace.ui.pendingOptions).length") == 0
        # refused (hints are for solo practice, and a second player sits): back at once
        join_room(other, web_server.url, code, "Other")
        js(host, "S.snap.players.length === 2")
        hints = host.locator("[data-option=hints]")
        hints.click()
        expect(host.locator(".notice")).to_contain_text("solo practice")
        expect(hints).not_to_be_checked()
        assert host.evaluate("Object.keys(window.solrace.ui.pendingOptions).length") == 0
        assert host.evaluate("window.solrace.state.snap.options.hints") is False
    finally:
        host.context.close()
        other.context.close()
