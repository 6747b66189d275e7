"""The solvers (issue 11, issue 24): exact verdicts, solutions that replay, no mutation.

"Lost" is checked against a second, naive search written here from the
engine's public API only (legal_moves / apply / undo, position text as the
key, no pruning, no symmetry), on small random positions where it finishes.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import pytest
from helpers.solver_flags import switched
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst
from solrace.engine import Game, from_text, new_game, solve
from solrace.engine import solve_klondike as sk
from solrace.engine import solve_leapyear as sly
from solrace.engine import solve_tabbycat as stc
from solrace.engine.cards import CARD_OF, TEXT
from solrace.engine.solve import SolveResult, solve_deal, solve_text
from solrace.engine.solve_common import (
    LOST,
    PROVED_LOST,
    UNKNOWN,
    WON,
    parse_position,
    search_run,
)
from solrace.engine.solve_klondike import FT, WF, WT, KlondikeState
from solrace.engine.solve_klondike_dead import CHILDREN, PARENTS, dead

#: long CPU-bound cross-checks with no module fixture: any worker may take each one
pytestmark = pytest.mark.spread

#: hypothesis settings for the solver properties: few examples, each a naive search
SOLVE_SETTINGS = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


#: naive verdicts of every legal move, by (position text, cap): a test that checks the search
#: twice (with a pruning switched, the C and the Python search) pays for the reference once
_NAIVE: dict[tuple[str, int], bool | None] = {}


def naive_winnable(game: Game, allow=None, cap: int = 10**9) -> bool | None:
    """Plain exhaustive search of every legal move (filtered by ``allow``), keyed by position text.

    None when more than ``cap`` positions would be needed (the caller skips that position).
    """
    if allow is not None:
        return _naive_search(game, allow, cap)
    key = (game.to_text(), cap)
    if key not in _NAIVE:
        _NAIVE[key] = _naive_search(game, lambda m: True, cap)
    return _NAIVE[key]


def _naive_key(g: Game) -> Hashable:
    """What the position text is made of (the game line's hidden state, each pile's cards and
    how many lie face down), without writing it: the same positions are equal as by
    ``to_text``, which took most of this search's time."""
    return (
        tuple(g._game_line_extras()),
        tuple(map(tuple, g.piles)),
        tuple(getattr(g, "_down", ())),
    )


def _naive_search(game: Game, allow: Callable[[Any], bool], cap: int) -> bool | None:
    g = game.copy()
    if g.is_won():
        return True
    seen = {_naive_key(g)}
    stack = [iter([m for m in g.legal_moves() if allow(m)])]
    while stack:
        m = next(stack[-1], None)
        if m is None:
            stack.pop()
            if stack:
                g.undo()
            continue
        g.apply(m)
        if g.is_won():
            return True
        key = _naive_key(g)
        if key in seen:
            g.undo()
            continue
        seen.add(key)
        if len(seen) > cap:
            return None
        stack.append(iter([m for m in g.legal_moves() if allow(m)]))
    return False


def agrees_with_naive(games: list[Game], cap: int) -> dict[bool, int]:
    """Solve each position both ways; the verdicts must agree wherever the naive search ends."""
    seen = {True: 0, False: 0}
    for g in games:
        expect = naive_winnable(g, cap=cap)
        if expect is None:
            continue
        seen[expect] += 1
        assert solve(g).verdict == ("won" if expect else "lost"), g.to_text()
        if g.NAME in ("klondike", "tabbycat", "manx", "leapyear"):
            assert solve_short_runs(g).verdict == ("won" if expect else "lost"), g.to_text()
    return seen


def solve_short_runs(g: Game) -> SolveResult:
    """Klondike's, Tabby Cat's, Manx's or Leap Year's solve with runs of a few positions, so
    that it restarts many times (its restarts keep what they prove: every verdict must stay
    the same)."""
    if g.NAME == "leapyear":
        run, c_run = sly.RUN, sly.C_RUN
        sly.RUN = sly.C_RUN = 3
        try:
            return solve(g)
        finally:
            sly.RUN, sly.C_RUN = run, c_run
    module = sk if g.NAME == "klondike" else stc
    first = module.FIRST_RUN
    first3 = sk.FIRST_RUN_SHORT
    module.FIRST_RUN = 3
    sk.FIRST_RUN_SHORT = 3
    try:
        return solve(g)
    finally:
        module.FIRST_RUN = first
        sk.FIRST_RUN_SHORT = first3


def replays_to_win(game: Game, result: SolveResult) -> bool:
    g = game.copy()
    for m in result.moves:
        g.play(m)
    return g.is_won()


def position(game_line: str, **piles: str) -> Game:
    """A position from named piles (every pile of the game must be given, empty ones as '')."""
    return from_text(
        f"game {game_line}\n" + "".join(f"{n} {c}\n" for n, c in piles.items() if n != "_")
    )


# ---------------------------------------------------------------- Putt Putt


def _puttputt(piles: list[list[str]], f1: list[str], stock: list[str]) -> Game:
    lines = ["game puttputt"]
    lines += [f"t{i + 1} {' '.join(p)}" for i, p in enumerate(piles)]
    lines += [f"f1 {' '.join(f1)}", f"s {' '.join(stock)}"]
    return from_text("\n".join(lines) + "\n")


def _rest(used: list[str]) -> list[str]:
    return [c for c in TEXT if c not in used]


def test_puttputt_one_move_from_a_win() -> None:
    rest = [*_rest(["5H", "6C"]), "6C"]  # f1's top is 6C
    r = solve(_puttputt([["5H"], [], [], [], [], [], []], rest, []))
    assert r.verdict == "won" and r.moves == ["t1-f1"]


def test_puttputt_wrap_king_on_ace() -> None:
    rest = [*_rest(["AS", "KD"]), "KD"]
    g = _puttputt([[], [], ["AS"], [], [], [], []], rest, [])
    r = solve(g)
    assert r.verdict == "won" and r.moves == ["t3-f1"]


def test_puttputt_dead_and_win_through_the_stock() -> None:
    rest = _rest(["5H", "9C", "4D"])
    dead = _puttputt([["5H"], [], [], [], [], [], []], [*rest, "4D", "9C"], [])
    assert solve(dead).verdict == "lost"
    via_stock = _puttputt([["5H"], [], [], [], [], [], []], [*rest, "9C"], ["4D"])
    r = solve(via_stock)
    assert r.verdict == "won" and r.moves == ["deal", "t1-f1"]


def test_puttputt_deals_replay_and_first_move_keeps_the_verdict() -> None:
    verdicts = set()
    for seed in range(1, 17):
        g = new_game("puttputt", seed)
        r = solve(g)
        verdicts.add(r.verdict)
        assert r.verdict in ("won", "lost")
        if r.verdict == "won":
            assert replays_to_win(g, r)
            g.play(r.moves[0])
            assert solve(g).verdict == "won"
        else:
            assert r.moves == []
            for m in g.legal_moves():
                g.apply(m)
                assert solve(g).verdict == "lost"
                g.undo()
    assert verdicts == {"won", "lost"}  # seeds 5 and 16 are lost


def test_puttputt_lost_matches_a_naive_search_on_small_positions() -> None:
    rng = random.Random(11)
    games = []
    for _ in range(80):
        deck = list(TEXT)
        rng.shuffle(deck)
        piles = [[deck.pop() for _ in range(rng.randrange(4))] for _ in range(7)]
        stock = [deck.pop() for _ in range(rng.randrange(4, 10))]
        games.append(_puttputt(piles, deck, stock))
    seen = agrees_with_naive(games, cap=5000)
    assert seen[True] >= 5 and seen[False] >= 5


# ---------------------------------------------------------------- Klondike


def _klondike(
    options: str,
    found: dict[str, int],
    tab: list[str],
    stock: str = "",
    waste: str = "",
) -> Game:
    """Foundations by suit height; every card not on a foundation is named in tab/stock/waste."""
    lines = [f"game klondike {options}".strip()]
    lines += [f"t{i + 1} {t}" for i, t in enumerate(tab)]
    for k, suit in enumerate("CDHS"):
        cards = [f"{'A23456789TJQK'[r]}{suit}" for r in range(found.get(suit, 0))]
        lines.append(f"f{k + 1} {' '.join(cards)}")
    lines += [f"s {stock}", f"w {waste}"]
    return from_text("\n".join(lines) + "\n")


FULL = {"C": 13, "D": 13, "H": 13, "S": 13}


def test_klondike_one_move_from_a_win() -> None:
    g = _klondike("", {**FULL, "H": 12}, ["KH", "", "", "", "", "", ""])
    r = solve(g)
    assert r.verdict == "won" and r.moves == ["t1-f3"]


def test_klondike_win_needs_a_recycle_and_dies_without_passes() -> None:
    # 3S hides 2S in the waste; no pile is empty and every red card is stuck under its King
    found = {**FULL, "S": 1}
    tab = ["KS", "QS", "JS", "TS", "9S", "8S", "7S 6S 5S 4S"]
    g = _klondike("", found, tab, waste="2S 3S")
    r = solve(g)
    assert r.verdict == "won" and r.moves[:4] == ["recycle", "deal", "w-f4", "deal"]
    assert replays_to_win(g, r)
    one_pass = _klondike("passes=1", found, tab, waste="2S 3S")
    assert solve(one_pass).verdict == "lost" and not naive_winnable(one_pass)


def test_klondike_win_that_needs_a_foundation_card_back_down() -> None:
    # 5S covers 4S and only a red 6 takes it: 6H must come down from its foundation onto 7C
    g = _klondike(
        "",
        {"C": 6, "D": 13, "H": 6, "S": 3},
        ["[4S] 5S", "7C", "", "", "", "", ""],
        stock="6S 7S 8S 9S TS JS QS KS 8C 9C TC JC QC KC 7H 8H 9H TH JH QH KH",
    )
    r = solve(g)
    assert r.verdict == "won" and replays_to_win(g, r)
    assert any(m.startswith("f") for m in r.moves)  # a red 6 came down from a foundation


