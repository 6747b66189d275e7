"""The sans-I/O room: lobby, countdown, moves, undo policy, resign, finish, ranking, time limit,
kick, rematch — all without a socket or Redis."""

from __future__ import annotations

import hashlib

import pytest
from solrace.engine import new_game, replay
from solrace.protocol.messages import ProtocolError
from solrace.server.rules.room import FINISHED, LOBBY, RACING, Room, commitment, token_hash

T0 = 1_000_000


def greedy(game) -> str:
    """Putt Putt play the end-to-end tests use too: a tX-f1 move when there is one, else deal."""
    moves = [str(mv) for mv in game.legal_moves()]
    plays = [mv for mv in moves if mv != "deal"]
    return plays[0] if plays else moves[0]


def make_room(n_players: int = 2, **options) -> Room:
    opts = {"game": "puttputt", "countdown": 3, **options}
    room = Room.new("ABCDE", token_hash("host"), opts, T0)
    for i in range(n_players):
        room.join(f"p{i}", token_hash(f"tok{i}"), T0)
    return room


def racing_room(n_players: int = 2, seed: int = 42, **options) -> Room:
    room = make_room(n_players, **options)
    room.start(T0, seed, b"\x01" * 16)
    room.tick(T0 + 3000)
    assert room.state == RACING
    return room


def test_lobby_join_ready_configure() -> None:
    room = make_room(2)
    assert [s["name"] for s in room.seats()] == ["p0", "p1"]
    ev = room.set_ready(1, True, T0)
    assert ev == [{"kind": "ready", "at": T0, "seat": 1, "ready": True}]
    assert room.set_ready(1, True, T0) == []  # no change, no event
    ev = room.configure({"max_players": 2, "time_limit": 30}, T0)
    assert ev[0]["kind"] == "options" and ev[0]["options"]["time_limit"] == 30
    with pytest.raises(ProtocolError) as exc:
        room.join("p2", token_hash("t2"), T0)
    assert exc.value.code == "room_full"
    with pytest.raises(ProtocolError) as exc:
        room.configure({"max_players": 1}, T0)
    assert exc.value.code == "bad_options"
    with pytest.raises(ProtocolError) as exc:
        room.configure({"game": "klondike", "game_options": {"draw": 7}}, T0)
    assert exc.value.code == "bad_options"


def test_start_countdown_commitment_and_no_moves_before_start() -> None:
    room = make_room(2)
    salt = bytes(range(16))
    ev = room.start(T0, 99, salt)
    assert (
        ev[0]["kind"] == "countdown"
        and ev[0]["starts_at"] == T0 + 3000
        and ev[0]["players"] == [0, 1]
    )
    assert ev[0]["commitment"] == hashlib.sha256(salt + (99).to_bytes(8, "big")).hexdigest()
    assert ev[0]["commitment"] == commitment(99, salt)
    with pytest.raises(ProtocolError) as exc:
        room.play(0, "deal", None, T0 + 100)
    assert exc.value.code == "bad_state"
    assert room.tick(T0 + 2999) == []
    ev = room.tick(T0 + 3000)
    assert [e["kind"] for e in ev] == ["start"] and room.state == RACING
    with pytest.raises(ProtocolError):
        room.join("late", token_hash("late"), T0)


def test_every_seat_gets_the_identical_deal() -> None:
    room = racing_room(3, seed=7)
    views = [room.races[s].game.view() for s in range(3)]
    assert views[0] == views[1] == views[2] == new_game("puttputt", seed=7).view()


def test_text_seed_is_keyed_with_the_server_secret() -> None:
    """Issue 10 item 2: the deal of a text seed is keyed with the server secret, never the
    text's own seed (which anyone can compute); the commitment covers the seed actually dealt.
    Issue 20: under the room text seeds' own key (server/common/derive.py), the text length-prefixed,
    so no other value derived from the secret (a daily's deal) can be a text seed's."""
    import hashlib
    import hmac

    from solrace.engine import seed_from_text
    from solrace.server.rules.room import commitment

    room = make_room(1, seed="2026-11-22")
    room.start(T0, 123, b"\0" * 16, secret=b"s3cret")
    key = hmac.new(b"s3cret", b"solrace/v1/key/room-text-seed", hashlib.sha256).digest()
    want = hmac.new(key, (10).to_bytes(4, "big") + b"2026-11-22", hashlib.sha256).digest()[:8]
    assert room.doc["seed"] == int.from_bytes(want, "big")
    assert room.doc["seed"] != seed_from_text("2026-11-22")
    assert room.doc["commitment"] == commitment(room.doc["seed"], b"\0" * 16)
    other = make_room(1, seed="2026-11-22")
    other.start(T0, 123, b"\0" * 16, secret=b"another")
    assert other.doc["seed"] != room.doc["seed"]
    with pytest.raises(ValueError):  # never the public text alone
        make_room(1, seed="2026-11-22").start(T0, 123, b"\0" * 16)


