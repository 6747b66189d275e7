"""Room options from the command line (`--create GAME -o key=value ...`).

`play` and `bot` both create rooms; one parser keeps their options the same.
Values are typed the obvious way (ints, booleans), except options that are
text by nature: a text seed "12345" must stay text.
"""

from __future__ import annotations

import argparse
from typing import Any

#: keys that belong to the game's rules, sent under `game_options`
GAME_OPTION_KEYS = {"draw", "moves", "passes"}
#: keys whose values stay strings
STRING_OPTIONS = {"seed", "undo", "spectator_view", "moves", "game", "scoring", "points"}
#: keys that make up the `series` option (`-o series=5 -o scoring=time -o points=10,7,5`;
#: `series=open`: until the host ends it)
SERIES_KEYS = {"series", "scoring", "points"}


def parse_option(text: str) -> tuple[str, Any]:
    """`key=value` from the command line, with ints and booleans typed."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    if key in STRING_OPTIONS:  # a text seed "12345" stays text
        return key, value
    v: Any = value
    if value.lower() in ("true", "yes", "on"):
        v = True
    elif value.lower() in ("false", "no", "off"):
        v = False
    else:
        try:
            v = int(value)
        except ValueError:
            pass
    return key, v


def room_options(game: str, pairs: list[tuple[str, Any]] | None) -> dict[str, Any]:
    """Room options for `--create GAME -o k=v ...`: game rule options go under `game_options`."""
    opts: dict[str, Any] = {"game": game}
    game_opts: dict[str, Any] = {}
    series: dict[str, Any] = {}
    for key, value in pairs or []:
        if key == "series":
            series["rounds"] = 0 if value == "open" else value
        elif key == "scoring":
            series["scoring"] = value
        elif key == "points":
            series["points"] = [int(p) for p in str(value).split(",") if p.strip()]
        else:
            (game_opts if key in GAME_OPTION_KEYS else opts)[key] = value
    if game_opts:
        opts["game_options"] = game_opts
    if series:
        opts["series"] = series
    return opts
