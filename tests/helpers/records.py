"""A finished race made by the room rules alone, for the record tests (no network)."""

from __future__ import annotations

import random

from solrace.server.rules.room import FINISHED, Room, token_hash

T0 = 1_795_350_000_000


def finished_room(game: str = "puttputt", players: int = 3, seed: int = 7) -> Room:
    """A race played to its end by the rules alone: seat 0 plays on until its seat ends,
    seat 1 makes a few moves and resigns, the others play until they are done."""
    room = Room.new("ABCDE", token_hash("host"), {"game": game, "countdown": 3}, T0)
    for i in range(players):
        room.join(f'p "{i}"', token_hash(f"tok{i}"), T0, player=None if i == 2 else f"id{i}")
    room.start(T0, seed, bytes(range(16)))
    now = T0 + 3000
    room.tick(now)
    rng = random.Random(seed)
    for seat in range(players):
        for _ in range(4 if seat == 1 else 500):
            if room.status(seat) != "racing":
                break
            now += rng.randint(50, 4000)
            legal = [str(m) for m in room.races[seat].game.legal_moves()]
            plays = [m for m in legal if m not in ("deal", "recycle")]
            room.play(seat, (plays or legal)[0], None, now)
        if room.status(seat) == "racing":
            room.resign(seat, now)
    room.finish_if_done(now)
    assert room.state == FINISHED
    return room