KLONDIKE_OPTIONS = ["", "draw=3", "moves=build", "passes=2", "passes=1", "draw=3 passes=1"]


def _cards_off(rng: random.Random, low: int, high: int) -> tuple[dict[str, int], list[str]]:
    """Foundations with low to high-1 draws of a suit taken off them, and the cards taken off,
    shuffled (the positions built from them: _small_klondike and the like)."""
    found = dict(FULL)
    for _ in range(rng.randrange(low, high)):
        suit = rng.choice("CDHS")
        found[suit] = max(0, found[suit] - 1)
    left = [f"{'A23456789TJQK'[r]}{s}" for s in "CDHS" for r in range(found[s], 13)]
    rng.shuffle(left)
    return found, left


def _small_klondike(
    rng: random.Random,
    options: str,
    taken: tuple[int, int] = (3, 7),
    piles_range: tuple[int, int] = (1, 3),
    in_talon: float = 0.4,
) -> Game:
    """A few cards off the foundations (`taken` draws of a suit), piled on one or two tableau
    piles (`piles_range`) and in the talon (each card with chance `in_talon`)."""
    found, left = _cards_off(rng, *taken)
    tab: list[list[str]] = [[] for _ in range(7)]
    talon: list[str] = []
    piles = rng.randrange(*piles_range)
    for c in left:
        (talon if rng.random() < in_talon else tab[rng.randrange(piles)]).append(c)
    tab_text = []
    for p in tab:
        down = rng.randrange(len(p)) if p else 0
        tab_text.append(" ".join([f"[{c}]" for c in p[:down]] + p[down:]))
    cut = rng.randrange(len(talon) + 1)
    return _klondike(options, found, tab_text, " ".join(talon[cut:]), " ".join(talon[:cut]))


def test_klondike_verdicts_match_a_naive_search_on_small_positions() -> None:
    # the forced foundation plays and the deferral rules must never lose a win; with a few
    # cards left and foundation cards free to come back down nearly all of these are won,
    # so the lost side is covered by the hand-built positions above and below
    rng = random.Random(4)
    won = 0
    for options in KLONDIKE_OPTIONS:
        won += agrees_with_naive([_small_klondike(rng, options) for _ in range(6)], cap=3000)[True]
    assert won > 10


def test_klondike_never_brings_down_a_card_that_is_forced_straight_back() -> None:
    # a safe card brought down from its foundation is the one card forced home at once, so the
    # move only leads back to the same position through one more: the search must not offer it
    state = KlondikeState(parse_position(new_game("klondike", 1).to_text()))
    seen = {state.key()}
    stack = [iter(state.moves())]
    path: list = []
    lowered = 0
    while stack and len(seen) < 4000:
        m = next(stack[-1], None)
        if m is None:
            stack.pop()
            if path:
                state.undo(path.pop())
            continue
        before = state.key()
        state.apply(m)
        if m[0] == FT:
            lowered += 1
            after = state.moves()
            forced_back = len(after) == 1 and state.safe(m[4])
            if forced_back:
                state.apply(after[0])
                forced_back = state.key() == before
                state.undo(after[0])
            assert not forced_back, "a card came down only to be forced straight back"
        k = state.key()
        if k in seen:
            state.undo(m)
            continue
        seen.add(k)
        path.append(m)
        stack.append(iter(state.moves()))
    assert lowered > 100  # the walk did bring foundation cards down


def test_klondike_loss_proof_skips_the_pointless_positions() -> None:
    # seed 1 is lost; the search before the rule above needed 121,481 positions to prove it
    r = solve_deal("klondike", 1, budget=200_000)
    assert r.verdict == "lost" and r.nodes < 70_000


def _walk(state: KlondikeState, limit: int):
    """Depth-first walk of the solver's own moves (no pruning of its own): yields each
    (position's moves, the state) once per distinct key, up to ``limit`` positions."""
    seen = {state.key()}
    stack = [iter(state.moves())]
    path: list = []
    while stack and len(seen) < limit:
        m = next(stack[-1], None)
        if m is None:
            stack.pop()
            if path:
                state.undo(path.pop())
            continue
        state.apply(m)
        k = state.key()
        if k in seen:
            state.undo(m)
            continue
        seen.add(k)
        path.append(m)
        moves = state.moves()
        yield moves, state
        stack.append(iter(moves))


def test_klondike_talon_card_goes_home_only_just_before_its_successor() -> None:
    # draw one, unlimited passes: a talon card that is not forced home goes there only when
    # the next card of its suit could follow it at once (a top or in the talon); before, every
    # talon card next on its foundation was offered
    state = KlondikeState(parse_position(new_game("klondike", 2).to_text()))
    offered = 0
    for moves, st in _walk(state, 3000):
        if len(moves) == 1:
            continue  # a forced play
        buried = st.buried()
        for kind, _a, _b, _n, c, _macro in moves:
            if kind == WF:
                offered += 1
                assert c % 13 == 12 or c + 1 not in buried, (TEXT[c], moves)
    assert offered > 0  # 2 here; the code before offered 6, 4 of them against the rule


def _chain_pays(c: int, st: KlondikeState, buried: set[int]) -> bool:
    """Some card that may lie on c is a top, face up (moves=build) or on a foundation, or is
    in the talon with such a chain of its own (written here apart from the solver's code)."""
    for e in CHILDREN[c]:
        if e in buried:
            continue
        if e not in st.talon or _chain_pays(e, st, buried):
            return True
    return False


def test_klondike_talon_card_goes_to_the_tableau_only_at_the_head_of_a_chain_that_pays() -> None:
    # draw one, unlimited passes: a talon card put on the tableau, and a foundation card
    # brought down for a card to lie on, pay only when a chain of talon cards, each on the one
    # before, ends at a card that can move from the tableau or a foundation
    for seed in (2, 4):
        state = KlondikeState(parse_position(new_game("klondike", seed).to_text()))
        offered = 0
        for moves, st in _walk(state, 2000):
            buried = st.buried()
            for kind, _a, _b, _n, c, _macro in moves:
                if kind == WT:
                    offered += 1
                    assert _chain_pays(c, st, buried), (TEXT[c], moves)
                elif kind == FT and not _chain_pays(c, st, buried):
                    # then it is offered for its suit-mate below, which may come down too
                    assert any(t not in buried for t in PARENTS[c - 1]), (TEXT[c], moves)
        assert offered > 100


def test_klondike_dead_sees_the_last_pass_waste_as_a_stack() -> None:
    # 6H tops the waste over 7C and 7S (its only parents) and 5H, with no recycle left: 6H can
    # go neither home (5H is under it) nor onto the tableau, so no card under it comes free.
    # With a recycle left (or the waste not seen as a stack) 5H, 7C, 7S and 6H are dealt
    # again in that order, each straight home, and the deal is won
    found = {**FULL, "H": 4, "C": 6, "S": 6}
    tab = ["KH QC JH TC 9H 8C", "KC QH JC TH 9C 8H", "KS", "QS", "JS", "TS", "9S 8S 7H"]
    piles = [[CARD_OF[c] for c in p.split()] for p in tab]
    args = (piles, [0] * 7, [6, 13, 4, 6], False)
    assert dead(*args, [CARD_OF[c] for c in ("5H", "7C", "7S", "6H")])
    assert not dead(*args)
    last = _klondike("passes=1", found, tab, waste="5H 7C 7S 6H")
    assert solve(last).verdict == "lost" and solve(last).nodes == 1  # the start, dead
    with switched(WASTE_STACK=False):
        assert solve(last).verdict == "lost" and solve(last).nodes > 1
    again = _klondike("passes=2", found, tab, waste="5H 7C 7S 6H")
    assert solve(again).verdict == "won" and replays_to_win(again, solve(again))


