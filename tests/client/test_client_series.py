"""A series from the Python client: `solrace play`'s host controls (`-o series=...`,
`/series`, `/endseries`), and a marked bot racing every round of a series the library's host
runs, the standings kept by the client's room model."""

from __future__ import annotations

import asyncio

import pytest
from helpers.timing import scaled
from solrace.client import Client
from solrace.client.options import parse_option, room_options
from solrace.client.render import render_player_screen, render_standings
from solrace.client.terminal import series_option


def test_series_from_the_command_line_and_the_prompt() -> None:
    pairs = [parse_option(t) for t in ("series=5", "scoring=places", "points=10,7,5", "draw=3")]
    opts = room_options("klondike", pairs)
    assert opts["series"] == {"rounds": 5, "scoring": "places", "points": [10, 7, 5]}
    assert opts["game_options"] == {"draw": 3}
    assert room_options("puttputt", [parse_option("series=open")])["series"] == {"rounds": 0}
    assert series_option("3 time", None) == {"rounds": 3, "scoring": "time"}
    assert series_option("open 5,3,1", {"rounds": 3, "scoring": "time"}) == {
        "rounds": 0,
        "scoring": "time",
        "points": [5, 3, 1],
    }
    assert series_option("off", {"rounds": 3}) is None
    with pytest.raises(ValueError):
        series_option("many", None)


async def test_a_bot_races_a_series_and_the_host_ends_it(server_url) -> None:
    from solrace.client.bot import run_bot

    host = Client(server_url)
    await host.connect()
    try:
        joined = await host.create(
            "host", {"game": "puttputt", "countdown": 1, "series": {"rounds": 0}}, play=True
        )
        await host.ready()
        bot = asyncio.create_task(run_bot(server_url, joined.room, "robo", pace=0.0, races=2))
        for race in range(2):
            await host.wait_until(
                lambda: sum(bool(p.get("ready")) for p in host.room.players.values()) == 2,
                timeout=10,
            )
            await host.start()
            await host.wait_board(10)
            await host.resign()
            await host.wait_until(lambda: host.room.state == "finished", timeout=scaled(60))
            series = host.room.series
            assert series is not None and series["played"] == race + 1 and not series["ended"]
            if race == 0:
                await host.rematch()
                await host.ready()
        await asyncio.wait_for(bot, scaled(30))
        rows = {r["name"]: r for r in host.room.series["standings"]}
        assert rows["robo"]["bot"] is True and rows["host"]["bot"] is False
        assert len(rows["robo"]["rounds"]) == 2
        await host.end_series()
        await host.wait_until(lambda: host.room.series["ended"], timeout=scaled(10))
        text = render_standings(host.room.series)
        assert text.startswith("final standings (2 rounds):") and "robo [bot]" in text
        assert text in render_player_screen(host.room, color=False)  # the lobby shows them
    finally:
        await host.close()
