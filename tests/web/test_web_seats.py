"""A seat survives every reload, a second tab does not take it silently, and every printed
link opens its room (issue 12, bugs 1 and 2).

Bug 1 was: a player who reloaded while the room waited came back with no token in memory, so
when the race started the page's resync sent `spectate` instead of `resume`: the player could
not move and the others saw them "disconnected, racing".
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import subprocess
import sys
import urllib.request

import pytest
from playwright.sync_api import expect
from solrace.client import Client, share_link
from solrace.client.urls import watch_link
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
    ready,
    start,
    state,
    watch_room,
)

pytestmark = pytest.mark.browser


def seat_of(page) -> list:
    return state(page, "[S.role, S.seat, Boolean(S.token)]")


def reload(page) -> None:
    page.reload()
    js(page, "S.conn === 'open' && S.snap !== null")


def test_reload_at_every_stage_keeps_players_and_spectators_where_they_were(browser, web_server):
    errors: list[str] = []
    host = new_page(browser, errors, "host")
    bob = new_page(browser, errors, "bob")
    fan = new_page(browser, errors, "fan", **SPECTATOR)
    try:
        code = create_room(host, web_server.url, "Hana")
        configure(host, game="puttputt", countdown=8)
        join_room(bob, web_server.url, code, "Bob")
        watch_room(fan, web_server.url, code)
        ready(bob)
        for page in (host, bob, fan):  # the room waits: bug 1's case
            reload(page)
        assert seat_of(host) == ["player", 0, True] and state(host, "Boolean(S.hostToken)")
        assert seat_of(bob) == ["player", 1, True]
        assert state(bob, "S.snap.players[1].ready") is True
        assert state(fan, "S.role") == "spectator"
        ready(host)
        start(host)
        reload(bob)  # the countdown (8 s) outlasts a reload
        reload(fan)
        assert seat_of(bob) == ["player", 1, True]
        assert state(fan, "S.role") == "spectator"
        racing_with_board(host)  # reloaded while the room waited, not since: bug 1's case
        racing_with_board(bob)
        deal(host)
        for page in (host, bob, fan):  # racing
            reload(page)
        racing_with_board(host)
        assert state(host, "S.view.moves") == 1
        js(fan, "Object.keys(S.boards).length === 2")
        deal(bob)  # a move is accepted: the page is a player, not a spectator
        expect(host.locator('.racer[data-seat="1"] .racer-meta')).to_contain_text(
            "1 move", timeout=TIMEOUT
        )
        expect(host.locator('.racer[data-seat="1"] .dot.on')).to_have_count(1)  # connected
        host.click("[data-action=resign]")
        bob.click("[data-action=resign]")
        for page in (host, bob, fan):
            expect(page.locator("[data-testid=results] tbody tr")).to_have_count(2, timeout=TIMEOUT)
        for page in (host, bob, fan):  # the results
            reload(page)
            expect(page.locator("[data-testid=results] tbody tr")).to_have_count(2, timeout=TIMEOUT)
        assert seat_of(bob) == ["player", 1, True]
        assert state(host, "Boolean(S.hostToken)")
        assert state(fan, "S.role") == "spectator"
        assert errors == []
    finally:
        for page in (host, bob, fan):
            page.context.close()


def test_a_second_tab_asks_before_it_plays_the_seat(browser, web_server):
    errors: list[str] = []
    first = new_page(browser, errors, "first")
    try:
        code = create_room(first, web_server.url, "Tia")
        saved = state(first, "sessionStorage.getItem('solrace.session')")
        # A duplicated tab starts with a copy of the first tab's sessionStorage.
        second = first.context.new_page()
        second.on("pageerror", lambda e: errors.append(f"second: {e}"))
        second.add_init_script(
            f"if (!sessionStorage.getItem('solrace.session')) sessionStorage.setItem('solrace.session', {saved!r})"
        )
        second.goto(f"{web_server.url}/#{code}")
        expect(second.locator("[data-testid=seat-conflict]")).to_be_visible(timeout=TIMEOUT)
        assert state(second, "S.room") is None  # it did not resume the seat
        assert seat_of(first) == ["player", 0, True]
        expect(first.locator("[data-testid=ready]")).to_be_visible()

        second.click("[data-action=take-seat]")  # play here: the first tab lets go
        js(second, "S.role === 'player' && S.seat === 0 && S.snap !== null")
        expect(first.locator("[data-testid=moved-away]")).to_be_visible(timeout=TIMEOUT)
        js(first, "S.conn === 'closed'")
        second.click("[data-testid=ready]")
        js(second, "S.snap.players[0].ready === true")

        first.click("[data-action=take-seat]")  # and back
        js(first, "S.conn === 'open' && S.role === 'player' && S.snap.players[0].ready === true")
        expect(second.locator("[data-testid=moved-away]")).to_be_visible(timeout=TIMEOUT)
        assert errors == []
    finally:
        first.context.close()


def test_a_second_tab_may_watch_instead(browser, web_server):
    errors: list[str] = []
    first = new_page(browser, errors, "first")
    try:
        code = create_room(first, web_server.url, "Uma")
        saved = state(first, "sessionStorage.getItem('solrace.session')")
        second = first.context.new_page()
        second.add_init_script(
            f"if (!sessionStorage.getItem('solrace.session')) sessionStorage.setItem('solrace.session', {saved!r})"
        )
        second.goto(f"{web_server.url}/#{code}")
        second.click("[data-action=watch-instead]")
        js(second, "S.role === 'spectator' && S.room === " + repr(code))
        assert seat_of(first) == ["player", 0, True]
        assert state(first, "S.conn") == "open"
        assert errors == []
    finally:
        first.context.close()


def printed_link(url: str, ws_url: str) -> tuple[str, str]:
    """Run `solrace play --create` as a user would and read the link it prints."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "solrace",
            "play",
            "--create",
            "puttputt",
            "--server",
            ws_url,
            "--name",
            "Cli",
            "--no-color",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "share " in line:
                link = line.split("share ", 1)[1].split()[0]
                return link, line.split("room ", 1)[1].split()[0]
        raise AssertionError("solrace play printed no link")
    finally:
        proc.kill()
        proc.wait()


