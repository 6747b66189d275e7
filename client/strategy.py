"""How the bot chooses a move, from its own view only.

`choose_move(view, history, seen)` is pure: the same inputs give the same
move, so it is tested offline against the engine with fixed seeds.

Decision: the bot plans on `moves.Board`, the visible cards of its view, never
on an engine position. A card a move would reveal (or a deal would bring) is
the unknown `*` in the look-ahead, so the bot values "a card gets revealed"
without guessing which one, and it can never use information a human player
would not have.

Strategy, by game:
* Putt Putt: every tableau card is visible, so the bot searches the longest
  chain of plays onto the foundation and plays its first move (ties: take
  from the tallest pile); it deals only when no card plays.
* Tabby Cat, Manx, Leap Year, Klondike: a two-move look-ahead over non-deal
  moves scored by a per-game evaluation (cards home first; then revealed
  cards, in-sequence pairs, empty piles, cards out of the waste). A move is
  played only when it strictly improves the score within the look-ahead and
  leads to a position not seen before (`seen`, kept by the caller), which
  rules out back-and-forth; otherwise it deals (or recycles), and when even
  that is pointless (a whole Klondike cycle of the stock without any other
  move, or nothing left at all) it returns None: the caller resigns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .moves import HIDDEN, UNKNOWN, Board, apply, known, legal_moves, parse_move, rank, succ

STOCK_MOVES = ("deal", "recycle")
PUTT_NODE_LIMIT = 4000


def choose_move(view: dict[str, Any], history: Sequence[str] = (),
                seen: Iterable[tuple] | None = None) -> str | None:
    """The bot's next move for `view`, or None when it should stop (resign).

    `history` is the bot's own moves so far; `seen` holds `Board.key()` of
    positions it has been in (the bot adds each one as it goes).
    """
    if view.get("won") or view.get("dead"):
        return None
    board = Board.from_view(view)
    moves = legal_moves(board)
    if not moves:
        return None
    seen_set = seen if isinstance(seen, (set, frozenset)) else set(seen or ())
    if board.game == "puttputt":
        return _putt_choice(board, moves)
    best = _best_lookahead(board, moves, history, seen_set)
    if best is not None:
        return best
    return _stock_move(board, moves, history)


# ---- Putt Putt --------------------------------------------------------------------------


def _putt_chain(board: Board, budget: list[int]) -> int:
    """Length of the longest run of plays from this position (bounded search)."""
    best = 0
    for m in legal_moves(board):
        if m == "deal" or budget[0] <= 0:
            continue
        budget[0] -= 1
        best = max(best, 1 + _putt_chain(apply(board, m), budget))
    return best


def _putt_choice(board: Board, moves: list[str]) -> str | None:
    plays = [m for m in moves if m != "deal"]
    if not plays:
        return "deal" if "deal" in moves else None
    scored = []
    for m in plays:
        after = apply(board, m)
        chain = 1 + _putt_chain(after, [PUTT_NODE_LIMIT // len(plays)])
        src = parse_move(m)[0]
        scored.append((chain, len(board.piles[src]), m))
    scored.sort(key=lambda s: (-s[0], -s[1], s[2]))
    return scored[0][2]


# ---- evaluation -------------------------------------------------------------------------


def _home(board: Board) -> int:
    return sum(len(board.piles[f]) for f in board.names("f"))


def _cat_score(b: Board) -> float:
    score = 100.0 * _home(b)
    for t in b.names("t"):
        pile = b.piles[t]
        if not pile:
            score += 12
            continue
        for low, high in zip(pile, pile[1:]):
            if known(low) and known(high) and succ(rank(high)) == rank(low):
                score += 10
    if b.piles.get("r"):
        score -= 6
    return score


def _leap_score(b: Board) -> float:
    score = 100.0 * _home(b)
    founds = [b.piles[f][-1] for f in b.names("f") if b.piles[f]]
    wanted = {rank(c) + 1 for c in founds if known(c)}
    for t in b.names("t"):
        top = b.top(t)
        if top is not None and rank(top) in wanted:
            score += 5  # a card that can go home next
    return score


def _klondike_score(b: Board) -> float:
    score = 100.0 * _home(b)
    for t in b.names("t"):
        pile = b.piles[t]
        score -= 30 * pile.count(HIDDEN)
        if not pile:
            score += 4
    score -= 2 * (len(b.piles.get("w", [])) + b.stock)
    return score


_SCORES = {"tabbycat": _cat_score, "manx": _cat_score, "leapyear": _leap_score,
           "klondike": _klondike_score}


# ---- look-ahead -------------------------------------------------------------------------


def _reverse(move: str) -> str | None:
    try:
        src, dst, n = parse_move(move)
    except ValueError:
        return None
    return f"{dst}-{src}" + (f":{n}" if n > 1 else "")


def _best_lookahead(board: Board, moves: list[str], history: Sequence[str],
                    seen: set[tuple]) -> str | None:
    score = _SCORES[board.game]
    now = score(board)
    undo_last = _reverse(history[-1]) if history else None
    best: tuple[float, str] | None = None
    for m in moves:
        if m in STOCK_MOVES or m == undo_last:
            continue
        after = apply(board, m)
        if after.key() in seen:
            continue
        value = score(after)
        for m2 in legal_moves(after):
            if m2 in STOCK_MOVES or m2 == _reverse(m):
                continue
            value = max(value, score(apply(after, m2)) - 0.5)
        if value > now + 1e-9 and (best is None or value > best[0]):
            best = (value, m)
    return best[1] if best else None


def _stock_move(board: Board, moves: list[str], history: Sequence[str]) -> str | None:
    stock_moves = [m for m in moves if m in STOCK_MOVES]
    if not stock_moves:
        return None
    if board.game == "klondike":
        idle = 0
        for m in reversed(history):
            if m not in STOCK_MOVES:
                break
            idle += 1
        cycle = board.stock + len(board.piles.get("w", [])) + 2
        if idle >= cycle:
            return None  # a whole pass of the stock brought nothing playable
    return stock_moves[0]
