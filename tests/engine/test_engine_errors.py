"""Which exception each kind of bad input raises, and the game registry's one list of games.

Callers answer per class (the server maps them to protocol errors, a verifier
tells a garbled record from a refused move), so each kind of bad input is pinned
to its exact class here, and every class stays a ValueError for older callers.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import solrace.engine as engine
from solrace.engine import (
    GAMES,
    BadMoveText,
    BadOptions,
    BadPosition,
    BadSeed,
    EngineError,
    IllegalMove,
    Move,
    SplitMix64,
    from_text,
    game_class,
    game_titles,
    new_game,
    parse_card,
    replay,
)

TABBY = new_game("tabbycat", 42)


def raised(call: Callable[[], object]) -> EngineError:
    with pytest.raises(EngineError) as info:
        call()
    return info.value


def test_every_class_is_an_engine_error_and_a_value_error():
    for cls in (BadMoveText, IllegalMove, BadPosition, BadOptions, BadSeed):
        assert issubclass(cls, EngineError)
    assert issubclass(EngineError, ValueError)
    # text that is not a move is one more refused move: old `except IllegalMove` still sees it
    assert issubclass(BadMoveText, IllegalMove)
    for cls in (BadPosition, BadOptions, BadSeed):
        assert not issubclass(cls, IllegalMove)


@pytest.mark.parametrize(
    "text", ["T1-t3", "t1-t3:1", "t1 - t3", "t1-t3:", "flip", "t1-t2:04", "t1-t3:" + "9" * 30]
)
def test_text_that_is_not_a_move_is_bad_move_text(text):
    exc = raised(lambda: Move.parse(text))
    assert type(exc) is BadMoveText
    assert exc.reason and exc.index is None
    g = TABBY.copy()
    before = g.to_text()
    assert type(raised(lambda: g.play(text))) is BadMoveText
    assert g.to_text() == before and g.history == []


def test_a_move_that_is_not_text_is_bad_move_text():
    g = TABBY.copy()
    exc = raised(lambda: g.play(42))  # type: ignore[arg-type]
    assert type(exc) is BadMoveText and "not int" in exc.reason


@pytest.mark.parametrize(
    "args", [("t0", "t1"), ("t1", "x"), ("t1", "t2", 0), ("t1", "t2", True), ("flip",)]
)
def test_bad_move_parts_are_bad_move_text(args):
    assert type(raised(lambda: Move(*args))) is BadMoveText


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("t9-t1", "there is no pile t9 in tabbycat"),  # canonical, but not a pile of this game
        ("w-t1", "there is no pile w in tabbycat"),
        ("recycle", "there is no recycle in tabbycat"),
        ("t1-t1", "a pile cannot move onto itself"),
        ("t1-f1", "only a complete 13-card run K..A goes to a discard pile (:13)"),
    ],
)
def test_a_canonical_move_the_position_refuses_is_illegal_move(move, reason):
    g = TABBY.copy()
    before = g.to_text()
    exc = raised(lambda: g.play(move))
    assert type(exc) is IllegalMove
    assert exc.reason == reason and exc.move == move and exc.index is None
    assert g.to_text() == before and g.history == []
    assert g.is_legal(move) is False


def test_replay_keeps_the_class_and_adds_the_index():
    good = [m.text for m in TABBY.legal_moves()[:1]]
    exc = raised(lambda: replay("tabbycat", 42, None, [*good, "T1-t2"]))
    assert type(exc) is BadMoveText and exc.index == 1 and exc.move == "T1-t2"
    exc = raised(lambda: replay("tabbycat", 42, None, [*good, "t9-t1"]))
    assert type(exc) is IllegalMove and exc.index == 1 and exc.move == "t9-t1"
    assert exc.reason == "there is no pile t9 in tabbycat"
    assert str(exc) == "move 1 ('t9-t1'): there is no pile t9 in tabbycat"


@pytest.mark.parametrize(
    ("game", "options", "words"),
    [
        ("spider", None, "unknown game 'spider'"),
        ("tabbycat", {"draw": 3}, "unknown option 'draw' for tabbycat (options: none)"),
        ("klondike", {"colour": 1}, "unknown option 'colour'"),
        ("klondike", {"draw": 2}, "option draw is one of 1, 3, not 2"),
        ("klondike", {"draw": "x"}, "option draw takes an int, not 'x'"),
        ("klondike", {"draw": True}, "option draw takes an int"),
        ("klondike", {"passes": -1}, "option passes is 0 (unlimited) or a positive count"),
        ("klondike", {"moves": "any"}, "option moves is one of top, build, not 'any'"),
        ("klondike", {"moves": 1}, "option moves is one of top, build, not 1"),
    ],
)
def test_unknown_game_or_option_or_bad_value_is_bad_options(game, options, words):
    exc = raised(lambda: new_game(game, 1, options))
    assert type(exc) is BadOptions and words in str(exc)


def test_unknown_game_class_is_bad_options():
    assert type(raised(lambda: game_class("spider"))) is BadOptions


@pytest.mark.parametrize("seed", [-1, 2**64, True, 1.5, b"x"])
def test_bad_seed_is_bad_seed(seed):
    assert type(raised(lambda: new_game("tabbycat", seed))) is BadSeed


@pytest.mark.parametrize(
    "text",
    [
        "",
        "gaem tabbycat\n",
        "game spider\n",
        "game klondike draw=2\n",  # a bad option on the game line is still a bad position
        "game klondike colour=red\n",
        TABBY.to_text().replace("t1 ", "t9 ", 1),
        TABBY.to_text() + "t1\n",
        TABBY.to_text().replace("\nr", "\nr XX", 1),
    ],
)
def test_bad_position_text_is_bad_position(text):
    assert type(raised(lambda: from_text(text))) is BadPosition


def test_card_and_generator_misuse_are_engine_errors():
    assert type(raised(lambda: parse_card("1H"))) is EngineError
    assert type(raised(lambda: SplitMix64(0).below(0))) is EngineError


def test_the_classes_are_exported():
    for name in ("EngineError", "BadMoveText", "IllegalMove", "BadPosition", "BadOptions"):
        assert name in engine.__all__ and getattr(engine, name).__name__ == name
    assert "BadSeed" in engine.__all__


def test_games_and_titles_come_from_the_registry():
    titles = game_titles()
    assert GAMES == tuple(titles) == ("tabbycat", "manx", "puttputt", "klondike", "leapyear")
    assert titles == {
        "tabbycat": "Tabby Cat",
        "manx": "Manx",
        "puttputt": "Putt Putt",
        "klondike": "Klondike",
        "leapyear": "Leap Year",
    }
    titles["manx"] = "changed"  # a copy: callers cannot edit the registry
    assert game_titles()["manx"] == "Manx"
    for name in GAMES:
        assert new_game(name, 7).game == name
        assert isinstance(new_game(name, 7), game_class(name))
