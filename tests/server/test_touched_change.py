"""A seat's ack `change` compares only the piles its move touched (`SeatRace.change`), and
must be what comparing every pile gives (`view_change` with no names), along random races
with undos and rollbacks, for Klondike (which names its piles) and a family that does not."""

from __future__ import annotations

import random

import pytest
from solrace.protocol.messages import apply_change, view_change
from solrace.server.rules.room import SeatRace


@pytest.mark.parametrize(
    ("name", "options"), [("klondike", {}), ("klondike", {"draw": 3}), ("puttputt", {})]
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_change_over_touched_piles_is_the_full_change(
    name: str, options: dict[str, int], seed: int
) -> None:
    race = SeatRace(name, seed, options)
    rng = random.Random(seed)
    before = race.view()
    for at in range(250):
        moves = race.game.legal_moves()
        if race.entries and (not moves or rng.random() < 0.15):
            race.pop()
        elif moves:
            race.play(rng.choice(moves).text, at)
        else:
            break
        after = race.view()
        assert after == race.game.view()
        change = race.change()
        assert change == view_change(before, after)
        assert apply_change(before, change, after["moves"]) == after
        before = after
