"""Deals: SplitMix64 vectors, bounded draws, text seeds and golden deals pinned forever.

The golden position texts below were generated once and checked by eye against
RULES.md's layouts (the same seed gives the same shuffled list in every game:
Tabby Cat's t1..t4 are Putt Putt's and Klondike's first-row cards); they must
never change silently.
"""

from __future__ import annotations

import hashlib

import pytest
from solrace.engine import GAMES, SplitMix64, from_text, new_game, seed_from_text, shuffled_deck

MASK = (1 << 64) - 1


def reference_splitmix(seed: int):
    """An independent transcription of RULES.md section 2."""
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def reference_order(seed: int, decks: int = 1) -> list[str]:
    gen = reference_splitmix(seed)

    def below(n: int) -> int:
        limit = 2**64 - (2**64 % n)
        while True:
            r = next(gen)
            if r < limit:
                return r % n

    cards = [r + s for _ in range(decks) for s in "CDHS" for r in "A23456789TJQK"]
    for i in range(len(cards) - 1, 0, -1):
        j = below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def test_splitmix64_seed_zero_vectors():
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


def test_splitmix64_wraps_at_max_seed():
    rng = SplitMix64(MASK)
    ref = reference_splitmix(MASK)
    assert [rng.next() for _ in range(5)] == [next(ref) for _ in range(5)]


def test_below_rejects_draws_at_or_above_the_limit():
    # n = 3 * 2**62 gives limit = 2**64 - 2**62: seed 0's first draw 0xE220... is above it, so it is
    # rejected and the second draw (below the limit) is used.
    n = 3 * 2**62
    limit = 2**64 - (2**64 % n)
    assert limit <= 0xE220A8397B1DCDAF and limit > 0x6E789E6AA1B965F4
    assert SplitMix64(0).below(n) == 0x6E789E6AA1B965F4 % n
    # without rejection the same draw is used directly
    assert SplitMix64(0).below(10) == 0xE220A8397B1DCDAF % 10


def test_below_bad_bound():
    with pytest.raises(ValueError):
        SplitMix64(0).below(0)


@pytest.mark.parametrize("text", ["2026-11-22", "", "room word", "é"])
def test_text_seed_is_first_8_bytes_of_sha256_big_endian(text):
    want = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    assert seed_from_text(text) == want
    assert new_game("tabbycat", text).seed == want
    assert new_game("tabbycat", text).to_text() == new_game("tabbycat", want).to_text()


def test_seed_range_checked():
    with pytest.raises(ValueError):
        new_game("tabbycat", -1)
    with pytest.raises(ValueError):
        new_game("tabbycat", 2**64)
    assert new_game("tabbycat", 2**64 - 1).seed == 2**64 - 1


@pytest.mark.parametrize("seed", [0, 1, 42, 2**64 - 1])
@pytest.mark.parametrize("decks", [1, 4])
def test_shuffle_matches_independent_reference(seed, decks):
    from solrace.engine.cards import TEXT

    assert [TEXT[c] for c in shuffled_deck(seed, decks)] == reference_order(seed, decks)


def test_options_never_change_the_order():
    base = new_game("klondike", 7).to_text().splitlines()[1:]
    for opts in (
        {"draw": 3},
        {"moves": "build"},
        {"passes": 2},
        {"draw": 3, "moves": "build", "passes": 3},
    ):
        assert new_game("klondike", 7, opts).to_text().splitlines()[1:] == base


def test_manx_deals_like_tabbycat():
    for seed in (0, 42):
        assert (
            new_game("manx", seed).to_text().splitlines()[1:]
            == new_game("tabbycat", seed).to_text().splitlines()[1:]
        )


