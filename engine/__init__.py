"""solrace.engine: the rules of every solrace game, pure Python, no I/O.

The contract is /work/shared/RULES.md; this package implements every rule of it
for ``tabbycat``, ``manx``, ``puttputt``, ``klondike`` (options ``draw=1|3``,
``moves=top|build``, ``passes=0|N``) and ``leapyear``.

API
---
::

    from solrace.engine import GAMES, new_game, from_text, replay, seed_from_text, Move, Game, IllegalMove, Effect
    GAMES                                   # ("tabbycat", "manx", "puttputt", "klondike", "leapyear")
    g = new_game("klondike", seed=42, options={"draw": 3})
        # seed: u64 int, or str (text seed: first 8 bytes big-endian of SHA-256), or None (fresh secret seed)
        # unknown game, unknown option or bad value -> ValueError ("3" is accepted for an int option)
    g.game; g.options (full dict incl. defaults); g.seed (int; None when built by from_text)
    g.legal_moves() -> list[Move]           # every legal move once, order below
    eff = g.play("t1-t3:4")                 # or a Move; IllegalMove (a ValueError) with .reason; nothing changes
    eff.move; eff.revealed; eff.home_delta  # revealed: card texts that became visible by this move
    g.apply(move)                           # unchecked play for bots/solvers (move must be legal)
    g.undo() -> Move                        # exact take-back; IndexError when no move was made
    g.history -> list[Move]
    g.is_won(); g.is_dead(); g.progress(); g.home(); g.deals_left; g.passes_left; g.is_legal(m)
    g.to_text(); from_text(text) -> Game    # BadPosition (a ValueError) names what is wrong
    g.view() -> dict                        # plain data only, never a hidden card
    g.copy() -> Game                        # independent copy, history and undo included
    replay(game, seed, options, moves) -> Game   # IllegalMove with .index of the bad move
    seed_from_text("2026-11-22") -> int
    Move("t1", "t3", 4); Move("deal"); Move.parse("t1-t3:4")   # interned: equal moves are one object

Moves are canonical text only: ``src-dst`` with ``:N`` exactly when N >= 2,
``deal`` or ``recycle``, lower case, no spaces. ``Move.parse`` refuses anything
else ("'T1-t3' is not canonical move text"); a canonical move naming a pile the
game lacks (``t9`` in Tabby Cat) is refused by ``play`` ("there is no pile t9 in
tabbycat").

View format
-----------
::

    {"game": "klondike", "options": {"draw": 1, "moves": "top", "passes": 0},
     "piles": {"t1": ["KS"], "t2": [{"hidden": 1}, "7H"], ..., "f1": [], ...,
               "s": [{"hidden": 24}], "w": [{"hidden": 3}, "QD"]},
     "stock": 24, "deals_left": null | int, "passes_left": null | int,
     "moves": 17, "home": 8, "progress": 0.15, "won": false, "dead": false}

``piles`` is in position-text order (t1..tN, f1..fN, r for tabbycat/manx, s,
w for klondike); each pile is a list bottom->top of card texts, with
``{"hidden": n}`` for n hidden cards in a row (face-down tableau cards, the
stock, waste cards under the visible fan). An empty stock is ``[]``.

Deals (RULES.md 2)
------------------
SplitMix64 from the seed; ``below(n)`` by rejection; Fisher-Yates from the last
index down over the unshuffled order (each deck, suits C D H S, A..K); the
shuffled list is dealt from index 0 as each game's layout says. See deal.py.

Decisions (where RULES.md is silent)
------------------------------------
* **Move order** of ``legal_moves()``: pile-to-pile moves sorted by source pile,
  then destination pile, in position-text order, then by count ascending; then
  ``deal``; then ``recycle``. Equivalent moves (an Ace to each empty foundation,
  the same card to each of several foundations in Leap Year) are all listed.
* **A won game has no legal move**: once won, ``legal_moves()`` is empty and
  ``play`` refuses ("the game is won"), even with cards left in Putt Putt's stock.
  ``is_dead()`` is False for a won game.
* **Undo** restores the exact previous state: piles, Klondike face-down counts
  (a flip is undone with its move), the waste fan size, the recycle count,
  Tabby Cat's cached build lengths. ``undo()`` returns the move taken back.
  The undo stack survives ``copy()`` but not ``to_text``/``from_text``.
* **Klondike draw three, the visible waste**: after a deal the top min(3, len)
  waste cards are shown (Aisleriot/PySolFC fan); each play from the waste shows
  one fewer, down to 1 (the waste's top card is always visible). Draw one shows
  only the top card. When the fan is not min(3, len), the count is hidden state
  and goes on the game line as ``shown=K`` (draw three only).
* **Effect.revealed**: cards that were not visible before the move and are now:
  a Klondike card turned face up, stock cards dealt (to waste, tableau or
  foundation), and a waste card that becomes the visible top when the last
  visible one is played (or that the draw-three fan uncovers after a deal).
* **Klondike pass limit**: ``passes=N`` is N passes through the stock, so N-1
  recycles; ``passes=1`` has no recycle. ``recycled=K`` on the game line (only
  when passes > 0 and K > 0) counts recycles made. ``g.passes_left`` / view
  ``passes_left`` = recycles still allowed (None when unlimited).
* **Klondike is_dead()** (RULES.md 5.3): dead when no move other than
  deal/recycle exists and simulating the deterministic deal/recycle cycle
  (groups of ``draw``, only the last card of each group becoming the top;
  at most one full pass after a recycle, as later passes repeat it; none if no
  recycle is left) never makes the waste top playable on a tableau or
  foundation pile. Other games: dead = not won and no legal move.
* **Klondike moves=build** moves any part of the face-up run; an empty pile
  takes the run whose lowest card is a King (a King already at the bottom of
  its pile may move too: legal, if pointless). With ``moves=top`` the count is
  always 1. ``fK-tY`` moves one card; foundation-to-foundation is refused.
* **deals_left**: Tabby Cat/Manx stock/4, Leap Year stock/8, Putt Putt the stock
  count (one card per deal); Klondike's view says null (passes make it
  ambiguous) while ``g.deals_left`` is the deals left in the current pass.
* **View counts**: the stock is ``[{"hidden": n}]`` plus ``"stock": n``; the
  Klondike waste shows its fan and a hidden count for the rest.
* **home0/total** are the game's constants (16/208 for Leap Year, else 0 and
  52, Putt Putt 35), also for positions read by ``from_text``.
* **from_text** also refuses: a face-down card above a face-up one or a
  face-down top (Klondike), foundations that are not built by the game's rule,
  a Putt Putt ``f1`` with no card, a Manx tail of more than one card or a
  tail that is not a build, ``recycled`` at or beyond the pass limit, a bad
  ``shown``. A stock that is not a whole number of deals (possible only in a
  hand-made position) deals its last cards to t1, t2, ... in order.
* **Hostile move text**: a move text longer than 20 characters is refused as
  IllegalMove before any work; only moves a game can make (pile numbers of at
  most two digits, counts up to 64) are interned, so a client sending
  ``t1-t2:N`` for every N cannot grow memory (other texts still parse to
  equal, non-interned Moves and are refused by ``play``).
* **Tabby Cat / Manx options**: none; the two names are one class whose tail
  rule follows the name. ``g.options`` is ``{}``.
"""

