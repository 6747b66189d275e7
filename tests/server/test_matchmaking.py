"""Quick match's pairing rule alone (server/rules/matchmaking.py): no Redis, no sockets, no clock."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.server.rules.matchmaking import Pairing, Rules, Ticket, compatible, window


def t(i: int, rating: float = 25.0, at: float = 0.0, addr: str = "") -> Ticket:
    return Ticket(f"t{i}", rating, at, addr)


def test_two_close_players_form_a_group_sealed_after_the_gather_window() -> None:
    p = Pairing(Rules(gather=1.0, gather_min=0.25))
    tickets = [t(1, at=0.0), t(2, at=0.0)]
    assert p.step(tickets, 0.0) == []  # formed: the short countdown runs
    assert [g.ids() for g in p.groups.values()] == [["t1", "t2"]]
    assert p.step(tickets, 0.9) == []
    sealed = p.step(tickets, 1.0)
    assert [g.ids() for g in sealed] == [["t1", "t2"]]
    assert p.groups == {}


def test_the_countdown_counts_from_the_first_ask_but_lasts_a_moment_at_least() -> None:
    """A player who waited alone has had its countdown: the group closes `gather` after the
    oldest ask, and no sooner than `gather_min` after it formed."""
    p = Pairing(Rules(gather=1.0, gather_min=0.25))
    assert p.step([t(1, at=0.0)], 0.0) == []
    tickets = [t(1, at=0.0), t(2, at=0.6)]
    assert p.step(tickets, 0.6) == []
    (g,) = p.groups.values()
    assert g.closes == 1.0
    p = Pairing(Rules(gather=1.0, gather_min=0.25))
    tickets = [t(1, at=0.0), t(2, at=2.0)]
    assert p.step(tickets, 2.0) == []
    assert p.step(tickets, 2.2) == []
    assert [g.ids() for g in p.step(tickets, 2.25)] == [["t1", "t2"]]


def test_more_join_before_the_countdown_ends_and_a_full_group_seals_at_once() -> None:
    p = Pairing(Rules(gather=2.0, max_players=4))
    assert p.step([t(1), t(2)], 0.0) == []
    assert p.step([t(1), t(2), t(3, at=1.0)], 1.0) == []
    (g,) = p.groups.values()
    assert g.ids() == ["t1", "t2", "t3"]
    sealed = p.step([t(1), t(2), t(3), t(4, at=1.5)], 1.5)  # the fourth fills it: sealed now
    assert [x.ids() for x in sealed] == [["t1", "t2", "t3", "t4"]]


def test_a_lone_player_waits_and_a_cancelled_member_breaks_the_group() -> None:
    p = Pairing(Rules(gather=1.0))
    assert p.step([t(1)], 0.0) == [] and p.groups == {}
    p.step([t(1), t(2)], 0.2)
    assert len(p.groups) == 1
    assert p.step([t(1)], 0.4) == []  # t2 cancelled: t1 waits again, alone
    assert p.groups == {}
    assert p.step([t(1)], 5.0) == []


def test_far_ratings_wait_until_the_windows_widen() -> None:
    rules = Rules(base=2.0, widen=1.0, gather=0.0, gather_min=0.0)
    p = Pairing(rules)
    a, b = t(1, rating=20.0, at=0.0), t(2, rating=30.0, at=0.0)
    assert p.step([a, b], 0.0) == []
    assert p.step([a, b], 7.9) == []  # windows 9.9 < 10
    assert [g.ids() for g in p.step([a, b], 8.0)] == [["t1", "t2"]]


def test_both_windows_must_reach_the_other() -> None:
    rules = Rules(base=1.0, widen=1.0)
    old, new = t(1, rating=20.0, at=0.0), t(2, rating=25.0, at=10.0)
    assert window(old, 10.0, rules) == 11.0 and window(new, 10.0, rules) == 1.0
    assert not compatible(old, new, 10.0, rules)
    assert compatible(old, new, 14.0, rules)


def test_the_closest_rating_is_chosen_for_the_oldest_ticket() -> None:
    p = Pairing(Rules(base=5.0, widen=0.0, max_players=2))
    sealed = p.step([t(1, 25.0, 0.0), t(2, 21.0, 1.0), t(3, 26.0, 2.0), t(4, 29.5, 3.0)], 3.0)
    assert [g.ids() for g in sealed] == [["t1", "t3"]]  # t2 and t4 are 8.5 apart: they wait


def test_one_address_holds_at_most_its_seats() -> None:
    p = Pairing(Rules(per_address=1, gather=0.0, gather_min=0.0))
    assert p.step([t(1, addr="a"), t(2, addr="a")], 0.0) == []
    sealed = p.step([t(1, addr="a"), t(2, addr="a"), t(3, addr="b")], 0.1)
    assert [sorted(g.ids()) for g in sealed] == [["t1", "t3"]]


def test_bots_fill_in_for_a_player_alone_too_long() -> None:
    p = Pairing(Rules(bots_after=10.0, bot_seats=2))
    bots = [Ticket(f"b{i}", 25.0 + i, 0.0, "", bot=True) for i in range(4)]
    # bots never race each other, nor join players' groups
    assert p.step(bots, 5.0) == []
    assert p.step([t(1), t(2), *bots], 5.0) == []
    (g,) = p.groups.values()
    assert g.ids() == ["t1", "t2"]
    p = Pairing(Rules(bots_after=10.0, bot_seats=2))
    assert p.step([t(1, rating=27.2), *bots], 9.9) == []
    (g,) = p.step([t(1, rating=27.2), *bots], 10.0)
    assert g.ids() == ["t1", "b2", "b3"]  # the two closest in rating
    # without bots_after, bots only wait
    p = Pairing(Rules())
    assert p.step([t(1), *bots], 1000.0) == []


def test_a_thousand_at_once_are_all_grouped_in_one_step() -> None:
    p = Pairing(Rules())
    tickets = [t(i, rating=25.0 + (i % 7) * 0.3) for i in range(1000)]
    sealed = p.step(tickets, 0.0)
    seated = [x for g in sealed for x in g.ids()]
    forming = [x for g in p.groups.values() for x in g.ids()]
    assert len(seated) + len(forming) == 1000 and len(set(seated + forming)) == 1000
    assert all(len(g.members) == 8 for g in sealed)


tickets_st = st.lists(
    st.tuples(
        st.floats(0, 50, allow_nan=False),
        st.floats(0, 30, allow_nan=False),
        st.sampled_from(["a", "b", "c", ""]),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(tickets_st, st.lists(st.floats(0, 60, allow_nan=False), min_size=1, max_size=5))
def test_groups_always_keep_the_rules(
    raw: list[tuple[float, float, str]], times: list[float]
) -> None:
    rules = Rules(base=2.0, widen=0.5, gather=1.0, max_players=5, per_address=2)
    tickets = [Ticket(f"t{i}", r, at, addr) for i, (r, at, addr) in enumerate(raw)]
    p = Pairing(rules)
    seen: set[str] = set()
    for now in sorted(times):
        waiting = [x for x in tickets if x.at <= now and x.id not in seen]
        for g in p.step(waiting, now):
            ids = g.ids()
            # a ticket is sealed once, in one group, with room for it, among those it accepts
            assert not seen & set(ids) and len(set(ids)) == len(ids)
            seen |= set(ids)
            assert rules.min_players <= len(ids) <= rules.max_players
            for a in g.members:
                assert sum(1 for b in g.members if b.addr and b.addr == a.addr) <= 2
            # every pair was within both windows when the later one joined: at the latest now
            for a in g.members:
                for b in g.members:
                    assert (
                        abs(a.rating - b.rating)
                        <= min(window(a, now, rules), window(b, now, rules)) + 1e-9
                    )
        for g in p.groups.values():
            assert len(g.members) >= 2 and not seen & set(g.ids())
    # and nobody who could race anyone is left alone forever: widening pairs all that wait
    rest = [x for x in tickets if x.id not in seen]
    sealed = p.step(rest, 1e6)
    done = {x for g in sealed for x in g.ids()}
    sealed += p.step([x for x in rest if x.id not in done], 1e6 + 1.0)
    left = len(rest) - sum(len(g.members) for g in sealed)
    addrs = {x.addr for x in rest}
    assert left <= 1 or (len(addrs) == 1 and "" not in addrs), (left, rest)


def test_widest_caps_the_window() -> None:
    rules = Rules(base=1.0, widen=1.0, widest=3.0)
    assert window(t(1, at=0.0), 100.0, rules) == 3.0
    assert window(t(1, at=0.0), 0.0, Rules(widest=math.inf)) == 3.0
