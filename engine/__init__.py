"""solrace.engine: the rules of every solrace game, pure Python, no I/O.

The contract is docs/RULES.md in this repository; this package implements every rule of it
for ``tabbycat``, ``manx``, ``puttputt``, ``klondike`` (options ``draw=1|3``,
``moves=top|build``, ``passes=0|N``) and ``leapyear``.

API
---
::

    from solrace.engine import GAMES, game_titles, new_game, from_text, replay, Move, Game, Effect
    GAMES                                   # ("tabbycat", "manx", "puttputt", "klondike", "leapyear")
    game_titles()                           # {"tabbycat": "Tabby Cat", ..., "leapyear": "Leap Year"}
    g = new_game("klondike", seed=42, options={"draw": 3})
        # seed: u64 int, or str (text seed: first 8 bytes big-endian of SHA-256), or None (fresh secret seed)
        # unknown game, unknown option or bad value -> BadOptions ("3" is accepted for an int option)
        # bad seed -> BadSeed
    g.game; g.options (full dict incl. defaults); g.seed (int; None when built by from_text)
    g.legal_moves() -> list[Move]           # every legal move once, order: docs/RULES.md 7
    eff = g.play("t1-t3:4")                 # or a Move; IllegalMove with .reason; nothing changes
    eff.move; eff.revealed; eff.home_delta  # revealed: card texts that became visible by this move
    g.apply(move)                           # unchecked play for bots/solvers (move must be legal)
    g.undo() -> Move                        # exact take-back; IndexError when no move was made
    g.history -> list[Move]
    g.is_won(); g.is_dead(); g.progress(); g.home(); g.deals_left; g.passes_left; g.is_legal(m)
    g.to_text(); from_text(text) -> Game    # BadPosition names what is wrong
    g.view() -> dict                        # plain data only, never a hidden card
    g.copy() -> Game                        # independent copy, history and undo included
    replay(game, seed, options, moves) -> Game   # IllegalMove with .index of the bad move
    seed_from_text("2026-11-22") -> int
    Move("t1", "t3", 4); Move("deal"); Move.parse("t1-t3:4")   # interned: equal moves are one object

Errors: every one is an ``EngineError``, a ValueError (engine/errors.py):
``BadMoveText`` (not canonical move text; a kind of ``IllegalMove``),
``IllegalMove`` (a move the position refuses), ``BadPosition``, ``BadOptions``
(unknown game or option, bad value) and ``BadSeed``. ``undo()`` with no move
made is an IndexError.

Moves are canonical text only: ``src-dst`` with ``:N`` exactly when N >= 2,
``deal`` or ``recycle``, lower case, no spaces. ``Move.parse`` refuses anything
else (BadMoveText: "'T1-t3' is not canonical move text"); a canonical move
naming a pile the game lacks (``t9`` in Tabby Cat) is refused by ``play``
(IllegalMove: "there is no pile t9 in tabbycat").

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

Deals (docs/RULES.md section 2)
-------------------------------
SplitMix64 from the seed; ``below(n)`` by rejection; Fisher-Yates from the last
index down over the unshuffled order (each deck, suits C D H S, A..K); the
shuffled list is dealt from index 0 as each game's layout says. See deal.py.

The engine's decisions where the rules are silent are docs/RULES.md section 7.
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
from .solve import solve
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
    "solve",
]
