"""The web client's player key (issue 13): made once per browser, kept in localStorage, sent
in every hello; the server answers with the same public player id after a reload, another
browser gets another, and the other players see it."""

from __future__ import annotations

import pytest
from solrace.server.league.players import key_hash, player_id
from web.pages import create_room, join_room, js, new_page, state

pytestmark = pytest.mark.browser


def test_the_player_key_is_kept_and_names_the_same_player(browser, web_server):
    errors: list[str] = []
    ann = new_page(browser, errors, "ann")
    bob = new_page(browser, errors, "bob")
    try:
        code = create_room(ann, web_server.url, "Ann")
        key = ann.evaluate("localStorage.getItem('solrace.playerKey')")
        assert len(key) == 43
        pid = player_id(key_hash(key))
        assert state(ann, "S.player") == pid
        ann.reload()
        js(ann, "S.conn === 'open' && S.player !== null")
        assert state(ann, "S.player") == pid
        assert ann.evaluate("localStorage.getItem('solrace.playerKey')") == key

        join_room(bob, web_server.url, code, "Bob")
        other = state(bob, "S.player")
        assert other and other != pid
        js(ann, f"S.snap && S.snap.players.some((p) => p.name === 'Bob' && p.player === '{other}')")
        assert errors == []
    finally:
        ann.context.close()
        bob.context.close()
