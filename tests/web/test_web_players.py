"""Issue 23 in the browser: names, what spectators on the racers' network are told, the
timed race's header, a disconnected player's grace, double-click home, ratings beside names,
the leaderboard, live and invite pages (each test its own rooms; one server for the module).
"""

from __future__ import annotations

import asyncio
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from helpers.deals import KLONDIKE_TEXT
from playwright.sync_api import expect
from solrace.server.league.boards import Boards
from solrace.server.league.records import Records
from solrace.server.league.standings import Finisher, Outcome, Standings
from solrace.server.store.redis_conn import connect
from web.pages import (
    SPECTATOR,
    TIMEOUT,
    configure,
    create_room,
    join_room,
    js,
    new_page,
    racing_with_board,
    ready,
    start,
    state,
)
from web.test_web_a11y import serious_violations

pytestmark = pytest.mark.browser

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 👩‍👩‍👧‍👦


def solo_klondike(page, url: str, name: str = "Ada", **options) -> str:
    """A one-player Klondike race on KLONDIKE_TEXT (AH tops t3), racing."""
    code = create_room(page, url, name)
    configure(page, game="klondike", countdown=0, seed=KLONDIKE_TEXT, **options)
    ready(page)
    start(page)
    racing_with_board(page)
    return code


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


def test_a_card_sliding_home_does_not_take_the_clicks_of_the_pile_it_left(browser, web_server):
    """Item 9: a double-click sent `f1-t4` instead of the next card home: the card that had
    just gone home was drawn over its old pile while it slid, so the next click there picked
    it up from the foundation. No point of the old place hits the foundation while it slides."""
    errors: list[str] = []
    page = new_page(browser, errors, reduced_motion="no-preference")  # the slide is the point
    try:
        solo_klondike(page, web_server.url)
        ace = '.board-wrap.mine .pile[data-pile="t3"] .card[data-card="AH"]'
        expect(page.locator(ace)).to_be_visible(timeout=TIMEOUT)
        # found and measured in one step in the page: the board is redrawn on every message,
        # so a box asked for after the wait may be of a card no longer in the document (None)
        box = page.wait_for_function(
            """sel => { const e = document.querySelector(sel); const r = e && e.getBoundingClientRect();
            return r && r.width > 0 ? {x: r.x, y: r.y, width: r.width, height: r.height} : null; }""",
            arg=ace,
            timeout=TIMEOUT,
        ).json_value()
        page.evaluate(
            """([x, y]) => {
            window.__hits = [];
            const start = window.solrace.animated.count;
            const look = () => {
              const sliding = document.getAnimations().length > 0;
              if (window.solrace.animated.count > start && sliding) {
                const pile = document.elementFromPoint(x, y)?.closest("[data-pile]");
                window.__hits.push(pile ? pile.dataset.pile : null);
              }
              if (window.solrace.animated.count > start && !sliding) window.__done = true;
              else requestAnimationFrame(look);
            };
            requestAnimationFrame(look);
        }""",
            # low on the ace: below the card it uncovers, only the sliding ace is drawn there
            [box["x"] + box["width"] / 2, box["y"] + box["height"] - 4],
        )
        # the ace home by click-click (a double-click's two clicks may land more than the
        # page's 400 ms apart on a loaded machine; the slide is the same)
        page.click(ace)
        page.click('.board-wrap.mine .pile[data-pile="f1"]')
        js(page, "window.__done === true && S.view.moves === 1")
        hits = page.evaluate("window.__hits")
        # (None: no pile there once the ace has gone; the old page answered f1 at first)
        assert hits and "f1" not in hits, hits
        assert state(page, "S.view.piles.f1.length") == 1
        assert errors == []
    finally:
        page.context.close()


