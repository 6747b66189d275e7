"""The full-screen terminal client (Textual), driven by Textual's pilot against a real server:
the board, the opponents' progress and a prompt whose text survives every redraw."""

from __future__ import annotations

import asyncio

from helpers.deals import PUTT_TEXT
from solrace.client import Client
from solrace.client.tui import RaceApp
from textual.widgets import Input, RichLog, Static


def text_of(app: RaceApp, selector: str) -> str:
    widget = app.query_one(selector)
    if isinstance(widget, RichLog):
        return "\n".join(line.text for line in widget.lines)
    assert isinstance(widget, Static)
    return str(widget.content)


async def until(pilot, condition, what: str, timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await pilot.pause(0.05)
    assert condition(), what


async def type_line(pilot, text: str, submit: bool = True) -> None:
    await pilot.press(*text)
    if submit:
        await pilot.press("enter")


async def test_the_full_screen_client_plays_and_keeps_the_prompt(server_url):
    host, opp, me = Client(server_url), Client(server_url), Client(server_url, auto_resume=True)
    for c in (host, opp, me):
        await c.connect()
    try:
        room = await host.create(
            "host", {"game": "puttputt", "countdown": 0, "seed": PUTT_TEXT}, play=False
        )
        await opp.join(room.room, "opp")
        joined = await me.join(room.room, "tui")
        app = RaceApp(me, intro=[f"joined room {joined.room} as seat {joined.seat}"])
        async with app.run_test(size=(130, 40)) as pilot:
            prompt = app.query_one("#prompt", Input)
            assert prompt.has_focus
            assert "joined room" in text_of(app, "#log")
            await type_line(pilot, "/ready")
            await until(pilot, lambda: me.room.players[joined.seat]["ready"], "ready")
            await opp.ready()
            await host.start()
            await until(pilot, lambda: me.room.view is not None, "the board")
            await until(pilot, lambda: "moves: 1)t2-f1" in text_of(app, "#moves"), "moves listed")
            assert "Putt Putt" in text_of(app, "#board") and " f1 " in text_of(app, "#board")

            await type_line(pilot, "T2-F1")  # upper case is fine
            await until(pilot, lambda: me.room.view["moves"] == 1, "the move")
            assert "ok t2-f1 (move 1)" in text_of(app, "#log")

            await type_line(pilot, "de", submit=False)  # half typed when a push arrives
            await opp.move("deal", n=1)
            await until(
                pilot,
                lambda: me.room.players[0]["moves"] == 1 and "  1 mv" in text_of(app, "#players"),
                "the opponent's progress",
            )
            assert prompt.value == "de"  # the redraw did not touch the prompt
            await pilot.press("tab")
            assert prompt.value == "deal"
            await pilot.press("enter")
            await until(pilot, lambda: me.room.view["moves"] == 2, "the deal")
            assert "opp" in text_of(app, "#players") and "tui" in text_of(app, "#players")

            await type_line(pilot, "/quit")
            await until(pilot, lambda: not app.is_running, "quit")
        assert app.return_value == 0
    finally:
        for c in (host, opp, me):
            await c.close()
