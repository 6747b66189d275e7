"""The replay viewer and the player page in Chromium, on a real race against `solrace serve`.

Ann and Bob race Klondike on a known text seed (Ann: t3-f1 then t4-t5, Bob: t7-t6), resign,
and follow the results' link to the replay at /replay/ID: both boards show the deal, a step
forward plays the first move as it says (the ace goes home), the end of the scrub bar shows
both final boards, play moves the clock, the keys step and pause, ?t= starts at a time, and
the player page lists the race with a link back to its replay (and its per-game figures,
when the server sends them).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from helpers.deals import KLONDIKE_TEXT, dealt
from playwright.sync_api import Page, Route, expect
from solrace.engine import new_game
from web.pages import (
    SCREENSHOTS,
    TIMEOUT,
    configure,
    create_room,
    join_room,
    js,
    new_page,
    start,
    state,
)
from web.test_web_a11y import serious_violations

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
PLAN = {"ann": ["t3-f1", "t4-t5"], "bob": ["t7-t6"]}


def tops() -> dict[str, str]:
    piles = new_game("klondike", seed=dealt(KLONDIKE_TEXT)).view()["piles"]
    return {p: piles[p][-1] for p in ("t3", "t4", "t5", "t6", "t7")}


def move(page: Page, text: str) -> None:
    """A move through the page's own request path (the race tests drive the mouse)."""
    n = state(page, "S.view.moves") + 1
    reply = page.evaluate(f"window.solrace.conn.request({{type: 'move', move: '{text}', n: {n}}})")
    assert reply["type"] == "ack", reply
    js(page, f"S.view.moves === {n}")


def race(browser, url: str, errors: list[str]) -> tuple[Page, Page, str]:
    """The finished race; returns both pages (on the results) and the record id."""
    ann = new_page(browser, errors, "ann")
    bob = new_page(browser, errors, "bob")
    code = create_room(ann, url, "Ann")
    configure(ann, game="klondike", seed=KLONDIKE_TEXT, countdown=0)
    join_room(bob, url, code, "Bob")
    start(ann)
    for page in (ann, bob):
        js(page, "S.snap.state === 'racing' && S.view !== null")
    move(ann, "t3-f1")
    move(bob, "t7-t6")
    time.sleep(2)  # a race of some seconds, so the replay plays a while at 1x
    move(ann, "t4-t5")
    for page in (ann, bob):
        page.click("[data-action=resign]")
    for page in (ann, bob):
        expect(page.locator("[data-testid=results]")).to_be_visible(timeout=TIMEOUT)
    rid = state(ann, "S.snap.results.record")
    assert rid and len(rid) == 16
    return ann, bob, rid


def seat(page: Page, name: str):
    return page.locator(".replay-seat", has=page.locator(".name", has_text=name))


def card_on(page: Page, name: str, pile: str):
    return seat(page, name).locator(f'.pile[data-pile="{pile}"] [data-card]').last


def clock_ms(page: Page) -> int:
    return page.evaluate("window.solraceReplay.t")


