"""The deal a test server makes of a text seed, for tests that mirror a racer's game.

A racer cannot compute it: the server keys the text with its secret (server/store/secret.py). Every
server the tests start runs with TEST_SECRET (tests/conftest.py sets SOLRACE_SECRET), so a
test can, and the texts below are deals the web and client tests script moves on (found by
trying `web-N` and `web-bugs-N` for N = 1, 2, ...: a change of the derivation needs new ones).
`dealt` is the server's own function, never a copy of it."""

from __future__ import annotations

from solrace.server.rules.room import text_deal_seed

#: SOLRACE_SECRET of every server the tests start (a test that needs another sets its own)
TEST_SECRET = "solrace-tests"
#: Klondike under TEST_SECRET: AH tops t3, t4-t5 and t7-t6 are legal, t1-t2 (KC on 7H) is not
KLONDIKE_TEXT = "web-71592"
#: Putt Putt under TEST_SECRET: the legal moves are exactly t2-f1, t3-f1, deal
PUTT_TEXT = "web-bugs-71"


def dealt(text: str) -> int:
    """The seed a test server deals for the text seed `text`."""
    return text_deal_seed(TEST_SECRET.encode(), text)
