"""The arena's rules alone (server/rules/arena.py): points, streaks, the replay a verifier runs,
and the pairing by score. No Redis, no sockets, no clock."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.server.rules import arena as rules
from solrace.server.rules.matchmaking import Ticket


def ranking(*players: str, out: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """A results ranking: `players` in place order; those in `out` resigned."""
    return [
        {"player": p, "place": i, "status": "resigned" if p in out else "won" if i == 1 else "dead"}
        for i, p in enumerate(players, 1)
    ]


def test_points_by_place_and_room_size() -> None:
    assert [rules.points(p, 2, "dead", 0) for p in (1, 2)] == [4, 1]
    assert [rules.points(p, 3, "dead", 0) for p in (1, 2, 3)] == [4, 2, 1]
    assert [rules.points(p, 8, "dead", 0) for p in range(1, 9)] == [4, 2, 1, 1, 1, 1, 1, 1]
    for status in ("resigned", "left", "timeout"):
        assert rules.points(1, 4, status, 0) == 0
        assert rules.points(3, 4, status, 5) == 0


def test_two_wins_in_a_row_set_a_member_on_fire_until_it_does_not_win() -> None:
    table = rules.replay(
        [
            ranking("ann", "bob", "cy"),  # ann 4
            ranking("ann", "bob"),  # ann 4 (streak 2: on fire from now)
            ranking("ann", "cy", "bob"),  # ann 8 (doubled win), cy 2
            ranking("bob", "ann", "cy"),  # ann 2 * 2 = 4 (doubled, not a win: the fire ends)
            ranking("cy", "ann"),  # ann 1
        ]
    )
    ann = table["ann"]
    assert ann.sheet == [4, 4, 8, 4, 1] and ann.score == 21
    assert ann.streak == 0 and ann.wins == 3 and ann.races == 5
    assert table["cy"].sheet == [1, 2, 1, 4] and table["cy"].streak == 1


def test_a_resigned_first_place_scores_nothing_and_breaks_the_streak() -> None:
    table = rules.replay(
        [
            ranking("ann", "bob"),
            ranking("ann", "bob"),
            ranking("ann", "bob", out=frozenset({"ann"})),
        ]
    )
    assert table["ann"].sheet == [4, 4, 0] and table["ann"].streak == 0
    assert table["ann"].wins == 2


def test_seats_without_a_member_id_score_nothing_and_others_still_place() -> None:
    rows = [{"player": None, "place": 1, "status": "won"}, *ranking("ann", "bob")]
    rows[1]["place"], rows[2]["place"] = 2, 3
    out = rules.score_race(rows, {})
    assert set(out) == {"ann", "bob"}
    assert out["ann"][0] == 2 and out["bob"][0] == 1


def test_the_leaderboard_orders_by_score_then_wins_then_fewer_races() -> None:
    rows = [
        ("a", rules.Standing(score=10, wins=1, races=5), "a"),
        ("b", rules.Standing(score=10, wins=2, races=6), "b"),
        ("c", rules.Standing(score=10, wins=2, races=4), "c"),
        ("d", rules.Standing(score=12, wins=0, races=9), "d"),
    ]
    assert [pid for pid, _ in rules.standings(rows)] == ["d", "c", "b", "a"]


races_st = st.lists(
    st.lists(
        st.tuples(st.sampled_from("abcdefgh"), st.sampled_from(["won", "dead", "resigned"])),
        min_size=2,
        max_size=8,
        unique_by=lambda x: x[0],
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(races_st)
def test_every_standing_is_the_sum_of_its_races_with_the_streak_rule(
    races: list[list[tuple[str, str]]],
) -> None:
    """Replaying any list of races: each member's score is the sum of what each race gave,
    each race gave the place's points doubled exactly when the two races before were wins,
    and the streak is the run of wins at the end."""
    rankings = [
        [{"player": p, "place": i, "status": s} for i, (p, s) in enumerate(race, 1)]
        for race in races
    ]
    table = rules.replay(rankings)
    history: dict[str, list[tuple[int, int, bool]]] = {}  # member -> (points, base, win)
    for race in rankings:
        for row in race:
            base = rules.points(row["place"], len(race), row["status"], 0)
            win = row["place"] == 1 and row["status"] not in rules.OUT_STATUSES
            history.setdefault(row["player"], []).append((0, base, win))
    for pid, seq in history.items():
        total = 0
        streak = 0
        for _pts, base, win in seq:
            total += base * (2 if streak >= 2 else 1)
            streak = streak + 1 if win else 0
        st_ = table[pid]
        assert st_.score == total
        assert st_.streak == streak
        assert st_.races == len(seq) and st_.wins == sum(w for _, _, w in seq)
        assert st_.sheet == list(_points_of(seq))[-rules.SHEET :]


def _points_of(seq: list[tuple[int, int, bool]]) -> list[int]:
    out, streak = [], 0
    for _p, base, win in seq:
        out.append(base * (2 if streak >= 2 else 1))
        streak = streak + 1 if win else 0
    return out


tickets_st = st.lists(
    st.tuples(st.integers(0, 120), st.floats(0, 5, allow_nan=False)), min_size=0, max_size=30
)


@settings(max_examples=100, deadline=None)
@given(tickets_st, st.integers(2, 8))
def test_free_members_are_all_paired_in_a_wave_into_even_rooms_of_neighbours_in_score(
    scores: list[tuple[int, float]], size: int
) -> None:
    """Members becoming free at any times, whatever their scores: stepping the matcher every
    0.1 s, a member free beside another waits at most the gathering (plus a step); every
    sealed room has 2 to N members, nobody is in two rooms, a wave's rooms are as even as can
    be and hold neighbours in score."""
    pairing = rules.ArenaPairing(size)
    tickets = [Ticket(f"m{i}", float(score), at) for i, (score, at) in enumerate(scores)]
    waiting = {t.id: t for t in tickets}
    seen: set[str] = set()
    now = 0.0
    while now <= 10.0:
        present = [t for t in waiting.values() if t.at <= now]
        sealed = pairing.step(present, now)
        if sealed:
            out = {t.id for t in present} - {i for g in sealed for i in g.ids()}
            assert not out or (size == 2 and len(out) == 1 and len(present) % 2 == 1)
            sizes = [len(g.ids()) for g in sealed]
            assert all(2 <= n <= size for n in sizes) and max(sizes) - min(sizes) <= 1
            assert len(sealed) == (len(present) // 2 if size == 2 else -(-len(present) // size))
            # each room's scores lie between the next room's and the one before's
            for hi, lo in itertools.pairwise(sealed):
                assert min(t.rating for t in hi.members) >= max(t.rating for t in lo.members)
        for g in sealed:
            assert not seen & set(g.ids())
            seen |= set(g.ids())
            for i in g.ids():
                del waiting[i]
        left = sorted(t.at for t in waiting.values() if t.at <= now)
        if len(left) >= 2:  # two free together wait no longer than the gathering
            assert now - left[1] < rules.GATHER + 0.1 - 1e-9
        now = round(now + 0.1, 6)
    assert len(waiting) <= 1


def test_room_sizes_are_the_fewest_and_as_even_as_can_be() -> None:
    assert rules.room_sizes(1, 4) == []
    assert rules.room_sizes(5, 4) == [3, 2]
    assert rules.room_sizes(8, 4) == [4, 4]
    assert rules.room_sizes(9, 8) == [5, 4]
    assert rules.room_sizes(12, 2) == [2] * 6
    assert rules.room_sizes(7, 2) == [2] * 3  # the odd one out waits
    assert rules.room_sizes(7, 3) == [3, 2, 2]
