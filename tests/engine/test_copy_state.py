"""`Game.copy` copies the attributes each class lists in `_STATE` (a compiled game has no
`__dict__` to copy): the list must name every instance attribute the classes declare."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from solrace.engine.game import Game
from solrace.engine.golf import PuttPutt
from solrace.engine.klondike import Klondike
from solrace.engine.leapyear import LeapYear
from solrace.engine.tabbycat import TabbyCat

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def declared(cls: type) -> set[str]:
    """The annotated, non-ClassVar names in the class bodies of cls and its Game bases, read
    from the source (a compiled class keeps no annotations)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not issubclass(klass, Game):
            continue
        source = ENGINE / (klass.__module__.rsplit(".", 1)[1] + ".py")
        tree = ast.parse(source.read_text())
        body = next(
            n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == klass.__name__
        )
        names |= {
            n.target.id
            for n in body.body
            if isinstance(n, ast.AnnAssign)
            and isinstance(n.target, ast.Name)
            and "ClassVar" not in ast.unparse(n.annotation)
        }
    return names


@pytest.mark.parametrize("cls", [Klondike, PuttPutt, TabbyCat, LeapYear])
def test_state_names_every_declared_attribute(cls: type[Game]) -> None:
    missing = declared(cls) - set(cls._STATE)
    assert not missing, f"{cls.__name__}._STATE lacks {sorted(missing)}"
    assert {"piles", "history", "_home", "_undo"} <= set(cls._STATE)


@pytest.mark.parametrize("game", ["klondike", "puttputt", "tabbycat", "manx", "leapyear"])
def test_a_copy_plays_on_alone(game: str) -> None:
    from solrace.engine.registry import new_game

    g = new_game(game, 11, {})
    for _ in range(6):
        moves = g.legal_moves()
        if not moves:
            break
        g.play(moves[0])
    c = g.copy()
    assert c.to_text() == g.to_text() and c.history == g.history
    if c.legal_moves():
        c.play(c.legal_moves()[0])
        assert c.to_text() != g.to_text()
        c.undo()
    assert c.to_text() == g.to_text()
