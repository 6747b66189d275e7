"""Property test of the sans-I/O room: any sequence of commands, refused or not, keeps the rules.

A refused command (ProtocolError) changes nothing at all: not the document, not any seat's game.
A finished race's results replay, with the engine, to exactly the seats' games.
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solrace.engine import replay
from solrace.protocol.messages import ProtocolError
from solrace.server.rules.room import FINISHED, Room, commitment, token_hash

# weighted so that races start, run and end often within a short script
COMMANDS = st.sampled_from(
    [
        "join",
        "join",
        "leave",
        "ready",
        "configure",
        "start",
        "start",
        "tick",
        "tick",
        "move",
        "move",
        "move",
        "move",
        "bad_move",
        "undo",
        "resign",
        "resign",
        "resign",
        "kick",
        "rematch",
    ]
)


def fingerprint(room: Room):
    return copy.deepcopy(room.doc), {
        s: (r.game.to_text(), [(e.move, e.at) for e in r.entries], r.rev)
        for s, r in room.races.items()
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(COMMANDS, st.integers(0, 2), st.integers(0, 3000)), min_size=5, max_size=80),
    st.sampled_from(["puttputt", "tabbycat", "klondike"]),
    st.sampled_from(["none", "safe"]),
)
def test_refusals_change_nothing_and_results_replay(script, game, undo) -> None:
    now = 1_000_000
    room = Room.new(
        "PROPS",
        token_hash("host"),
        {"game": game, "countdown": 1, "undo": undo, "max_players": 3},
        now,
    )
    joined = 0
    opening = [("join", 0, 0), ("join", 0, 0), ("start", 0, 5), ("tick", 0, 1000)]
    for cmd, seat, step in opening + script:
        now += step
        before = fingerprint(room)
        try:
            if cmd == "join":
                room.join(f"p{joined}", token_hash(f"t{joined}"), now)
                joined += 1
            elif cmd == "leave":
                room.leave(seat, now)
            elif cmd == "ready":
                room.set_ready(seat, bool(step % 2), now)
            elif cmd == "configure":
                room.configure({"time_limit": step % 3}, now)
            elif cmd == "start":
                room.start(now, step * 7919, bytes(16))
            elif cmd == "tick":
                room.tick(now)
            elif cmd == "move":
                race = room.races.get(seat)
                legal = [str(m) for m in race.game.legal_moves()] if race else ["deal"]
                room.play(seat, legal[step % len(legal)] if legal else "deal", None, now)
            elif cmd == "bad_move":
                room.play(seat, "t9-t9", None, now)
            elif cmd == "undo":
                room.undo(seat, None, now)
            elif cmd == "resign":
                room.resign(seat, now)
            elif cmd == "kick":
                room.kick(seat, now)
            elif cmd == "rematch":
                room.rematch(now)
        except ProtocolError as exc:
            assert exc.code in {
                "bad_state",
                "not_player",
                "room_full",
                "illegal_move",
                "undo_refused",
                "bad_options",
                "out_of_sync",
            }, exc.code
            assert fingerprint(room) == before, (
                f"{cmd} was refused ({exc.code}) but changed the room"
            )
        if room.state == FINISHED:
            res = room.doc["results"]
            assert commitment(res["seed"], bytes.fromhex(res["salt"])) == room.doc["commitment"]
            assert {r["seat"] for r in res["ranking"]} == set(room.races)
            for s, race in room.races.items():
                g = replay(res["game"], res["seed"], res["game_options"], res["moves"][str(s)])
                assert g.to_text() == race.game.to_text()