def test_a_redraw_morphs_the_page_and_keeps_a_sliding_card_sliding(browser, web_server):
    """The page is morphed into each new drawing, not replaced (issue 19: a racing page's
    renderer redrew the whole page on every message): a redraw with nothing new removes no
    element, and a redraw mid-slide keeps the sliding card's element, its slide and its
    pointer-events (anim.js: it must not take the clicks of the pile it left)."""
    errors: list[str] = []
    page = new_page(browser, errors, reduced_motion="no-preference")  # the slide is the point
    try:
        solo_klondike(page, web_server.url)
        ace = '.board-wrap.mine .pile[data-pile="t3"] .card[data-card="AH"]'
        expect(page.locator(ace)).to_be_visible(timeout=TIMEOUT)
        same = page.evaluate(
            """() => {
            const root = document.getElementById("app");
            const card = root.querySelector('.board-wrap.mine .pile[data-pile="t1"] .card');
            const removed = [];
            const seen = new MutationObserver((records) => {
              for (const r of records) removed.push(...r.removedNodes);
            });
            seen.observe(root, { childList: true, subtree: true });
            window.solrace.redraw();
            seen.takeRecords().forEach((r) => removed.push(...r.removedNodes));
            seen.disconnect();
            return { kept: card.isConnected, removed: removed.length };
        }"""
        )
        assert same == {"kept": True, "removed": 0}, same
        # checked in the microtask after the redraw that starts the slide (a frame later the
        # slide may be over on a loaded machine): a redraw then keeps it going
        page.evaluate(
            """() => {
            const root = document.getElementById("app");
            const start = window.solrace.animated.count;
            const watch = new MutationObserver(() => {
              if (window.__slid || window.solrace.animated.count === start) return;
              const sel = '.board-wrap.mine .pile[data-pile="f1"] .card[data-card="AH"]';
              const el = root.querySelector(sel);
              const before = { sliding: el.getAnimations().length > 0, pe: el.style.pointerEvents };
              window.solrace.redraw();
              window.__slid = { before, same: root.querySelector(sel) === el,
                sliding: el.getAnimations().length > 0, pe: el.style.pointerEvents };
              watch.disconnect();
            });
            watch.observe(root, { childList: true, subtree: true, attributes: true });
        }"""
        )
        page.click(ace)
        page.click('.board-wrap.mine .pile[data-pile="f1"]')
        js(page, "window.__slid && S.view.moves === 1")
        slid = page.evaluate("window.__slid")
        assert slid == {
            "before": {"sliding": True, "pe": "none"},
            "same": True,
            "sliding": True,
            "pe": "none",
        }, slid
        assert errors == []
    finally:
        page.context.close()


def test_a_spectator_on_a_racers_network_is_told_why_there_are_no_boards(browser, web_server):
    """Item 8: a spectator on a racer's network sees no boards during the race; the page says
    why (everyone races the same deal) and that boards come the room's delay late."""
    errors: list[str] = []
    racer = new_page(browser, errors, "racer")
    fan = new_page(browser, errors, "fan")  # no X-Forwarded-For: the racer's own address
    try:
        code = solo_klondike(racer, web_server.url)
        fan.goto(f"{web_server.url}/#{code}")
        fan.click("[data-action=spectate]")
        js(fan, "S.role === 'spectator' && S.snap !== null && S.snap.state === 'racing'")
        note = fan.locator("[data-testid=no-boards]")
        expect(note).to_contain_text("same deal", timeout=TIMEOUT)
        expect(note).to_contain_text("180 s late")
        assert errors == []
    finally:
        racer.context.close()
        fan.context.close()


def test_a_timed_race_header_after_the_race_has_no_clock_left(browser, web_server):
    """Item 9: after a timed race the header read "done left" / "3:38.7 left 144 moves"."""
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        solo_klondike(page, web_server.url, time_limit=300)
        expect(page.locator("[data-testid=time-left]")).to_contain_text(" left")
        page.click("[data-action=resign]")
        js(page, "S.snap.state === 'finished'")
        bar = page.locator(".race-bar")
        expect(bar.locator("[data-testid=race-over]")).to_be_visible(timeout=TIMEOUT)
        expect(bar.locator("[data-testid=time-left]")).to_have_count(0)
        assert " left" not in bar.inner_text() and "done" not in bar.inner_text()
        assert errors == []
    finally:
        page.context.close()


