"""Issue 20: every value derived from the server secret has its own key and an unambiguous
input (server/common/derive.py), so no text seed deals a daily or yields any other derived value."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from solrace.protocol import messages as m
from solrace.server.common import derive
from solrace.server.league.daily import candidate_seed, default_options
from solrace.server.rules.room import text_deal_seed

SECRET = b"a deployment's secret"
DATES = ["2026-11-26", "2026-11-27", "2027-01-01"]
CANDIDATES = 40


def daily_seeds() -> set[int]:
    return {
        candidate_seed(SECRET, date, game, default_options(game), n)
        for date in DATES
        for game in m.GAME_NAMES
        for n in range(CANDIDATES)
    }


def old_texts() -> list[str]:
    """The texts that named a daily's candidate before issue 20, and near variants."""
    out = []
    for date in DATES:
        for game in m.GAME_NAMES:
            opts = json.dumps(default_options(game), sort_keys=True, separators=(",", ":"))
            for n in range(CANDIDATES):
                out += [f"daily|{date}|{game}|{opts}|{n}", f"{date}|{game}|{opts}|{n}"]
            out += [date, f"{date}/{game}", f"daily:{date}/{game}"]
    return out


def test_no_old_daily_text_deals_a_daily() -> None:
    dailies = daily_seeds()
    assert len(dailies) == len(DATES) * len(m.GAME_NAMES) * CANDIDATES
    assert not {text_deal_seed(SECRET, t) for t in old_texts()} & dailies


def test_each_purpose_has_its_own_key() -> None:
    keys = {derive.key_for(SECRET, p) for p in derive.PURPOSES}
    assert len(keys) == len(derive.PURPOSES)
    with pytest.raises(ValueError):
        derive.key_for(SECRET, "a client's text")
    with pytest.raises(ValueError):
        derive.key_for(b"", derive.ROOM_TEXT_SEED)


fields = st.lists(st.text(max_size=12) | st.integers(min_value=0, max_value=10**6), max_size=5)


@settings(max_examples=300, deadline=None)
@given(fields, fields)
def test_field_lists_never_share_an_encoding(a: list[str | int], b: list[str | int]) -> None:
    if [str(x) for x in a] != [str(x) for x in b]:
        assert derive.encode_fields(*a) != derive.encode_fields(*b)


_DAILIES = daily_seeds()
_KEY_PREFIXES = {int.from_bytes(derive.key_for(SECRET, p)[:8], "big") for p in derive.PURPOSES}


@settings(max_examples=500, deadline=None)
@given(st.text(min_size=1, max_size=64))
def test_no_text_seed_is_another_derived_value(text: str) -> None:
    seed = text_deal_seed(SECRET, text)
    assert seed not in _DAILIES
    assert seed not in _KEY_PREFIXES
    # the same text as another purpose's input derives something else
    assert seed != derive.derive_seed(SECRET, derive.DAILY_CANDIDATE, text)
    assert seed == text_deal_seed(SECRET, text)  # and a text seed is still one deal
