"""Every way a user can name a room reduces to a WebSocket URL and a room code."""

import pytest
from solrace.client.urls import DEFAULT_SERVER, parse_target, share_link


@pytest.mark.parametrize(
    "text, url, room",
    [
        ("ws://h:9000/ws", "ws://h:9000/ws", None),
        ("ws://h:9000/ws#AB12C", "ws://h:9000/ws", "AB12C"),
        ("wss://example.org/ws", "wss://example.org/ws", None),
        ("http://h:9000/", "ws://h:9000/ws", None),
        ("http://h:9000", "ws://h:9000/ws", None),
        ("http://h:9000/#KX7QF", "ws://h:9000/ws", "KX7QF"),
        ("http://h:9000/r/KX7QF", "ws://h:9000/ws", "KX7QF"),
        ("https://h/r/KX7QF/", "wss://h/ws", "KX7QF"),
        ("KX7QF", DEFAULT_SERVER, "KX7QF"),
        ("  KX7QF ", DEFAULT_SERVER, "KX7QF"),
        ("", DEFAULT_SERVER, None),
    ],
)
def test_parse_target_forms(text, url, room):
    t = parse_target(text)
    assert (t.url, t.room) == (url, room)


def test_bare_code_uses_given_server_in_any_form():
    assert parse_target("AB", server="http://x:1/").url == "ws://x:1/ws"
    assert parse_target("AB", server="ws://x:1/ws").room == "AB"


def test_default_port_matches_proposal():
    assert DEFAULT_SERVER == "ws://127.0.0.1:8765/ws"


@pytest.mark.parametrize("bad", ["ftp://h/", "http://h/other/path", "not a code!", "http:///r/X"])
def test_parse_target_refuses(bad):
    with pytest.raises(ValueError):
        parse_target(bad)


def test_share_link_round_trips():
    link = share_link("wss://h:1/ws", "KX7QF")
    assert link == "https://h:1/r/KX7QF"
    t = parse_target(link)
    assert (t.url, t.room) == ("wss://h:1/ws", "KX7QF")
    assert share_link("ws://h:1/ws", None) == "http://h:1/"
