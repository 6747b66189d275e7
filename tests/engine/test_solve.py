"""The solvers (issue 11): exact verdicts, solutions that replay, no mutation.

"Lost" is checked against a second, naive search written here from the
engine's public API only (legal_moves / apply / undo, position text as the
key, no pruning, no symmetry), on small random positions where it finishes.
"""

from __future__ import annotations

import random

import pytest
from solrace.engine import Game, from_text, new_game, solve
from solrace.engine.cards import TEXT
from solrace.engine.solve import SolveResult, solve_deal, solve_text
from solrace.engine.solve_common import parse_position
from solrace.engine.solve_klondike import FT, KlondikeState


def naive_winnable(game: Game, allow=lambda m: True, cap: int = 10**9) -> bool | None:
    """Plain exhaustive search of every legal move (filtered by ``allow``), keyed by position text.

    None when more than ``cap`` positions would be needed (the caller skips that position).
    """
    g = game.copy()
    if g.is_won():
        return True
    seen = {g.to_text()}
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
        key = g.to_text()
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
    return seen


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


def _small_klondike(rng: random.Random, options: str) -> Game:
    """A few cards off the foundations, piled on one or two tableau piles and in the talon."""
    found = dict(FULL)
    for _ in range(rng.randrange(3, 7)):
        suit = rng.choice("CDHS")
        found[suit] = max(0, found[suit] - 1)
    left = [f"{'A23456789TJQK'[r]}{s}" for s in "CDHS" for r in range(found[s], 13)]
    rng.shuffle(left)
    tab: list[list[str]] = [[] for _ in range(7)]
    talon: list[str] = []
    piles = rng.randrange(1, 3)
    for c in left:
        (talon if rng.random() < 0.4 else tab[rng.randrange(piles)]).append(c)
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
    for seed in (3, 15):
        g = new_game("klondike", seed)
        r = solve(g, budget=200_000)
        assert r.verdict == "won" and replays_to_win(g, r)
        g.play(r.moves[0])
        assert solve(g, budget=200_000).verdict == "won"


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
