"""Rendering is pure: views and rooms in, text out."""

from solrace.client.render import (
    card_text,
    player_line,
    progress_bar,
    render_player_screen,
    render_spectator_screen,
    render_view,
)
from solrace.client.room import RoomModel

KLONDIKE_VIEW = {
    "game": "klondike",
    "options": {"draw": 1, "moves": "top", "passes": 0},
    "piles": {
        "t1": ["KS"],
        "t2": [{"hidden": 1}, "7H"],
        "t3": [],
        "f1": ["AS", "2S"],
        "f2": [],
        "s": [{"hidden": 21}],
        "w": [{"hidden": 3}, "QD"],
    },
    "stock": 21,
    "deals_left": None,
    "passes_left": None,
    "moves": 17,
    "home": 2,
    "progress": 2 / 52,
    "won": False,
    "dead": False,
}


def test_plain_view_labels_every_pile_and_hides_face_down():
    text = render_view(KLONDIKE_VIEW, color=False)
    lines = text.splitlines()
    assert lines[0].startswith("Klondike (draw=1 moves=top passes=0)  moves 17  home 2  4%")
    assert " f1 2S(2)   f2 --" in text
    assert " t1 KS" in lines and " t2 ## 7H" in lines and " t3 --" in lines
    assert "  w ## ## ## QD" in lines
    assert "(21 in stock)" in text
    assert "\x1b[" not in text


def test_colour_marks_red_suits_and_dims_hidden():
    assert card_text("QD") == "\x1b[31;1mQ\u2666\x1b[0m"
    assert card_text("KS").startswith("\x1b[37;1m")
    text = render_view(KLONDIKE_VIEW, color=True)
    assert "\x1b[2m##\x1b[0m" in text


def test_deals_left_and_long_hidden_runs():
    view = {
        "game": "tabbycat",
        "options": {},
        "piles": {"t1": ["5C", "4H"], "r": [], "s": [{"hidden": 40}]},
        "stock": 40,
        "deals_left": 10,
        "moves": 3,
        "home": 0,
        "progress": 0.0,
        "won": False,
        "dead": False,
    }
    text = render_view(view, color=False)
    assert "deals left 10" in text and "##x40" in text and "  r --" in text


def test_progress_bar_and_player_line():
    assert progress_bar(0.5, width=10, color=False) == "[#####.....]"
    assert progress_bar(2, width=4, color=False) == "[####]"
    line = player_line(
        {
            "seat": 1,
            "name": "bob",
            "ready": True,
            "status": "won",
            "progress": 1.0,
            "moves": 40,
            "time": 83_000,
        },
        color=False,
    )
    assert "bob" in line and "100%" in line and "won" in line and "1:23" in line


def test_screens_show_header_board_and_opponents():
    room = RoomModel(
        room="KX7QF",
        state="racing",
        options={"game": "klondike"},
        seat=0,
        view=KLONDIKE_VIEW,
        starts_at=0,
        clock_offset=0,
    )
    room.players = {
        0: {"seat": 0, "name": "ann", "progress": 0.04, "status": "racing"},
        1: {"seat": 1, "name": "bob", "progress": 0.5, "status": "racing"},
    }
    screen = render_player_screen(room, color=False, now_ms=65_000, moves=["t1-t3", "deal"])
    assert "room KX7QF  racing  Klondike  clock 1:05" in screen
    assert " t2 ## 7H" in screen and "bob" in screen and "50%" in screen
    assert "1)t1-t3  2)deal" in screen
    room.boards = {1: KLONDIKE_VIEW}
    spec = render_spectator_screen(room, color=False, now_ms=65_000)
    assert "--- bob (seat 1) ---" in spec and spec.count("Klondike (draw=1") == 1


def test_terminal_completion_offers_moves_and_commands():
    from solrace.client.options import parse_option
    from solrace.client.terminal import completions

    moves = ["t1-f1", "t1-t3", "t2-f1", "deal"]
    assert completions("t1", moves) == ["t1-f1", "t1-t3"]
    assert completions("d", moves) == ["deal"]
    assert completions("/re", moves) == ["/ready", "/resign", "/rematch"]
    assert completions("", moves) == moves
    assert parse_option("draw=3") == ("draw", 3)
    assert parse_option("public=yes") == ("public", True)
    assert parse_option("moves=build") == ("moves", "build")
    assert parse_option("seed=12345") == ("seed", "12345")
