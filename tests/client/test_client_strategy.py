"""The bot's strategy, measured offline against the engine with fixed seeds.

Bot and random mover both play each deal to the end (won, dead, the bot
giving up, or a move cap); the bot's mean progress must beat the random
mover's on the same deals. Fixed seeds make the comparison exact, not flaky.
"""

import random
import statistics

import pytest
from solrace.client.moves import Board, legal_moves
from solrace.client.strategy import choose_move
from solrace.engine import new_game

MOVE_CAP = 600
SEEDS = {"puttputt": 30, "tabbycat": 8, "manx": 8, "klondike": 30, "leapyear": 10}


def play_bot(game: str, seed: int, options=None) -> float:
    g = new_game(game, seed=seed, options=options or {})
    history: list[str] = []
    seen: set[tuple] = set()
    for _ in range(MOVE_CAP):
        view = g.view()
        seen.add(Board.from_view(view).key())
        move = choose_move(view, history, seen)
        if move is None:
            break
        assert move in legal_moves(view)
        g.play(move)
        history.append(move)
    return g.progress()


def play_random(game: str, seed: int, options=None) -> float:
    g = new_game(game, seed=seed, options=options or {})
    rng = random.Random(seed)
    for _ in range(MOVE_CAP):
        moves = g.legal_moves()
        if not moves or g.is_won():
            break
        g.play(rng.choice(moves))
    return g.progress()


@pytest.mark.parametrize("game", list(SEEDS))
def test_bot_beats_random_mover(game):
    seeds = range(1000, 1000 + SEEDS[game])
    bot = [play_bot(game, s) for s in seeds]
    rnd = [play_random(game, s) for s in seeds]
    print(
        game,
        "bot",
        statistics.mean(bot),
        "random",
        statistics.mean(rnd),
        "bot wins",
        sum(p == 1.0 for p in bot),
    )
    assert statistics.mean(bot) > statistics.mean(rnd)
    assert sum(b >= r for b, r in zip(bot, rnd, strict=False)) > len(bot) // 2


def test_putt_putt_bot_wins_a_good_share():
    wins = sum(play_bot("puttputt", s) == 1.0 for s in range(2000, 2030))
    assert wins >= 6  # random play almost never clears a Golf tableau


def test_choose_move_is_none_for_finished_views():
    view = new_game("puttputt", seed=1).view()
    assert choose_move({**view, "won": True}) is None
    assert choose_move({**view, "dead": True}) is None


@pytest.mark.parametrize("game", ["tabbycat", "manx", "klondike"])
def test_bot_never_returns_to_a_position_it_has_been_in(game):
    for seed in range(3):
        g = new_game(game, seed=seed)
        history: list[str] = []
        seen: set[tuple] = set()
        for _ in range(300):
            view = g.view()
            key = Board.from_view(view).key()
            assert key not in seen or history[-1] in ("deal", "recycle"), (seed, history[-6:])
            seen.add(key)
            move = choose_move(view, history, seen, budget=10)  # the property holds at any budget
            if move is None:
                break
            g.play(move)
            history.append(move)


@pytest.mark.parametrize(
    "options", [{"draw": 3, "moves": "build", "passes": 3}, {"draw": 1, "moves": "build"}]
)
def test_bot_plays_klondike_variants_better_than_random(options):
    seeds = range(3000, 3010)
    bot = [play_bot("klondike", s, options) for s in seeds]
    rnd = [play_random("klondike", s, options) for s in seeds]
    assert statistics.mean(bot) > statistics.mean(rnd)


async def test_throttle_keeps_to_burst_then_rate():
    import asyncio
    import time

    from solrace.client.connection import Throttle

    t = Throttle(burst=6, rate=20)
    start = time.monotonic()
    for _ in range(4):  # burst - 2 of slack: immediate
        await t.take()
    assert time.monotonic() - start < 0.05
    for _ in range(4):  # then 20 per second
        await t.take()
    assert 0.15 <= time.monotonic() - start < 1.0
    await asyncio.sleep(0)
