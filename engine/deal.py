"""Deals: one seed, one deal, everywhere (RULES.md section 2).

SplitMix64 is tiny and has a published reference, so a client in any language
can reproduce a deal from ``(game, seed)`` alone:

    state += 0x9E3779B97F4A7C15
    z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31)      (all mod 2**64)

``below(n)`` rejects draws at or above ``2**64 - 2**64 % n`` so every residue is
equally likely, and the shuffle is Fisher-Yates from the last index down.
"""

from __future__ import annotations

import hashlib
import secrets

from .cards import deck
from .errors import BadSeed, EngineError

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


class SplitMix64:
    """The deal generator; ``state`` starts at the seed."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + GOLDEN) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in ``0..n-1`` by rejection, never by a biased modulo."""
        if n <= 0:
            raise EngineError("below(n) needs n >= 1")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            r = self.next()
            if r < limit:
                return r % n


def shuffle(cards: list[int], rng: SplitMix64) -> None:
    """Fisher-Yates in place: for i from len-1 down to 1, swap i with below(i+1)."""
    for i in range(len(cards) - 1, 0, -1):
        j = rng.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]


def seed_from_text(text: str) -> int:
    """A text seed (a daily "2026-11-22") as the first 8 bytes, big-endian, of SHA-256(UTF-8)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def normalize_seed(seed: int | str | None) -> int:
    """An int seed as is (checked to be u64), a str through seed_from_text, None: a fresh secret seed."""
    if seed is None:
        return secrets.randbits(64)
    if isinstance(seed, bool):
        raise BadSeed("a seed is an unsigned 64-bit int or a text, not a bool")
    if isinstance(seed, int):
        if not 0 <= seed <= MASK64:
            raise BadSeed(f"seed {seed} is not an unsigned 64-bit integer")
        return seed
    if isinstance(seed, str):
        return seed_from_text(seed)
    raise BadSeed(f"a seed is an int or a str, not {type(seed).__name__}")


def shuffled_deck(seed: int, decks: int = 1) -> list[int]:
    """The shuffled card list a game deals from index 0 onward."""
    cards = deck(decks)
    shuffle(cards, SplitMix64(seed))
    return cards
