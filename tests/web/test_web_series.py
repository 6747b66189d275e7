"""A series in the web client, in headless Chromium: the host sets it up with the page's own
controls, two players race three rounds on fresh deals while a spectator watches; the
standings after each round are on every page (lobby, race panel, results), a reload in the
middle of the series keeps the points, and the series ends with its final standings."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.views import putt_move
from playwright.sync_api import Page, expect
from web.pages import (
    SPECTATOR,
    TIMEOUT,
    configure,
    create_room,
    join_room,
    js,
    new_page,
    racing_with_board,
    state,
    watch_room,
)

pytestmark = pytest.mark.browser


def request(page: Page, msg: dict[str, Any]) -> dict[str, Any]:
    reply: dict[str, Any] = page.evaluate("m => window.solrace.conn.request(m)", msg)
    return reply


def get_a_card_home(page: Page) -> None:
    """Play the page's own board until a card is home (Putt Putt: a tX-f1 play; deal when
    none), through the page's request path."""
    for _ in range(40):
        view = state(page, "S.view")
        if view["home"] > 0:
            return
        move = putt_move(view)
        assert move is not None, "the stock ran out before a card went home"
        reply = request(page, {"type": "move", "move": move, "n": view["moves"] + 1})
        assert reply["type"] == "ack", reply
        js(page, f"S.view.moves === {view['moves'] + 1}")
    raise AssertionError("no card home in 40 moves")


def racing(page: Page) -> None:
    """`racing_with_board`, saying where the page was if it never got there."""
    try:
        racing_with_board(page)
    except Exception as exc:
        where = state(
            page,
            "({state: S.snap && S.snap.state, view: !!S.view, role: S.role, conn: S.conn,"
            " last: S.lastEvent, notice: S.notice, resync: S.needResync})",
        )
        raise AssertionError(f"not racing with a board: {where}") from exc


def standings_of(page: Page) -> dict[str, str]:
    """name -> points, as the page's standings table shows them."""
    table = page.locator("[data-testid=standings]").first
    out = {}
    for row in table.locator("tbody tr").all():
        out[row.locator("td.name").inner_text().split("\n")[0].strip()] = row.locator(
            "td.points"
        ).inner_text()
    return out


def test_a_three_round_series_with_two_players_and_a_spectator(browser, web_server) -> None:
    errors: list[str] = []
    ann = new_page(browser, errors, "ann")
    bob = new_page(browser, errors, "bob")
    fan = new_page(browser, errors, "fan", **SPECTATOR)
    try:
        code = create_room(ann, web_server.url, "Ann")
        configure(ann, game="puttputt", countdown=0, spectator_delay=0)
        # the host's own controls: a series of 3 rounds, points by place
        ann.select_option("[data-option='series.mode']", "rounds")
        js(ann, "S.snap.options.series && S.snap.options.series.rounds === 3")
        ann.fill("[data-option='series.points']", "10, 7")
        ann.locator("[data-option='series.points']").press("Enter")
        ann.locator("h1, h2").first.click()  # the change event: the field loses focus
        js(ann, "JSON.stringify(S.snap.options.series.points) === '[10,7]'")
        join_room(bob, web_server.url, code, "Bob")
        watch_room(fan, web_server.url, code)

        expected = {1: ("10", "7"), 2: ("17", "17"), 3: ("27", "24")}
        seeds = set()
        for rnd in (1, 2, 3):
            ann.click("[data-testid=start]")
            for p in (ann, bob):
                racing(p)
            expect(ann.locator("[data-testid=race-round]")).to_have_text(
                f"Round {rnd} of 3", timeout=TIMEOUT
            )
            # the race panel shows the standings so far while racing
            expect(fan.locator(".racers [data-testid=standings]")).to_have_attribute(
                "data-played", str(rnd - 1), timeout=TIMEOUT
            )
            winner, other = (bob, ann) if rnd == 2 else (ann, bob)
            get_a_card_home(winner)
            for p in (winner, other):
                request(p, {"type": "resign"})
            for p in (ann, bob, fan):
                js(
                    p,
                    f"S.snap.state === 'finished' && S.snap.series && S.snap.series.played === {rnd}",
                )
                table = p.locator(".results [data-testid=standings]")
                expect(table).to_have_attribute("data-played", str(rnd), timeout=TIMEOUT)
                assert standings_of(p) == {"Ann": expected[rnd][0], "Bob": expected[rnd][1]}
            seeds.add(state(ann, "S.snap.results.seed"))
            if rnd == 1:
                # a reload in the middle of the series: the points come back from the server
                bob.reload()
                fan.reload()
                for p in (bob, fan):
                    js(p, "S.snap && S.snap.series && S.snap.series.played === 1")
                    expect(p.locator("[data-testid=standings]").first).to_be_visible()
                    assert standings_of(p) == {"Ann": "10", "Bob": "7"}
            if rnd < 3:
                ann.click("[data-testid=rematch]")
                for p in (ann, bob, fan):
                    js(p, "S.snap.state === 'lobby'")
                    assert standings_of(p) == {"Ann": expected[rnd][0], "Bob": expected[rnd][1]}
                expect(bob.locator("[data-testid=series-round]")).to_have_text(
                    f"Round {rnd + 1} of 3 is next"
                )
        assert len(seeds) == 3  # a fresh deal every round
        for p in (ann, bob, fan):
            js(p, "S.snap.series.ended === true")
            expect(p.locator("[data-testid=standings] h2").first).to_have_text(
                "Final standings (3 rounds)"
            )
        link = ann.locator("[data-testid=series-record]").first
        series_id = state(ann, "S.snap.series.id")
        assert link.get_attribute("href") == f"/api/series/{series_id}"
        assert ann.locator("[data-testid=end-series]").count() == 0  # it is over
        assert errors == []
    finally:
        for p in (ann, bob, fan):
            p.context.close()


def test_the_host_ends_an_open_series_from_the_page(browser, web_server) -> None:
    errors: list[str] = []
    ann = new_page(browser, errors, "ann")
    try:
        create_room(ann, web_server.url, "Ann")
        configure(ann, game="puttputt", countdown=0)
        ann.select_option("[data-option='series.mode']", "open")
        js(ann, "S.snap.options.series && S.snap.options.series.rounds === 0")
        expect(ann.locator("[data-option='series.rounds']")).to_have_count(0)
        ann.click("[data-testid=start]")
        racing_with_board(ann)
        expect(ann.locator("[data-testid=race-round]")).to_have_text("Round 1")
        request(ann, {"type": "resign"})
        js(ann, "S.snap.state === 'finished' && S.snap.series.played === 1")
        expect(ann.locator("[data-testid=rematch]")).to_have_text("Next: round 2 (new deal)")
        ann.click("[data-testid=end-series]")  # its confirm is accepted
        js(ann, "S.snap.series.ended === true")
        expect(ann.locator(".results [data-testid=standings] h2")).to_have_text(
            "Final standings (1 round)"
        )
        assert standings_of(ann) == {"Ann": "10"}
        assert errors == []
    finally:
        ann.context.close()
