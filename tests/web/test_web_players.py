"""Issue 23 in the browser: names, what spectators on the racers' network are told, the
timed race's header, a disconnected player's grace, double-click home, ratings beside names,
the leaderboard, live and invite pages (each test its own rooms; one server for the module).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.pages import TIMEOUT, js, new_page

pytestmark = pytest.mark.browser

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 👩‍👩‍👧‍👦


def test_a_name_is_24_characters_and_a_joined_emoji_is_one(browser, web_server):
    """Item 7: the field cuts a name where the server would refuse it (24 user-perceived
    characters), and a name of joined emoji is taken."""
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        page.goto(web_server.url + "/")
        js(page, "S.conn === 'open'")
        page.fill("#name", "x" * 200)
        assert page.input_value("#name") == "x" * 24
        name = f"{FAMILY} " + FAMILY * 22  # 24 characters, 161 code points
        page.fill("#name", name + FAMILY)
        assert page.input_value("#name") == name
        page.click("[data-action=create]")
        expect(page.locator("[data-testid=share-code]")).to_be_visible(timeout=TIMEOUT)
        js(page, f"S.snap.players[0].name === {name!r}".replace("'", '"'))
        assert errors == []
    finally:
        page.context.close()