from .cards import parse_card
from .deal import SplitMix64, seed_from_text, shuffled_deck
from .errors import BadMoveText, BadOptions, BadPosition, BadSeed, EngineError, IllegalMove
from .game import Effect, Game
from .golf import PuttPutt
from .klondike import Klondike
from .leapyear import LeapYear
from .moves import DEAL, RECYCLE, Move
from .registry import from_text, game_class, game_titles, new_game, register, replay
from .tabbycat import TabbyCat

register("tabbycat", TabbyCat, "Tabby Cat")
register("manx", TabbyCat, "Manx")
register("puttputt", PuttPutt, "Putt Putt")
register("klondike", Klondike, "Klondike")
register("leapyear", LeapYear, "Leap Year")

#: the game ids in registration order, read from the registry (the one list of games)
GAMES: tuple[str, ...] = tuple(game_titles())

__all__ = [
    "DEAL",
    "GAMES",
    "RECYCLE",
    "BadMoveText",
    "BadOptions",
    "BadPosition",
    "BadSeed",
    "Effect",
    "EngineError",
    "Game",
    "IllegalMove",
    "Klondike",
    "LeapYear",
    "Move",
    "PuttPutt",
    "SplitMix64",
    "TabbyCat",
    "from_text",
    "game_class",
    "game_titles",
    "new_game",
    "parse_card",
    "register",
    "replay",
    "seed_from_text",
    "shuffled_deck",
]
