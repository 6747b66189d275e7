"""Issue 12 in the Python clients: moves typed in any case, a clock that stops with the race,
bots that do not tie and leave after a race, and links that open the room."""

from __future__ import annotations

import asyncio
import random

from helpers.output import read_line_with
from helpers.timing import scaled
from solrace.client import Client, parse_target
from solrace.client.bot import DEFAULT_RACES, pause, seed_of
from solrace.client.render import header, render_spectator_screen
from solrace.client.room import RoomModel
from solrace.client.terminal import completions, move_text
from solrace.client.urls import watch_link


def test_moves_are_accepted_in_any_case():
    assert move_text("T1-F1") == "t1-f1"
    assert move_text(" t2 - t5:3 ") == "t2-t5:3"
    assert move_text("DEAL") == "deal"
    assert completions("T1", ["t1-f1", "t2-f1", "deal"]) == ["t1-f1"]
    assert "/resign" in completions("/re", ["deal"])


def finished_room() -> RoomModel:
    room = RoomModel(
        room="KX7QF", state="finished", starts_at=1_000_000, options={"game": "puttputt"}
    )
    room.players = {
        0: {
            "seat": 0,
            "name": "ann",
            "status": "won",
            "progress": 1.0,
            "moves": 40,
            "time": 95_000,
        },
        1: {
            "seat": 1,
            "name": "bob",
            "status": "resigned",
            "progress": 0.5,
            "moves": 30,
            "time": 120_000,
        },
    }
    room.results = {
        "ranking": [
            {
                "seat": 0,
                "name": "ann",
                "place": 1,
                "status": "won",
                "progress": 1.0,
                "moves": 40,
                "time": 95_000,
            },
            {
                "seat": 1,
                "name": "bob",
                "place": 2,
                "status": "resigned",
                "progress": 0.5,
                "moves": 30,
                "time": 80_000,
            },
        ]
    }
    return room


def test_the_watch_clock_stops_when_the_race_ends():
    """Bug 9: `solrace watch` kept its clock running after the race ended."""
    room = finished_room()
    later = header(room, now_ms=1_000_000 + 500_000, color=False)
    much_later = header(room, now_ms=1_000_000 + 900_000, color=False)
    assert later == much_later
    assert "finished 1:35" in later  # the last ranked time
    assert "clock" not in render_spectator_screen(room, color=False, now_ms=1_000_000 + 900_000)


def test_bots_have_their_own_seeded_tie_break():
    """Bug 11: two bots on one deal moved in lockstep and tied; --seed makes a run repeatable."""
    a = [pause(1.0, random.Random(seed_of("s", 0))) for _ in range(5)]
    b = [pause(1.0, random.Random(seed_of("s", 1))) for _ in range(5)]
    again = [pause(1.0, random.Random(seed_of("s", 0))) for _ in range(5)]
    assert a == again and a != b
    assert all(0.75 <= x <= 1.25 for x in a + b)
    assert pause(0.0, random.Random(1)) == 0.0
    assert DEFAULT_RACES == 1


def test_watch_links_name_the_room():
    link = watch_link("ws://h:1/ws", "KX7QF")
    assert link == "http://h:1/?watch=KX7QF"
    assert parse_target(link).room == "KX7QF"
    assert parse_target("https://h/?room=AB12").room == "AB12"


async def test_bot_create_prints_a_watch_link_and_leaves_after_one_race(
    server_url, solrace_cmd, child_env
):
    """Bug 11: bots sat in the room for ever by default; `bot --create` printed no watch link."""
    proc = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "bot",
        "--server",
        server_url,
        "--create",
        "puttputt",
        "-o",
        "countdown=0",
        "-o",
        "seed=tie-break",  # a fixed deal: on a fresh one both bots could die before any progress
        "--count",
        "2",
        "--pace",
        "0.02",
        "--seed",
        "issue12",
        "--name",
        "tie",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    try:
        assert proc.stdout is not None
        room_line = await read_line_with(proc.stdout, "/r/")
        code = room_line.split("room ")[1].split(":")[0]
        watch = await read_line_with(proc.stdout, "watch it: ")
        assert parse_target(watch.split("watch it: ")[1].strip()).room == code
        rest, _ = await asyncio.wait_for(
            proc.communicate(), scaled(120)
        )  # no --races: one race, then out
        assert proc.returncode == 0, rest.decode()
        assert "1 race(s)" in rest.decode()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    async with Client(server_url) as watcher:
        await watcher.spectate(code)
        ranking = watcher.room.results["ranking"]
        assert [r["place"] for r in ranking] == [1, 2], ranking  # no shared place
