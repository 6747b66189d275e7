"""Display names: 1 to NAME_MAX user-perceived characters (grapheme clusters), so a joined
emoji (👩‍👩‍👧‍👦: seven code points) or a letter with combining accents counts as one, as the
web client counts them (`Intl.Segmenter`, client/web/js/text.js `graphemes`).

The clusters are a simplification of Unicode's extended grapheme clusters (UAX #29) that
needs only `unicodedata`: a cluster is a base character followed by its extenders
(combining marks, variation selectors, emoji skin-tone modifiers, tag characters), a
zero-width joiner joins the next character to the cluster (emoji sequences), and two
regional indicators make one flag. Where it differs from the full rules (conjoining Hangul
jamo, prepended marks: rare in names) it counts more clusters, never fewer, so the server
may refuse a name the browser counted as 24 but never accepts a longer one.

A character is at most CLUSTER_MAX code points (a family with skin tones is 11), so no
pile of combining marks makes one; a name is at most NAME_MAX * CLUSTER_MAX code points,
which is the wire's bound on the field (messages.py NAME_CODE_POINTS).
"""

from __future__ import annotations

import unicodedata

from solrace.protocol.messages import NAME_CODE_POINTS, ProtocolError

#: the longest name, in user-perceived characters
NAME_MAX = 24
#: the most code points one character may hold
CLUSTER_MAX = 16
assert NAME_MAX * CLUSTER_MAX == NAME_CODE_POINTS

ZWJ = "\u200d"
_EXTEND_CATEGORIES = ("Mn", "Me", "Mc")
#: format characters a name may hold: the zero-width joiner and non-joiner, and the tag
#: characters of subdivision flags (🏴 + tags + cancel tag)
_ALLOWED_FORMAT = {ZWJ, "\u200c"} | {chr(c) for c in range(0xE0020, 0xE0080)}

REFUSAL = f"a name is 1 to {NAME_MAX} characters (joined emoji count as one), no control characters"


def _extends(ch: str) -> bool:
    cp = ord(ch)
    return (
        unicodedata.category(ch) in _EXTEND_CATEGORIES
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF
        or 0x1F3FB <= cp <= 0x1F3FF  # emoji modifiers (skin tones)
        or 0xE0020 <= cp <= 0xE007F  # tags
        or ch == "\u200c"
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def graphemes(text: str) -> list[str]:
    """The text's user-perceived characters (see the module's note on the rules)."""
    out: list[str] = []
    joined = False  # the previous character was a ZWJ: this one joins its cluster
    ri_open = False  # the last cluster is one regional indicator, waiting for its pair
    for ch in text:
        if out and (joined or ch == ZWJ or _extends(ch)):
            out[-1] += ch
            joined = ch == ZWJ
            continue
        if out and ri_open and _regional(ch):
            out[-1] += ch
            ri_open = False
            continue
        out.append(ch)
        joined = False
        ri_open = _regional(ch)
    return out


def printable(ch: str) -> bool:
    return ch.isprintable() or ch in _ALLOWED_FORMAT


def clean_name(name: str) -> str:
    """The name as shown (runs of white space made one space, trimmed), or `bad_message`."""
    name = " ".join(name.split())
    if (
        not name
        or not name[0].isprintable()  # a name starts with a character one can see
        or _extends(name[0])
        or len(name) > NAME_CODE_POINTS
        or len(parts := graphemes(name)) > NAME_MAX
        or any(len(part) > CLUSTER_MAX for part in parts)
        or not all(printable(ch) for ch in name)
    ):
        raise ProtocolError("bad_message", REFUSAL, field="name")
    return name