def _last_pass_klondike(rng: random.Random, options: str) -> Game:
    """5-9 cards off the foundations, up to two on the tableau, the rest in the talon with at
    least half of it dealt: with ``passes=1`` a waste stack in its only pass."""
    found, left = _cards_off(rng, 5, 10)
    tab: list[list[str]] = [[] for _ in range(7)]
    on_tab = rng.randrange(3)
    for c in left[:on_tab]:
        tab[rng.randrange(3)].append(c)
    talon = left[on_tab:]
    tab_text = [" ".join([f"[{c}]" for c in p[:-1]] + p[-1:]) for p in tab]
    cut = rng.randrange(len(talon) // 2, len(talon) + 1)
    return _klondike(options, found, tab_text, " ".join(talon[cut:]), " ".join(talon[:cut]))


def test_klondike_last_pass_waste_stack_matches_a_naive_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the dead test's waste stack (WASTE_STACK) against every line, in positions of the last
    # pass; the Python search counts the positions only the stack calls dead (it must see
    # some), and the compiled one must agree too (agrees_with_naive uses it)
    games = [
        _last_pass_klondike(random.Random(k), options)
        for options in ("passes=1", "draw=3 passes=1")
        for k in range(12)
    ]
    stacked = []
    plain_dead = sk.dead

    def counting(*args: Any) -> bool:
        out = plain_dead(*args)
        stacked.append(out and not plain_dead(*args[:4]))
        return out

    monkeypatch.setattr(sk, "dead", counting)
    with switched(C_SEARCH=False):
        seen = agrees_with_naive(games, cap=4000)
    assert seen[False] >= 2 and seen[True] >= 2, seen
    assert any(stacked)
    assert agrees_with_naive(games, cap=4000) == seen


def test_klondike_pass_limit_loss_proved_by_the_unlimited_search() -> None:
    # seed 40 with three passes is lost even with unlimited passes, which the search beside
    # the pass-limited one proves in ~2,400 positions; alone, the pass-limited search needs
    # 390,387 (solve_klondike.RELAXED)
    g = new_game("klondike", 40, {"passes": 3})
    r = solve(g, budget=5_000)
    assert r.verdict == "lost" and r.nodes < 5_000
    with switched(RELAXED=False):
        assert solve(g, budget=5_000).verdict == "unknown"


def test_klondike_talon_chain_rule_shortens_loss_proofs() -> None:
    # seed 5: 14,061 positions on main before the two talon rules, 11,184 with the first;
    # seed 21: 1,967 and 1,967
    for seed, most in ((5, 9_000), (21, 1_500)):
        r = solve_deal("klondike", seed, budget=100_000)
        assert r.verdict == "lost" and r.nodes < most


def test_klondike_talon_card_home_just_before_its_successor_wins() -> None:
    # 4C is not safe (3D is not home), yet it must go home from the talon so that 5C can
    # follow and turn 6D (no red 6 can take 5C): the rule offers it because 5C is a top
    g = _klondike(
        "",
        {"C": 3, "D": 2, "H": 13, "S": 13},
        ["[3D] [6D] 5C", "KC", "KD", "QC", "QD", "JC", "JD"],
        stock="4C 6C 7C 8C 9C TC 4D 5D 7D 8D 9D TD",
    )
    assert naive_winnable(g) is True
    r = solve(g)
    assert r.verdict == "won" and replays_to_win(g, r)
    assert solve_short_runs(g).verdict == "won"


def _talon_heavy_klondike(rng: random.Random, options: str) -> Game:
    """A few cards off the foundations, most of them in the talon and next on their suit."""
    return _small_klondike(rng, options, taken=(4, 9), piles_range=(1, 4), in_talon=0.6)


@settings(SOLVE_SETTINGS, max_examples=8)
@given(seed=hst.integers(0, 2**32), options=hst.sampled_from(["", "moves=build", "draw=3"]))
def test_klondike_talon_rules_match_a_naive_search_on_random_positions(
    seed: int, options: str
) -> None:
    # the talon deferrals (a card put on the tableau, a card played home) against every line
    agrees_with_naive([_talon_heavy_klondike(random.Random(seed), options)], cap=3000)


def _off_foundations(rng: random.Random, found: dict[str, int]) -> list[str]:
    """The cards above the foundations `found` (rank index of each suit's next card),
    shuffled, then ordered high ranks first (shuffled within a rank)."""
    left = [f"{'A23456789TJQK'[r]}{s}" for s in "CDHS" for r in range(found[s], 13)]
    rng.shuffle(left)
    left.sort(key=lambda c: -"A23456789TJQK".index(c[0]))
    return left


def _parents(tab: list[list[str]], c: str) -> list[list[str]]:
    """The piles of `tab` whose top card c could be built on: one rank up, the other colour."""
    rank, red = "A23456789TJQK".index(c[0]), c[1] in "DH"
    return [
        p
        for p in tab
        if p and "A23456789TJQK".index(p[-1][0]) == rank + 1 and (p[-1][1] in "DH") != red
    ]


def _runs_klondike(rng: random.Random, options: str) -> Game:
    """A few cards off the foundations, most of them built into face-up runs on the tableau
    (each card on a parent where one is a top, so twins compete for the same parents), a
    face-down card or two under some runs, the rest in the talon: positions where a part of
    a run can be moved off a face-up card (the twin rule of ``partial_pays``)."""
    low = rng.choice(("CS", "DH"))  # one colour lower, so few cards are safe to play home
    found = {
        suit: rng.randrange(8, 10) if suit in low else rng.randrange(10, 13) for suit in "CDHS"
    }
    tab: list[list[str]] = [[] for _ in range(7)]
    downs = [0] * 7
    talon: list[str] = []
    for c in _off_foundations(rng, found):
        parents = _parents(tab, c)
        if parents and rng.random() < 0.8:
            rng.choice(parents).append(c)
        elif rng.random() < 0.35:
            talon.append(c)
        else:
            x = rng.randrange(7)
            if tab[x] and rng.random() < 0.3:
                downs[x] = len(tab[x])  # the cards under c are face down
            tab[x].append(c)
    tab_text = [
        " ".join([f"[{c}]" for c in p[:d]] + p[d:]) for p, d in zip(tab, downs, strict=True)
    ]
    rng.shuffle(talon)
    cut = rng.randrange(len(talon) + 1)
    return _klondike(options, found, tab_text, " ".join(talon[cut:]), " ".join(talon[:cut]))


def _twin_free(st: KlondikeState, c: int, b: int) -> bool:
    """b's twin could be put on face-up c right now, or c goes home (written apart from the
    solver's code): the twin is face up in the tableau, reachable in the talon, or on top of
    its foundation."""
    if st.found[c // 13] == c % 13:
        return True
    e = (3 - b // 13) * 13 + b % 13
    if st.found[e // 13] > e % 13:
        return st.found[e // 13] == e % 13 + 1
    for x in range(7):
        if e in st.tab[x]:
            return st.tab[x].index(e) >= st.down[x]
    return e in {st.talon[i] for i, _macro in st.talon_tops()}


@pytest.mark.parametrize("options", [{"moves": "build"}, {"draw": 3, "moves": "build"}])
def test_klondike_part_run_moves_only_where_the_twin_or_home_follows(options: dict) -> None:
    # moves=build: a part of a run moved off a face-up card pays only if that card goes home
    # next or the moved base's twin is put on it next; every other part move is left out
    for seed in (1, 4):
        state = KlondikeState(parse_position(new_game("klondike", seed, options).to_text()))
        offered = cut = 0
        for moves, st in _walk(state, 1500):
            for kind, a, _b, n, _c, _macro in moves:
                if kind == sk.TT and n < len(st.tab[a]) - st.down[a]:
                    p = st.tab[a]
                    offered += 1
                    assert _twin_free(st, p[-n - 1], p[-n]), (st.tab, moves)
            sk.TWIN = False
            try:
                every = st.moves()
            finally:
                sk.TWIN = True
            cut += len(every) - len(moves)
        # seed 1 at 1,500 positions: draw one 265 offered, 296 left out; draw three 1,476 and 4,282
        assert offered > 100 and cut > 100


#: the budget of the twin and dominance checks: 7,000 positions decide what 20,000 did there but
#: one (seed 23 without the twin rule: 12,847); the unknowns, which check nothing, took most of
#: the CPU at 20,000 (the two tests: 23 CPU-s in a parallel run, 8.8 now in one process)
CHECK_BUDGET = 7_000


def _same_verdicts_without(
    rule: str, rng: random.Random, seeds: range, options: dict[str, object] | None = None
) -> dict[str, int]:
    """Positions a few random moves into the deals of `seeds` (draw three with build moves
    unless `options` says otherwise): the search with the solver's flag `rule` off and on gives
    the same verdict wherever both decide at CHECK_BUDGET. How many positions each verdict
    counted."""
    seen: dict[str, int] = {}
    for seed in seeds:
        g = new_game(
            "klondike", seed, {"draw": 3, "moves": "build"} if options is None else options
        )
        for _ in range(rng.randrange(0, 30)):
            moves = g.legal_moves()
            if not moves:
                break
            g.apply(rng.choice(moves))
        with switched(**{rule: False}):
            before = solve(g, budget=CHECK_BUDGET).verdict
        after = solve(g, budget=CHECK_BUDGET).verdict
        if UNKNOWN not in (before, after):
            assert before == after, g.to_text()
            seen[after] = seen.get(after, 0) + 1
    return seen


def test_klondike_twin_rule_leaves_a_run_on_a_card_it_does_not_lie_on_alone() -> None:
    # a position text may hold face-up cards that make no run (play never does): JS lies on QC
    # here, the twin rule's premise fails, and JS must still go onto QH (the slow lane's
    # locked positions found it: the search said lost in 6 positions)
    g = position(
        "klondike moves=build",
        t1="JH KS KD TS QH QD",
        t2="[JD] TD KH",
        t3="[JC] [QS] KC QC JS",
        t4="",
        t5="",
        t6="",
        t7="",
        f1="AC 2C 3C 4C 5C 6C 7C 8C 9C TC",
        f2="AD 2D 3D 4D 5D 6D 7D 8D 9D",
        f3="AH 2H 3H 4H 5H 6H 7H 8H 9H TH",
        f4="AS 2S 3S 4S 5S 6S 7S 8S",
        s="",
        w="9S",
    )
    r = solve(g)
    assert r.verdict == WON and replays_to_win(g, r)


def test_klondike_twin_rule_keeps_every_verdict_on_positions_played_into() -> None:
    # positions a few random moves into draw-three deals with build moves: the search with the
    # twin rule and the one without (itself checked against the naive search above) must give
    # the same verdict wherever both decide (at CHECK_BUDGET), lost ones included
    seen = _same_verdicts_without("TWIN", random.Random(5), range(1, 26))
    assert seen.get(LOST, 0) >= 4 and seen.get(WON, 0) >= 8, seen


def _reached(st: KlondikeState, p: int) -> set[int]:
    """Talon indices the solver's macro moves reach with the waste pointer at p."""
    keep = st.p
    st.p = p
    try:
        return {i for i, _macro in st.talon_tops()}
    finally:
        st.p = keep


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 11, 21, 24])
def test_klondike_draw_three_pointers_reach_what_the_key_and_dominance_assume(n: int) -> None:
    # unlimited passes: pointers keyed as 0 reach exactly what pointer 0 reaches, and a pointer
    # that ``dominated`` takes as reaching more does reach a superset
    text = new_game("klondike", 1, {"draw": 3}).to_text()
    st = KlondikeState(parse_position(text))
    st.talon = st.talon[:n]
    zero = _reached(st, 0)
    for p in range(n + 1):
        reach = _reached(st, p)
        if p % 3 == 0 or p >= n:
            assert reach == zero, p
        else:
            assert zero <= reach, p
            for q in range(p % 3, p, 3):
                assert reach <= _reached(st, q), (p, q)


def test_klondike_pointer_dominance_keeps_every_verdict_and_shortens_loss_proofs() -> None:
    # positions a few random moves into draw-three deals: the same verdicts with and without
    # the rule wherever both decide; and the loss proof of seed 150 shrinks (28,209 to 22,965)
    seen = _same_verdicts_without("DOMINANCE", random.Random(8), range(26, 46))
    assert seen.get(LOST, 0) >= 3 and seen.get(WON, 0) >= 5, seen
    r = solve_deal("klondike", 150, {"draw": 3, "moves": "build"}, budget=100_000)
    assert r.verdict == LOST and r.nodes < 25_000


def test_klondike_a_top_back_in_the_talon_proved_lost_makes_the_position_lost() -> None:
    # draw one, unlimited passes: B (a talon card c in the talon, its parent a top) proved lost
    # makes A (B with c played onto that parent) lost without a search; nothing else does
    st = KlondikeState(parse_position(new_game("klondike", 4).to_text()))
    b_key = st.key()
    played = [m for m in st.moves() if m[0] == WT]
    assert played, "seed 4 offers a talon card to the tableau at the start (36 = QS)"
    m = played[0]
    st.apply(m)
    a_key = st.key()
    keep = sk.RETURNED
    try:
        sk.RETURNED = True
        assert st.dominated(a_key, {b_key: PROVED_LOST})
        assert not st.dominated(a_key, {b_key: 0})  # visited, not proved lost
        assert not st.dominated(a_key, {})
        sk.RETURNED = False
        assert not st.dominated(a_key, {b_key: PROVED_LOST})
    finally:
        sk.RETURNED = keep
    # with draw three (the pointer in the key) the rule is not asked
    st3 = KlondikeState(parse_position(new_game("klondike", 2, {"draw": 3}).to_text()))
    assert not st3.returned_lost({}) and st3.talon_key == 1


def test_klondike_returned_card_rule_keeps_every_verdict_and_shortens_loss_proofs() -> None:
    # positions a few random moves into default deals: the same verdicts with and without the
    # rule wherever both decide; and the loss proofs of seeds 1 and 137 shrink (7,039 to 6,759
    # and 19,370 to 17,830 positions)
    seen = _same_verdicts_without("RETURNED", random.Random(11), range(1, 21), {})
    assert seen.get(LOST, 0) >= 5 and seen.get(WON, 0) >= 1, seen
    r = solve_deal("klondike", 1, budget=30_000)
    assert r.verdict == LOST and r.nodes < 7_000
    r = solve_deal("klondike", 137, budget=30_000)
    assert r.verdict == LOST and r.nodes < 18_500


#: the draw-three card-back-in-the-talon rule is in the compiled search only
needs_c_search = pytest.mark.skipif(not sk.C_SEARCH, reason="the C search did not build")


@pytest.fixture
def returned_draw() -> Iterator[None]:
    """The compiled search with ``RETURNED_DRAW`` on (draw three: a top back in the talon)."""
    with switched(RETURNED_DRAW=True):
        yield


@needs_c_search
@settings(SOLVE_SETTINGS, max_examples=12)
@given(
    seed=hst.integers(0, 2**32),
    options=hst.sampled_from(["draw=3", "draw=3 moves=build"]),
    shape=hst.sampled_from(["talon", "runs"]),
)
def test_klondike_draw_three_returned_card_matches_a_naive_search(
    seed: int, options: str, shape: str
) -> None:
    # twelfth pass: with RETURNED_DRAW on, the C search's verdicts against every line of play,
    # on positions with most cards in the talon or built into runs (tops that came from it)
    rng = random.Random(seed)
    g = _talon_heavy_klondike(rng, options) if shape == "talon" else _runs_klondike(rng, options)
    with switched(RETURNED_DRAW=True):
        agrees_with_naive([g], cap=4000)


@needs_c_search
def test_klondike_draw_three_returned_card_keeps_every_verdict(returned_draw: None) -> None:
    # positions a few random moves into standard deals: the same verdicts with and without the
    # rule wherever both decide; the loss proof of seed 156 shrinks (419,924 to 417,153)
    seen = _same_verdicts_without("RETURNED_DRAW", random.Random(12), range(150, 175))
    assert seen.get(LOST, 0) >= 2 and seen.get(WON, 0) >= 5, seen
    on = solve_deal("klondike", 156, {"draw": 3, "moves": "build"}, budget=1_000_000)
    sk.RETURNED_DRAW = False
    off = solve_deal("klondike", 156, {"draw": 3, "moves": "build"}, budget=1_000_000)
    assert on.verdict == off.verdict == LOST and on.nodes < off.nodes


@settings(SOLVE_SETTINGS, max_examples=10)
@given(seed=hst.integers(0, 2**32), options=hst.sampled_from(["moves=build", "draw=3 moves=build"]))
def test_klondike_runs_on_the_tableau_match_a_naive_search(seed: int, options: str) -> None:
    # build moves over face-up runs (part moves, the twin rule) against every line of play
    agrees_with_naive([_runs_klondike(random.Random(seed), options)], cap=4000)


@pytest.mark.parametrize(("stock", "verdict"), [("2S 3S", "lost"), ("3S 2S", "won")])
def test_klondike_draw_three_single_pass_reaches_only_every_third_card(
    stock: str, verdict: str
) -> None:
    g = _klondike(
        "draw=3 passes=1",
        {**FULL, "S": 1},
        ["KS", "QS", "JS", "TS", "9S", "8S", "7S 6S 5S 4S"],
        stock,
    )
    assert solve(g).verdict == verdict
    assert naive_winnable(g) == (verdict == "won")


def test_klondike_deals_replay() -> None:
    # seeds the search wins within a few thousand positions (seed 3, used before, is won at
    # 1,038,135 since the talon chain rule: which deals are won soon depends on the order)
    for seed in (12, 15):
        g = new_game("klondike", seed)
        r = solve(g, budget=200_000)
        assert r.verdict == "won" and replays_to_win(g, r)
        g.play(r.moves[0])
        assert solve(g, budget=200_000).verdict == "won"


# ---------------------------------------------------------------- Klondike dead positions

#: positions the dead-position test (solve_klondike_dead) rejects at once: a card can never go
#: home (QD: needs JD home and a black King to lie on, all under it or under cards stuck the same
#: way; 5S and 9S under the cards that need them)
KLONDIKE_DEAD = [
    """game klondike
t1 KS KC KH JS 9D JH QD
t2 [JC] JD 7D 8D QS
t3
t4
t5
t6
t7
f1 AC 2C 3C 4C 5C 6C 7C 8C 9C TC
f2 AD 2D 3D 4D 5D 6D
f3 AH 2H 3H 4H 5H 6H 7H 8H 9H TH
f4 AS 2S 3S 4S 5S 6S 7S 8S 9S TS
s QC QH KD TD
w
""",
    """game klondike
t1 [KS] [9S] [QS] [KC] [7S] JS
t2 6S 8S TS
t3
t4
t5
t6
t7
f1 AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC
f2 AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD
f3 AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH
f4 AS 2S 3S 4S
s KH QH
w 5S
""",
]

#: dead with top-card moves, won with moves=build (the run KH QS goes to an empty pile)
KLONDIKE_RUN_FREES = """game klondike
t1 [KC] [JH] [KD] [QD] QC KH QS
t2 KS JS TH TS QH
t3
t4
t5
t6
t7
f1 AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC
f2 AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD
f3 AH 2H 3H 4H 5H 6H 7H 8H 9H
f4 AS 2S 3S 4S 5S 6S 7S 8S 9S
s
w
"""


def _dead(game: Game) -> bool:
    state = KlondikeState(parse_position(game.to_text()))
    return dead(state.tab, state.down, state.found, state.build)


def _with_options(text: str, options: str) -> Game:
    return from_text(text.replace("game klondike", f"game klondike {options}".strip(), 1))


@pytest.mark.parametrize("options", KLONDIKE_OPTIONS)
@pytest.mark.parametrize("text", KLONDIKE_DEAD)
def test_klondike_dead_position_is_lost_without_a_search(text: str, options: str) -> None:
    g = _with_options(text, options)
    assert _dead(g)
    assert naive_winnable(g) is False
    r = solve(g)
    assert r.verdict == "lost" and r.nodes == 1  # the starting position has no successor


def test_klondike_dead_test_lets_a_run_carry_the_cards_on_it() -> None:
    top = _with_options(KLONDIKE_RUN_FREES, "")
    assert _dead(top) and naive_winnable(top) is False
    build = _with_options(KLONDIKE_RUN_FREES, "moves=build")
    assert not _dead(build) and naive_winnable(build) is True
    r = solve(build)
    assert r.verdict == "won" and replays_to_win(build, r)


def _locked_klondike(rng: random.Random, options: str) -> Game:
    """Ten to eighteen cards off the foundations, mostly in two to four piles: often locked."""
    found, left = _cards_off(rng, 10, 19)
    tab: list[list[str]] = [[] for _ in range(7)]
    talon: list[str] = []
    piles = rng.randrange(2, 5)
    in_talon = rng.random() * 0.2
    for c in left:
        (talon if rng.random() < in_talon else tab[rng.randrange(piles)]).append(c)
    tab_text = []
    for p in tab:
        down = rng.randrange(len(p)) if p else 0
        tab_text.append(" ".join([f"[{c}]" for c in p[:down]] + p[down:]))
    cut = rng.randrange(len(talon) + 1)
    return _klondike(options, found, tab_text, " ".join(talon[cut:]), " ".join(talon[:cut]))


def test_klondike_dead_test_matches_a_naive_search_on_locked_positions() -> None:
    # the first 5 positions of each option set (~4 s); the slow lane checks all 14 (~13 s)
    seen = _dead_test_against_naive(checked=5)
    assert seen[True] >= 3 and seen[False] >= 8


@pytest.mark.slow
def test_klondike_dead_test_matches_a_naive_search_on_more_locked_positions() -> None:
    seen = _dead_test_against_naive(checked=14)
    assert seen[True] >= 6 and seen[False] >= 20


def _dead_test_against_naive(checked: int) -> dict[bool, int]:
    """The dead test must never call a winnable position dead, and the search that applies it
    (with its shortcut that skips the test after most moves) must keep every verdict. Each
    option set's 14 positions are always drawn (the same positions whatever is checked): the
    first `checked` are checked against the naive search."""
    rng = random.Random(5)
    dead_seen = {True: 0, False: 0}
    for options in KLONDIKE_OPTIONS:
        for g in [_locked_klondike(rng, options) for _ in range(14)][:checked]:
            expect = naive_winnable(g, cap=3000)
            if expect is None:
                continue
            if _dead(g):
                assert not expect, g.to_text()
                dead_seen[True] += 1
            else:
                dead_seen[False] += 1
            assert solve(g).verdict == ("won" if expect else "lost"), g.to_text()
            assert solve_short_runs(g).verdict == ("won" if expect else "lost"), g.to_text()
    return dead_seen


@pytest.mark.parametrize("options", [None, {"draw": 3, "passes": 3}, {"moves": "build"}])
def test_klondike_dead_test_shortcut_never_skips_a_dead_position(options: dict | None) -> None:
    # after a move from a live position, may_be_dead() False must mean the test would pass
    state = KlondikeState(
        parse_position(new_game("klondike", 3 if options else 2, options).to_text())
    )
    skipped = 0
    for _moves, _state in _walk(state, 3000):
        if not state.may_be_dead():
            skipped += 1
            assert not dead(state.tab, state.down, state.found, state.build)
    assert skipped > 500


def _dead_by_the_facts(
    tab: list[list[int]], down: list[int], found: list[int], build: bool
) -> bool:
    """The dead test's least fixpoint written literally from its facts (docs/SOLVABILITY.md,
    *Dead positions*): every fact re-derived from the others until nothing changes, with none
    of ``dead``'s bookkeeping (frontiers, queues, climbs). True when some card never gets
    ``home``."""
    where = {c: (y, i) for y, p in enumerate(tab) for i, c in enumerate(p)}
    leave: set[int] = set()
    home = {s * 13 + r for s in range(4) for r in range(found[s])}
    can_top: set[int] = set()

    def free(c: int) -> bool:
        y, i = where[c]
        return all(e in leave for e in tab[y][i + 1 :])

    def emptiable(but: int = -1) -> bool:
        return any(y != but and all(e in leave for e in p) for y, p in enumerate(tab))

    def gets_a_parent(c: int, y: int) -> bool:
        if c % 13 == 12:  # a King: onto a pile some line empties (not its own)
            return emptiable(but=y)
        return any(d in can_top for d in PARENTS[c])

    changed = True
    while changed:
        changed = False
        for c in range(52):
            new_top = (
                free(c)
                if c in where
                else (emptiable() if c % 13 == 12 else any(d in can_top for d in PARENTS[c]))
            )
            new_home = c not in home and (c % 13 == 0 or c - 1 in home)
            new_home = new_home and (c not in where or free(c))
            new_leave = False
            if c in where and c not in leave:
                y, i = where[c]
                if free(c) and (c in home or new_home or gets_a_parent(c, y)):
                    new_leave = True
                elif build:
                    # c in a valid face-up run whose base j can go onto a parent, the
                    # cards above the run all able to leave: the run moves as one
                    p = tab[y]
                    for j in range(down[y], i + 1):
                        if not gets_a_parent(p[j], y):
                            continue
                        for k in range(i, len(p)):
                            run = all(p[m] in PARENTS[p[m + 1]] for m in range(j, k))
                            if run and all(e in leave for e in p[k + 1 :]):
                                new_leave = True
                                break
                        if new_leave:
                            break
            if new_top and c not in can_top:
                can_top.add(c)
                changed = True
            if new_home:
                home.add(c)
                changed = True
            if new_leave:
                leave.add(c)
                changed = True
    return len(home) < 52


@pytest.mark.parametrize(
    ("seed", "options"), [(2, {}), (1, {}), (3, {"draw": 3, "passes": 3}), (4, {"moves": "build"})]
)
def test_klondike_dead_test_is_its_facts_fixpoint(seed: int, options: dict) -> None:
    """``dead`` (propagation with frontiers and a queue of piles) answers as the literal
    fixpoint of its facts on every position of the first 250 of a search (dead or not), and
    on locked random positions, each with top-card and build moves."""
    state = KlondikeState(parse_position(new_game("klondike", seed, options).to_text()))
    answers = {True: 0, False: 0}
    for _moves, _state in _walk(state, 250):
        tab = [list(p) for p in state.tab]
        for build in (False, True):  # both rules on every position: runs form either way
            got = dead(tab, state.down, state.found, build)
            assert got == _dead_by_the_facts(tab, list(state.down), state.found, build)
            answers[got] += 1
    rng = random.Random(seed)
    for _ in range(40):
        s = KlondikeState(parse_position(_locked_klondike(rng, "").to_text()))
        for build in (False, True):
            got = dead(s.tab, s.down, s.found, build)
            assert got == _dead_by_the_facts(s.tab, s.down, s.found, build), (s.tab, build)
            answers[got] += 1
    assert answers[True] >= 20 and answers[False] >= 20


def test_klondike_luby_runs_keep_every_verdict() -> None:
    """The Luby schedule (``LUBY``, measured only) restarts as the 1.3x one does, in runs of
    3 positions times 1, 1, 2, 1, 1, 2, 4, ...: every verdict the naive search reaches, lost
    ones included; and seed 1's loss is still proved at the real run size."""
    rng = random.Random(8)
    games = [_locked_klondike(rng, "") for _ in range(24)] + [
        _small_klondike(rng, "") for _ in range(4)
    ]
    luby, first = sk.LUBY, sk.FIRST_RUN_SHORT
    sk.LUBY = True
    try:
        assert [sk.luby(i) for i in range(1, 16)] == [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]
        r = solve_deal("klondike", 1, budget=20_000)
        assert r.verdict == "lost"
        sk.FIRST_RUN_SHORT = 3
        seen = {True: 0, False: 0}
        for g in games:
            expect = naive_winnable(g, cap=3000)
            if expect is None:
                continue
            seen[expect] += 1
            assert solve(g).verdict == ("won" if expect else "lost"), g.to_text()
    finally:
        sk.LUBY, sk.FIRST_RUN_SHORT = luby, first
    assert seen[True] >= 3 and seen[False] >= 3


def test_klondike_dead_test_shortens_loss_proofs() -> None:
    # seed 1 needed 66,369 positions without the dead test, seed 5 67,874
    for seed, most in ((1, 10_000), (5, 15_000)):
        r = solve_deal("klondike", seed, budget=200_000)
        assert r.verdict == "lost" and r.nodes < most


# ---------------------------------------------------------------- Tabby Cat and Manx

TAIL_NEEDED = {
    "tabbycat": """game tabbycat
t1 5C TH 6H 8H
t2 JC KC AH KH QH 7C 4C 5H 6C 2C 8C 2H 9C 7H
t3 3H 9H 4H QC
t4 3C TC AC JH
f1 KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D AD
f2 KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS
f3
f4
r
s
""",
    "manx": """game manx
t1 7C 2C KH 6C QH 6H TC
t2 KC 5H 3H JC
t3 4H 5C AH QC JH AC 3C 9C
t4 4C 2H 9H 8H 8C TH 7H
f1 KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D AD
f2 KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS
f3
f4
r
s
""",
}


@pytest.mark.parametrize("game", ["tabbycat", "manx"])
def test_tabbycat_win_that_needs_the_tail(game: str) -> None:
    g = from_text(TAIL_NEEDED[game])
    assert not naive_winnable(g, allow=lambda m: "r" not in (m.src, m.dst))
    r = solve(g)
    assert r.verdict == "won" and replays_to_win(g, r)
    assert any(m.startswith("r-") for m in r.moves)


def test_tabbycat_one_move_from_a_win_and_a_dead_end() -> None:
    runs = {
        f"f{k + 1}": " ".join(f"{'KQJT98765432A'[i]}{s}" for i in range(13))
        for k, s in enumerate("CDH")
    }
    spades = " ".join(f"{'KQJT98765432A'[i]}S" for i in range(13))
    g = position("tabbycat", t1=spades, t2="", t3="", t4="", **runs, f4="", r="", s="")
    r = solve(g)
    assert r.verdict == "won" and r.moves == ["t1-f4:13"]
    # every top refuses every other, the tail's 5S has no 6 to go to and no pile is empty
    dead = position(
        "manx",
        t1="AS 2S 3S",
        t2="4S 6S 7S",
        t3="8S 9S TS JS",
        t4="QS KS",
        **runs,
        f4="",
        r="5S",
        s="",
    )
    assert not naive_winnable(dead)
    r = solve(dead)
    assert r.verdict == "lost" and r.moves == []


def _small_tabbycat(rng: random.Random, game: str, full: int, cuts: int) -> Game:
    """``full`` discard piles hold K..A runs; the other cards form K..A runs of mixed suits
    cut into pieces (one piece moved to the stock) and laid on the piles at random.

    Mixed suits leave twin ranks among the loose cards, so the rank-only key is exercised.
    """
    deck = [r + s for r in "KQJT98765432A" for s in "CDHS"]
    rng.shuffle(deck)
    runs = []
    for _ in range(4):
        run = []
        for r in "KQJT98765432A":
            c = next(c for c in deck if c[0] == r)
            deck.remove(c)
            run.append(c)
        runs.append(run)
    pieces: list[list[str]] = []
    for run in runs[full:]:
        at = sorted(rng.sample(range(1, 13), cuts))
        pieces += [run[a:b] for a, b in zip([0, *at], [*at, 13], strict=True)]
    if cuts == 12:  # every card its own piece: a random scatter
        pieces = [[c] for piece in pieces for c in piece]
    rng.shuffle(pieces)
    stock = pieces.pop() if cuts < 12 and rng.random() < 0.5 else []
    tab: list[list[str]] = [[] for _ in range(4)]
    for piece in pieces:
        tab[rng.randrange(4)] += piece
    piles = {f"t{i + 1}": " ".join(p) for i, p in enumerate(tab)}
    piles |= {f"f{k + 1}": " ".join(runs[k]) if k < full else "" for k in range(4)}
    return position(game, **piles, r="", s=" ".join(stock))


@pytest.mark.parametrize("game", ["tabbycat", "manx"])
def test_tabbycat_verdicts_match_a_naive_search_on_small_positions(game: str) -> None:
    rng = random.Random(5)
    # the naive search rarely finds a win here (it wanders among build splits), so this checks
    # "lost"; wins are checked by replay (solve() replays every one) and by the test above
    games = [_small_tabbycat(rng, game, full, 12) for full in (2, 3) for _ in range(15)]
    seen = agrees_with_naive(games, cap=3000)
    assert seen[False] >= 8, seen


def test_tabbycat_every_run_order_tries_every_move_class() -> None:
    # a run whose order left out a class would skip those moves, and its "lost" would be false
    for order in stc.ORDERS:
        assert sorted(order) == sorted("dgotes"), order


def _canonical(move: tuple[str, str | None, int], stock_empty: bool, empty: set[str]) -> tuple:
    """A move up to the equivalences the solver merges: which discard pile takes a run, and
    (stock empty, piles interchangeable) which empty pile takes cards."""
    src, dst, n = move
    if dst is not None and dst.startswith("f"):
        return (src, "f", n)
    if stock_empty and dst in empty:
        return (src, "empty", n)
    return (src, dst, n)


def _solver_moves_match_legal_moves(g: Game) -> None:
    """The solver's moves (as texts) are legal, and every legal move has a solver twin, except
    a whole pile moved onto an empty one once the piles are interchangeable (a no-op)."""
    pos = parse_position(g.to_text())
    state = stc.TabbyState(pos, "dgotes")
    empty = {f"t{i + 1}" for i in range(4) if not state.tab[i]}
    stock_empty = not state.stock
    ours = {stc.texts(pos, [m])[0] for m in state.moves()}
    legal = {m.text: m for m in g.legal_moves()}
    assert ours <= set(legal), (ours - set(legal), g.to_text())
    want = set()
    for m in legal.values():
        if stock_empty and m.dst in empty and m.count == len(pos.piles[m.src]):
            continue
        want.add(_canonical((m.src, m.dst, m.count), stock_empty, empty))
    got = {_canonical((m.src, m.dst, m.count), stock_empty, empty) for m in map(legal.get, ours)}
    assert got == want, (want - got, g.to_text())


@SOLVE_SETTINGS
@given(game=hst.sampled_from(["tabbycat", "manx"]), seed=hst.integers(1, 10**6), data=hst.data())
def test_tabbycat_solver_moves_are_the_legal_moves(game: str, seed: int, data) -> None:
    g = new_game(game, seed)
    rng = random.Random(data.draw(hst.integers(0, 2**32)))
    for _ in range(rng.randrange(0, 120)):
        _solver_moves_match_legal_moves(g)
        moves = g.legal_moves()
        if not moves:
            break
        deal = [m for m in moves if m.text == "deal"]
        g.play(deal[0] if deal and rng.random() < 0.3 else rng.choice(moves))


def _scattered_tabbycat(rng: random.Random, game: str, full: int, stock: int, tail: bool) -> Game:
    """``full`` discard piles hold K..A runs; the other cards lie one by one at random on the
    piles, ``stock`` of them in the stock, and one in the tail if ``tail``."""
    deck = [r + s for r in "KQJT98765432A" for s in "CDHS"]
    rng.shuffle(deck)
    runs = []
    for _ in range(full):
        run = []
        for r in "KQJT98765432A":
            c = next(c for c in deck if c[0] == r)
            deck.remove(c)
            run.append(c)
        runs.append(run)
    rest = [deck.pop() for _ in range(stock)]
    r = deck.pop() if tail else ""
    tab: list[list[str]] = [[] for _ in range(4)]
    for c in deck:
        tab[rng.randrange(4)].append(c)
    piles = {f"t{i + 1}": " ".join(p) for i, p in enumerate(tab)}
    piles |= {f"f{k + 1}": " ".join(runs[k]) if k < full else "" for k in range(4)}
    return position(game, **piles, r=r, s=" ".join(rest))


@SOLVE_SETTINGS
@given(
    game=hst.sampled_from(["tabbycat", "manx"]),
    stock=hst.sampled_from([0, 4, 6]),
    tail=hst.booleans(),
    seed=hst.integers(0, 2**32),
)
def test_tabbycat_lost_matches_a_naive_search_on_random_small_positions(
    game: str, stock: int, tail: bool, seed: int
) -> None:
    """Random positions of 26 loose cards: wherever the naive search ends, the solver (whole
    runs, and runs of 3 positions restarting) gives its verdict."""
    agrees_with_naive([_scattered_tabbycat(random.Random(seed), game, 2, stock, tail)], cap=2000)


@pytest.mark.slow
@settings(SOLVE_SETTINGS, max_examples=30)
@given(
    game=hst.sampled_from(["tabbycat", "manx"]),
    full=hst.sampled_from([2, 3]),
    stock=hst.sampled_from([0, 4, 6]),
    tail=hst.booleans(),
    seed=hst.integers(0, 2**32),
)
def test_tabbycat_lost_matches_a_naive_search_on_more_random_positions(
    game: str, full: int, stock: int, tail: bool, seed: int
) -> None:
    # ~1-2 min on the loaded machine: at 80 examples and cap 30,000 it ran into the suite's
    # 300 s per-test timeout, which hypothesis reported as a flaky failure
    g = _scattered_tabbycat(random.Random(seed), game, full, stock, tail)
    agrees_with_naive([g], cap=10_000)


def test_tabbycat_deal_replays() -> None:
    g = new_game("tabbycat", 7)
    r = solve(g, budget=100_000)
    assert r.verdict == "won" and replays_to_win(g, r)


# ---------------------------------------------------------------- Leap Year


def _leapyear(heights: list[int], tab: list[list[str]], stock: list[str]) -> Game:
    """16 foundations (suit cycling C D H S per deck) of the given heights; cards named elsewhere."""
    lines = ["game leapyear"]
    lines += [f"t{i + 1} {' '.join(p)}" for i, p in enumerate(tab)]
    for k, h in enumerate(heights):
        suit = "CDHS"[k % 4]
        lines.append(f"f{k + 1} " + " ".join(f"{'A23456789TJQK'[r]}{suit}" for r in range(h)))
    lines.append(f"s {' '.join(stock)}")
    return from_text("\n".join(lines) + "\n")


def test_leapyear_one_move_from_a_win_and_dead() -> None:
    heights = [13] * 16
    heights[0] = 12
    g = _leapyear(heights, [["KC"]] + [[] for _ in range(7)], [])
    r = solve(g)
    assert r.verdict == "won" and r.moves == ["t1-f1"]
    heights[0] = 11
    assert solve(_leapyear(heights, [["QC", "KC"]] + [[]] * 7, [])).verdict == "lost"
    r = solve(_leapyear(heights, [["KC", "QC"]] + [[]] * 7, []))
    assert r.verdict == "won" and r.moves == ["t1-f1", "t1-f1"]


def test_leapyear_lost_matches_a_naive_search_on_small_positions() -> None:
    rng = random.Random(3)
    games = []
    for _ in range(40):
        heights = [13] * 16
        for k in rng.sample(range(16), rng.randrange(1, 4)):
            heights[k] = 13 - rng.randrange(1, 5)
        left = [
            f"{'A23456789TJQK'[r]}{'CDHS'[k % 4]}"
            for k, h in enumerate(heights)
            for r in range(h, 13)
        ]
        rng.shuffle(left)
        stock = [left.pop() for _ in range(rng.randrange(min(len(left), 8) + 1))]
        tab: list[list[str]] = [[] for _ in range(8)]
        piles = rng.randrange(1, 3)
        for c in left:
            tab[rng.randrange(piles)].append(c)
        games.append(_leapyear(heights, tab, stock))
    seen = agrees_with_naive(games, cap=10**6)
    assert seen[True] > 5 and seen[False] > 5


def _small_leapyear(rng: random.Random, gaps: int, piles: int) -> Game:
    """Foundations mostly full: ``gaps`` of them short by 1-4 cards, which lie at random on the
    first ``piles`` piles or in the stock (up to one deal of it)."""
    heights = [13] * 16
    for k in rng.sample(range(16), gaps):
        heights[k] = 13 - rng.randrange(1, 5)
    left = [
        f"{'A23456789TJQK'[r]}{'CDHS'[k % 4]}" for k, h in enumerate(heights) for r in range(h, 13)
    ]
    rng.shuffle(left)
    stock = [left.pop() for _ in range(rng.randrange(min(len(left), 10) + 1))]
    tab: list[list[str]] = [[] for _ in range(8)]
    for c in left:
        tab[rng.randrange(piles)].append(c)
    return _leapyear(heights, tab, stock)


@SOLVE_SETTINGS
@given(gaps=hst.integers(1, 4), piles=hst.integers(1, 3), seed=hst.integers(0, 2**32))
def test_leapyear_matches_a_naive_search_on_random_small_positions(
    gaps: int, piles: int, seed: int
) -> None:
    agrees_with_naive([_small_leapyear(random.Random(seed), gaps, piles)], cap=10**5)


def test_leapyear_every_run_order_lists_the_same_moves() -> None:
    """The restarting search's later runs list a position's moves in another order, never
    other moves (so a run that ends without a win still proves "lost"), and each listed play
    is a legal move of the engine (from that pile), deal among them when the engine allows it."""
    from solrace.engine.solve_leapyear import DEAL, LeapState

    rng = random.Random(5)
    reordered = 0
    for seed in range(1, 7):
        g = new_game("leapyear", seed)
        for _ in range(120):
            legal = g.legal_moves()
            if not legal:
                break
            pos = parse_position(g.to_text())
            base = LeapState(pos).moves()
            sources = {int(m.text[1 : m.text.index("-")]) - 1 for m in legal if m.text != "deal"}
            assert {x for x in base if x != DEAL} <= sources
            if any(m.text == "deal" for m in legal) and len(base) > 1:
                assert base[-1] == DEAL
            for run in (1, 2, 9):
                state = LeapState(pos)
                state.reorder(run)
                moves = state.moves()
                assert sorted(moves) == sorted(base)
                reordered += moves != base
            g.play(rng.choice(legal))
    assert reordered > 20


@pytest.fixture
def leapyear_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Leap Year's Python search, not the compiled one."""
    monkeypatch.setattr(sly, "C_SEARCH", False)


@pytest.mark.usefixtures("leapyear_python")
def test_leapyear_python_search_matches_a_naive_search_on_small_positions() -> None:
    """The Python search (the fallback when the extension did not build) on the small
    positions the compiled search is checked on above."""
    rng = random.Random(7)
    games = [_small_leapyear(rng, rng.randrange(1, 5), rng.randrange(1, 4)) for _ in range(60)]
    seen = agrees_with_naive(games, cap=10**5)
    assert seen[True] > 5 and seen[False] > 5


leapyear_needs_c = pytest.mark.skipif(
    os.environ.get("SOLRACE_NO_C_SOLVER") == "1" and not sly.C_SEARCH,
    reason="SOLRACE_NO_C_SOLVER=1: the C search is not required",
)


@leapyear_needs_c
def test_leapyear_compiled_search_is_used_and_decides_like_a_naive_search() -> None:
    """The compiled search runs (the install builds it: fails, not skips, when it did not,
    unless SOLRACE_NO_C_SOLVER=1) and, with runs of 3 positions (many restarts) or one run,
    gives the naive search's verdict on small positions, deals in the stock included; a pile
    too tall for its masks falls back to the Python search."""
    assert sly.C_SEARCH, "engine/_solve_leapyear_c.c did not build (./dev setup)"
    rng = random.Random(13)
    games = [_small_leapyear(rng, rng.randrange(1, 5), rng.randrange(1, 4)) for _ in range(60)]
    seen = agrees_with_naive(games, cap=10**5)
    assert seen[True] > 5 and seen[False] > 5
    for g in games[:20]:
        pos = parse_position(g.to_text())
        args = sly.c_args(pos)
        assert args is not None
        one_run = sly._c.solve(*args, 10**6, 10**6, 0)
        assert one_run[0] == solve(g).verdict
    # foundations at 4; the 144 cards 5-K on one pile, Kings at the bottom: won in order
    pile = [f"{'A23456789TJQK'[r]}{'CDHS'[k % 4]}" for r in range(12, 3, -1) for k in range(16)]
    tall = _leapyear([4] * 16, [pile] + [[] for _ in range(7)], [])
    assert sly.c_args(parse_position(tall.to_text())) is None
    r = solve(tall)
    assert r.verdict == "won" and len(r.moves) == 144


@leapyear_needs_c
def test_leapyear_compiled_search_wins_a_deal_the_python_search_does_not() -> None:
    """Seed 2: the Python search (restarts of 2026-11-27) leaves it unknown at 30,000
    positions; the compiled search's short runs win it within 5,919 (27,413 before its
    last-card test), and the engine plays the win out."""
    r = solve(new_game("leapyear", 2), budget=5_919)
    assert (r.verdict, r.nodes, len(r.moves)) == ("won", 5_919, 215)
    g = new_game("leapyear", 2)
    for move in r.moves:
        g.play(move)
    assert g.is_won()
    assert solve(new_game("leapyear", 2), budget=5_918).verdict == "unknown"


@leapyear_needs_c
def test_leapyear_beams_are_sound_and_decide_when_they_drop_nothing() -> None:
    """A beam wide enough to keep every position follows every line: its verdict is the naive
    search's, "lost" included. A beam of width 1 drops positions: it may still win (the engine
    plays the win out), but its "unknown" is never turned into a "lost" of a winnable one."""
    rng = random.Random(17)
    # 150: with the last-card test a beam of width 1 drops a position in only 2 of them
    games = [_small_leapyear(rng, rng.randrange(1, 5), rng.randrange(1, 4)) for _ in range(150)]
    seen = {"won": 0, "lost": 0, "narrow unknown": 0}
    for g in games:
        expect = naive_winnable(g, cap=10**5)
        if expect is None:
            continue
        pos = parse_position(g.to_text())
        args = sly.c_args(pos)
        assert args is not None
        for width in (10**6, 1):
            verdict, path, nodes = sly._c.beam(*args, width, *sly.BEAMS[0], 10**6, 10**7)
            assert nodes > 0
            if width > 1:
                assert verdict == ("won" if expect else "lost"), g.to_text()
                seen[verdict] += 1
            else:
                assert verdict in (("won", "unknown") if expect else ("lost", "unknown"))
                seen["narrow unknown"] += verdict == "unknown"
            if verdict == "won":
                won = g.copy()
                for move in sly.texts(pos, path):
                    won.play(move)
                assert won.is_won()
    assert seen["won"] > 5 and seen["lost"] > 5 and seen["narrow unknown"] > 0, seen


@leapyear_needs_c
def test_leapyear_last_card_test_sees_what_the_fixpoint_does_not() -> None:
    """Three 5s left, each with a card of rank 5 or lower below it: the last 5 played would
    have to follow every 4 and 5, so no line wins, though each card alone could be played
    (the fixpoint of the dead test lets all of them through: the Python search, without the
    last-card test, expands 8 positions to prove it). The compiled searches prove it at the
    position itself, and the naive search agrees; with one 5 at the bottom of a pile the
    same cards are won."""
    heights = [13] * 13 + [3] * 3  # three foundations show 3: three each of 4-K left
    high = [f"{r}{s}" for r in "KQJT9876" for s in "DHS"]  # 6s on top, no help below a 5
    lost = _leapyear(heights, [["4D", "5D", "5H"], ["4H", "5S"], ["4S"], high] + [[]] * 4, [])
    won = _leapyear(heights, [["4D", "5D"], ["5H", "4H", "5S"], ["4S"], high] + [[]] * 4, [])
    assert naive_winnable(lost) is False and naive_winnable(won) is True
    r = solve(lost)
    assert (r.verdict, r.nodes) == ("lost", 1)
    args = sly.c_args(parse_position(lost.to_text()))
    assert args is not None
    assert sly._c.beam(*args, 1, *sly.BEAMS[0], 10**6, 10**7)[::2] == ("lost", 1)
    assert solve(won).verdict == "won"


@leapyear_needs_c
def test_leapyear_beams_win_a_deal_the_depth_first_search_leaves_unknown() -> None:
    """Seed 14 at 1,000,000 positions: the depth-first search alone leaves it unknown; with
    half the budget for it and the rest for the beams it is won (and played out by solve)."""
    r = solve(new_game("leapyear", 14), budget=1_000_000)
    assert r.verdict == "won" and len(r.moves) == 215
    from_ = sly.BEAM_FROM
    sly.BEAM_FROM = 10**9
    try:
        assert solve(new_game("leapyear", 14), budget=1_000_000).verdict == "unknown"
    finally:
        sly.BEAM_FROM = from_


class _Cap(Exception):
    pass


def _on_cap(signum: int, frame: object) -> None:
    raise _Cap


@leapyear_needs_c
@pytest.mark.parametrize("dfs", [10**12, 1_000], ids=["depth-first", "beams"])
def test_a_signal_handler_stops_the_leapyear_c_search(dfs: int) -> None:
    """The compiled searches run the Python signal handlers every 16,384 positions (Ctrl-C,
    a CPU cap's timer), so a handler's exception stops a search of 10^10 positions: in the
    depth-first search, or (its share cut to 1,000 positions) in a beam."""
    old_handler, old_max = signal.signal(signal.SIGPROF, _on_cap), sly.C_DFS_MAX
    sly.C_DFS_MAX = dfs
    t0 = time.process_time()
    try:
        signal.setitimer(signal.ITIMER_PROF, 0.05)
        with pytest.raises(_Cap):
            solve(new_game("leapyear", 1), 10**10)  # unknown even at 20,000,000
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old_handler)
        sly.C_DFS_MAX = old_max
    assert time.process_time() - t0 < 0.5
    assert solve(new_game("leapyear", 53), 1_533).verdict == "won"  # and the next one runs


@leapyear_needs_c
def test_leapyear_compiled_first_run_holds_the_line_left() -> None:
    """A run shorter than the line left (one position a move) cannot win: with runs from 200
    positions nothing was won from a deal's start (215 moves) below about 3,400 positions.
    The first run now holds the line: seed 53 is won within 1,533 positions (and seed 12
    within 1,756 before the last-card test changed the runs' lines)."""
    r = solve(new_game("leapyear", 53), budget=1_533)
    assert (r.verdict, r.nodes, len(r.moves)) == ("won", 1_533, 215)
    assert r.nodes < 16 * sly.C_RUN  # the sixteen runs of 200-215 could not have won it
    assert solve(new_game("leapyear", 53), budget=1_532).verdict == "unknown"


@pytest.mark.usefixtures("leapyear_python")
def test_leapyear_restarts_win_a_deal_the_first_order_does_not() -> None:
    """Seed 28: the first order alone (the solver before restarts) left it unknown at 30,000
    positions; a later run's order wins it within 3,089, and the engine plays the win out."""
    r = solve(new_game("leapyear", 28), budget=3_089)
    assert (r.verdict, r.nodes, len(r.moves)) == ("won", 3_089, 215)
    assert r.nodes > sly.RUN  # not the first run's
    g = new_game("leapyear", 28)
    for move in r.moves:
        g.play(move)
    assert g.is_won()
    assert solve(new_game("leapyear", 28), budget=3_088).verdict == "unknown"


def test_leapyear_dead_test_matches_a_naive_search() -> None:
    """Every position the dead test calls dead is lost by the naive search (and it bites)."""
    from solrace.engine.solve_leapyear import LeapState

    rng = random.Random(11)
    dead = alive = 0
    for _ in range(300):
        heights = [13] * 16
        for k in rng.sample(range(16), rng.randrange(2, 5)):
            heights[k] = 13 - rng.randrange(1, 6)
        left = [
            f"{'A23456789TJQK'[r]}{'CDHS'[k % 4]}"
            for k, h in enumerate(heights)
            for r in range(h, 13)
        ]
        rng.shuffle(left)
        tab: list[list[str]] = [[] for _ in range(8)]
        for c in left:
            tab[rng.randrange(3)].append(c)
        g = _leapyear(heights, tab, [])
        expect = naive_winnable(g, cap=10**5)
        if expect is None:
            continue
        if LeapState(parse_position(g.to_text())).dead():
            assert expect is False, g.to_text()
            dead += 1
        elif expect is False:
            alive += 1
    assert dead >= 20, (dead, alive)


# ---------------------------------------------------------------- API


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("puttputt", None),
        ("klondike", None),
        ("klondike", {"draw": 3, "passes": 3}),
        ("tabbycat", None),
        ("manx", None),
        ("leapyear", None),
    ],
)
def test_solve_never_mutates_and_tiny_budget_is_unknown(game: str, options: dict | None) -> None:
    g = new_game(game, 1, options)
    for m in g.legal_moves()[:1]:
        g.play(m)
    before = (g.to_text(), list(g.history), g.view())
    r = solve(g, budget=1)
    assert r.verdict == "unknown" and r.moves == [] and r.nodes <= 1
    solve(g, budget=2000)
    assert (g.to_text(), list(g.history), g.view()) == before


