"""An ack carries what the move did to the mover's board, not the board (PROTOCOL.md, `ack`):
applied to the board before it, each ack's `change` gives exactly the engine's view after the
move, for moves, deals, recycles and undos; and it is a fraction of the board's size."""

from __future__ import annotations

import random

import pytest
from solrace.engine import new_game
from solrace.protocol.messages import acked_view, encode
from solrace.server.race.service import RoomService
from solrace.server.rules.room import SeatRace
from solrace.server.store.store import Store


@pytest.fixture
async def service(redis_url: str, key_prefix: str):
    store = Store.from_url(redis_url, key_prefix)
    yield RoomService(store)
    keys = [k async for k in store.redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await store.redis.delete(*keys)
    await store.close()


@pytest.mark.parametrize("game", ["klondike", "puttputt", "leapyear", "tabbycat"])
async def test_each_acks_change_gives_the_engines_board(service: RoomService, game: str) -> None:
    made = await service.create("p0", {"game": game, "countdown": 0, "undo": "safe"}, True)
    code = made["room"]
    await service.start(code, made["host_token"])
    await service.tick(code)
    room = (await service.load(code)).room
    race = room.races[0]
    board = race.view()  # the snapshot's board
    mirror = new_game(game, seed=race.seed, options=race.game_options)
    rng = random.Random(7)
    changes = full = sent = whole = 0
    for _ in range(120):
        room = service.cache[code].room
        if room.status(0) != "racing":
            break
        race = room.races[0]
        undo = bool(race.entries) and not race.revealed[-1] and rng.random() < 0.2
        if undo:
            ack = await service.move(code, 0, "", None, undo=True)
            mirror.undo()
        else:
            moves = [str(m) for m in race.game.legal_moves()]
            ack = await service.move(code, 0, rng.choice(moves), None)
            mirror.play(ack["move"])
        if "change" in ack:
            changes += 1
            assert "view" not in ack
            sent += len(encode(ack["change"]))
            whole += len(encode(mirror.view()))
        else:
            full += 1
        board = acked_view(board, ack)
        assert board == mirror.view()
    assert changes > 20 and full <= 1  # the whole board only when this process had none before
    assert sent < whole / 3, (sent, whole)  # a deal changes many piles; most moves two


def test_a_change_needs_the_board_before_it() -> None:
    race = SeatRace("klondike", 5, {})
    race.view()
    race.play(str(race.game.legal_moves()[0]), 1)
    assert race.change() is not None
    race.play(str(race.game.legal_moves()[0]), 2)  # no view built at the state before
    race.play(str(race.game.legal_moves()[0]), 3)
    assert race.change() is None  # the ack then carries the whole view