def test_a_disconnected_racer_shows_when_they_resign(browser, web_server):
    """Item 9: a disconnected racer was a red dot; now "resigns in N s" (the grace period)."""
    errors: list[str] = []
    ada = new_page(browser, errors, "ada")
    bob = new_page(browser, errors, "bob")
    try:
        code = create_room(ada, web_server.url, "Ada")
        configure(ada, game="klondike", countdown=0, seed=KLONDIKE_TEXT)
        join_room(bob, web_server.url, code, "Bob")
        start(ada)
        racing_with_board(ada)
        js(bob, "S.snap.state === 'racing'")
        bob.context.close()
        grace = ada.locator('.racer[data-seat="1"] [data-testid=grace]')
        expect(grace).to_have_text(re.compile(r"disconnected · resigns in \d+ s"), timeout=TIMEOUT)
        left = int(re.search(r"in (\d+) s", grace.inner_text()).group(1))
        assert 0 < left <= state(ada, "S.grace")
        assert errors == []
    finally:
        ada.context.close()


def test_ratings_beside_names_and_their_change_after_a_rated_race(browser, web_server):
    """Ratings shown: after a rated race the results show each player's rating (with ? while
    provisional) and its change; the racers' panel and the lobby of the rematch show them."""
    errors: list[str] = []
    ada = new_page(browser, errors, "ada")
    bob = new_page(browser, errors, "bob")
    try:
        code = create_room(ada, web_server.url, "Ada")
        configure(ada, game="klondike", countdown=0, rated=True)
        join_room(bob, web_server.url, code, "Bob")
        start(ada)
        racing_with_board(ada)
        js(bob, "S.snap.state === 'racing' && S.view !== null")
        bob.click("[data-action=resign]")
        js(bob, "S.snap.players.find(p => p.seat === S.seat).status === 'resigned'")
        ada.click("[data-action=resign]")
        js(ada, "S.snap.state === 'finished'")
        results = ada.locator("[data-testid=results]")
        expect(results.locator("[data-testid=rated-note]")).to_contain_text("rated race")
        for seat in (0, 1):
            row = results.locator(f'tr[data-seat="{seat}"]')
            expect(row.locator("[data-testid=rating-change]")).to_have_text(
                re.compile(r"^(\+\d+|−\d+|±0)$"), timeout=TIMEOUT
            )
            expect(row.locator("[data-testid=rating]")).to_have_text(re.compile(r"^\d+\?$"))
        # the server's figures, as shown: the chips are /api/ratings' answer
        shown = ada.evaluate(
            """async () => {
            const ids = window.solrace.state.snap.players.map(p => p.player).join(",");
            return (await (await fetch(`/api/ratings/klondike?players=${ids}`)).json()).players;
        }"""
        )
        record = state(ada, "S.snap.results.record")
        for seat, pid in enumerate(state(ada, "S.snap.players.map(p => p.player)")):
            row = results.locator(f'tr[data-seat="{seat}"]')
            assert shown[pid]["last"]["race"] == record
            assert row.locator("[data-testid=rating]").inner_text() == f"{shown[pid]['rating']}?"
        expect(ada.locator('.racer[data-seat="1"] [data-testid=rating]')).to_be_visible()
        ada.click("[data-action=rematch]")
        js(ada, "S.snap.state === 'lobby'")
        expect(ada.locator('li.player[data-seat="1"] [data-testid=rating]')).to_have_text(
            re.compile(r"^\d+\?$"), timeout=TIMEOUT
        )

        # the player's page: the same rating, and the daily streak (none yet), on a phone
        pid = state(ada, "S.player")
        bob.goto(f"{web_server.url}/player/{pid}")
        games = bob.locator("[data-testid=player-games]")
        expect(games.locator("td.rating")).to_have_text(
            f"{shown[pid]['rating']}? (1 rated race)", timeout=TIMEOUT
        )
        expect(bob.locator("[data-testid=streak]")).to_contain_text("No daily streak")
        bob.set_viewport_size({"width": 390, "height": 844})
        assert fits(bob) and serious_violations(bob) == []
        assert errors == []
    finally:
        ada.context.close()
        bob.context.close()


PIDS = [c * 16 for c in "abcdefgh"]


