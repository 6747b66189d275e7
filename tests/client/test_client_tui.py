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


async def test_lines_typed_ahead_stay_apart_and_events_are_sentences(server_url):
    """Issue 23, item 9: three `deal` lines typed at once were sent as `dealdealdeal` (the
    prompt was cleared only when the app came to the line), and events were printed raw
    (`* connected: seat=0, connected=False`)."""
    host, opp, me = Client(server_url), Client(server_url), Client(server_url)
    for c in (host, opp, me):
        await c.connect()
    try:
        room = await host.create(
            "host", {"game": "puttputt", "countdown": 0, "seed": PUTT_TEXT}, play=False
        )
        await opp.join(room.room, "opp")
        joined = await me.join(room.room, "tui")
        app = RaceApp(me)
        async with app.run_test(size=(130, 40)) as pilot:
            await opp.ready()
            await until(pilot, lambda: "opp is ready" in text_of(app, "#log"), "ready said")
            await host.start()
            await until(pilot, lambda: me.room.view is not None, "the board")
            # the first line's round trip held up until the next two are typed
            handle, gate = app.term.handle_line, asyncio.Event()

            async def slow(line: str) -> bool:
                await gate.wait()
                return await handle(line)

            app.term.handle_line = slow  # type: ignore[method-assign]
            # typed straight into the prompt: the pilot's press waits for the app, which is
            # busy with the first line (a person at the keyboard does not wait)
            prompt = app.query_one("#prompt", Input)
            prompt.insert_text_at_cursor("deal")
            await prompt.action_submit()
            await until(pilot, lambda: "> deal" in text_of(app, "#log"), "the first line")
            for _ in range(2):
                prompt.insert_text_at_cursor("deal")
                await prompt.action_submit()
            gate.set()
            # the log, not the board: the board may show move 3 before its line is written,
            # and the third "> deal" is then the log's last line, with no newline after it
            await until(pilot, lambda: "(move 3)" in text_of(app, "#log"), "three deals")
            log = text_of(app, "#log")
            assert log.count("> deal\n") == 3 and "dealdeal" not in log, log

            await opp.close()
            await until(pilot, lambda: "opp disconnected" in text_of(app, "#log"), "said")
            log = text_of(app, "#log")
            grace = me.welcome.limits["grace"] if me.welcome else None
            assert f"opp disconnected: resigns in {round(grace or 0)} s unless back" in log, log
            assert "connected=" not in log and "seat=" not in log, log
            assert joined.seat is not None
    finally:
        for c in (host, opp, me):
            await c.close()
