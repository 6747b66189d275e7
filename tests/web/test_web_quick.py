"""Race now on the landing page (quick match, issue 23) against a real `solrace serve`: two
browsers (one a phone) press Race now for Putt Putt and find themselves racing the same deal
in one rated room; the waiting state says what it waits for, fits a phone and passes axe;
Cancel takes the ticket out of the queue and leaves nothing behind."""

from __future__ import annotations

import pytest
import redis
from playwright.sync_api import expect
from web.pages import TIMEOUT, js, new_page, state
from web.test_web_a11y import serious_violations

pytestmark = pytest.mark.browser

WAITING = "[data-testid=quick-waiting]"


def test_race_now_pairs_two_browsers_in_one_room(browser, web_server):
    errors: list[str] = []
    ann = new_page(browser, errors, "ann")
    bob = new_page(browser, errors, "bob", viewport={"width": 390, "height": 844})
    try:
        for page, name in ((ann, "Ann"), (bob, "Bob")):
            page.goto(web_server.url + "/")
            page.fill("#name", name)
        ann.click("[data-testid=quick-puttputt]")
        expect(ann.locator(WAITING)).to_contain_text(
            "Looking for Putt Putt players near your rating", timeout=TIMEOUT
        )
        assert serious_violations(ann) == []
        bob.click("[data-testid=quick-puttputt]")
        for page in (ann, bob):
            js(
                page,
                "S.snap && S.snap.state === 'racing' && S.view !== null && S.role === 'player'",
            )
        room = state(ann, "S.room")
        assert state(bob, "S.room") == room
        assert state(ann, "S.snap.options.rated") is True
        assert sorted(state(ann, "S.snap.players.map((p) => p.name)")) == ["Ann", "Bob"]
        # one deal for both: the same first board
        assert state(ann, "JSON.stringify(S.view.piles)") == state(
            bob, "JSON.stringify(S.view.piles)"
        )
        assert ann.url.endswith(f"#{room}")
        # the phone's page fits its width
        assert bob.evaluate("document.documentElement.scrollWidth") <= 390
        assert errors == []
    finally:
        ann.context.close()
        bob.context.close()


def test_cancel_leaves_the_queue_empty(browser, web_server, redis_url):
    errors: list[str] = []
    carl = new_page(browser, errors, "carl", viewport={"width": 390, "height": 844})
    r = redis.Redis.from_url(redis_url)
    try:
        carl.goto(web_server.url + "/")
        carl.fill("#name", "Carl")
        carl.click("[data-testid=quick-manx]")
        expect(carl.locator(WAITING)).to_contain_text("Looking for Manx players", timeout=TIMEOUT)
        assert carl.evaluate("document.documentElement.scrollWidth") <= 390
        assert serious_violations(carl) == []
        tickets = f"{web_server.prefix}quick:{{manx.rated}}:tickets"
        assert r.hlen(tickets) == 1
        carl.click(f"{WAITING} [data-action=quick-cancel]")
        expect(carl.locator("[data-testid=quick-manx]")).to_be_visible(timeout=TIMEOUT)
        assert not r.exists(tickets)
        assert not r.exists(f"{web_server.prefix}quick:{{manx.rated}}:seen")
        assert errors == []
    finally:
        r.close()
        carl.context.close()