def test_replay_viewer_and_player_page_of_a_real_race(browser, web_server):
    errors: list[str] = []
    top = tops()
    ann, bob, rid = race(browser, web_server.url, errors)
    try:
        ann_id = state(ann, "S.player")
        # the results link to the replay and to the record's text file
        links = ann.locator("[data-testid=record-links]")
        expect(links.locator("a", has_text="Download the record")).to_have_attribute(
            "href", f"/api/record/{rid}.txt"
        )
        ann.click("[data-testid=replay-link]")
        ann.wait_for_url(f"**/replay/{rid}")
        expect(ann.locator(".replay-seat .board")).to_have_count(2, timeout=TIMEOUT)
        expect(seat(ann, "Ann")).to_be_visible()
        expect(seat(ann, "Bob")).to_be_visible()
        expect(ann.locator("[data-testid=replay-clock]")).to_contain_text("0:00.0 /")
        # the deal as dealt: both boards at move 0, aces still on t3, nothing home
        for name in ("Ann", "Bob"):
            expect(seat(ann, name)).to_have_attribute("data-moves", "0")
            expect(card_on(ann, name, "t3")).to_have_attribute("data-card", top["t3"])
            expect(seat(ann, name).locator(".card.back").first).to_be_visible()
        expect(ann.locator('.replay-seat .pile[data-pile="f1"] [data-card]')).to_have_count(0)

        # step forward: Ann's first move, t3-f1, takes the ace home (the first on the timeline)
        ann.click("[data-testid=step-forward]")
        expect(seat(ann, "Ann")).to_have_attribute("data-moves", "1")
        expect(seat(ann, "Bob")).to_have_attribute("data-moves", "0")
        expect(seat(ann, "Ann").locator("[data-testid=seat-last]")).to_have_text("1. t3-f1")
        expect(card_on(ann, "Ann", "f1")).to_have_attribute("data-card", top["t3"])
        expect(card_on(ann, "Ann", "t3")).not_to_have_attribute("data-card", top["t3"])
        assert "t=" in ann.url  # a paused replay can be linked where it stands
        # step back undoes it
        ann.click("[data-testid=step-back]")
        expect(seat(ann, "Ann")).to_have_attribute("data-moves", "0")
        expect(card_on(ann, "Ann", "t3")).to_have_attribute("data-card", top["t3"])

        # scrub to the end: both final boards
        ann.eval_on_selector(
            "[data-testid=scrub]",
            "el => { el.value = el.max; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        )
        expect(seat(ann, "Ann")).to_have_attribute("data-moves", "2")
        expect(seat(ann, "Bob")).to_have_attribute("data-moves", "1")
        expect(card_on(ann, "Ann", "f1")).to_have_attribute("data-card", top["t3"])
        expect(card_on(ann, "Ann", "t5")).to_have_attribute("data-card", top["t4"])
        expect(card_on(ann, "Bob", "t6")).to_have_attribute("data-card", top["t7"])
        expect(card_on(ann, "Bob", "t3")).to_have_attribute("data-card", top["t3"])

        # play from the start: the clock runs and moves get played; space pauses
        ann.click("[data-testid=step-back]")
        ann.click("[data-testid=step-back]")
        ann.click("[data-testid=step-back]")
        assert clock_ms(ann) == 0
        ann.click("[data-testid=play]")
        expect(ann.locator("[data-testid=play]")).to_have_text("Pause")
        ann.wait_for_function("window.solraceReplay.t > 0")
        expect(seat(ann, "Bob")).to_have_attribute("data-moves", "1", timeout=TIMEOUT)
        ann.keyboard.press(" ")
        expect(ann.locator("[data-testid=play]")).to_have_text("Play")
        paused = clock_ms(ann)
        if paused >= ann.evaluate("window.solraceReplay.replay.end"):
            # on a loaded machine the replay can reach its end (and stop there) before the
            # key press: the press played it again from the start, to the end; step back so
            # that it has something left to play on below
            ann.click("[data-testid=step-back]")
            paused = clock_ms(ann)
        assert ann.evaluate("window.solraceReplay.playing") is False
        expect(ann.locator("[data-testid=replay-clock]")).not_to_contain_text("0:00.0 /")
        ann.keyboard.press(" ")  # and plays on, to the end at 8x
        expect(ann.locator("[data-testid=play]")).to_have_text("Pause")
        ann.select_option("[data-testid=speed]", "8")
        expect(ann.locator("[data-testid=play]")).to_have_text("Play", timeout=TIMEOUT)
        assert clock_ms(ann) == ann.evaluate("window.solraceReplay.replay.end") > paused
        expect(seat(ann, "Ann")).to_have_attribute("data-moves", "2")

        # the arrows step along the merged timeline: Ann's first move, then Bob's
        ann.eval_on_selector(
            "[data-testid=scrub]",
            "el => { el.value = 0; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        )
        ann.keyboard.press("ArrowRight")
        expect(seat(ann, "Ann")).to_have_attribute("data-moves", "1")
        expect(seat(ann, "Bob")).to_have_attribute("data-moves", "0")
        ann.keyboard.press("ArrowRight")
        expect(seat(ann, "Bob")).to_have_attribute("data-moves", "1")
        ann.keyboard.press("ArrowLeft")
        expect(seat(ann, "Bob")).to_have_attribute("data-moves", "0")
        expect(seat(ann, "Ann")).to_have_attribute("data-moves", "1")

        # a link with ?t= opens at that time: past everything, both boards at their end
        ann.goto(f"{web_server.url}/replay/{rid}?t=3600")
        expect(seat(ann, "Ann")).to_have_attribute("data-moves", "2", timeout=TIMEOUT)
        expect(seat(ann, "Bob")).to_have_attribute("data-moves", "1")
        save_screenshot(ann)
        assert serious_violations(ann) == []

        # the player page lists the race and links to its replay
        pid = state(bob, "S.player")
        bob.goto(f"{web_server.url}/player/{pid}")
        expect(bob.locator("[data-testid=player-name]")).to_have_text("Bob", timeout=TIMEOUT)
        row = bob.locator(f'tr[data-race="{rid}"]')
        expect(row).to_contain_text("Klondike")
        expect(row).to_contain_text("2nd of 2")
        # per-game figures come from rated races only: none here, so no section
        expect(bob.locator("[data-testid=player-games]")).to_have_count(0)
        assert serious_violations(bob) == []
        row.locator("[data-testid=replay-link]").click()
        bob.wait_for_url(f"**/replay/{rid}")
        expect(bob.locator(".replay-seat .board")).to_have_count(2, timeout=TIMEOUT)
        # the web client's own player page is one click from the lobby
        bob.goto(f"{web_server.url}/")
        expect(bob.locator("[data-testid=my-page]")).to_have_attribute(
            "href", f"/player/{pid}", timeout=TIMEOUT
        )
        # the per-game figures when the server sends them (Ann's page, the winner's)
        player_page_with_games(ann, web_server.url, ann_id, rid)
        assert errors == []
    finally:
        ann.context.close()
        bob.context.close()


def player_page_with_games(page: Page, url: str, pid: str, rid: str) -> None:
    """The per-game figures (`games` of /api/player/ID), every field of them: the real page of
    a real race's player, its `games` replaced by figures with a rating and a best time (a
    test race is neither rated nor won)."""
    games = {
        "klondike": {
            "races": 12,
            "wins": 5,
            "best_time": 93000,
            "rating": {"mu": 27.1, "sigma": 6.2, "ordinal": 8.5, "provisional": False},
            "rated": 30,
        },
        # a provisional rating (not on the board yet) says so, as lichess's "?"
        "tabbycat": {
            "races": 2,
            "wins": 1,
            "best_time": None,
            "rating": {"mu": 25.0, "sigma": 8.3, "ordinal": 0.0, "provisional": True},
            "rated": 2,
        },
        "puttputt": {"races": 1, "wins": 0, "best_time": None, "rating": None, "rated": 0},
    }

    def with_games(route: Route) -> None:
        real = route.fetch()
        body = real.json()
        assert body["games"] == {}  # the server's own (rated races only): replaced
        body["games"] = games
        route.fulfill(response=real, body=json.dumps(body))

    page.route("**/api/player/*", with_games)
    page.goto(f"{url}/player/{pid}")
    expect(page.locator(f'tr[data-race="{rid}"]')).to_contain_text("1st of 2", timeout=TIMEOUT)
    table = page.locator("[data-testid=player-games]")
    klondike = table.locator('tr[data-game="klondike"]')
    expect(klondike).to_contain_text("Klondike")
    expect(klondike.locator("td").nth(1)).to_have_text("12")
    expect(klondike.locator("td").nth(2)).to_have_text("5")
    expect(klondike.locator("td.time")).to_have_text("1:33.0")
    expect(klondike.locator("td.rating")).to_have_text("1340 (30 rated races)")  # 1000 + 40 x 8.5
    tabby = table.locator('tr[data-game="tabbycat"]')
    expect(tabby.locator("td.rating")).to_have_text("1000? (2 rated races)")
    putt = table.locator('tr[data-game="puttputt"]')
    expect(putt).to_contain_text("Putt Putt")
    expect(putt.locator("td.time")).to_have_text("–")
    expect(putt.locator("td.rating")).to_have_text("–")


def save_screenshot(page: Page) -> None:
    if not SCREENSHOTS:
        return
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "web-replay.png"
    bottom = page.evaluate(
        "Math.ceil(document.querySelector('.replay-grid').getBoundingClientRect().bottom)"
    )
    width = page.viewport_size["width"]
    page.screenshot(path=str(shot), clip={"x": 0, "y": 0, "width": width, "height": bottom + 20})
    if os.environ.get("SOLRACE_UPDATE_SCREENSHOT"):
        shutil.copy(shot, REPO / "docs" / "web-replay.png")
