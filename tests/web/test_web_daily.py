"""The landing page's daily cards (issue 13) against a real `solrace serve`: Play starts the
day's Putt Putt daily at once with its board beside the race, another browser's card shows
"1 racing now", the results give the player's rank on the daily's board and keep the deal
secret, and back on the landing page the card offers Practice, which plays yesterday's deal
and says so (issue 20)."""

from __future__ import annotations

import datetime
import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect
from web.pages import SCREENSHOTS, TIMEOUT, js, new_page

pytestmark = pytest.mark.browser

CARD = "[data-testid=daily-puttputt]"
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"


def test_play_the_daily_from_the_landing_page(browser, web_server):
    errors: list[str] = []
    ann = new_page(browser, errors, "ann")
    bob = new_page(browser, errors, "bob")
    try:
        ann.goto(web_server.url + "/")
        expect(ann.locator(f"{CARD} [data-testid=daily-live]")).to_have_text(
            "0 racing now · 0 finished", timeout=TIMEOUT
        )
        ann.fill("#name", "Ann")
        ann.click(f"{CARD} [data-action=daily-play]")
        # the first attempt draws the day's deal (a solver search: test servers draw none at
        # start-up), tens of seconds on a loaded machine; the bound only stops a hang
        js(
            ann,
            "S.snap && S.snap.state === 'racing' && S.view && S.snap.daily.scored",
            timeout=4 * TIMEOUT,
        )
        side = ann.locator("[data-testid=daily-race]")
        expect(side.locator("[data-testid=daily-live]")).to_have_text(
            "1 racing now · 0 finished", timeout=TIMEOUT
        )
        expect(side.locator("[data-testid=daily-board] tr.me")).to_contain_text("Ann")

        bob.goto(web_server.url + "/")
        expect(bob.locator(f"{CARD} [data-testid=daily-live]")).to_have_text(
            "1 racing now · 0 finished", timeout=TIMEOUT
        )
        save_screenshot(bob)

        ann.click("[data-action=resign]")
        expect(ann.locator("[data-testid=daily-rank]")).to_have_text(
            "Daily board: #1 of 1 player.", timeout=TIMEOUT
        )
        expect(ann.locator("[data-testid=verify]")).to_contain_text("stays secret")
        ann.click("[data-testid=daily-home]")
        expect(ann.locator(f"{CARD} [data-action=daily-play]")).to_have_text(
            "Practice", timeout=TIMEOUT
        )
        expect(ann.locator(f"{CARD} [data-testid=daily-live]")).to_have_text(
            "0 racing now · 1 finished", timeout=TIMEOUT
        )
        # the streak the scored attempt started, on the cards (issue 23)
        expect(ann.locator("[data-testid=daily-streak]")).to_have_text(
            "Your streak: 1 day in a row", timeout=TIMEOUT
        )
        expect(bob.locator("[data-testid=daily-streak]")).to_have_count(0)
        # practice plays a past day's deal, and says which
        ann.click(f"{CARD} [data-action=daily-play]")
        js(ann, "S.snap && S.snap.state === 'racing' && S.view && S.snap.daily.practice")
        yesterday = (
            datetime.datetime.now(datetime.UTC).date() - datetime.timedelta(days=1)
        ).isoformat()
        expect(ann.locator("[data-testid=daily-kind]")).to_have_text(
            f"Practice on the daily of {yesterday}: not on the board.", timeout=TIMEOUT
        )
        assert errors == []
    finally:
        ann.context.close()
        bob.context.close()


def save_screenshot(page) -> None:  # type: ignore[no-untyped-def]
    """The landing page with its daily cards: test-artifacts/, and docs/ when asked
    (SOLRACE_UPDATE_SCREENSHOT=1), when pictures are asked for (web.pages.SCREENSHOTS)."""
    if not SCREENSHOTS:
        return
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "web-daily.png"
    page.screenshot(path=str(shot))
    if os.environ.get("SOLRACE_UPDATE_SCREENSHOT"):
        shutil.copy(shot, REPO / "docs" / "web-daily.png")
