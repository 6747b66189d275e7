"""The local room model follows snapshots, numbered events, acks and boards."""

from solrace.client import events as ev
from solrace.client.room import RoomModel


def snap(**over):
    base = {
        "room": "KX7QF",
        "state": "lobby",
        "event": 2,
        "options": {"game": "puttputt"},
        "host_seat": 0,
        "commitment": None,
        "starts_at": None,
        "ends_at": None,
        "now": 1_000_000,
        "players": [
            {
                "seat": 0,
                "name": "ann",
                "ready": False,
                "connected": True,
                "status": "waiting",
                "moves": 0,
                "home": 0,
                "progress": 0.0,
                "time": None,
            }
        ],
        "spectators": 0,
        "you": {"seat": 0, "view": None},
        "boards": None,
        "results": None,
    }
    base.update(over)
    return base


def event(n, kind, **fields):
    return ev.parse_message({"type": "event", "n": n, "kind": kind, "at": 1_000_000 + n, **fields})


def test_parse_message_types_and_kinds():
    assert isinstance(ev.parse_message({"type": "welcome", "version": 1}), ev.Welcome)
    e = ev.parse_message({"type": "error", "code": "no_room", "message": "x", "ref": 3, "extra": 1})
    assert isinstance(e, ev.Error) and e.code == "no_room" and e.ref == 3 and e.raw["extra"] == 1
    p = event(5, "progress", seat=1, moves=3, home=2, progress=0.1, status="racing", time=None)
    assert isinstance(p, ev.Progress) and p.seat == 1 and p.n == 5
    assert type(event(6, "brand_new_kind", x=1)) is ev.Event
    assert isinstance(ev.parse_message({"type": "future"}), ev.Unknown)


def test_events_apply_in_order_and_replays_are_skipped():
    room = RoomModel()
    room.apply(
        ev.parse_message(
            {
                "type": "joined",
                "room": "KX7QF",
                "role": "player",
                "seat": 0,
                "token": "t",
                "snapshot": snap(),
            },
        )
    )
    assert room.room == "KX7QF" and room.event == 2 and room.seat == 0
    assert room.apply(event(3, "player_joined", seat=1, name="bob"))
    assert room.players[1]["name"] == "bob"
    assert not room.apply(event(3, "player_joined", seat=1, name="bob"))  # replay
    room.apply(event(4, "ready", seat=1, ready=True))
    room.apply(event(5, "options", options={"time_limit": 60}))
    assert room.players[1]["ready"] and room.options == {"game": "puttputt", "time_limit": 60}
    room.apply(event(6, "countdown", starts_at=1_003_000, commitment="ab", players=[0, 1]))
    assert room.state == "countdown" and room.commitment == "ab"
    room.apply(event(7, "start", starts_at=1_003_000, ends_at=1_063_000))
    assert room.state == "racing" and room.players[1]["status"] == "racing"
    room.apply(
        event(8, "progress", seat=1, moves=4, home=3, progress=0.2, status="racing", time=None)
    )
    assert room.players[1]["progress"] == 0.2
    room.apply(event(9, "connected", seat=1, connected=False))
    assert room.players[1]["connected"] is False
    room.apply(
        event(
            10,
            "results",
            ranking=[{"seat": 1, "place": 1}],
            seed=5,
            salt="aa",
            game="puttputt",
            game_options={},
            moves={1: ["deal"]},
        )
    )
    assert room.state == "finished" and room.results["seed"] == 5
    room.apply(event(11, "rematch", options={"game": "klondike"}))
    assert room.state == "lobby" and room.results is None and not room.players[1]["ready"]
    assert room.event == 11 and room.gaps == []


def test_gap_is_recorded_and_snapshot_clears_it():
    room = RoomModel()
    room.apply_snapshot(snap())
    room.apply(event(5, "player_joined", seat=1, name="bob"))
    assert room.gaps == [5]
    room.apply(ev.parse_message({"type": "snapshot", "snapshot": snap(event=9)}))
    assert room.gaps == [] and room.event == 9 and 1 not in room.players


