"""The operators' page in the browser (issue 22: an admin page): off without a token; with one,
an operator from an admin network opens /admin with the token, sees a live room with its
seats, kicks a seat (the player's own page says so) and closes the room; the page passes
axe-core."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect
from solrace.bench.server_process import ServerProcess
from solrace.server.net.admin import ENV
from web.pages import TIMEOUT, create_room, join_room, js, new_page
from web.test_web_a11y import serious_violations

pytestmark = pytest.mark.browser
TOKEN = "browser-admin-token-0123456789"


@pytest.fixture(scope="module")
def admin_server(redis_url: str) -> Iterator[ServerProcess]:
    prefix = f"solrace-test-admin-{uuid.uuid4().hex[:8]}:"
    args = ("--heartbeat", "0.5")
    with ServerProcess(redis_url, prefix, extra_args=args, env={ENV: TOKEN}) as server:
        yield server


def test_the_admin_page_lists_kicks_and_closes(browser, admin_server) -> None:
    errors: list[str] = []
    url = admin_server.url
    host = new_page(browser, errors, "host")
    code = create_room(host, url, "ann")
    guest = new_page(browser, errors, "guest")
    join_room(guest, url, code, "bob")

    ops = new_page(browser, errors, "admin")
    ops.goto(url + "/admin")
    ops.fill("#token", TOKEN)
    ops.click("button[type=submit]")
    row = ops.locator("#rooms tr", has_text=code)
    expect(row).to_contain_text("lobby", timeout=TIMEOUT)
    ops.click(f"button[aria-label='Inspect room {code}']")
    expect(ops.locator("#room")).to_contain_text("bob", timeout=TIMEOUT)
    assert serious_violations(ops) == []

    ops.click("button[aria-label^='Kick seat 1']")
    js(guest, "S.kicked === true || !S.snap || !S.snap.players.some(p => p && p.name === 'bob')")
    expect(ops.locator("#room")).not_to_contain_text("bob", timeout=TIMEOUT)
    ops.click("#close-room")  # the confirm dialog is accepted (pages.new_page)
    expect(ops.locator("#room tbody tr")).to_have_count(0, timeout=TIMEOUT)
    js(host, "!S.snap || !S.snap.players.some(p => p && p.name === 'ann')")
    assert errors == []


def test_off_without_a_token(browser, web_server) -> None:
    errors: list[str] = []
    page = new_page(browser, errors)
    response = page.goto(web_server.url + "/admin")
    assert response is not None and response.status == 404
