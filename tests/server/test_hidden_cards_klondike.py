"""No frame to a player ever holds a card that player could not see (Klondike: face-down cards,
the stock and the waste below its top), checked over whole races; spectators only see what is on
the boards they are sent; the seed and salt only in the results.

The room uses a text seed so the test can follow the deal with its own engine and choose legal
moves; the checks use only what each client received.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from helpers.deals import dealt
from helpers.views import CARD, ELSEWHERE, strings
from solrace.engine import new_game


def view_cards(view: dict[str, Any] | None) -> set[str]:
    if not view:
        return set()
    return {c for pile in view["piles"].values() for c in pile if isinstance(c, str)}


async def play_random(client, game, rng: random.Random, moves: int) -> None:
    for _ in range(moves):
        legal = [str(mv) for mv in game.legal_moves()]
        if not legal or game.is_won() or game.is_dead():
            return
        mv = rng.choice(legal)
        ack = await client.request({"type": "move", "move": mv})
        if ack["type"] == "error" and ack["code"] == "bad_state":
            return
        assert ack["type"] == "ack", ack
        game.play(mv)
        assert ack["view"] == game.view()


async def test_klondike_race_never_leaks_a_hidden_card(shared_server, wire) -> None:
    url = shared_server.ws_url
    text = "leak-check-1"
    ann = await wire(url)
    created = await ann.request(
        {
            "type": "create",
            "name": "ann",
            "options": {
                "game": "klondike",
                "game_options": {"draw": 3},
                "countdown": 0,
                "spectator_delay": 0,
                "seed": text,
            },
        }
    )
    code = created["room"]
    assert (
        created["snapshot"]["options"]["text_seed"] is True
        and "seed" not in created["snapshot"]["options"]
    )
    bob = await wire(url)
    await bob.request({"type": "join", "room": code, "name": "bob"})
    eve = await wire(url, source=ELSEWHERE)
    await eve.request({"type": "spectate", "room": code})
    await ann.request({"type": "start", "host_token": created["host_token"]})
    for c in (ann, bob):
        await c.wait_for(lambda x: x["type"] == "snapshot")
    seed = dealt(text)
    games = [new_game("klondike", seed=seed, options={"draw": 3}) for _ in range(2)]
    await asyncio.gather(
        play_random(ann, games[0], random.Random(1), 80),
        play_random(bob, games[1], random.Random(2), 80),
    )
    # a late spectator's snapshot and a resumed player's snapshot mid-race go through the same checks
    late = await wire(url, source=ELSEWHERE)
    await late.request({"type": "spectate", "room": code})
    for c in (ann, bob):
        await c.request({"type": "resign"})
    results = await eve.wait_event("results")
    assert results["seed"] == seed

    total_hidden_at_start = sum(
        p.get("hidden", 0)
        for pile in new_game("klondike", seed=seed).view()["piles"].values()
        for p in pile
        if isinstance(p, dict)
    )
    assert total_hidden_at_start > 0
    for client in (ann, bob):
        seen: set[str] = set()
        for msg in client.received:
            assert msg["type"] != "board"
            if msg["type"] == "ack":
                seen |= view_cards(msg["view"]) | set(msg["revealed"])
                assert set(msg["revealed"]) <= view_cards(msg["view"])
            snap = msg.get("snapshot") if msg["type"] in ("joined", "snapshot") else None
            if snap and snap.get("you"):
                seen |= view_cards(snap["you"]["view"])
                assert snap["boards"] is None
            cards = {s for s in strings(msg) if CARD.match(s)}
            assert cards <= seen, (msg["type"], cards - seen)
            if not (msg["type"] == "event" and msg["kind"] == "results"):
                assert results["salt"] not in set(strings(msg))
                assert "seed" not in (snap or {}).get("options", {})
    for client in (eve, late):
        for msg in client.received:
            shown = set()
            if msg["type"] == "board":
                shown = view_cards(msg["view"])
            for v in (((msg.get("snapshot") or {}).get("boards")) or {}).values():
                shown |= view_cards(v)
            if msg["type"] == "event" and msg["kind"] == "results":
                continue
            cards = {s for s in strings(msg) if CARD.match(s)}
            assert cards <= shown, (msg["type"], cards - shown)
