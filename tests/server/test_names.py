"""Display names (protocol/names.py): 1 to 24 user-perceived characters, so joined emoji
count as one (issue 23, item 7), no control characters, a bound in code points."""

from __future__ import annotations

import pytest
from solrace.protocol.messages import ProtocolError, validate_client
from solrace.protocol.names import NAME_MAX, clean_name, graphemes

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 👩‍👩‍👧‍👦
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        (FAMILY, 1),
        ("\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea", 2),  # two flags
        ("\U0001f44d\U0001f3fd", 1),  # a skin tone
        (SCOTLAND, 1),
        ("e\u0301", 1),  # a combining accent
        ("Ann", 3),
    ],
)
def test_graphemes(text: str, count: int) -> None:
    assert len(graphemes(text)) == count


def test_joined_emoji_and_accents_are_names() -> None:
    assert clean_name(FAMILY) == FAMILY
    assert clean_name(f"  {FAMILY}   Ann ") == f"{FAMILY} Ann"
    assert clean_name(FAMILY * NAME_MAX) == FAMILY * NAME_MAX  # 24 characters, 167 code points
    assert clean_name("e\u0301" * NAME_MAX)
    assert clean_name(SCOTLAND + "x")


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "a" * 25,
        FAMILY * 25,
        "a\x00b",
        "a\nb\x07",
        "\u200d" * 5,
        "\u0301abc",
        "x" + "\u0301" * 16,
    ],
)
def test_refused(bad: str) -> None:
    with pytest.raises(ProtocolError) as exc:
        clean_name(bad)
    assert exc.value.code == "bad_message" and exc.value.extra["field"] == "name"


def test_the_wire_takes_a_joined_emoji_name() -> None:
    validate_client({"type": "join", "room": "ABCDE", "name": FAMILY * 3})
