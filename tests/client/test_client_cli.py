"""`solrace play` and `solrace watch` as real subprocesses against a real server."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

from helpers.output import read_until
from helpers.timing import scaled
from solrace.client import Client
from solrace.server.league.players import key_hash, player_id

#: where the racers of these tests connect from: the watching command runs at 127.0.0.1
RACERS = "127.0.0.3"


async def test_play_joins_readies_and_sends_a_move(server_url, solrace_cmd, child_env):
    host = Client(server_url)
    await host.connect()
    proc = None
    try:
        joined = await host.create("host", {"game": "puttputt", "countdown": 1}, play=False)
        proc = await asyncio.create_subprocess_exec(
            *solrace_cmd,
            "play",
            f"{server_url}#{joined.room}",
            "--name",
            "bob",
            "--no-color",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=child_env,
        )
        out = await read_until(proc.stdout, f"joined room {joined.room}")
        await host.wait_until(
            lambda: any(p["name"] == "bob" for p in host.room.players.values()), 10
        )
        seat = next(s for s, p in host.room.players.items() if p["name"] == "bob")
        # `play` made a player key in its config directory, readable by its owner only, and
        # raced under the id derived from it
        key_file = Path(child_env["XDG_CONFIG_HOME"]) / "solrace" / "player-key"
        assert key_file.stat().st_mode & 0o777 == 0o600
        key = key_file.read_text().strip()
        assert host.room.players[seat]["player"] == player_id(key_hash(key))
        proc.stdin.write(b"/ready\n")
        await proc.stdin.drain()
        await host.wait_until(lambda: host.room.players[seat]["ready"], 10)
        await host.start()
        out = await read_until(proc.stdout, "moves: 1)")  # the board and its numbered moves
        assert "the race starts in 1..." in out and "GO!" in out
        assert "Putt Putt" in out and " t1 " in out and " f1 " in out
        proc.stdin.write(b"1\n")
        await proc.stdin.drain()
        out = await read_until(proc.stdout, "ok ")
        assert "(move 1)" in out
        await host.wait_until(lambda: host.room.players[seat]["moves"] == 1, 10)
        proc.stdin.write(b"t9-f1\n")
        await proc.stdin.drain()
        out = await read_until(proc.stdout, "refused:")
        assert "illegal_move" in out
        proc.stdin.write(b"/resign\n")  # the only racer resigns: the race ends
        await proc.stdin.drain()
        out = await read_until(proc.stdout, "1. bob resigned")
        assert "results:" in out
        proc.stdin.write(b"/quit\n")
        await proc.stdin.drain()
        assert await asyncio.wait_for(proc.wait(), scaled(10)) == 0
    finally:
        if proc and proc.returncode is None:
            proc.kill()
            await proc.wait()
        await host.close()


async def test_play_create_prints_share_link(server_url, solrace_cmd, child_env):
    proc = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "play",
        "--server",
        server_url,
        "--create",
        "klondike",
        "-o",
        "draw=3",
        "-o",
        "time_limit=300",
        "--name",
        "ann",
        "--no-color",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    try:
        out = await read_until(proc.stdout, "created")
        code = out.split("room ")[1].split()[0]
        assert f"/r/{code}" in out
        spectator = Client(server_url)
        await spectator.connect()
        try:
            await spectator.spectate(code)
            assert spectator.room.options["game"] == "klondike"
            assert spectator.room.options["game_options"]["draw"] == 3
            assert spectator.room.options["time_limit"] == 300
            assert [p["name"] for p in spectator.room.players.values()] == ["ann"]
        finally:
            await spectator.close()
        proc.stdin.close()  # EOF quits
        assert await asyncio.wait_for(proc.wait(), scaled(10)) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_watch_prints_every_board(server_url, solrace_cmd, child_env):
    # the racers race from another address than the watcher's (the server shows no board
    # of a race to a racer's address)
    a, b = Client(server_url, source=RACERS), Client(server_url, source=RACERS)
    await a.connect()
    await b.connect()
    try:
        joined = await a.create("ann", {"game": "leapyear", "countdown": 1, "spectator_delay": 0})
        await b.join(joined.room, "bob")
        await a.ready()
        await b.ready()
        await a.start()
        await a.wait_board()
        await a.move("deal", n=1)
        proc = await asyncio.create_subprocess_exec(
            *solrace_cmd,
            "watch",
            f"{server_url}#{joined.room}",
            "--once",
            "--no-color",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=child_env,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), scaled(20))
        text = out.decode()
        assert proc.returncode == 0, text
        assert f"room {joined.room}  racing  Leap Year" in text
        assert "--- ann (seat 0) ---" in text and "--- bob (seat 1) ---" in text
        assert text.count(" t8 ") == 2 and text.count("f16") == 2
        assert "moves 1" in text and "moves 0" in text
    finally:
        await a.close()
        await b.close()


async def test_bot_command_races_and_reports(server_url, solrace_cmd, child_env):
    host = Client(server_url)
    await host.connect()
    try:
        joined = await host.create("host", {"game": "puttputt", "countdown": 1}, play=False)
        proc = await asyncio.create_subprocess_exec(
            *solrace_cmd,
            "bot",
            joined.room,
            "--server",
            server_url,
            "--pace",
            "0",
            "--count",
            "2",
            "--races",
            "1",
            "--name",
            "robo",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=child_env,
        )
        await host.wait_until(
            lambda: sum(bool(p.get("ready")) for p in host.room.players.values()) == 2, timeout=20
        )
        assert sorted(p["name"] for p in host.room.players.values()) == ["robo-1", "robo-2"]
        await host.start()
        out, _ = await asyncio.wait_for(proc.communicate(), scaled(120))
        text = out.decode()
        assert proc.returncode == 0, text
        assert "robo-1: seat" in text and "robo-2: seat" in text and "1 race(s)" in text
        await host.wait_until(lambda: host.room.state == "finished", 20)
    finally:
        await host.close()


async def test_play_as_host_without_a_seat_shows_boards(server_url, solrace_cmd, child_env):
    proc = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "play",
        "--server",
        server_url,
        "--create",
        "puttputt",
        "-o",
        "countdown=1",
        "-o",
        "spectator_delay=0",
        "--spectate-only",
        "--name",
        "boss",
        "--no-color",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    player = Client(server_url, source=RACERS)
    await player.connect()
    try:
        out = await read_until(proc.stdout, "created")
        code = out.split("room ")[1].split()[0]
        await player.join(code, "pat")
        await player.ready()
        await read_until(proc.stdout, "pat is ready")  # an event as a sentence (issue 23)
        proc.stdin.write(b"/start\n")
        await proc.stdin.drain()
        await player.wait_board()
        out = await read_until(proc.stdout, "--- pat (seat 0) ---")
        out += await read_until(proc.stdout, " f1 ")
        assert "Putt Putt" in out
        proc.stdin.write(b"/quit\n")
        await proc.stdin.drain()
        assert await asyncio.wait_for(proc.wait(), scaled(10)) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await player.close()


async def test_watch_redraws_as_the_race_goes(server_url, solrace_cmd, child_env):
    a = Client(server_url, source=RACERS)
    await a.connect()
    proc = None
    try:
        joined = await a.create("ann", {"game": "puttputt", "countdown": 1, "spectator_delay": 0})
        proc = await asyncio.create_subprocess_exec(
            *solrace_cmd,
            "watch",
            joined.room,
            "--server",
            server_url,
            "--interval",
            "0.2",
            "--no-color",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=child_env,
        )
        await read_until(proc.stdout, "room " + joined.room + "  lobby")
        await a.ready()
        await a.start()
        await a.wait_board()
        out = await read_until(proc.stdout, "--- ann (seat 0) ---")
        for n in range(1, 4):
            await a.move("deal", n=n)
        out = await read_until(proc.stdout, "moves 3  home")
        assert "stock 13" in out
    finally:
        if proc is not None and proc.returncode is None:
            proc.terminate()
            await proc.wait()
        await a.close()


async def test_run_bot_stops_when_told(server_url):
    from solrace.client.bot import run_bot

    host = Client(server_url)
    await host.connect()
    try:
        joined = await host.create("host", {"game": "klondike"}, play=False)
        stop = asyncio.Event()
        bot = asyncio.create_task(
            run_bot(server_url, joined.room, "idle", pace=0.1, stop_event=stop, races=None)
        )
        await host.wait_until(lambda: any(p.get("ready") for p in host.room.players.values()), 10)
        stop.set()
        result = await asyncio.wait_for(bot, scaled(5))
        assert result.races == 0 and result.moves == 0 and result.seat == 0
    finally:
        await host.close()


async def test_bot_command_can_create_and_host_a_room(server_url, solrace_cmd, child_env):
    proc = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "bot",
        "--server",
        server_url,
        "--create",
        "puttputt",
        "-o",
        "countdown=1",
        "--count",
        "2",
        "--races",
        "1",
        "--pace",
        "0",
        "--name",
        "robo",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    out = await read_until(proc.stdout, "/r/")
    code = out.split("room ")[1].split(":")[0]
    rest, _ = await asyncio.wait_for(proc.communicate(), scaled(120))
    text = out + rest.decode()
    assert proc.returncode == 0, text
    assert "robo-1: seat 0, 1 race(s)" in text and "robo-2: seat 1, 1 race(s)" in text
    watcher = Client(server_url)
    await watcher.connect()
    try:
        await watcher.spectate(code)
        assert watcher.room.state == "finished" and len(watcher.room.results["ranking"]) == 2
    finally:
        await watcher.close()


async def test_play_daily_scored_then_refused_then_practice(server_url, solrace_cmd, child_env):
    """`solrace play --daily GAME`: the first go is scored; the same player key's second is
    refused with the server's reason and how to practise; `--practice` is allowed, on
    yesterday's deal, and says so."""

    async def play(*extra: str) -> tuple[str, asyncio.subprocess.Process]:
        proc = await asyncio.create_subprocess_exec(
            *solrace_cmd,
            "play",
            "--server",
            server_url,
            "--daily",
            "puttputt",
            "--name",
            "ann",
            "--no-color",
            "--plain",
            *extra,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=child_env,
        )
        return await read_until(proc.stdout, "daily" if not extra else "practice"), proc

    out, proc = await play()
    try:
        assert "(scored: your first go today)" in out and "/api/daily/" in out
        proc.stdin.write(b"/resign\n")
        await proc.stdin.drain()
        out = await read_until(proc.stdout, "revealed at")
        assert "results:" in out
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), scaled(10)) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    again = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "play",
        "--server",
        server_url,
        "--daily",
        "puttputt",
        "--plain",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    said = (await asyncio.wait_for(again.communicate(), scaled(30)))[0].decode()
    assert again.returncode == 1 and "refused: daily_played" in said
    assert "--practice" in said
    out, proc = await play("--practice")
    try:
        today = datetime.datetime.now(datetime.UTC).date()
        yesterday = (today - datetime.timedelta(days=1)).isoformat()
        # a past day's deal, named (issue 20: practice never deals today's)
        assert f"(practice on the daily of {yesterday}: not on the board)" in out, out
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), scaled(10))
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_play_quick_races_whoever_is_waiting(server_url, solrace_cmd, child_env):
    """`solrace play --quick GAME`: queued, matched with a player who asked meanwhile (here a
    Python client), seated in the room over a connection naming it, and racing."""
    from solrace.client.player_key import new_key

    other = Client(server_url, player_key=new_key())
    await other.connect()
    proc = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "play",
        "--server",
        server_url,
        "--quick",
        "leapyear",
        "--name",
        "ann",
        "--no-color",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    racer = None
    try:
        out = await read_until(proc.stdout, "waiting for players of leapyear")
        assert "rated, your rating 25.0" in out
        queued = await other.quick("leapyear", "bob")
        assert queued.rated
        matched = await other.wait_matched(timeout=scaled(15))
        out = await read_until(proc.stdout, "quick match: racing bob")
        assert f"room {matched.room}" in out and "(rated)" in out
        racer = Client(server_url, room=matched.room, player_key=other.player_key)
        await racer.connect()
        await racer.resume(matched.room, matched.token)
        assert racer.room.options["rated"] and racer.room.options["game"] == "leapyear"
        assert sorted(p["name"] for p in racer.room.players.values()) == ["ann", "bob"]
        out = await read_until(proc.stdout, "moves: ")  # the race began: ann's board is drawn
        proc.stdin.write(b"/quit\n")
        await proc.stdin.drain()
        assert await asyncio.wait_for(proc.wait(), scaled(10)) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await other.close()
        if racer is not None:
            await racer.close()


