"""A seat's view and status are built once per game state and reused by the move's checks,
its progress event, its ack and the spectators' board: they must never be stale, whatever
happens to the game (moves, undo, a refused append rolled back, a rebuild from Redis)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.engine import new_game
from solrace.server.rules import projection
from solrace.server.rules.room import Entry, Room, SeatRace, token_hash

T0 = 1_000_000


def racing_room(game: str, seed: int, **options) -> Room:
    room = Room.new("ABCDE", token_hash("host"), {"game": game, "countdown": 0, **options}, T0)
    room.join("p0", token_hash("tok0"), T0)
    room.start(T0, seed, b"\x02" * 16)
    room.tick(T0)
    return room


def fresh(race: SeatRace) -> dict:
    """The view an uncached engine game gives for the same moves."""
    g = new_game(race.game_name, seed=race.seed, options=race.game_options)
    for e in race.entries:
        g.play(e.move)
    return g.view()


def assert_current(room: Room, seat: int = 0) -> None:
    race = room.races[seat]
    want = fresh(race)
    assert race.view() == want
    assert projection.own_view(room, seat) == want
    assert projection.board_message(room, seat)["view"] == want
    expect = "won" if want["won"] else "dead" if want["dead"] else "racing"
    assert room.status(seat) == expect


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    choices=st.lists(st.integers(0, 1000), min_size=1, max_size=60),
    game=st.sampled_from(["klondike", "puttputt", "tabbycat"]),
)
def test_view_and_status_follow_every_change(seed: int, choices: list[int], game: str) -> None:
    room = racing_room(game, seed, undo="safe")
    race = room.races[0]
    at = T0 + 1
    for c in choices:
        if room.status(0) != "racing":
            break
        if c % 5 == 0 and race.entries and not race.revealed[-1]:
            room.undo(0, None, at)
        elif c % 7 == 0 and race.entries:
            # the store refused this move: the cached game is put back
            plan = room.play(
                0, str(race.game.legal_moves()[c % len(race.game.legal_moves())]), None, at
            )
            room.rollback(plan)
        else:
            moves = race.game.legal_moves()
            room.play(0, str(moves[c % len(moves)]), None, at)
        at += 1
        assert_current(room)


def test_the_progress_event_and_ack_agree_on_a_dead_end() -> None:
    """Play Putt Putt at random until the seat is out: the move that ends it is reported so
    in the progress event, and the cached view says so too."""
    rng = random.Random(3)
    room = racing_room("puttputt", 11)
    race = room.races[0]
    at = T0 + 1
    plan = None
    while room.status(0) == "racing":
        plan = room.play(0, str(rng.choice(race.game.legal_moves())), None, at)
        at += 1
    assert plan is not None
    final = room.status(0)
    assert final in ("won", "dead")
    assert plan.event["status"] == final
    assert race.view()["dead"] == (final == "dead") and race.view()["won"] == (final == "won")


def test_a_rebuild_from_a_different_log_drops_the_cached_view() -> None:
    room = racing_room("klondike", 8)
    race = room.races[0]
    first = str(race.game.legal_moves()[0])
    room.play(0, first, None, T0 + 1)
    cached = race.view()
    assert cached["moves"] == 1
    # Redis holds another history of the same length (another process won the race to store)
    other = [
        str(mv) for mv in new_game("klondike", seed=8, options=race.game_options).legal_moves()
    ]
    alt = next(mv for mv in other if mv != first) if len(other) > 1 else "deal"
    race.load([Entry(alt, T0 + 2)], rev=5)
    assert race.view() == fresh(race) and race.entries[0].move == alt
