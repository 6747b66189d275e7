"""A whole race over real sockets: two players and a spectator play a Putt Putt deal to the end.

Every frame each client receives is recorded and checked: no card a viewer could not see, no seed
or salt before the results; and the revealed seed, salt and move lists replay to the same outcome
and match the commitment published at the countdown.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from helpers.views import CARD, ELSEWHERE, putt_move, strings
from solrace.engine import replay
from solrace.protocol.messages import decode


def ints(obj: Any):
    if isinstance(obj, bool):
        return
    if isinstance(obj, int):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from ints(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from ints(v)


def view_cards(view: dict[str, Any] | None) -> set[str]:
    if not view:
        return set()
    return {c for pile in view["piles"].values() for c in pile if isinstance(c, str)}


def check_player_frames(received: list[dict[str, Any]], seed: int, salt: str) -> None:
    """Every card a player is sent is in its own view at that time or was revealed to it."""
    seen: set[str] = set()
    for msg in received:
        if msg["type"] == "joined":
            seen |= view_cards(
                (msg.get("snapshot") or {}).get("you", {}).get("view")
                if msg.get("snapshot")
                else None
            )
            if msg.get("you"):
                seen |= view_cards(msg["you"]["view"])
        if msg["type"] == "snapshot":
            seen |= view_cards((msg["snapshot"].get("you") or {}).get("view"))
        if msg["type"] == "ack":
            seen |= view_cards(msg["view"]) | set(msg.get("revealed", []))
        assert msg["type"] != "board", "a player got a board"
        if msg["type"] == "joined" and msg.get("snapshot"):
            assert msg["snapshot"]["boards"] is None
        cards = {s for s in strings(msg) if CARD.match(s)}
        assert cards <= seen, f"{msg['type']} holds cards {cards - seen} the player never saw"
        if not (msg["type"] == "event" and msg["kind"] == "results"):
            assert seed not in set(ints(msg)), f"seed leaked in {msg['type']}"
            assert salt not in set(strings(msg)), f"salt leaked in {msg['type']}"
            assert "seed" not in set(strings(msg)) or msg["type"] == "joined", msg


def check_spectator_frames(received: list[dict[str, Any]], seed: int, salt: str) -> None:
    for msg in received:
        if msg["type"] == "event" and msg["kind"] == "results":
            continue
        assert seed not in set(ints(msg)) and salt not in set(strings(msg))
        shown: set[str] = set()
        if msg["type"] == "board":
            shown = view_cards(msg["view"])
        for v in ((msg.get("snapshot") or {}).get("boards") or {}).values():
            shown |= view_cards(v)
        cards = {s for s in strings(msg) if CARD.match(s)}
        assert cards <= shown, f"spectator {msg['type']} has cards outside its boards"


async def play_to_end(client, state: dict[str, Any]) -> list[dict[str, Any]]:
    """Play from the player's own view until it is no longer racing; returns the acks."""
    acks = []
    view = state["view"]
    while True:
        mv = putt_move(view)
        if mv is None:
            break
        ack = await client.request({"type": "move", "move": mv, "n": len(acks) + 1})
        assert ack["type"] == "ack", ack
        acks.append(ack)
        view = ack["view"]
        if ack["status"] != "racing":
            break
    return acks


