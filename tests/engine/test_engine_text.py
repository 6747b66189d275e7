"""Position text validation, the `solrace deal` command, replay() and the API surface."""

from __future__ import annotations

import subprocess
import sys

import pytest
from solrace.engine import (
    GAMES,
    BadPosition,
    Effect,
    Game,
    IllegalMove,
    from_text,
    new_game,
    replay,
    seed_from_text,
)

TABBY = new_game("tabbycat", 42).to_text()


def test_games_tuple():
    assert GAMES == ("tabbycat", "manx", "puttputt", "klondike", "leapyear")
    for name in GAMES:
        g = new_game(name, 1)
        assert isinstance(g, Game) and g.game == name and g.seed == 1
        assert from_text(g.to_text()).seed is None


def test_unknown_game_and_options():
    with pytest.raises(ValueError):
        new_game("spider", 1)
    with pytest.raises(ValueError):
        new_game("tabbycat", 1, {"draw": 3})
    assert new_game("klondike", 1, {"draw": "3"}).options["draw"] == 3


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda t: t.replace("game tabbycat", "game spider"), "unknown game"),
        (lambda t: t.replace("game tabbycat", "tabbycat"), "first line"),
        (lambda t: t.replace("game tabbycat", "game tabbycat draw=3"), "unknown option"),
        (lambda t: t.replace("game tabbycat", "game tabbycat x"), "not key=value"),
        (lambda t: t.replace("\nr\n", "\nw\n"), "unknown pile 'w'"),
        (lambda t: t.replace("\nr\n", "\nt5\n"), "unknown pile 't5'"),
        (lambda t: t.replace("\nr\n", "\nf1\n"), "pile f1 appears twice"),
        (lambda t: t.replace("\nr\n", "\n"), "missing pile(s): r"),
        (lambda t: t.replace("t1 7C", "t1 7C 7C"), "extra 7C"),
        (lambda t: t.replace("t1 7C", "t1"), "missing 7C"),
        (lambda t: t.replace("t1 7C", "t1 7c"), "'7c' is not a card"),
        (lambda t: t.replace("t1 7C", "t1 [7C]"), "no card is face down"),
        (lambda t: t.replace("t1 7C", "t1 7C AS").replace("t4 AS", "t4"), None),
        (lambda t: t.replace("\nr\n", "\nr 7C\n").replace("t1 7C", "t1"), None),
        (lambda t: "", "empty position text"),
    ],
)
def test_from_text_refusals(mutate, reason):
    text = mutate(TABBY)
    if reason is None:  # still a valid position
        assert from_text(text).to_text() == text
        return
    with pytest.raises(BadPosition) as info:
        from_text(text)
    assert reason in str(info.value)
    assert isinstance(info.value, ValueError)


def test_from_text_game_rules():
    with pytest.raises(BadPosition, match="Manx's tail"):
        from_text(
            TABBY.replace(" 8D ", " ")
            .replace("game tabbycat", "game manx")
            .replace("\nr\n", "\nr 8D 7C\n")
            .replace("t1 7C", "t1")
        )
    with pytest.raises(BadPosition, match="tail must be a build"):
        from_text(TABBY.replace(" 8D ", " ").replace("\nr\n", "\nr 7C 8D\n").replace("t1 7C", "t1"))
    with pytest.raises(BadPosition, match="f1 must be empty or hold exactly K"):
        from_text(TABBY.replace("\nf1\n", "\nf1 7C\n").replace("t1 7C", "t1"))
    pp = new_game("puttputt", 3).to_text()
    f1 = next(ln for ln in pp.splitlines() if ln.startswith("f1"))
    with pytest.raises(BadPosition, match="f1 must hold at least one card"):
        from_text(pp.replace(f1 + "\n", "f1\n").replace("\ns ", f"\ns {f1[3:]} "))
    ly = new_game("leapyear", 3).to_text()
    with pytest.raises(BadPosition, match="4 decks"):
        from_text(ly.replace("\nt1 ", "\nt1 AC "))


