"""Issue 12, bug 3: players saw "0 watching" before the start while the spectator's own page
said 1. The server now tells the room its spectator count as spectators come and go."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web.pages import TIMEOUT, create_room, new_page, watch_room

pytestmark = pytest.mark.browser


def test_spectators_are_counted_on_the_players_page(browser, web_server):
    errors: list[str] = []
    host = new_page(browser, errors, "host")
    fan = new_page(browser, errors, "fan")
    try:
        code = create_room(host, web_server.url, "Jo")
        watch_room(fan, web_server.url, code)
        expect(fan.locator("[data-testid=watching]")).to_have_text("1 watching")
        expect(host.locator("[data-testid=watching]")).to_have_text("1 watching", timeout=TIMEOUT)
        fan.context.close()
        expect(host.locator("[data-testid=watching]")).to_have_text("0 watching", timeout=TIMEOUT)
        assert errors == []
    finally:
        host.context.close()