def test_solve_won_position_and_helpers() -> None:
    g = new_game("puttputt", 1)
    r = solve(g)
    assert solve_deal("puttputt", 1) == r
    assert solve_text(g.to_text()) == r
    for m in r.moves:
        g.play(m)
    assert solve(g) == SolveResult("won", [], 0)
    with pytest.raises(ValueError):
        solve(g, budget=-1)


# ---------------------------------------------------------------- the restarting search
# Runs are cut short and the next run tries moves in another order, keeping only the
# positions whose strongly connected component completed ("proved lost"). A position that
# is merely finished by a depth-first search is *not* lost when the graph has cycles (it may
# lead back to an ancestor that still has a way out), so these tests use graphs with many
# cycles and check every kept "proved lost" position against plain reachability.


class GraphState:
    """A walk on a fixed directed graph, as a search state (move = next node)."""

    def __init__(self, succ: list[list[int]], won: set[int], rng: random.Random | None) -> None:
        self.succ = succ
        self.goal = won
        self.at = [0]
        self.rng = rng

    def key(self) -> Hashable:
        return self.at[-1]

    def won(self) -> bool:
        return self.at[-1] in self.goal

    def moves(self) -> list[int]:
        out = list(self.succ[self.at[-1]])
        if self.rng is not None:
            self.rng.shuffle(out)
        return out

    def apply(self, m: int) -> None:
        self.at.append(m)

    def undo(self, m: int) -> None:
        assert self.at.pop() == m