def test_layouts_follow_the_reference_order():
    seed = 1234
    order = reference_order(seed)
    t = new_game("tabbycat", seed).view()["piles"]
    assert [t[f"t{i}"] for i in range(1, 5)] == [[c] for c in order[:4]]
    pp = from_text(new_game("puttputt", seed).to_text())
    piles = pp.view()["piles"]
    for p in range(7):
        assert piles[f"t{p + 1}"] == [order[row * 7 + p] for row in range(5)]
    assert piles["f1"] == [order[35]]
    k = new_game("klondike", seed).to_text().splitlines()
    assert k[1] == f"t1 {order[0]}"
    assert k[2] == f"t2 [{order[1]}] {order[7]}"
    assert k[12] == "s " + " ".join(order[28:])
    ly = new_game("leapyear", seed).to_text().splitlines()
    order4 = reference_order(seed, 4)
    aces = [c for c in order4 if c[0] == "A"]
    rest = [c for c in order4 if c[0] != "A"]
    assert ly[1:9] == [f"t{i + 1} {rest[i]}" for i in range(8)]
    assert ly[9:25] == [f"f{k + 1} {aces[k]}" for k in range(16)]
    assert ly[25] == "s " + " ".join(rest[8:])


GOLDEN = {
    ("tabbycat", 0): (
        "game tabbycat\n"
        "t1 8S\n"
        "t2 JH\n"
        "t3 9C\n"
        "t4 2S\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "r\n"
        "s 2D QD 6S TC 3D AC JC 7C 9H 8C QS KH 5H 2C 3H 5C AH 6C 4S TD 5D 8H 8D AD QH TS QC JD 3S 4D 2H 9D 3C KD AS 7S 9S 7D JS 6H KS 4C 7H 5S 6D 4H KC TH\n"
    ),
    ("tabbycat", 42): (
        "game tabbycat\n"
        "t1 7C\n"
        "t2 3H\n"
        "t3 KC\n"
        "t4 AS\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "r\n"
        "s 2S AC AH KD TD 5C 8S JH 2H 4S 6H 5D 2D 5S 6D AD 7D 2C 8H 8C 4D 7H KS TS 4H 3D TH JS 4C 6S 7S 3S 8D QD 9S KH 5H 6C QS 9D JD QC 3C 9H QH 9C JC TC\n"
    ),
    ("tabbycat", 18446744073709551615): (
        "game tabbycat\n"
        "t1 JC\n"
        "t2 KS\n"
        "t3 7S\n"
        "t4 4C\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "r\n"
        "s AD JH 5D 2H AH 7D 6D 6S 4D AS 4S 7H 3D 2D 9H QH 8D 3S 5S 9S AC 8S QD TD 7C QS 9C 4H JD KH KC 6H 9D 8H 8C TH 6C KD 2S 3H QC JS 3C 5H TS 2C TC 5C\n"
    ),
    ("tabbycat", "2026-11-22"): (
        "game tabbycat\n"
        "t1 6S\n"
        "t2 9S\n"
        "t3 8C\n"
        "t4 9H\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "r\n"
        "s QC QH TS 7H 7D 2D 5D AC 3S 6D QD 8D TD JH 3D 4D 3H AH 5H 4S JD 2H 4C 2C 3C TH JC 5C KD AD KH 5S 8H 4H 6C KS QS 6H 9C 9D AS 7C 8S KC JS TC 2S 7S\n"
    ),
    ("puttputt", 0): (
        "game puttputt\n"
        "t1 8S TC QS 6C QH\n"
        "t2 JH 3D KH 4S TS\n"
        "t3 9C AC 5H TD QC\n"
        "t4 2S JC 2C 5D JD\n"
        "t5 2D 7C 3H 8H 3S\n"
        "t6 QD 9H 5C 8D 4D\n"
        "t7 6S 8C AH AD 2H\n"
        "f1 9D\n"
        "s 3C KD AS 7S 9S 7D JS 6H KS 4C 7H 5S 6D 4H KC TH\n"
    ),
    ("puttputt", 42): (
        "game puttputt\n"
        "t1 7C KD 6H 2C 4H\n"
        "t2 3H TD 5D 8H 3D\n"
        "t3 KC 5C 2D 8C TH\n"
        "t4 AS 8S 5S 4D JS\n"
        "t5 2S JH 6D 7H 4C\n"
        "t6 AC 2H AD KS 6S\n"
        "t7 AH 4S 7D TS 7S\n"
        "f1 3S\n"
        "s 8D QD 9S KH 5H 6C QS 9D JD QC 3C 9H QH 9C JC TC\n"
    ),
    ("puttputt", 18446744073709551615): (
        "game puttputt\n"
        "t1 JC 2H 4S 3S 7C\n"
        "t2 KS AH 7H 5S QS\n"
        "t3 7S 7D 3D 9S 9C\n"
        "t4 4C 6D 2D AC 4H\n"
        "t5 AD 6S 9H 8S JD\n"
        "t6 JH 4D QH QD KH\n"
        "t7 5D AS 8D TD KC\n"
        "f1 6H\n"
        "s 9D 8H 8C TH 6C KD 2S 3H QC JS 3C 5H TS 2C TC 5C\n"
    ),
    ("puttputt", "2026-11-22"): (
        "game puttputt\n"
        "t1 6S 7H QD AH 3C\n"
        "t2 9S 7D 8D 5H TH\n"
        "t3 8C 2D TD 4S JC\n"
        "t4 9H 5D JH JD 5C\n"
        "t5 QC AC 3D 2H KD\n"
        "t6 QH 3S 4D 4C AD\n"
        "t7 TS 6D 3H 2C KH\n"
        "f1 5S\n"
        "s 8H 4H 6C KS QS 6H 9C 9D AS 7C 8S KC JS TC 2S 7S\n"
    ),
    ("klondike", 0): (
        "game klondike\n"
        "t1 8S\n"
        "t2 [JH] TC\n"
        "t3 [9C] [3D] 8C\n"
        "t4 [2S] [AC] [QS] 3H\n"
        "t5 [2D] [JC] [KH] [5C] 4S\n"
        "t6 [QD] [7C] [5H] [AH] [TD] 8H\n"
        "t7 [6S] [9H] [2C] [6C] [5D] [8D] AD\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "s QH TS QC JD 3S 4D 2H 9D 3C KD AS 7S 9S 7D JS 6H KS 4C 7H 5S 6D 4H KC TH\n"
        "w\n"
    ),
    ("klondike", 42): (
        "game klondike\n"
        "t1 7C\n"
        "t2 [3H] KD\n"
        "t3 [KC] [TD] 4S\n"
        "t4 [AS] [5C] [6H] 6D\n"
        "t5 [2S] [8S] [5D] [AD] 8H\n"
        "t6 [AC] [JH] [2D] [7D] [8C] 7H\n"
        "t7 [AH] [2H] [5S] [2C] [4D] [KS] TS\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "s 4H 3D TH JS 4C 6S 7S 3S 8D QD 9S KH 5H 6C QS 9D JD QC 3C 9H QH 9C JC TC\n"
        "w\n"
    ),
    ("klondike", 18446744073709551615): (
        "game klondike\n"
        "t1 JC\n"
        "t2 [KS] 2H\n"
        "t3 [7S] [AH] AS\n"
        "t4 [4C] [7D] [4S] 9H\n"
        "t5 [AD] [6D] [7H] [QH] 5S\n"
        "t6 [JH] [6S] [3D] [8D] [9S] 8S\n"
        "t7 [5D] [4D] [2D] [3S] [AC] [QD] TD\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "s 7C QS 9C 4H JD KH KC 6H 9D 8H 8C TH 6C KD 2S 3H QC JS 3C 5H TS 2C TC 5C\n"
        "w\n"
    ),
    ("klondike", "2026-11-22"): (
        "game klondike\n"
        "t1 6S\n"
        "t2 [9S] 7H\n"
        "t3 [8C] [7D] 6D\n"
        "t4 [9H] [2D] [QD] 3D\n"
        "t5 [QC] [5D] [8D] [4D] 5H\n"
        "t6 [QH] [AC] [TD] [3H] [4S] 2H\n"
        "t7 [TS] [3S] [JH] [AH] [JD] [4C] 2C\n"
        "f1\n"
        "f2\n"
        "f3\n"
        "f4\n"
        "s 3C TH JC 5C KD AD KH 5S 8H 4H 6C KS QS 6H 9C 9D AS 7C 8S KC JS TC 2S 7S\n"
        "w\n"
    ),
    ("leapyear", 0): (
        "game leapyear\n"
        "t1 3H\n"
        "t2 9D\n"
        "t3 QD\n"
        "t4 5D\n"
        "t5 KD\n"
        "t6 6S\n"
        "t7 5D\n"
        "t8 9C\n"
        "f1 AD\n"
        "f2 AH\n"
        "f3 AS\n"
        "f4 AH\n"
        "f5 AH\n"
        "f6 AD\n"
        "f7 AC\n"
        "f8 AC\n"
        "f9 AS\n"
        "f10 AC\n"
        "f11 AD\n"
        "f12 AD\n"
        "f13 AC\n"
        "f14 AS\n"
        "f15 AH\n"
        "f16 AS\n"
        "s 9C QC 6S 5S 7D TD TD 7H TS TS 6S 3D 8H 7D 8D 2H 4S 7H TC 7S JC JD KS 2D 8D 6C 9C 5H 7C JS 4C TS 9S TC JD 3C TD 7C KS JD 7S QS 2D KH KH QC 7S KS 4C 6H 4H 9D TH 4S TC KS QH JC 3H KC JS 3H 6C 8D JS 4D QC 5H 5D 6H 8D TH 5H 3S 2S 9H 2H 5H KD TH QD 8H 4C 6C QD QC JH 3D 3C 8S 3S 6D 6H 4D 9H QS 5C 8C 8S JH QS 6C 8H 7S JH KD 8S KH 4H TS KD 5S 4S JC 3S 7D 9H 2C 2C 5C 7C 5C 4D 7H 6S JC 4D QH 3C KC 3C 7C 4H 8H 6D QS 9S 9C 5S JD 5S TC 3H 8S 2C 2D 8C QH 2C 8C KH JS 2D 2S 2H 3S 7H TD KC 4S 2H 5D 6D 6D 5C 7D 9H 2S KC JH 9D 3D 4H 3D 2S QH 4C 9S 9D 8C 6H 9S QD TH\n"
    ),
    ("leapyear", 42): (
        "game leapyear\n"
        "t1 TD\n"
        "t2 3C\n"
        "t3 8C\n"
        "t4 9C\n"
        "t5 TH\n"
        "t6 5C\n"
        "t7 8D\n"
        "t8 8H\n"
        "f1 AS\n"
        "f2 AS\n"
        "f3 AD\n"
        "f4 AD\n"
        "f5 AD\n"
        "f6 AH\n"
        "f7 AS\n"
        "f8 AC\n"
        "f9 AH\n"
        "f10 AD\n"
        "f11 AC\n"
        "f12 AC\n"
        "f13 AC\n"
        "f14 AH\n"
        "f15 AH\n"
        "f16 AS\n"
        "s 7H 2S JS KC 4C 7C 8C 2S 5D KS 7H QD 8S 4C QC TD TS 2D 4S TC 8S 3H 8D 6C 5S 5H 5H 4S JD JH TD TS 5S 4D TS JH 9D 4D 6C 8H JC 2S 7S 6C 6H QH 3S KH 7C TH 7S 4H 5D 8D 8H KH 2H JH 3S 6S TH 3D TC QC 8S KC 5C TC QD 5D 2D 3S 7C 7D 2D 2C KS JS KC 2H QH 4C 8H JC 9S 7D 7H 5D 6S 9S 3H 3C 6D 6D 4D 7C 9S KS 6H 9H 3D 4H 8C 2C QS 6D 2D KH KH 2C 9C KD 9D 7H 8D JD QD TS 3D QS QH 4S JD 4S 7D 6S JD JS 9D 6D KS QS KD JC 4C QH 4D JS 7D 3H 7S 5S 9D 9H KD 9H 6H 3H 3C TD JH 5C KD 3D 2H 5S 7S 4H 4H KC 5C QC 6H 9C 2H 9S QD 2C QC 3C 9H 5H 2S TH 5H 6C JC 3S QS 8S 9C 6S 8C TC\n"
    ),
    ("leapyear", 18446744073709551615): (
        "game leapyear\n"
        "t1 4C\n"
        "t2 QC\n"
        "t3 8C\n"
        "t4 JS\n"
        "t5 KH\n"
        "t6 7S\n"
        "t7 9H\n"
        "t8 TC\n"
        "f1 AC\n"
        "f2 AH\n"
        "f3 AS\n"
        "f4 AD\n"
        "f5 AD\n"
        "f6 AD\n"
        "f7 AH\n"
        "f8 AC\n"
        "f9 AD\n"
        "f10 AS\n"
        "f11 AH\n"
        "f12 AS\n"
        "f13 AC\n"
        "f14 AH\n"
        "f15 AS\n"
        "f16 AC\n"
        "s 4D 8H 3S 9C 7H 9S 2D 6D TS KD QC 3C 9H 9D 7C 7D 6H 2D JC KS 3S KD 2S 5D 2H 2D JH TD 2D 5S 4C 5H 6C 8S QH QD TH 6S 7D TC 9C 6H KS 9D 9D 3D 7C KC 8H 4D 5S 6S 3D JD 3C 7S 2C 4C JD 4C TD 8D 6D 9S KC 5C 4S KH 2H 6C KC TC 5D KH 3C 8C 6D 6C 8C 3S 4H QH QD KD 9C TD 8D 5C 8H TD TC 2H 7D 8S 3C 2S 7C 9C 7C 2C 4S 2C 5C 7H 5S KC 6H JD 7H 2C 3D 3D 4H 8H JH 4H JC TS JS 5S JS QH 3H QS 2S 9D 8S QD KD 4D 4S TH 5H 7S 9H QC JH QC QS TS KH 3H JC 5D QS 2H 3S JD 4D 9S 6S JS 6S 8D KS 7H 8D 7S 3H 6D 9H JC 7D 3H 6C 6H 4H KS QS 5D 8S TH 2S 9S TS JH TH QH QD 5H 5H 8C 4S 5C\n"
    ),
    ("leapyear", "2026-11-22"): (
        "game leapyear\n"
        "t1 3C\n"
        "t2 2C\n"
        "t3 QD\n"
        "t4 JS\n"
        "t5 5S\n"
        "t6 4C\n"
        "t7 3D\n"
        "t8 4S\n"
        "f1 AH\n"
        "f2 AH\n"
        "f3 AC\n"
        "f4 AH\n"
        "f5 AS\n"
        "f6 AC\n"
        "f7 AS\n"
        "f8 AH\n"
        "f9 AD\n"
        "f10 AS\n"
        "f11 AC\n"
        "f12 AD\n"
        "f13 AC\n"
        "f14 AS\n"
        "f15 AD\n"
        "f16 AD\n"
        "s 8H KS 9H QD 5D 7C QD 4D 4C 2S 5D 8D 7C JH JD 6C 3C 6D 4D 3H 6H 9S JS 6S 2H 8D 2D 8S 6D 9H 5S 8H 7C 3C 2C 5H 5C 9S JC 5C 5C 7S KH QC TH 2H 8D QC JH TC 4S QS 8C 3H 6C KC 4H KH TD 8S 4H 8C 2S 3S 2D 9D 7S 7D TS 6H 5S 7D 8C 5H 6C 7H 9D JD TH KS 4S QH 8S 2S JH 2H KH JC TH TS TD 6H 6S 9H 2D JS TC JC 8D 4D 3D 7H 9D 9S QD 3D QS 9C 3H TS 6H TH 4C KD 6D TS 5H 5S KC 6D 8S JD QH TD 7S JD QH 6C 5D 7H KS 3S 9C 4D QH QC 7D 9H KH KD 7C 4C 3H KD 4S 5H 7D 5D 9S 3C KS QC JC 7H KC 2C 2D JH 4H 2H 3D QS QS TC 3S 9C 5C 4H 6S 3S 8H KD 6S TD 2C 8C 9D 9C 2S TC KC 8H JS 7S\n"
    ),
}


@pytest.mark.parametrize("key", sorted(GOLDEN, key=str))
def test_golden_deal(key):
    game, seed = key
    want = "".join(GOLDEN[key])
    assert new_game(game, seed).to_text() == want
    assert from_text(want).to_text() == want


def test_golden_covers_every_family():
    assert {g for g, _ in GOLDEN} | {"manx"} == set(GAMES)
