"""The bot's strategy, measured offline against the engine with fixed seeds.

Bot and random mover both play each deal to the end (won, dead, the bot
giving up, or a move cap); the bot's mean progress must beat the random
mover's on the same deals. Fixed seeds make the comparison exact, not flaky.

The deals are few, chosen for what they cost (a won Tabby Cat deal costs the bot's
search seconds of CPU) and for a margin a small change of the bot would not erase;
each set's measured figures are noted by it.
"""

import random
import statistics

import pytest
from solrace.client.moves import Board, legal_moves
from solrace.client.strategy import choose_move
from solrace.engine import new_game

MOVE_CAP = 600
#: the deals each game is measured on; mean progress bot vs random mover, as measured:
SEEDS = {
    "puttputt": range(1000, 1010),  # 0.86 vs 0.43, the bot ahead on all 10
    # The random mover brought no card home on any of 58 Tabby Cat or Manx deals (1000-1034,
    # both games). A deal the bot wins costs its search 3-12 s of CPU, so the fast lane takes
    # deals where it completes one suit in under a second (0.17 and 0.25 vs 0); the slow lane
    # (LONG_SEEDS) also has deals it wins.
    "tabbycat": (1019, 1031, 1027),
    "manx": (1018, 1019, 1031),
    "klondike": range(1000, 1010),  # 0.156 vs 0.092, the bot ahead or level on all 10
    "leapyear": range(1000, 1005),  # 0.73 vs 0.44, the bot ahead on all 5
}
#: the slow lane's deals (`./dev test --slow`): the bot wins 2 of each 4 (0.5 vs 0), at
#: 7-10 s of CPU per game
LONG_SEEDS = {"tabbycat": range(1010, 1014), "manx": range(1010, 1014)}


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
    bot_beats_random_mover(game, SEEDS[game])


@pytest.mark.slow
@pytest.mark.parametrize("game", list(LONG_SEEDS))
def test_bot_beats_random_mover_on_deals_it_wins(game):
    bot_beats_random_mover(game, LONG_SEEDS[game])


def bot_beats_random_mover(game, seeds):
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
    # The bot clears 31 of deals 2000-2099; runs of 30 hold 4 to 15 of those wins. These 30
    # hold 10, about the hundred's share (2000-2029, used before, held exactly 6: no margin).
    wins = sum(play_bot("puttputt", s) == 1.0 for s in range(2030, 2060))
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
    # measured: draw 3 with 3 passes 0.131 vs 0.050 (bot ahead on 4 deals, level on 1);
    # draw 1 0.277 vs 0.108 (bot ahead on all 5: 3000, 3002 and 3004, the bot's cheapest at
    # 0.3-0.9 s of CPU each, hold 0.231 vs 0.128)
    seeds = range(3000, 3005) if options["draw"] == 3 else (3000, 3002, 3004)
    bot = [play_bot("klondike", s, options) for s in seeds]
    rnd = [play_random("klondike", s, options) for s in seeds]
    assert statistics.mean(bot) > statistics.mean(rnd)


class FakeClock:
    """Stands in for the `time` and `asyncio` modules the throttle reads: its sleeps advance
    the clock at once, so the timing figures are exact however busy the machine is."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


async def test_throttle_keeps_to_burst_then_rate(monkeypatch: pytest.MonkeyPatch):
    from solrace.client import connection

    clock = FakeClock()
    monkeypatch.setattr(connection, "time", clock)
    monkeypatch.setattr(connection, "asyncio", clock)
    t = connection.Throttle(burst=6, rate=20)
    for _ in range(4):  # burst - 2 of slack: immediate
        await t.take()
    assert clock.now == 0.0 and clock.sleeps == []
    for _ in range(4):  # then 20 per second
        await t.take()
    assert clock.now == pytest.approx(4 / 20)
    assert clock.sleeps == pytest.approx([1 / 20] * 4)


def bot_moves(game: str, seed: int, rng: random.Random | None, count: int = 40) -> list[str]:
    g = new_game(game, seed=seed)
    history: list[str] = []
    seen: set[tuple] = set()
    for _ in range(count):
        view = g.view()
        seen.add(Board.from_view(view).key())
        move = choose_move(view, history, seen, budget=50, rng=rng)
        if move is None:
            break
        g.play(move)
        history.append(move)
    return history


def test_bots_with_their_own_generators_break_ties_differently():
    """Two bots on one deal must not play move for move alike (issue 12, bug 11)."""
    first = bot_moves("leapyear", 7, random.Random("bot:0"))
    second = bot_moves("leapyear", 7, random.Random("bot:1"))
    assert first != second
    # the tie-break changes only the order among equals: each line is still the bot's
    assert bot_moves("leapyear", 7, random.Random("bot:0")) == first  # repeatable per seed
    assert bot_moves("leapyear", 7, None) == bot_moves("leapyear", 7, None)
