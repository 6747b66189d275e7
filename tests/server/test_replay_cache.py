"""server/league/replay.py's cache: a record's replay is built once however many ask at once, kept
in a bounded LRU, and too many distinct builds waiting at once are refused `busy`."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers.records import finished_room
from solrace.protocol.replay import build_replay
from solrace.server.league.records import build_record
from solrace.server.league.replay import Busy, Replays


def records(n: int) -> list[dict]:
    out = []
    for i in range(n):
        rec = build_record(finished_room("puttputt", players=2, seed=100 + i))
        rec["id"] = f"{i:016x}"
        out.append(rec)
    return out


async def test_one_build_per_record_and_a_bounded_lru() -> None:
    replays = Replays(size=2)
    a, b, c = records(3)
    bodies = await asyncio.gather(*(replays.build(a["id"], a) for _ in range(5)))
    assert replays.builds == 1 and all(x is bodies[0] for x in bodies)
    assert json.loads(bodies[0].json) == json.loads(json.dumps(build_replay(a)))
    assert replays.cached(a["id"]) is bodies[0]
    await replays.build(b["id"], b)
    await replays.build(a["id"], a)  # a is the newest again
    await replays.build(c["id"], c)  # so b goes
    assert replays.builds == 3 and list(replays.kept) == [a["id"], c["id"]]
    assert replays.cached(b["id"]) is None and not replays.pending


async def test_too_many_waiting_builds_are_refused_and_nothing_is_left_behind() -> None:
    replays = Replays(size=8, max_pending=2)
    recs = records(3)
    first = [asyncio.ensure_future(replays.build(r["id"], r)) for r in recs[:2]]
    await asyncio.sleep(0)  # both registered, one building, one waiting its turn
    with pytest.raises(Busy):
        await replays.build(recs[2]["id"], recs[2])
    await asyncio.gather(*first)
    assert not replays.pending and replays.builds == 2
    await replays.build(recs[2]["id"], recs[2])  # room again
    assert replays.builds == 3


async def test_a_record_that_does_not_replay_fails_its_callers_and_is_not_kept() -> None:
    (rec,) = records(1)
    rec["moves"]["0"] = ["t9-f1", *rec["moves"]["0"][1:]]
    replays = Replays()
    results = await asyncio.gather(
        replays.build(rec["id"], rec), replays.build(rec["id"], rec), return_exceptions=True
    )
    assert all(isinstance(r, ValueError) for r in results), results
    assert replays.cached(rec["id"]) is None and not replays.pending