def _reach(succ: list[list[int]], start: int) -> set[int]:
    seen = {start}
    todo = [start]
    while todo:
        for w in succ[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def _graph(rng: random.Random) -> tuple[list[list[int]], set[int]]:
    n = rng.randrange(5, 60)
    # mostly back edges and short cycles, a few goals (sometimes none reachable)
    succ = [[rng.randrange(n) for _ in range(rng.randrange(0, 4))] for _ in range(n)]
    goals = {rng.randrange(1, n) for _ in range(rng.randrange(0, 3))}
    return succ, goals


def test_runs_keep_only_positions_that_are_lost_and_end_with_the_true_verdict() -> None:
    rng = random.Random(7)
    verdicts = {WON: 0, LOST: 0}
    cut = 0
    for _ in range(3000):
        succ, goals = _graph(rng)
        truth = bool(_reach(succ, 0) & goals)
        seen: dict[Hashable, int] = {}
        state = GraphState(succ, goals, None)
        size = rng.randrange(1, 6)
        for run in range(200):
            state.rng = random.Random(run) if run else None
            verdict, path, _ = search_run(state, size, seen)
            # every position kept as proved lost is lost; after a cut run nothing else is kept
            for k, v in seen.items():
                assert v == PROVED_LOST or verdict == WON
                if v == PROVED_LOST:
                    assert not (_reach(succ, k) & goals), (succ, goals, k)
            if verdict != UNKNOWN:
                break
            cut += 1
            assert state.at == [0]  # a cut run leaves the state where it found it
            size *= 2
        assert verdict == (WON if truth else LOST)
        verdicts[verdict] += 1
        if verdict == WON:
            assert state.at == [0, *path] and state.at[-1] in goals
    assert verdicts[WON] > 300 and verdicts[LOST] > 300 and cut > 1000


def test_a_position_finished_by_the_search_is_not_yet_lost() -> None:
    # 0 -> 1 -> 0, 0 -> 3 -> 3 and 0 -> 2 (won): the search finishes 1 while 0 is open and
    # is cut at 3; 1 must not be kept as lost (it leads back to 0, which reaches 2)
    succ = [[1, 3, 2], [0], [], [3]]
    seen: dict[Hashable, int] = {}
    state = GraphState(succ, {2}, None)
    assert search_run(state, 2, seen)[0] == UNKNOWN
    assert seen == {}
    assert search_run(state, 10, seen)[:2] == (WON, [2])
    # and a complete run keeps every position of a finished component, the start included
    seen = {}
    assert search_run(GraphState([[1], [0, 2], [2]], set(), None), 10, seen)[0] == LOST
    assert seen == {0: PROVED_LOST, 1: PROVED_LOST, 2: PROVED_LOST}


def test_klondike_restarts_win_deals_and_keep_loss_proofs() -> None:
    # seed 13 (default rules): 21,417 positions in the fixed order; the second run finds it;
    # seed 1 is lost: the proof grows only by the runs' unfinished components
    g = new_game("klondike", 13)
    r = solve(g, budget=30_000)
    assert r.verdict == "won" and r.nodes < 5_000 and replays_to_win(g, r)
    lost = solve(new_game("klondike", 1), budget=30_000)
    assert lost.verdict == "lost" and lost.nodes < 9_000
    # the default rules restart from 500 positions growing 1.3x (seventh pass): seed 6 was won
    # at 28,970 positions with runs doubling from 2,000, and is won within 10,000 now
    g = new_game("klondike", 6)
    r = solve(g, budget=10_000)
    assert r.verdict == "won" and r.nodes < 7_000 and replays_to_win(g, r)


def _loose_window_klondike(rng: random.Random, options: str) -> Game:
    """Foundations within three ranks of each other (where the looser forced-play test of
    ``LOOSE_SAFE_DRAW`` often says yes and ``safe``'s strict one no), the cards left built
    into runs on the tableau, some over a face-down card or two, or in the talon."""
    base = rng.randrange(9, 12)
    found = {suit: base + rng.randrange(0, 3) for suit in "CDHS"}
    tab: list[list[str]] = [[] for _ in range(7)]
    talon: list[str] = []
    for c in _off_foundations(rng, found):
        parents = _parents(tab, c)
        empty = [p for p in tab if not p]
        if parents and rng.random() < 0.7:
            rng.choice(parents).append(c)
        elif empty and rng.random() < 0.5:
            empty[0].append(c)
        else:
            talon.append(c)
    tab_text = []
    for p in tab:
        under: list[str] = []
        if p and talon and rng.random() < 0.6:  # a talon card or two face down under it
            under = [talon.pop() for _ in range(rng.randrange(1, min(2, len(talon)) + 1))]
        tab_text.append(" ".join([f"[{c}]" for c in under] + p))
    cut = rng.randrange(len(talon) + 1)
    return _klondike(options, found, tab_text, " ".join(talon[cut:]), " ".join(talon[:cut]))


def test_klondike_draw_three_loose_forced_plays_match_a_naive_search() -> None:
    # fourteenth pass: with draw three a tableau card goes home as the only move under the
    # looser test (other colour at r-2, the other suit of its colour at r-3). A pruning can
    # only lose wins, so the check is on won positions where it fires: against every line
    # of play, on positions with the foundations a few ranks apart
    rng = random.Random(24)
    won = fired = 0
    for i in range(40):
        g = _loose_window_klondike(rng, "draw=3 moves=build" if i % 2 else "draw=3")
        expect = naive_winnable(g, cap=4000)
        if expect is None:
            continue
        with switched(LOOSE_SAFE_DRAW=False):
            strict = solve(g)
        loose = solve(g)
        assert loose.verdict == strict.verdict == ("won" if expect else "lost"), g.to_text()
        assert solve_short_runs(g).verdict == loose.verdict, g.to_text()
        won += expect
        fired += expect and loose.nodes != strict.nodes
    assert won >= 20 and fired >= 10, (won, fired)


def test_klondike_loose_forced_plays_keep_every_verdict_and_leave_draw_one_alone() -> None:
    # positions a few random moves into standard deals: the same verdicts with the looser
    # test and without wherever both decide; seed 156's loss proof shrinks (431,034 to
    # 198,572 positions); the default rules (draw one) search the same positions either way
    seen = _same_verdicts_without("LOOSE_SAFE_DRAW", random.Random(14), range(150, 175))
    assert seen.get(LOST, 0) >= 2 and seen.get(WON, 0) >= 5, seen
    std = {"draw": 3, "moves": "build"}
    with switched(LOOSE_SAFE_DRAW=False):
        off = solve_deal("klondike", 156, std, budget=1_000_000)
        one_off = solve(new_game("klondike", 3), budget=20_000)
    on = solve_deal("klondike", 156, std, budget=1_000_000)
    one_on = solve(new_game("klondike", 3), budget=20_000)
    assert on.verdict == off.verdict == LOST and on.nodes < off.nodes
    assert (one_on.verdict, one_on.nodes) == (one_off.verdict, one_off.nodes)