def test_moves_illegal_out_of_sync_and_progress() -> None:
    room = racing_room(2)
    g = room.races[0].game
    mv = greedy(g)
    plan = room.play(0, mv, 1, T0 + 4000)
    assert plan.entry.move == mv and plan.expected_len == 0
    assert plan.event["kind"] == "progress" and plan.event["moves"] == 1 and plan.event["seat"] == 0
    with pytest.raises(ProtocolError) as exc:
        room.play(0, "t9-f1", None, T0 + 4100)
    assert exc.value.code == "illegal_move"
    with pytest.raises(ProtocolError) as exc:
        room.play(0, "deal", 5, T0 + 4100)
    assert exc.value.code == "out_of_sync"
    assert room.races[0].moves == 1 and room.races[1].moves == 0


def test_rollback_restores_the_cached_game() -> None:
    room = racing_room(1)
    before = room.races[0].game.to_text()
    plan = room.play(0, "deal", None, T0 + 4000)
    room.rollback(plan)
    assert room.races[0].game.to_text() == before and room.races[0].moves == 0


def test_undo_policy() -> None:
    room = racing_room(1, undo="none")
    room.play(0, greedy(room.races[0].game), None, T0 + 4000)
    with pytest.raises(ProtocolError) as exc:
        room.undo(0, None, T0 + 4100)
    assert exc.value.code == "undo_refused"

    room = racing_room(1, undo="safe")
    # a deal reveals the stock's next card: it can never be taken back
    room.play(0, "deal", None, T0 + 4000)
    with pytest.raises(ProtocolError) as exc:
        room.undo(0, None, T0 + 4100)
    assert exc.value.code == "undo_refused"
    # a tableau-to-foundation move reveals nothing in Putt Putt (all tableau cards are face up)
    g = room.races[0].game
    plays = [str(mv) for mv in g.legal_moves() if str(mv) != "deal"]
    while not plays:
        room.play(0, "deal", None, T0 + 4000)
        plays = [str(mv) for mv in g.legal_moves() if str(mv) != "deal"]
    before = g.to_text()
    n = room.races[0].moves
    room.play(0, plays[0], None, T0 + 4200)
    plan = room.undo(0, n + 1, T0 + 4300)
    assert plan.undone and plan.entry.move == plays[0]
    assert g.to_text() == before and room.races[0].moves == n


def play_out(room: Room, seat: int, at: int, step: int = 10) -> None:
    race = room.races[seat]
    while room.status(seat) == "racing":
        room.play(seat, greedy(race.game), None, at)
        at += step


def test_resign_finish_and_results_replay() -> None:
    room = racing_room(2, seed=5)
    play_out(room, 0, T0 + 4000)
    assert room.status(0) in ("won", "dead")
    assert room.finish_if_done(T0 + 9000) == []  # seat 1 still racing
    ev = room.resign(1, T0 + 9000)
    assert ev[0]["status"] == "resigned"
    with pytest.raises(ProtocolError):
        room.resign(1, T0 + 9001)
    ev = room.finish_if_done(T0 + 9001)
    assert ev[0]["kind"] == "results" and room.state == FINISHED
    res = ev[0]
    assert res["seed"] == 5 and commitment(5, bytes.fromhex(res["salt"])) == room.doc["commitment"]
    g = replay(res["game"], res["seed"], res["game_options"], res["moves"]["0"])
    assert g.view() == room.races[0].game.view()
    assert res["ranking"][0]["seat"] == 0 and res["ranking"][1]["status"] == "resigned"
    with pytest.raises(ProtocolError) as exc:
        room.play(0, "deal", None, T0 + 9002)
    assert exc.value.code == "bad_state"


def test_ranking_winners_by_time_then_progress_then_when_reached() -> None:
    room = racing_room(4, seed=5)
    # seats 0 and 1 play the same greedy line; seat 1 is slower
    play_out(room, 0, T0 + 4000, step=10)
    play_out(room, 1, T0 + 4000, step=20)
    # seat 2 and 3 make the same two moves; seat 3 reaches that progress later
    for seat, at in ((2, T0 + 5000), (3, T0 + 6000)):
        for _ in range(3):
            room.play(seat, greedy(room.races[seat].game), None, at)
        room.resign(seat, at + 10)
    room.tick(T0 + 100000)
    ranking = room.doc["results"]["ranking"]
    order = [r["seat"] for r in ranking]
    if room.status(0) == "won":
        assert order[:2] == [0, 1] and ranking[0]["time"] < ranking[1]["time"]
    p2, p3 = ranking[order.index(2)], ranking[order.index(3)]
    assert p2["progress"] == p3["progress"]
    assert order.index(2) < order.index(3)  # same progress, reached earlier
    assert [r["place"] for r in ranking] == sorted(r["place"] for r in ranking)