def test_every_printed_link_opens_the_room(browser, web_server):
    link, code = printed_link(web_server.url, web_server.ws_url)
    assert link == f"{web_server.url}/r/{code}"
    # The server answers the link itself (a browser follows the redirect) ...
    with urllib.request.urlopen(link) as resp:
        assert resp.status == 200 and resp.url == f"{web_server.url}/#{code}"

    # ... and the page opens on the room, as with the page's own share link.
    async def helper_link() -> str:
        async with Client(web_server.ws_url) as c:
            joined = await c.create("Lin", {"game": "klondike"})
            return share_link(web_server.ws_url, joined.room)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's loop runs here
        other = pool.submit(asyncio.run, helper_link()).result()
    errors: list[str] = []
    page = new_page(browser, errors, "link")
    try:
        for url, room in (
            (link, code),
            (other, other.rsplit("/", 1)[1]),
            (f"{web_server.url}/#{code}", code),
        ):
            page.goto(url)
            expect(page.locator("#join-code")).to_have_value(room, timeout=TIMEOUT)
        page.goto(watch_link(web_server.ws_url, code))  # what `solrace bot --create` prints
        js(page, f"S.room === '{code}' && S.role === 'spectator'")
        page.click("[data-action=leave]")
        js(page, "S.room === null")
        page.goto(link)
        page.fill("#name", "Kim")
        page.click("[data-action=join]")
        js(page, f"S.room === '{code}' && S.role === 'player'")
        assert errors == []
    finally:
        page.context.close()


def test_a_room_is_created_and_joined_on_a_connection_naming_it(browser, web_server):
    """Issue 22 item 5: the page draws a new room's code and reopens its connection naming it
    (`/ws?room=CODE`) before it sends `create`, as it does before a `join` typed on the home
    page: a proxy hashing the code then sends the room's first connection where its later
    ones go. Read off the frames the browser sent, socket by socket."""
    import msgpack

    sent: list[tuple[str, dict]] = []

    def watch(ws) -> None:
        ws.on(
            "framesent",
            lambda payload: (
                sent.append((ws.url, msgpack.unpackb(payload)))
                if isinstance(payload, bytes)
                else None
            ),
        )

    errors: list[str] = []
    host, guest = new_page(browser, errors, "host"), new_page(browser, errors, "guest")
    try:
        for page in (host, guest):
            page.on("websocket", watch)
        code = create_room(host, web_server.url, "Ann")
        created = [(url, m) for url, m in sent if m["type"] == "create"]
        assert len(created) == 1, created
        url, msg = created[0]
        assert msg["code"] == code and len(code) == 20, msg  # a private room's long code
        assert url.endswith(f"/ws?room={code}"), url
        # the home page's first socket named no room: it was left for the room's
        assert any(u.endswith("/ws") for u, _ in sent), sent
        guest.goto(web_server.url + "/")
        guest.fill("#name", "Bo")
        guest.fill("#join-code", code)
        guest.click("[data-action=join]")
        expect(guest.locator("[data-testid=ready]")).to_be_visible(timeout=TIMEOUT)
        joins = [url for url, m in sent if m["type"] == "join"]
        assert joins == [web_server.ws_url + f"?room={code}"], joins
    finally:
        for page in (host, guest):
            page.context.close()
    assert not errors, errors