def put_on_boards(server) -> None:
    """Races counted the standings' own way (Standings.apply on the server's Redis): wins
    and best times of Putt Putt (a game without options) for three players."""

    async def main() -> None:
        redis = connect(server.redis_url, max_connections=4, pool_timeout=5)
        try:
            standings = Standings(Records(redis, server.prefix), Boards(redis, server.prefix))
            now = int(time.time() * 1000)
            for n, (winner, ms) in enumerate(
                [(PIDS[0], 61_000), (PIDS[0], 65_500), (PIDS[1], 72_300), (PIDS[2], 99_000)]
            ):
                loser = PIDS[3]
                players = (
                    Finisher(winner, f"Player {winner[0].upper()}", False, 1, "won", ms, 40 + n),
                    Finisher(loser, "Dee", False, 2, "dead", None, 12),
                )
                race = Outcome(
                    f"{n + 1:016x}", "puttputt", "", now - 1000 + n, False, True, players
                )
                await standings.apply(race, now)
        finally:
            await redis.aclose()

    with ThreadPoolExecutor(1) as pool:  # Playwright's own loop runs in this thread
        pool.submit(asyncio.run, main()).result()


def test_the_leaderboard_page_lists_the_boards_with_links_to_players(browser, web_server):
    """Pages: /leaderboard/GAME/KIND shows a board (wins, best time), each name a link to the
    player's page; an empty board says so; it fits a phone and axe finds nothing serious."""
    put_on_boards(web_server)
    errors: list[str] = []
    page = new_page(browser, errors, viewport={"width": 390, "height": 844})
    try:
        page.goto(f"{web_server.url}/leaderboard/puttputt/wins")
        table = page.locator("[data-testid=board-table]")
        expect(table.locator("tbody tr")).to_have_count(3, timeout=TIMEOUT)
        first = table.locator("tbody tr").first
        expect(first).to_contain_text("Player A")
        expect(first.locator("td").nth(2)).to_have_text("2")
        link = first.locator("[data-testid=player-link]")
        assert link.get_attribute("href") == f"/player/{PIDS[0]}"
        assert fits(page) and serious_violations(page) == []

        page.click("nav.tabs >> text=Best time")
        expect(page.locator("[data-testid=leaderboard]")).to_have_attribute("data-kind", "time")
        expect(table.locator("tbody tr").first).to_contain_text("1:01.0")
        page.click("nav.tabs >> text=Rating")
        expect(page.locator("[data-testid=board-empty]")).to_be_visible(timeout=TIMEOUT)
        link_to_help = page.locator("main a[href='/ratings']")
        link_to_help.click()
        expect(page.locator("[data-testid=ratings-help]")).to_contain_text("provisional")
        assert fits(page) and serious_violations(page) == []

        page.goto(f"{web_server.url}/dailies")
        expect(page.locator("[data-testid=archive]")).to_contain_text("Past dailies")
        assert fits(page) and serious_violations(page) == []
        assert errors == []
    finally:
        page.context.close()


