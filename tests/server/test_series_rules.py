"""Series in a room, sans-I/O: rounds on fresh seeds, points by place (ties shared) or total
time, standings after each round, late joiners on 0, leavers keeping their points, the host's
end, and the series record checked the way `solrace verify` checks it."""

from __future__ import annotations

import pytest
from solrace.protocol.messages import ProtocolError, merge_options
from solrace.protocol.record_verify import verify
from solrace.protocol.series import (
    check_option,
    round_points,
    series_id,
    standings,
    verify_series,
)
from solrace.server.league.records import build_record, build_series_record
from solrace.server.rules.room import FINISHED, LOBBY, RACING, Room, token_hash

T0 = 1_000_000


def greedy(game) -> str:
    moves = [str(mv) for mv in game.legal_moves()]
    plays = [mv for mv in moves if mv != "deal"]
    return plays[0] if plays else moves[0]


def make_room(n: int = 2, **options) -> Room:
    opts = {"game": "puttputt", "countdown": 3, **options}
    room = Room.new("ABCDE", token_hash("host"), opts, T0)
    for i in range(n):
        room.join(f"p{i}", token_hash(f"tok{i}"), T0)
    return room


def play_round(room: Room, seed: int, homes: dict[int, int], now: int) -> list[dict]:
    """Start a race, let each seat get `homes[seat]` more cards home than it starts with (by
    the greedy play), then resign everyone still racing: places follow the homes."""
    events = room.start(now, seed, bytes([seed % 256]) * 16)
    now += 3000
    events += room.tick(now)
    assert room.state == RACING
    for seat, want in homes.items():
        race = room.races[seat]
        start = race.game.home()
        while race.game.home() < start + want and room.status(seat) == "racing":
            now += 10
            room.play(seat, greedy(race.game), None, now)
    for seat in room.racing_seats():
        now += 10
        events += room.resign(seat, now)
    events += room.tick(now)
    assert room.state == FINISHED
    return events


def records_of(room: Room, out: dict[str, dict]) -> None:
    rec = build_record(room)
    assert verify(rec) == []
    out[rec["id"]] = rec


def test_the_option_is_checked_and_filled_in() -> None:
    assert check_option({"rounds": 3}) == {
        "rounds": 3,
        "scoring": "places",
        "points": [10, 7, 5, 3, 2, 1],
    }
    for bad in (
        {"rounds": -1},
        {"rounds": 101},
        {"scoring": "goals"},
        {"points": []},
        {"points": [5, 7]},
        {"points": [True]},
        {"what": 1},
    ):
        with pytest.raises(ProtocolError) as exc:
            merge_options({}, {"series": bad})
        assert exc.value.code == "bad_options"
    assert "series" not in merge_options({"series": {"rounds": 2}}, {"series": None})
    with pytest.raises(ProtocolError):  # every round a fresh deal: no text seed
        merge_options({"seed": "2026-11-22"}, {"series": {"rounds": 2}})


def test_ties_share_the_points_of_the_places_they_cover() -> None:
    rows = [
        {"seat": 0, "place": 1},
        {"seat": 1, "place": 2},
        {"seat": 2, "place": 2},
        {"seat": 3, "place": 4},
    ]
    assert round_points(rows, [10, 7, 5, 3]) == {0: 10, 1: 6, 2: 6, 3: 3}
    three = [{"seat": s, "place": 1} for s in range(3)]
    assert round_points(three, [10, 7, 5]) == {0: 7.33, 1: 7.33, 2: 7.33}
    assert round_points([{"seat": 0, "place": 7}], [10, 7]) == {0: 0}  # past the list: 0


def test_three_rounds_fresh_seeds_standings_after_each_and_the_end() -> None:
    room = make_room(2, series={"rounds": 3, "points": [10, 7]})
    races: dict[str, dict] = {}
    ev = play_round(room, 11, {0: 3, 1: 1}, T0)
    countdown = ev[0]
    assert countdown["series"] == {
        "id": series_id(room.doc["commitment"]),
        "round": 1,
        "rounds": 3,
    }
    results = next(e for e in ev if e["kind"] == "results")
    table = results["series"]["standings"]
    assert [(r["seat"], r["points"], r["place"]) for r in table] == [(0, 10, 1), (1, 7, 2)]
    assert results["series"]["played"] == 1 and not results["series"]["ended"]
    records_of(room, races)
    seeds = {room.doc["seed"]}

    ev = room.rematch(T0 + 100_000)
    assert ev[0]["series"]["played"] == 1  # the lobby shows the standings between rounds
    ev = play_round(room, 12, {0: 1, 1: 3}, T0 + 200_000)
    assert next(e for e in ev if e["kind"] == "countdown")["series"]["round"] == 2
    records_of(room, races)
    seeds.add(room.doc["seed"])
    table = room.series_view()["standings"]
    assert [(r["seat"], r["points"], r["place"]) for r in table] == [(0, 17, 1), (1, 17, 1)]

    room.rematch(T0 + 300_000)
    ev = play_round(room, 13, {0: 2, 1: 0}, T0 + 400_000)
    records_of(room, races)
    seeds.add(room.doc["seed"])
    assert len(seeds) == 3
    kinds = [e["kind"] for e in ev]
    assert kinds[-2:] == ["results", "series_end"]
    final = ev[-1]["series"]
    assert final["ended"] and final["played"] == 3
    assert [(r["seat"], r["points"], r["rounds"]) for r in final["standings"]] == [
        (0, 27, [10, 7, 10]),
        (1, 24, [7, 10, 7]),
    ]
    record = build_series_record(room)
    assert record is not None and record["id"] == series_id(
        races[final["records"][0]]["commitment"]
    )
    assert verify_series(record, races) == []
    # a forged point, a missing race, a race of another room: each is caught
    forged = {
        **record,
        "standings": [{**record["standings"][0], "points": 30}, record["standings"][1]],
    }
    assert verify_series(forged, races)
    missing = dict(races)
    missing.pop(final["records"][1])
    assert any("missing" in f for f in verify_series(record, missing))
    moved = {k: {**v, "room": "OTHER"} for k, v in races.items()}
    assert verify_series(record, moved)

    # the next start begins a new series, from 0
    room.rematch(T0 + 500_000)
    ev = room.start(T0 + 600_000, 14, b"\x0e" * 16)
    assert ev[0]["series"]["round"] == 1
    assert room.series_view()["number"] == 2
    assert all(r["points"] == 0 for r in room.series_view()["standings"])


