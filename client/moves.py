"""Legal moves worked out from a player's own view, with no hidden card.

Decision: the client does not ask the server for legal moves and does not
rebuild an engine position. In every solrace game the legality of a move
depends only on cards the player can see (tops of face-up runs, the waste
top, foundation tops) plus the stock count and the deals/passes left, all of
which the view holds. So this module lists exactly the engine's legal moves
(tests check it against `Game.legal_moves()` over many positions), and the
terminal client offers them for completion while the bot plans on them.

A `Board` is the view unpacked into mutable piles, a hidden card being the
placeholder `"?"`; `apply` plays a move on it for look-ahead. A card a move
would reveal is unknown, so it stays `"?"`: the planner can value revealing a
card without ever learning (or guessing) which card it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeGuard

RANKS = "A23456789TJQK"
#: a face-down card, as the view shows it
HIDDEN = "?"
#: a face-up card the look-ahead cannot know yet (revealed or dealt by a simulated move)
UNKNOWN = "*"


#: rank of every card text (and 0 for hidden / unknown), looked up rather than parsed:
#: the bot's look-ahead asks millions of times
RANK_OF: dict[str, int] = {r + s: i + 1 for i, r in enumerate(RANKS) for s in "CDHS"}
RANK_OF[HIDDEN] = RANK_OF[UNKNOWN] = 0


def rank(card: str) -> int:
    """1..13 for A..K; 0 for a hidden or unknown card."""
    return RANK_OF[card]


def known(card: str | None) -> TypeGuard[str]:
    """A face-up card whose text the player sees (a type guard: `None` is never known)."""
    return card is not None and card not in (HIDDEN, UNKNOWN)


def is_red(card: str) -> bool:
    return card[-1] in "DH"


def succ(r: int) -> int:
    return r % 13 + 1


@dataclass
class Board:
    """A view unpacked into piles of card texts ("?" = face down) plus counters."""

    game: str
    options: dict[str, Any]
    piles: dict[str, list[str]]
    stock: int = 0
    deals_left: int | None = None
    passes_left: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Board:
        piles: dict[str, list[str]] = {}
        for name, items in view["piles"].items():
            if name == "s":
                continue  # only its count matters (kept in `stock`); never its cards
            pile: list[str] = []
            for item in items:
                if isinstance(item, dict):
                    pile.extend([HIDDEN] * int(item.get("hidden", 0)))
                else:
                    pile.append(item)
            piles[name] = pile
        stock = view.get("stock")
        if stock is None:
            stock = sum(
                int(i.get("hidden", 0)) if isinstance(i, dict) else 1
                for i in view["piles"].get("s", [])
            )
        return cls(
            view["game"],
            dict(view.get("options") or {}),
            piles,
            int(stock),
            view.get("deals_left"),
            view.get("passes_left"),
        )

    def copy(self) -> Board:
        b = Board(
            self.game,
            self.options,
            {k: v[:] for k, v in self.piles.items()},
            self.stock,
            self.deals_left,
            self.passes_left,
        )
        b.extra = self.extra  # the pile-name cache: same piles, same names
        return b

    def names(self, prefix: str) -> list[str]:
        """Numbered piles of a kind ("t" -> t1..tN), in view order (cached: asked often)."""
        cached = self.extra.get(prefix)
        if cached is None:
            cached = [n for n in self.piles if n[0] == prefix and n[1:].isdigit()]
            self.extra[prefix] = cached
        return cached

    def top(self, name: str) -> str | None:
        pile = self.piles.get(name)
        return pile[-1] if pile else None

    def key(self) -> tuple[Any, ...]:
        """A hashable key of what is visible (for the bot's memory of positions)."""
        return (tuple((n, tuple(p)) for n, p in self.piles.items()), self.stock)


# ---- per-game rules on visible cards ---------------------------------------------------


def top_build(pile: list[str]) -> int:
    """Length of the top build in Tabby Cat / Manx (each card one below the card under it, K on A)."""
    if not pile or not known(pile[-1]):
        return 0
    n = 1
    while n < len(pile) and known(pile[-n - 1]) and succ(rank(pile[-n])) == rank(pile[-n - 1]):
        n += 1
    return n


def _cat_accepts(pile: list[str], lowest: str) -> bool:
    if not known(lowest):
        return False
    return not pile or (known(pile[-1]) and succ(rank(lowest)) == rank(pile[-1]))


def _is_discard_run(pile: list[str]) -> bool:
    return len(pile) >= 13 and [rank(c) for c in pile[-13:]] == list(range(13, 0, -1))


def _cat_moves(b: Board) -> list[str]:
    tabs, founds = b.names("t"), b.names("f")
    tail = b.piles.get("r", [])
    manx = b.game == "manx"
    out: list[str] = []
    for x in tabs:
        px = b.piles[x]
        build = top_build(px)
        for y in tabs:
            if y == x:
                continue
            for n in range(1, build + 1):
                if _cat_accepts(b.piles[y], px[-n]):
                    out.append(f"{x}-{y}" + (f":{n}" if n > 1 else ""))
        if not tail and px:
            counts = [1] if manx else range(1, build + 1)
            out.extend(f"{x}-r" + (f":{n}" if n > 1 else "") for n in counts)
        if _is_discard_run(px):
            out.extend(f"{x}-{f}:13" for f in founds if not b.piles[f])
    if tail:
        n = len(tail)
        out.extend(
            f"r-{y}" + (f":{n}" if n > 1 else "") for y in tabs if _cat_accepts(b.piles[y], tail[0])
        )
    if b.stock > 0:
        out.append("deal")
    return out


def _golf_neighbours(a: str, b: str) -> bool:
    if not (known(a) and known(b)):
        return False
    d = abs(rank(a) - rank(b))
    return d in (1, 12)


def _puttputt_moves(b: Board) -> list[str]:
    base = b.top("f1")
    out = [
        f"{x}-f1"
        for x in b.names("t")
        if b.piles[x] and base is not None and _golf_neighbours(b.piles[x][-1], base)
    ]
    if b.stock > 0:
        out.append("deal")
    return out


def _leap_accepts(found: list[str], card: str) -> bool:
    return bool(found) and known(card) and known(found[-1]) and rank(card) == rank(found[-1]) + 1


def _leapyear_moves(b: Board) -> list[str]:
    out: list[str] = []
    for x in b.names("t"):
        card = b.top(x)
        if card is None:
            continue
        out.extend(f"{x}-{f}" for f in b.names("f") if _leap_accepts(b.piles[f], card))
    if b.stock > 0:
        out.append("deal")
    return out


def _k_on(card: str, pile: list[str]) -> bool:
    """Klondike tableau build: alternate colours, one rank down; an empty pile takes a King."""
    if not known(card):
        return False
    if not pile:
        return rank(card) == 13
    under = pile[-1]
    return known(under) and is_red(card) != is_red(under) and rank(card) == rank(under) - 1


def _k_home(card: str, pile: list[str]) -> bool:
    if not known(card):
        return False
    if not pile:
        return rank(card) == 1
    under = pile[-1]
    return under[-1] == card[-1] and rank(card) == rank(under) + 1


def _k_run(pile: list[str]) -> int:
    """Face-up cards at the top of a Klondike pile that form one movable run."""
    if not pile or not known(pile[-1]):
        return 0
    n = 1
    while n < len(pile) and known(pile[-n - 1]) and _k_on(pile[-n], [pile[-n - 1]]):
        n += 1
    return n


def _klondike_moves(b: Board) -> list[str]:
    tabs, founds = b.names("t"), b.names("f")
    build = b.options.get("moves") == "build"
    out: list[str] = []
    for x in tabs:
        px = b.piles[x]
        run = _k_run(px) if build else (1 if px and known(px[-1]) else 0)
        for y in tabs:
            if y == x:
                continue
            for n in range(1, run + 1):
                if _k_on(px[-n], b.piles[y]):
                    out.append(f"{x}-{y}" + (f":{n}" if n > 1 else ""))
        if px and known(px[-1]):
            out.extend(f"{x}-{f}" for f in founds if _k_home(px[-1], b.piles[f]))
    w = b.top("w")
    if known(w):
        out.extend(f"w-{y}" for y in tabs if _k_on(w, b.piles[y]))
        out.extend(f"w-{f}" for f in founds if _k_home(w, b.piles[f]))
    for f in founds:
        card = b.top(f)
        if card is not None:
            out.extend(f"{f}-{y}" for y in tabs if _k_on(card, b.piles[y]))
    if b.stock > 0:
        out.append("deal")
    elif b.piles.get("w") and (b.passes_left is None or b.passes_left > 0):
        out.append("recycle")
    return out


_GENERATORS = {
    "tabbycat": _cat_moves,
    "manx": _cat_moves,
    "puttputt": _puttputt_moves,
    "klondike": _klondike_moves,
    "leapyear": _leapyear_moves,
}


def legal_moves(board: Board | dict[str, Any]) -> list[str]:
    """Every legal move of the position the view shows, as canonical texts."""
    b = board if isinstance(board, Board) else Board.from_view(board)
    return _GENERATORS[b.game](b)


# ---- playing a move on a Board (look-ahead only: revealed cards stay "?") ----------------


def parse_move(move: str) -> tuple[str, str, int]:
    """("t1", "t3", 4) for "t1-t3:4"; raises ValueError for deal/recycle or bad text."""
    body, _, count = move.partition(":")
    src, sep, dst = body.partition("-")
    if not sep or not src or not dst:
        raise ValueError(f"not a pile-to-pile move: {move!r}")
    return src, dst, int(count) if count else 1


def apply(board: Board, move: str) -> Board:
    """A new Board after `move`, which must be legal; a deal adds unknown cards."""
    b = board.copy()
    if move == "deal":
        _deal(b)
        return b
    if move == "recycle":
        b.stock = len(b.piles["w"])
        b.piles["w"] = []
        if b.passes_left is not None:
            b.passes_left -= 1
        return b
    src, dst, n = parse_move(move)
    moved = b.piles[src][-n:]
    del b.piles[src][-n:]
    b.piles[dst].extend(moved)
    if b.game == "klondike" and b.piles[src] and b.piles[src][-1] == HIDDEN:
        b.piles[src][-1] = UNKNOWN  # turned face up by this move; which card is unknown
    return b


def _deal(b: Board) -> None:
    if b.game == "klondike":
        n = min(int(b.options.get("draw", 1)), b.stock)
        b.piles["w"] = [HIDDEN] * len(b.piles["w"]) + [UNKNOWN] * n
        b.stock -= n
    elif b.game == "puttputt":
        b.piles["f1"].append(UNKNOWN)
        b.stock -= 1
    else:
        for t in b.names("t"):
            if b.stock <= 0:
                break
            b.piles[t].append(UNKNOWN)
            b.stock -= 1
        if b.deals_left is not None:
            b.deals_left -= 1