def fits(page) -> bool:
    """Nothing wider than the viewport (390 px on a phone): no sideways scrolling."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_an_invite_link_says_who_invites_to_what_and_the_root_is_the_landing_page(
    browser, web_server
):
    """Invite page: a room link shows the game, the host and the seats, with Join and Watch;
    a link to no room says so. The site root typed in after a finished race is the landing
    page (not the old room), and the Join box holds no stale code; Live now lists a public
    race to watch."""
    errors: list[str] = []
    ada = new_page(browser, errors, "ada")
    bob = new_page(browser, errors, "bob", viewport={"width": 390, "height": 844})
    try:
        code = create_room(ada, web_server.url, "Ada")
        configure(ada, game="puttputt", countdown=0, public=True)
        bob.goto(f"{web_server.url}/r/{code}")
        invite = bob.locator("[data-testid=invite]")
        expect(invite).to_have_attribute("data-state", "lobby", timeout=TIMEOUT)
        expect(invite.locator("h1")).to_have_text("Ada invites you to Putt Putt")
        expect(invite).to_contain_text("1/8 seated")
        expect(invite.locator("[data-testid=invite-players]")).to_contain_text("Ada")
        assert fits(bob) and serious_violations(bob) == []
        bob.fill("#name", "Bob")
        bob.click("[data-action=join]")
        expect(bob.locator("[data-testid=ready]")).to_be_visible(timeout=TIMEOUT)

        # a race going on: Live now on a third person's landing page, the invite offers Watch
        start(ada)
        fan = new_page(browser, errors, "fan", **SPECTATOR)
        try:
            fan.goto(web_server.url + "/")
            live = fan.locator(f'[data-testid=live-now] li[data-room="{code}"]')
            js(fan, "S.conn === 'open'")
            fan.evaluate("window.solrace.conn.request({type: 'lobby'})")
            expect(live).to_contain_text("Putt Putt", timeout=TIMEOUT)
            live.locator("[data-action=watch-room]").click()
            js(fan, f"S.room === '{code}' && S.role === 'spectator'")
        finally:
            fan.context.close()
        for page in (ada, bob):
            page.click("[data-action=resign]")
        js(ada, "S.snap.state === 'finished'")

        # the site root typed in: the landing page, no room, an empty Join box
        ada.goto(web_server.url + "/")
        expect(ada.locator("section.hero")).to_be_visible(timeout=TIMEOUT)
        js(ada, "S.conn === 'open' && S.room === null")
        expect(ada.locator("#join-code")).to_have_value("")

        bob.goto("about:blank")  # a link opened afresh (a new hash alone would not load)
        bob.goto(f"{web_server.url}/#{'A' * 20}")
        missing = bob.locator("[data-testid=invite]")
        expect(missing).to_have_attribute("data-state", "missing", timeout=TIMEOUT)
        missing.locator("[data-action=landing]").click()
        expect(bob.locator("section.hero")).to_be_visible()
        expect(bob.locator("#join-code")).to_have_value("")
        assert errors == []
    finally:
        ada.context.close()
        bob.context.close()


def test_an_identity_is_carried_to_another_browser_by_its_code_or_its_qr_link(browser, web_server):
    """Carry your identity: the key shown as a code and a QR code (with the warning that it
    is a secret), taken by another browser by typing the code or opening the QR's link
    (#key=..., dropped from the address at once): both are then the same player."""
    errors: list[str] = []
    laptop = new_page(browser, errors, "laptop")
    phone = new_page(browser, errors, "phone", viewport={"width": 390, "height": 844})
    tablet = new_page(browser, errors, "tablet")
    try:
        laptop.goto(web_server.url + "/")
        js(laptop, "S.conn === 'open' && S.player !== null")
        me = state(laptop, "S.player")
        laptop.click("[data-testid=identity-show]")
        shown = laptop.locator("[data-testid=identity-key]")
        expect(shown).to_contain_text("secret")
        code = laptop.locator("[data-testid=identity-code]").inner_text()
        assert " " in code  # in groups of four
        expect(shown.locator("[data-testid=identity-qr] svg")).to_have_count(1)
        assert serious_violations(laptop) == []

        phone.goto(web_server.url + "/")
        js(phone, "S.conn === 'open' && S.player !== null")
        assert state(phone, "S.player") != me
        phone.fill("#identity-input", code)
        phone.click("[data-testid=identity-use]")  # confirm: accepted
        same_player(phone, me)
        assert fits(phone)

        key = code.replace(" ", "")
        tablet.goto(f"{web_server.url}/#key={key}")
        expect(tablet.locator("[data-action=identity-use-offered]")).to_be_visible(timeout=TIMEOUT)
        assert key not in tablet.url  # the secret left the address at once
        tablet.click("[data-action=identity-use-offered]")
        same_player(tablet, me)
        assert errors == []
    finally:
        for page in (laptop, phone, tablet):
            page.context.close()


def same_player(page, pid: str) -> None:
    """The page has reloaded (a new key) and said hello as `pid`."""
    page.wait_for_function(
        f"window.solrace && window.solrace.state.conn === 'open' && window.solrace.state.player === '{pid}'",
        timeout=TIMEOUT,
    )