def test_blank_lines_and_trailing_spaces_are_tolerated():
    text = "\n" + TABBY.replace("\n", "  \n") + "\n\n"
    assert from_text(text).to_text() == TABBY


def test_position_text_options_and_empty_piles():
    g = new_game("klondike", 5, {"draw": 3, "passes": 2})
    assert g.to_text().splitlines()[0] == "game klondike draw=3 passes=2"
    assert from_text(g.to_text()).options == {"draw": 3, "moves": "top", "passes": 2}


def test_replay_names_the_bad_move():
    g = new_game("puttputt", 42)
    good = [str(g.legal_moves()[0])]
    r = replay("puttputt", 42, None, [*good, "deal"])
    assert [str(m) for m in r.history] == [*good, "deal"]
    with pytest.raises(IllegalMove) as info:
        replay("puttputt", 42, {}, [*good, "deal", "t9-f1", "deal"])
    assert info.value.index == 2 and info.value.move == "t9-f1"
    assert "move 2" in str(info.value) and "there is no pile t9" in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(IllegalMove) as info:
        replay("klondike", "2026-11-22", {"draw": 3}, ["T1-t2"])
    assert info.value.index == 0 and "not canonical" in info.value.reason


def test_undo_without_moves_is_index_error():
    g = new_game("leapyear", 1)
    with pytest.raises(IndexError):
        g.undo()


def test_effect_fields():
    g = new_game("tabbycat", 42)
    eff = g.play("deal")
    assert (
        isinstance(eff, Effect)
        and eff.move.text == "deal"
        and len(eff.revealed) == 4
        and eff.home_delta == 0
    )


def test_view_hides_seed_and_stock():
    for name in GAMES:
        g = new_game(name, 123456789012345)
        v = g.view()
        assert "123456789012345" not in repr(v)
        assert v["piles"]["s"] == [{"hidden": v["stock"]}]
        stock_cards = g.to_text().splitlines()[-1 if name != "klondike" else -2].split()[1:]
        assert stock_cards and len(stock_cards) == v["stock"]
        assert list(v) == [
            "game",
            "options",
            "piles",
            "stock",
            "deals_left",
            "passes_left",
            "moves",
            "home",
            "progress",
            "won",
            "dead",
        ]
    assert new_game("tabbycat", 1).view()["deals_left"] == 12
    assert new_game("leapyear", 1).view()["deals_left"] == 23
    assert new_game("klondike", 1, {"passes": 3}).view()["passes_left"] == 2


def test_deal_cli_by_run(capsys):
    import argparse

    from solrace import deal_cli

    parser = argparse.ArgumentParser()
    deal_cli.add_arguments(parser)
    assert (
        deal_cli.run(
            parser.parse_args(
                ["klondike", "--seed", "42", "--option", "draw=3", "-o", "moves=build"]
            )
        )
        == 0
    )
    assert (
        capsys.readouterr().out == new_game("klondike", 42, {"draw": 3, "moves": "build"}).to_text()
    )
    assert deal_cli.run(parser.parse_args(["manx", "--seed", "2026-11-22"])) == 0
    assert capsys.readouterr().out == new_game("manx", seed_from_text("2026-11-22")).to_text()
    assert deal_cli.run(parser.parse_args(["manx", "--seed-text", "42"])) == 0
    assert capsys.readouterr().out == new_game("manx", seed_from_text("42")).to_text()
    assert deal_cli.run(parser.parse_args(["klondike", "--seed", "1", "-o", "draw=2"])) == 2
    assert "draw" in capsys.readouterr().err


def test_deal_cli_subprocess():
    out = subprocess.run(
        [sys.executable, "-m", "solrace", "deal", "leapyear", "--seed", "0"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == new_game("leapyear", 0).to_text()
    bad = subprocess.run(
        [sys.executable, "-m", "solrace", "deal", "leapyear"], capture_output=True, text=True
    )
    assert bad.returncode != 0
