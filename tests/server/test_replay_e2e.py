"""`/api/replay/ID` through a real server and Redis: a Klondike race played over WebSockets,
then its replay's frames, applied in order, give each seat exactly the board its acks carried
(the engine's view after each move), and no card the racer never saw; ETag, 304, gzip, 404;
a daily race's replay is 403 until its UTC day is over."""

from __future__ import annotations

import asyncio
import datetime
import gzip
import json
import random
from typing import Any

import redis
from helpers.deals import dealt
from helpers.http_get import aget
from helpers.race import until
from helpers.records import finished_room
from helpers.views import CARD, strings
from solrace.engine import new_game
from solrace.protocol.records import day_end_ms, hidden_until, pack
from solrace.protocol.replay import apply_frame
from solrace.server.league.records import build_record

TEXT = "replay-check-1"


async def play_random(client: Any, game: Any, rng: random.Random, moves: int) -> list[dict]:
    """Random legal moves (the test mirrors the deal); the views the acks carried."""
    views = []
    for _ in range(moves):
        legal = [str(mv) for mv in game.legal_moves()]
        if not legal or game.is_won() or game.is_dead():
            break
        mv = rng.choice(legal)
        ack = await client.request({"type": "move", "move": mv})
        if ack["type"] == "error" and ack["code"] == "bad_state":
            break
        assert ack["type"] == "ack", ack
        game.play(mv)
        views.append(ack["view"])
    return views


async def klondike_race(url: str, wire: Any) -> tuple[dict[str, Any], list[list[dict]]]:
    """Ann and Bob race Klondike (draw 3) on a text seed; returns the results, the views each
    seat's acks carried (the first its starting board)."""
    ann = await wire(url)
    opts = {"game": "klondike", "game_options": {"draw": 3}, "countdown": 0, "seed": TEXT}
    created = await ann.request({"type": "create", "name": "ann", "options": opts})
    bob = await wire(url)
    await bob.request({"type": "join", "room": created["room"], "name": "bob"})
    await ann.request({"type": "start", "host_token": created["host_token"]})
    snaps = [await c.wait_for(lambda x: x["type"] == "snapshot") for c in (ann, bob)]
    games = [new_game("klondike", seed=dealt(TEXT), options={"draw": 3}) for _ in range(2)]
    played = await asyncio.gather(
        play_random(ann, games[0], random.Random(1), 40),
        play_random(bob, games[1], random.Random(2), 25),
    )
    for c in (ann, bob):
        await c.request({"type": "resign"})
    results = await ann.wait_event("results")
    seen = [[s["snapshot"]["you"]["view"], *views] for s, views in zip(snaps, played, strict=True)]
    return results, seen


async def fetch_replay(port: int, rid: str, headers: dict[str, str] | None = None) -> tuple:
    got: list[tuple] = []

    async def served() -> bool:
        got.append(await aget(port, f"/api/replay/{rid}", headers))
        return got[-1][0] == 200

    await until(served, f"replay {rid} served")
    return got[-1]


def cards(obj: Any) -> set[str]:
    return {s for s in strings(obj) if CARD.match(s)}


