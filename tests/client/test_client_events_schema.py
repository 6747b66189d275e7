"""The Python client's typed messages against the protocol's tables: one schema, no drift.

protocol/messages.py (`SERVER`, `EVENT_KINDS`) is what the server promises and validates;
client/events.py is what the client can read. Every message type and event kind the protocol
defines must have a client class with exactly the protocol's fields: a field the protocol
added and the client lacks is data the client silently drops (as `solved`, `player_joined.bot`,
`results.daily` and `results.record` were), a field only the client has is a promise the
server never made.
"""

from __future__ import annotations

from dataclasses import fields

import pytest
import solrace.client.events as ev
import solrace.protocol.messages as m

#: what every client message class carries besides the wire's fields: the message type,
#: the map as received, and `ref` (set by the server on any reply)
ENVELOPE = {"type", "raw", "ref"}


def wire_fields(cls: type[ev.Message], base: type[ev.Message]) -> set[str]:
    """The wire keys a client class reads beyond those of `base`."""
    own = {f.name for f in fields(cls)} - {f.name for f in fields(base)}
    return {ev.WIRE_NAMES.get(name, name) for name in own}


def test_every_server_message_type_is_known_to_the_client() -> None:
    assert set(ev.MESSAGE_TYPES) == set(m.SERVER) - {"event"}


@pytest.mark.parametrize("mtype", sorted(set(m.SERVER) - {"event"}))
def test_message_fields_match_the_protocol(mtype: str) -> None:
    cls = ev.MESSAGE_TYPES[mtype]
    assert wire_fields(cls, ev.Message) == set(m.SERVER[mtype]) - ENVELOPE


def test_the_event_envelope_matches_the_protocol() -> None:
    assert wire_fields(ev.Event, ev.Message) == set(m.SERVER["event"])


def test_every_event_kind_is_known_to_the_client() -> None:
    assert set(ev.EVENT_KINDS) == set(m.EVENT_KINDS)


@pytest.mark.parametrize("kind", sorted(m.EVENT_KINDS))
def test_event_fields_match_the_protocol(kind: str) -> None:
    assert wire_fields(ev.EVENT_KINDS[kind], ev.Event) == set(m.EVENT_KINDS[kind])


def test_new_fields_reach_the_typed_event() -> None:
    """The fields the client used to drop are read from a real-shaped event."""
    joined = ev.parse_message(
        m.event(3, "player_joined", 10, seat=1, name="bot", player="p1", bot=True)
    )
    assert isinstance(joined, ev.PlayerJoined) and joined.bot is True
    results = ev.parse_message(
        m.event(9, "results", 11, ranking=[], seed=None, salt=None, game="klondike",
                game_options={}, moves={}, daily="2026-01-01/klondike", record="R1")
    )  # fmt: skip
    assert isinstance(results, ev.Results)
    assert (results.daily, results.record) == ("2026-01-01/klondike", "R1")
    solved = ev.parse_message(
        m.event(10, "solved", 12, deal="won", deal_moves=90, seats={"0": ["lost", None]})
    )
    assert isinstance(solved, ev.Solved)
    assert (solved.deal, solved.deal_moves, solved.seats) == ("won", 90, {"0": ["lost", None]})
