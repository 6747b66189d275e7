"""`solrace play`'s /hint in a solo practice room, and the solver's words (client/verdicts)."""

from __future__ import annotations

import asyncio
import re

from helpers.output import read_until
from helpers.timing import scaled
from solrace.client.verdicts import hint_line, solved_line


async def test_play_hint_gives_a_move_the_server_takes(server_url, solrace_cmd, child_env):
    proc = await asyncio.create_subprocess_exec(
        *solrace_cmd,
        "play",
        "--plain",
        "--server",
        server_url,
        "--create",
        "puttputt",
        "-o",
        "hints=true",
        "-o",
        "deal=winnable",
        "-o",
        "countdown=0",
        "--name",
        "solo",
        "--no-color",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        await read_until(proc.stdout, "created", 60)
        proc.stdin.write(b"/start\n")
        await read_until(proc.stdout, "GO!", 60)
        for n in (1, 2):
            proc.stdin.write(b"/hint\n")
            out = await read_until(proc.stdout, "hint:", 60)
            found = re.search(r"hint: (\S+) \(move (\d+)\) keeps the game winnable", out)
            assert found, out
            assert int(found.group(2)) == n
            proc.stdin.write(found.group(1).encode() + b"\n")
            await read_until(proc.stdout, f"ok {found.group(1)} (move {n})", 60)
        proc.stdin.close()  # EOF quits
        assert await asyncio.wait_for(proc.wait(), scaled(10)) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_hint_and_verdict_words() -> None:
    assert hint_line({"verdict": "won", "move": "t3-f1", "n": 4}) == (
        "hint: t3-f1 (move 4) keeps the game winnable"
    )
    assert "lost" in hint_line({"verdict": "lost", "n": 4})
    assert "budget" in hint_line({"verdict": "unknown", "n": 4})
    line = solved_line(
        {"deal": "won", "deal_moves": 51, "seats": {"1": "lost", "0": "unknown"}}, {0: "ann"}
    )
    assert line == (
        "the deal was winnable (a 51-move win); final positions: "
        "ann: unknown (the solver ran out of budget), seat 1: not winnable"
    )
    # a second `solved` of the race: the verdicts left unknown, searched further
    again = solved_line({"deal": "lost", "deal_moves": None, "seats": {}}, again=True)
    assert again == "searched further: the deal was not winnable"