def test_late_joiner_on_zero_and_a_leaver_keeps_points() -> None:
    room = make_room(3, series={"rounds": 0})
    play_round(room, 21, {0: 2, 1: 1, 2: 0}, T0)
    room.rematch(T0 + 10_000)
    seat, _ = room.join("late", token_hash("late"), T0 + 11_000)
    room.leave(2, T0 + 12_000)  # in the lobby between rounds
    table = {r["seat"]: r for r in room.series_view()["standings"]}
    assert table[seat]["points"] == 0 and table[seat]["rounds"] == [None]
    assert table[2]["left"] and table[2]["points"] == 5
    play_round(room, 22, {0: 0, 1: 2, seat: 1}, T0 + 20_000)
    table = {r["seat"]: r for r in room.series_view()["standings"]}
    assert table[seat]["rounds"] == [None, 7]
    assert table[2]["points"] == 5 and table[2]["rounds"] == [5, None] and table[2]["left"]
    assert not room.series_view()["ended"]  # "until I stop"
    room.rematch(T0 + 30_000)
    with pytest.raises(ProtocolError):  # scoring is fixed while the series is under way
        room.configure({"series": {"rounds": 0, "points": [1]}}, T0 + 30_500)
    ev = room.end_series(T0 + 31_000)
    assert ev[0]["kind"] == "series_end" and ev[0]["series"]["ended"]
    # 7+10, 10+5, the late joiner 7, the leaver 5
    assert [(r["seat"], r["points"]) for r in ev[0]["series"]["standings"]] == [
        (1, 17),
        (0, 15),
        (3, 7),
        (2, 5),
    ]
    with pytest.raises(ProtocolError) as exc:
        room.end_series(T0 + 32_000)
    assert exc.value.code == "bad_state"


def test_configure_during_a_series() -> None:
    room = make_room(2, series={"rounds": 2})
    play_round(room, 31, {0: 1}, T0)
    room.rematch(T0 + 10_000)
    with pytest.raises(ProtocolError):
        room.configure({"series": {"rounds": 2, "scoring": "time"}}, T0)
    with pytest.raises(ProtocolError):
        room.configure({"series": {"rounds": 1}}, T0)  # one round is played already
    with pytest.raises(ProtocolError):
        room.configure({"series": None}, T0)
    room.configure({"series": {"rounds": 4}}, T0)
    assert room.series_view()["rounds"] == 4


def test_no_series_ending_mid_race_and_time_scoring() -> None:
    room = make_room(2, series={"rounds": 0, "scoring": "time"})
    room.start(T0, 41, b"\x29" * 16)
    with pytest.raises(ProtocolError):
        room.end_series(T0 + 1)
    rows = [
        {
            "round": 1,
            "rows": [
                {"seat": 0, "place": 1, "status": "won", "time": 5000},
                {"seat": 1, "place": 2, "status": "dead", "time": 900},
            ],
        },
        {
            "round": 2,
            "rows": [
                {"seat": 1, "place": 1, "status": "won", "time": 3000},
                {"seat": 0, "place": 2, "status": "won", "time": 4000},
            ],
        },
    ]
    opt = check_option({"rounds": 2, "scoring": "time"})
    table = standings(opt, rows, {"0": {"name": "a"}, "1": {"name": "b"}})
    assert [(r["seat"], r["wins"], r["time"], r["place"]) for r in table] == [
        (0, 2, 9000, 1),
        (1, 1, 3000, 2),
    ]


def test_a_room_without_the_option_has_no_series() -> None:
    room = make_room(2)
    ev = play_round(room, 51, {0: 1}, T0)
    assert "series" not in ev[0] and room.series_view() is None
    assert all("series" not in e for e in ev if e["kind"] == "results")
    assert room.state == FINISHED and room.rematch(T0 + 9000)[0].get("series") is None
    assert room.state == LOBBY