async def test_full_race_two_players_and_a_spectator(shared_server, wire) -> None:
    ann = await wire(shared_server.ws_url)
    created = await ann.request(
        {
            "type": "create",
            "name": "ann",
            "options": {"game": "puttputt", "countdown": 1, "spectator_delay": 0},
        }
    )
    code, host_token = created["room"], created["host_token"]
    bob = await wire(shared_server.ws_url)
    await bob.request({"type": "join", "room": code, "name": "bob"})
    eve = await wire(shared_server.ws_url, source=ELSEWHERE)
    sp = await eve.request({"type": "spectate", "room": code})
    assert sp["role"] == "spectator" and sp["snapshot"]["you"] is None
    for c in (ann, bob):
        assert (await c.request({"type": "ready", "ready": True}))["type"] == "ok"
    assert (await ann.request({"type": "start", "host_token": host_token}))["type"] == "ok"
    countdown = await eve.wait_event("countdown")
    await eve.wait_event("start")
    # at the start each player gets a snapshot holding its own board
    snap_a = (await ann.wait_for(lambda x: x["type"] == "snapshot"))["snapshot"]
    snap_b = (await bob.wait_for(lambda x: x["type"] == "snapshot"))["snapshot"]
    assert snap_a["state"] == "racing" and snap_a["you"]["seat"] == 0 and snap_b["you"]["seat"] == 1
    assert snap_a["you"]["view"] == snap_b["you"]["view"]  # the identical deal
    acks_a, acks_b = await asyncio.gather(
        play_to_end(ann, snap_a["you"]), play_to_end(bob, snap_b["you"])
    )
    results = await eve.wait_event("results", timeout=15)
    for c in (ann, bob):
        await c.wait_event("results")

    # commitment, seed, salt and moves replay to the same outcome
    assert (
        hashlib.sha256(
            bytes.fromhex(results["salt"]) + results["seed"].to_bytes(8, "big")
        ).hexdigest()
        == countdown["commitment"]
    )
    for seat, acks in ((0, acks_a), (1, acks_b)):
        moves = results["moves"][str(seat)]
        assert moves == [a["move"] for a in acks]
        g = replay(results["game"], results["seed"], results["game_options"], moves)
        row = next(r for r in results["ranking"] if r["seat"] == seat)
        assert row["status"] == ("won" if g.is_won() else "dead")
        assert row["moves"] == len(moves) and g.view() == acks[-1]["view"]
    places = [r["place"] for r in results["ranking"]]
    assert places[0] == 1

    # spectators saw boards; nobody saw what they should not
    # (per tick: at most one board per seat per frame, the seat's latest; in order; the results
    # send every seat's final board again, which a spectator may have had from a tick)
    boards = [m for m in eve.received if m["type"] == "board"]
    for seat, acks in ((0, acks_a), (1, acks_b)):
        mine = [b for b in boards if b["seat"] == seat]
        assert 1 <= len(mine) <= len(acks) + 1
        seen = [b["moves"] for b in mine]
        if len(seen) > 1 and seen[-1] == seen[-2]:
            seen.pop()  # the final board, again at the results
        assert seen == sorted(set(seen)), [b["moves"] for b in mine]
        assert mine[-1]["view"] == acks[-1]["view"]
    check_player_frames(ann.received, results["seed"], results["salt"])
    check_player_frames(bob.received, results["seed"], results["salt"])
    check_spectator_frames(eve.received, results["seed"], results["salt"])

    # the finished room's snapshot carries the results for a late spectator
    late = await wire(shared_server.ws_url, source=ELSEWHERE)
    snap = (await late.request({"type": "spectate", "room": code}))["snapshot"]
    assert snap["state"] == "finished" and snap["results"]["seed"] == results["seed"]

    # message counts, for the report
    total_moves = len(acks_a) + len(acks_b)
    from collections import Counter

    for name, c in (("player ann", ann), ("player bob", bob), ("spectator", eve)):
        frames, size = len(c.frames), sum(len(f) for f in c.frames)
        by_type: Counter[str] = Counter()
        bytes_by_type: Counter[str] = Counter()
        for raw in c.frames:
            msg = decode(raw, max_size=1 << 22)
            key = msg["type"] if msg["type"] != "event" else f"event:{msg['kind']}"
            by_type[key] += 1
            bytes_by_type[key] += len(raw)
        detail = ", ".join(
            f"{k} {n} ({bytes_by_type[k] // n} B avg)" for k, n in by_type.most_common()
        )
        print(
            f"{name}: {frames} frames, {size} bytes for {total_moves} moves in the race "
            f"({frames / total_moves:.2f} frames/move, {size / total_moves:.0f} B/move): {detail}"
        )