def test_equal_finishers_share_a_place() -> None:
    room = racing_room(2, seed=5)
    play_out(room, 0, T0 + 4000)
    play_out(room, 1, T0 + 4000)
    room.tick(T0 + 100000)
    ranking = room.doc["results"]["ranking"]
    assert ranking[0]["place"] == ranking[1]["place"] == 1


def test_time_limit() -> None:
    room = racing_room(2, time_limit=10)
    assert room.doc["ends_at"] == T0 + 3000 + 10000
    room.play(0, "deal", None, T0 + 5000)
    with pytest.raises(ProtocolError) as exc:
        room.play(1, "deal", None, T0 + 13000)
    assert exc.value.code == "bad_state"
    ev = room.tick(T0 + 13000)
    kinds = [e["kind"] for e in ev]
    assert kinds == ["progress", "progress", "results"]
    assert {e["status"] for e in ev[:2]} == {"timeout"}
    ranking = room.doc["results"]["ranking"]
    assert ranking[0]["seat"] == 0  # more progress? both 0 home: then the earlier reach; seat order
    assert room.state == FINISHED


def test_kick_in_lobby_and_in_race() -> None:
    room = make_room(3)
    ev = room.kick(2, T0)
    assert ev == [{"kind": "kicked", "at": T0, "seat": 2}]
    assert len(room.seats()) == 2 and room.seat_by_token(token_hash("tok2")) is None
    room.start(T0, 1, b"\0" * 16)
    room.tick(T0 + 3000)
    ev = room.kick(1, T0 + 4000)
    assert ev[1]["status"] == "left"
    assert room.racing_seats() == [0]


def test_rematch_new_round_same_room() -> None:
    room = racing_room(2, seed=3)
    room.resign(0, T0 + 4000)
    room.resign(1, T0 + 4000)
    room.tick(T0 + 4001)
    assert room.state == FINISHED
    ev = room.rematch(T0 + 5000)
    assert ev[0]["kind"] == "rematch" and room.state == LOBBY and room.doc["round"] == 2
    assert room.doc["seed"] is None and room.races == {}
    assert all(not s["ready"] and s["status"] == "waiting" for s in room.seats())
    room.start(T0 + 6000, 4, b"\0" * 16)
    assert room.doc["seed"] == 4
    with pytest.raises(ProtocolError) as exc:
        room.rematch(T0)
    assert exc.value.code == "bad_state"


def test_host_token_and_names() -> None:
    room = make_room(1)
    assert room.is_host(token_hash("host")) and not room.is_host(token_hash("tok0"))
    for bad in ("", " " * 3, "x" * 25, "a\x00b"):
        with pytest.raises(ProtocolError):
            room.join(bad, token_hash("q"), T0)


def test_room_document_is_plain_data() -> None:
    import msgpack

    room = racing_room(2)
    room.play(0, "deal", None, T0 + 4000)
    assert msgpack.unpackb(msgpack.packb(room.doc), strict_map_key=False) == room.doc


def test_a_racers_addresses_see_no_board_until_the_seat_is_done() -> None:
    """Issue 10 item 1, the rule: every address that took or resumed a seat is the racer's;
    while that seat races, spectators there get no board (nobody's, its own included)."""
    from solrace.server.rules import projection
    from solrace.server.rules.room import MAX_SEAT_ADDRS

    room = make_room(0)
    room.join("ann", token_hash("a"), T0, None, addr="home")
    room.join("bob", token_hash("b"), T0, None, addr="office")
    assert not room.watching_own_race("home")  # the lobby: no race, nothing to hide
    room.start(T0, 42, b"\x01" * 16)
    assert room.watching_own_race("home") and not room.watching_own_race("cafe")
    room.tick(T0 + 3000)
    assert room.note_address(0, "phone") == []  # ann resumed from her phone: no event
    assert room.racing_addresses() == {"home", "phone", "office"}
    for addr, blind in (("home", True), ("phone", True), ("cafe", False), (None, True)):
        boards = projection.spectator_boards(room, T0 + 4000, addr)
        assert (boards is None) == blind, addr
    room.resign(0, T0 + 5000)  # ann is done: she may watch bob
    assert not room.watching_own_race("phone") and room.watching_own_race("office")
    room.resign(1, T0 + 6000)
    room.tick(T0 + 6000)
    assert room.state == "finished" and not room.watching_own_race(None)
    for i in range(MAX_SEAT_ADDRS + 2):  # only the newest addresses are kept
        room.note_address(1, f"net{i}")
    assert room.seat(1)["addrs"][-1] == f"net{MAX_SEAT_ADDRS + 1}"
    assert len(room.seat(1)["addrs"]) == MAX_SEAT_ADDRS