async def test_play_arena_joins_is_paired_and_races(server_url, solrace_cmd, child_env):
    """`solrace play --arena ID`: joins the arena (its leaderboard printed), is paired with a
    bot that `solrace bot --arena ID` made a member, and races in the room it is moved to."""
    from solrace.client.player_key import new_key

    host = Client(server_url, player_key=new_key())
    await host.connect()
    aid = (await host.arena_create("leapyear", 5, 2, title="cli arena")).arena["id"]
    play = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "play",
        "--server",
        server_url,
        "--arena",
        aid,
        "--name",
        "ann",
        "--no-color",
        "--plain",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    bot = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "bot",
        "--server",
        server_url,
        "--arena",
        aid,
        "--name",
        "botty",
        "--pace",
        "0.2",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    try:
        out = await read_until(play.stdout, "waiting to be paired")
        assert "arena cli arena (leapyear): running" in out, out
        out = await read_until(play.stdout, "arena: racing botty in room")
        assert "paired in room" in (await read_until(bot.stdout, "paired in room"))
        out = await read_until(play.stdout, "moves: ")  # the race began: ann's board is drawn
        view = (await host.arena_watch(aid)).arena
        assert sorted(r["name"] for r in view["standings"]) == ["ann", "botty"]
        assert [r["bot"] for r in view["standings"] if r["name"] == "botty"] == [True]
        play.stdin.write(b"/quit\n")
        await play.stdin.drain()
        assert await asyncio.wait_for(play.wait(), scaled(10)) == 0
    finally:
        for proc in (play, bot):
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        await host.close()
