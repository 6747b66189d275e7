"""The broadcast view, /broadcast/CODE, in headless Chromium at 1920x1080: a spectator like any
other (server/projection.py decides what it sees). Its boards are the room's delayed ones, so
no card a racer turned up since shows on it; from a racer's own address it shows none; it
shows every seat's live progress and the series' standings, has no controls, and passes
axe-core (also with the transparent background)."""

from __future__ import annotations

import re

import pytest
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
    state,
)
from web.test_web_a11y import serious_violations

pytestmark = pytest.mark.browser
FULL_HD = {"viewport": {"width": 1920, "height": 1080}}

#: every face-up card of an engine view (face-down ones are {"hidden": n})
FACE_UP = "v => Object.values(v.piles).flat().filter(c => typeof c === 'string')"


def shown_cards(page: Page) -> set[str]:
    return set(
        page.evaluate(
            "() => [...document.querySelectorAll('.card[data-card]')].map(e => e.dataset.card)"
        )
    )


def broadcast(page: Page, url: str, code: str, query: str = "") -> None:
    page.goto(f"{url}/broadcast/{code}{query}")
    page.wait_for_function(
        "() => window.solrace && window.solrace.state.snap && window.solrace.state.role === 'spectator'",
        timeout=TIMEOUT,
    )


def test_the_broadcast_view_is_a_delayed_spectator_without_controls(browser, web_server) -> None:
    errors: list[str] = []
    ann = new_page(browser, errors, "ann")
    bob = new_page(browser, errors, "bob")
    cast = new_page(browser, errors, "cast", **SPECTATOR, **FULL_HD)
    clear = new_page(browser, errors, "clear", **SPECTATOR, **FULL_HD)
    own = new_page(browser, errors, "own", **FULL_HD)  # the racers' own address (127.0.0.1)
    try:
        code = create_room(ann, web_server.url, "Ann")
        configure(ann, game="klondike", countdown=0, spectator_delay=600)
        ann.evaluate(
            "() => window.solrace.conn.request({type: 'configure', host_token:"
            " window.solrace.state.hostToken, options: {series: {rounds: 2, points: [10, 7]}}})"
        )
        js(ann, "S.snap.options.series && S.snap.options.series.rounds === 2")
        join_room(bob, web_server.url, code, "Bob")
        broadcast(cast, web_server.url, code)
        broadcast(clear, web_server.url, code, "?transparent=1&boards=2")
        broadcast(own, web_server.url, code)
        assert clear.evaluate("document.documentElement.classList.contains('transparent')")
        assert (
            clear.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
        )
        # a private room's code is its key: never on screen
        assert code not in cast.locator("main").inner_text()
        expect(cast.locator(".bc-racer")).to_have_count(2)

        ann.click("[data-testid=start]")
        for p in (ann, bob):
            racing_with_board(p)
        first = set(ann.evaluate(f"({FACE_UP})(window.solrace.state.view)"))
        for _ in range(3):
            deal(ann)
        turned = set(ann.evaluate(f"({FACE_UP})(window.solrace.state.view)")) - first
        assert turned, "dealing turned no card up"
        js(cast, "S.snap.players.find(p => p.seat === 0).moves === 3")
        # the race clock ticks by itself, between the messages that redraw the page
        shown = cast.locator("[data-testid=bc-clock]").inner_text()
        assert re.fullmatch(r"\d+:\d\d\.\d", shown), shown
        expect(cast.locator("[data-testid=bc-clock]")).not_to_have_text(shown, timeout=TIMEOUT)
        # a broadcast page (re)opened now gets the room's snapshot: its boards are late too
        clear.reload()
        js(clear, "S.snap")
        for p in (cast, clear):
            # live progress of every seat, large
            expect(p.locator(".bc-racer[data-seat='0'] .bc-meta")).to_contain_text(
                "3 moves", timeout=TIMEOUT
            )
            expect(p.locator(".bc-board")).to_have_count(2, timeout=TIMEOUT)
            js(p, "Object.keys(S.boards).length === 2")
            # the boards are 600 s late: as dealt, none of the cards Ann turned since
            assert p.evaluate(
                "() => [...document.querySelectorAll('.bc-board .board')].map(b => b.dataset.moves)"
            ) == ["0", "0"]
            shown = shown_cards(p)
            assert shown and shown <= first, shown - first
            assert not shown & turned
            assert state(p, "S.view") is None  # a spectator has no board of its own
        # from a racer's address: progress, never a board of the race
        expect(own.locator(".bc-racer[data-seat='0'] .bc-meta")).to_contain_text("3 moves")
        assert own.locator(".card[data-card]").count() == 0
        assert state(own, "Object.keys(S.boards).length") == 0

        # no controls anywhere on the broadcast page
        for p in (cast, clear, own):
            assert p.locator("button, input, select, textarea, a[href]").count() == 0
        assert serious_violations(cast) == []
        assert serious_violations(clear) == []

        for p in (ann, bob):
            p.evaluate("() => window.solrace.conn.request({type: 'resign'})")
        for p in (cast, clear):
            js(p, "S.snap.state === 'finished' && S.snap.series && S.snap.series.played === 1")
            expect(p.locator("[data-testid=standings] tbody tr")).to_have_count(2)
            # nobody got a card home: tied on first place, sharing 10 and 7
            points = p.locator("[data-testid=standings] td.points").all_inner_texts()
            assert points == ["8.5", "8.5"]
            # the race is over: the boards are the final ones now
            js(p, "S.boards[0] && S.boards[0].moves === 3")
        assert serious_violations(cast) == []
        expect(own.locator(".bc-board")).to_have_count(2, timeout=TIMEOUT)  # finished: all may see
        assert errors == []
    finally:
        for p in (ann, bob, cast, clear, own):
            p.context.close()