def test_ack_updates_own_view_and_board_updates_spectator_boards():
    room = RoomModel()
    room.apply_snapshot(snap(state="racing"))
    view = {"game": "puttputt", "moves": 1, "home": 1, "progress": 1 / 35, "piles": {}}
    room.apply(
        ev.parse_message(
            {
                "type": "ack",
                "ref": 1,
                "n": 1,
                "move": "t1-f1",
                "revealed": [],
                "view": view,
                "status": "racing",
            }
        )
    )
    assert room.view == view and room.players[0]["moves"] == 1
    room.apply(ev.parse_message({"type": "board", "seat": 0, "moves": 1, "view": view}))
    assert room.boards == {0: view}


def test_an_ack_stands_for_the_movers_progress_event_when_it_is_the_next_one():
    room = RoomModel()
    room.apply_snapshot(snap(state="racing", event=7))
    view = {"game": "puttputt", "moves": 1, "home": 1, "progress": 1 / 35, "piles": {}}
    ack = {
        "type": "ack",
        "ref": 1,
        "n": 1,
        "move": "t1-f1",
        "revealed": [],
        "view": view,
        "status": "racing",
        "event": 8,
        "at": 1_002_000,
        "home": 1,
        "progress": 1 / 35,
        "time": 2000,
    }
    room.apply(ev.parse_message(ack))
    assert room.event == 8 and room.gaps == []
    assert room.players[0]["moves"] == 1 and room.players[0]["time"] == 2000
    # the same event arriving after all (a replay) changes nothing and is no gap
    assert not room.apply(
        event(8, "progress", seat=0, moves=1, home=1, progress=1 / 35, status="racing", time=2000)
    )
    # an ack whose event is not the next one (events 9, 10 are still on their way) does not
    # count: its event comes later, in order
    room.apply(ev.parse_message({**ack, "n": 2, "event": 11, "view": {**view, "moves": 2}}))
    assert room.event == 8 and room.players[0]["moves"] == 2
    for n in (9, 10):
        room.apply(
            event(n, "progress", seat=1, moves=1, home=0, progress=0.0, status="racing", time=10)
        )
    assert room.apply(
        event(11, "progress", seat=0, moves=2, home=1, progress=1 / 35, status="racing", time=2500)
    )
    assert room.event == 11 and room.gaps == []


def test_a_coalesced_progress_frame_updates_its_seats_and_counts_as_its_events():
    room = RoomModel()
    room.apply_snapshot(snap(state="racing", event=5))

    def line(seat, moves):
        return {
            "seat": seat,
            "moves": moves,
            "home": moves,
            "progress": moves / 35,
            "status": "racing",
            "time": moves * 100,
        }

    frame = ev.parse_message(
        {"type": "progress", "from": 6, "n": 9, "at": 1, "seats": [line(0, 2), line(1, 3)]}
    )
    assert isinstance(frame, ev.ProgressFrame) and frame.first == 6
    assert room.apply(frame)
    assert room.event == 9 and room.gaps == []
    assert room.players[0]["moves"] == 2 and room.players[1]["moves"] == 3
    assert not room.apply(frame)  # nothing new
    late = {"type": "progress", "from": 12, "n": 13, "at": 2, "seats": [line(1, 5)]}
    assert room.apply(ev.parse_message(late))
    assert room.gaps == [12] and room.players[1]["moves"] == 5


def test_clock_from_snapshot():
    room = RoomModel()
    room.apply_snapshot(snap(now=10_000, state="countdown", starts_at=13_000), local_ms=5_000)
    assert room.clock_offset == 5_000
    assert room.countdown_left(local_ms=6_000) == 2.0
    room.apply(event(3, "start", starts_at=13_000, ends_at=None))
    assert room.elapsed(local_ms=18_000) == 10.0 and room.time_left(local_ms=18_000) is None


def test_kick_and_leave_in_lobby_free_the_seat():
    room = RoomModel()
    room.apply_snapshot(snap())
    room.apply(event(3, "player_joined", seat=1, name="bob"))
    room.apply(event(4, "player_joined", seat=2, name="cy"))
    room.apply(event(5, "kicked", seat=1))
    room.apply(event(6, "player_left", seat=2))
    assert sorted(room.players) == [0]
