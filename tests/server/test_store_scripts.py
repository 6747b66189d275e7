"""The store's Lua scripts are package data (server/store/lua/*.lua): each one in the source
tree is read from the installed package (the strict editable install, like a wheel, holds
only the files pyproject's package-data names), and each is run by a part of the store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from solrace.server.store import scripts

STORE = Path(__file__).resolve().parents[2] / "server" / "store"
NAMES = sorted(p.stem for p in (STORE / "lua").glob("*.lua"))


def test_there_are_scripts() -> None:
    assert len(NAMES) >= 12


@pytest.mark.parametrize("name", NAMES)
def test_each_script_is_shipped_as_written(name: str) -> None:
    assert scripts.source(name) == (STORE / "lua" / f"{name}.lua").read_text()


def test_each_script_is_run_by_the_store() -> None:
    used: set[str] = set()
    for module in STORE.glob("*.py"):
        used |= set(re.findall(r'(?:source|numbering|folding)\("(\w+)"', module.read_text()))
    used |= {"append", "owned"}  # append_script and owned_script write their limits in
    assert set(NAMES) == used


def test_the_append_scripts_get_their_limits_written_in() -> None:
    assert scripts.append_script(500, 1000).startswith("local MAXLEN, TTL = 500, 1000\n")
    assert scripts.owned_script(500, 1000).endswith(scripts.source("owned"))


def test_the_folding_scripts_get_the_tail_and_their_limits() -> None:
    text = scripts.folding("load", 500, 1000)
    assert text.startswith("local MAXLEN, TTL = 500, 1000\n")
    assert scripts.source("tail") in text and text.endswith(scripts.source("load"))