async def test_replay_frames_give_each_seat_the_boards_it_saw(shared_server, wire) -> None:
    port = shared_server.port
    results, seen = await klondike_race(shared_server.ws_url, wire)
    rid = results["record"]
    status, headers, body = await fetch_replay(port, rid)
    doc = json.loads(body)
    assert doc["id"] == rid and doc["game"] == "klondike" and doc["title"] == "Klondike"
    assert [s["seat"] for s in doc["seats"]] == [r["seat"] for r in results["ranking"]]
    assert [s["place"] for s in doc["seats"]] == [r["place"] for r in results["ranking"]]
    for seat in doc["seats"]:
        n = seat["seat"]
        views = seen[n]
        assert seat["name"] == ("ann", "bob")[n] and seat["moves"] == len(views) - 1
        assert [f[1] for f in seat["frames"]] == results["moves"][str(n)]
        view = seat["view"]
        assert view == views[0]
        for k, frame in enumerate(seat["frames"], 1):
            view = apply_frame(view, frame)
            assert view == views[k], f"seat {n} after move {k}"
        # times are ms from the start, in order, within the race
        times = [f[0] for f in seat["frames"]]
        assert times == sorted(times) and all(0 <= t <= doc["duration"] for t in times)
        # no card the racer never saw: the face-down ones at the end are nowhere in the seat
        visible = set().union(*(cards(v) for v in views))
        assert cards(seat) <= visible
        never = {c for c in _all_cards() if c not in visible}
        assert never, "the race should end with cards still face down"
        assert not cards(seat) & never
    assert doc["duration"] == max(f[0] for s in doc["seats"] for f in s["frames"])

    # caching headers: the record's rules (an immutable body, an ETag, 304)
    assert headers["Cache-Control"] == "public, max-age=86400, immutable"
    assert headers["Vary"] == "Accept-Encoding" and "Content-Encoding" not in headers
    again = await aget(port, f"/api/replay/{rid}", {"If-None-Match": headers["ETag"]})
    assert again[0] == 304 and again[2] == b""
    # gzip when the client takes it: the same JSON, another ETag
    status, gzh, gz = await aget(port, f"/api/replay/{rid}", {"Accept-Encoding": "gzip, br"})
    assert status == 200 and gzh["Content-Encoding"] == "gzip"
    assert gzip.decompress(gz) == body and len(gz) < len(body) and gzh["ETag"] != headers["ETag"]
    status, _, _ = await aget(
        port, f"/api/replay/{rid}", {"Accept-Encoding": "gzip", "If-None-Match": gzh["ETag"]}
    )
    assert status == 304
    # unknown or malformed ids
    for bad in ("0123456789abcdef", "nothex", rid.upper(), rid + "00"):
        status, _, nf = await aget(port, f"/api/replay/{bad}")
        assert status == 404 and json.loads(nf) == {"error": "no such record"}


def _all_cards() -> set[str]:
    return {r + s for r in "A23456789TJQK" for s in "CDHS"}


def _store(redis_url: str, prefix: str, record: dict[str, Any]) -> None:
    r = redis.Redis.from_url(redis_url)
    try:
        r.set(f"{prefix}record:{{{record['id']}}}", pack(record), px=600_000)
    finally:
        r.close()


def _record(daily: str | None, salt: int) -> dict[str, Any]:
    """A finished race's record (the room rules alone) with its own id, as a daily of `daily`."""
    room = finished_room("puttputt", players=2, seed=salt)
    record = build_record(room)
    commitment = f"{salt:016x}" + record["commitment"][16:]
    record |= {"commitment": commitment, "id": commitment[:16]}
    return record | ({"daily": daily} if daily else {})


async def test_a_daily_race_record_and_replay_are_hidden_until_its_day_ends(
    shared_server, redis_url: str
) -> None:
    now = datetime.datetime.now(datetime.UTC)
    today = now.date().isoformat()
    yesterday = (now.date() - datetime.timedelta(days=1)).isoformat()
    hidden, past, plain = _record(today, 0xDA11), _record(yesterday, 0xDA12), _record(None, 0xDA13)
    for rec in (hidden, past, plain):
        _store(redis_url, shared_server.prefix, rec)

    for path in ("replay/{}", "record/{}", "record/{}.txt"):  # one check for every path
        status, headers, body = await aget(shared_server.port, "/api/" + path.format(hidden["id"]))
        assert status == 403 and headers["Cache-Control"] == "no-store"
        assert json.loads(body) == {
            "error": "daily deal: hidden until the day ends",
            "reveal_at": day_end_ms(today),
        }
        for rec in (past, plain):
            status, _, body = await aget(shared_server.port, "/api/" + path.format(rec["id"]))
            assert status == 200 and rec["id"].encode() in body


def test_hidden_until_is_the_end_of_the_daily_utc_day() -> None:
    end = int(datetime.datetime(2026, 11, 24, tzinfo=datetime.UTC).timestamp() * 1000)
    record = {"daily": "2026-11-23"}
    assert day_end_ms("2026-11-23") == end
    assert hidden_until(record, end - 86_400_000) == end  # the day's first ms
    assert hidden_until(record, end - 1) == end
    assert hidden_until(record, end) is None
    assert hidden_until({}, 0) is None and hidden_until({"daily": None}, 0) is None
