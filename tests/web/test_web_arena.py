"""Arenas in the web client (issue 25) against a real `solrace serve`: Ann creates an arena on
the landing page, Bob joins it by its id; the server pairs them into one room, they resign,
the leaderboard shows the race's points, and both are moved into their next room by
themselves. The event page shows the standings with each race's record and passes axe; the
broadcast view shows the leaderboard."""

from __future__ import annotations

import json
import urllib.request

import pytest
from playwright.sync_api import expect
from web.pages import TIMEOUT, js, new_page, state
from web.test_web_a11y import serious_violations

pytestmark = pytest.mark.browser


def test_an_arena_pairs_two_browsers_scores_their_race_and_pairs_them_again(browser, web_server):
    errors: list[str] = []
    ann = new_page(browser, errors, "ann")
    bob = new_page(browser, errors, "bob", viewport={"width": 390, "height": 844})
    try:
        for page, name in ((ann, "Ann"), (bob, "Bob")):
            page.goto(web_server.url + "/")
            page.fill("#name", name)
        ann.select_option("[data-testid=arena-game]", "puttputt")
        ann.fill("[data-testid=arena-minutes]", "2")
        ann.fill("[data-testid=arena-size]", "2")
        ann.click("[data-testid=arena-create]")
        js(ann, "window.solrace.ui.arena && window.solrace.ui.arena.view !== null")
        aid = ann.evaluate("window.solrace.ui.arena.id")
        bob.fill("[data-testid=arena-id]", f"{web_server.url}/event/{aid}")
        bob.click("[data-testid=arena-join]")
        # paired: both moved into one room, racing
        for page in (ann, bob):
            js(page, "S.snap && S.snap.state === 'racing' && S.role === 'player'")
        first = state(ann, "S.room")
        assert state(bob, "S.room") == first
        expect(ann.locator("[data-testid=arena-strip]")).to_be_visible(timeout=TIMEOUT)
        for page in (ann, bob):
            page.evaluate("() => window.solrace.conn.request({type: 'resign'})")
        # scored (both resigned: 0 points each, one race each), then paired again by itself
        for page in (ann, bob):
            js(
                page,
                "window.solrace.ui.arena.view.races === 1 && "
                "window.solrace.ui.arena.view.standings.every((r) => r.races === 1)",
            )
            js(page, f"S.room && S.room !== '{first}' && S.snap && S.snap.state !== 'finished'")
        assert state(ann, "S.room") == state(bob, "S.room")
        rows = ann.evaluate("window.solrace.ui.arena.view.standings.map((r) => r.name)")
        assert sorted(rows) == ["Ann", "Bob"]
        # the event page: the standings and the race with its record; axe finds nothing serious
        with urllib.request.urlopen(f"{web_server.url}/api/event/{aid}") as res:
            event = json.load(res)
        record = event["race_list"][0]["record"]
        ann.goto(f"{web_server.url}/event/{aid}")
        expect(ann.locator("[data-testid=arena-board]")).to_contain_text("Bob", timeout=TIMEOUT)
        expect(ann.locator(f"a[href='/replay/{record}']")).to_be_visible(timeout=TIMEOUT)
        assert serious_violations(ann) == []
        # the broadcast view: the leaderboard large, no controls
        ann.goto(f"{web_server.url}/broadcast/event/{aid}")
        board = ann.locator(".arena-broadcast [data-testid=arena-board]")
        expect(board).to_contain_text("Ann", timeout=TIMEOUT)
        assert ann.locator(".arena-broadcast button").count() == 0
        assert errors == []
    finally:
        ann.context.close()
        bob.context.close()
