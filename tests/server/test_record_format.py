"""Race records without a network: built from a finished room, packed and unpacked, exported
as text and parsed back, verified, and refused with the reason when tampered with."""

from __future__ import annotations

import copy
import itertools
import zlib

import msgpack
import pytest
from helpers.records import finished_room
from solrace.protocol import record_text, record_times, records
from solrace.protocol.record_verify import verify
from solrace.server.league.players import check_key, is_player_id, key_hash, player_id
from solrace.server.league.records import build_record


def test_a_finished_race_makes_a_record_that_verifies() -> None:
    room = finished_room()
    record = build_record(room)
    assert record["id"] == room.doc["commitment"][:16] == room.doc["results"]["record"]
    assert [p["seat"] for p in record["players"]] == [
        r["seat"] for r in room.doc["results"]["ranking"]
    ]
    assert record["players"][0]["player"] in ("id0", "id1", None)
    assert {p["player"] for p in record["players"]} == {"id0", "id1", None}
    assert record["moves"] == room.doc["results"]["moves"]
    assert verify(record) == []


def test_pack_round_trips_and_is_compact() -> None:
    record = build_record(finished_room())
    data = records.pack(record)
    assert records.unpack(data) == record
    moves = sum(len(m) for m in record["moves"].values())
    assert len(data) < 400 + 4 * moves  # header and ids, then a few bytes a move


def test_deltas_round_trip_with_a_clock_that_steps_back() -> None:
    times = [0, 5, 5, 3, 200_000, 200_001, 10**9]
    assert record_times.unpack_deltas(record_times.pack_deltas(times)) == times


def test_text_export_round_trips() -> None:
    record = build_record(finished_room("klondike", players=4, seed=11))
    text = record_text.export(record)
    assert text.startswith("; solrace race record")
    assert f'[Record "{record["id"]}"]' in text and '[Name "p \\"0\\""]' in text
    assert "1. " in text and all(len(line) <= 79 for line in text.splitlines())
    assert record_text.parse(text) == record
    assert verify(record_text.parse(text)) == []


def test_text_parse_names_the_bad_line() -> None:
    text = record_text.export(build_record(finished_room()))
    broken = text.replace('[Game "puttputt"]', "[Game puttputt]")
    with pytest.raises(record_text.RecordFormatError, match="line 4: not a tag line"):
        record_text.parse(broken)
    with pytest.raises(record_text.RecordFormatError, match="move number"):
        record_text.parse(text.replace("2. ", "3. ", 1))


def _first_seat_with_moves(record: dict) -> str:
    return next(s for s, m in record["moves"].items() if len(m) > 3)


def test_a_changed_move_fails_with_the_move() -> None:
    record = build_record(finished_room())
    seat = _first_seat_with_moves(record)
    bad = copy.deepcopy(record)
    bad["moves"][seat][2] = "t7-f1" if bad["moves"][seat][2] != "t7-f1" else "t6-f1"
    fails = verify(record_text.parse(record_text.export(bad)))
    assert fails and fails[0].startswith(f"seat {seat}: move 3 ")


def test_a_changed_salt_fails_the_commitment() -> None:
    record = build_record(finished_room())
    bad = copy.deepcopy(record)
    bad["salt"] = "00" * 16
    fails = verify(bad)
    assert len(fails) == 1 and fails[0].startswith("commitment: sha256(salt + seed) is ")


def test_changed_results_fail_with_the_field() -> None:
    record = build_record(finished_room())
    bad = copy.deepcopy(record)
    bad["players"][0]["time"] = (bad["players"][0]["time"] or 0) - 1
    assert any("time is" in f for f in verify(bad))
    bad = copy.deepcopy(record)
    bad["players"][0], bad["players"][1] = bad["players"][1], bad["players"][0]
    assert any("ranking order" in f for f in verify(bad))
    bad = copy.deepcopy(record)
    resigned = next(p for p in bad["players"] if p["status"] == "resigned")
    resigned["status"] = "won"
    assert any(f.endswith("its moves give resigned") or "status is won" in f for f in verify(bad))


def test_player_id_is_derived_from_the_key_hash_only() -> None:
    key = "k" * 43
    pid = player_id(key_hash(key))
    assert pid == player_id(key_hash(key)) and is_player_id(pid)
    assert pid != player_id(key_hash("j" * 43))
    assert key not in pid and key_hash(key)[:16] not in pid
    check_key(key)
    for bad in ("short", "x" * 129, "é" * 30, "tab\there" * 4):
        with pytest.raises(Exception, match="player_key"):
            check_key(bad)


def test_a_message_is_logged_without_its_secrets() -> None:
    from solrace.protocol.messages import redacted

    msg = {"type": "hello", "version": 1, "player_key": "k" * 43, "token": "t", "host_token": "h"}
    shown = repr(redacted(msg))
    assert "k" * 43 not in shown and "'t'" not in shown and "'h'" not in shown
    assert "'version': 1" in shown and redacted(None) is None


def test_the_stored_form_reads_back_every_field_it_does_not_know() -> None:
    """Other features add fields (a daily's date, `rated`): pack keeps them, top level and a
    player's row alike."""
    record = build_record(finished_room())
    record["daily"] = "2026-11-23"
    record["rated"] = True
    record["players"][0]["rating"] = {"mu": 25.5, "sigma": 8.1}
    assert records.unpack(records.pack(record)) == record
    head = records.unpack(records.pack(record), moves=False)
    assert head["daily"] == "2026-11-23" and "moves" not in head and "times" not in head


def test_form_1_records_already_stored_still_read() -> None:
    record = build_record(finished_room("klondike", 3, seed=11))
    old = records.pack(record, 1)
    assert msgpack.unpackb(zlib.decompress(old))[0] == 1
    assert records.unpack(old) == record
    assert len(records.pack(record)) < len(old)


def test_moves_and_times_the_codes_cannot_hold_are_kept_exactly() -> None:
    """A move the engine refuses (the seat stays text), a clock that stepped back (varint
    times), a gap of years (Rice escape), a commitment that does not follow from the seed
    and salt and a player id that is not one: all read back as they were."""
    record = build_record(finished_room("klondike", 3, seed=11))
    seats = list(record["moves"])
    record["moves"][seats[0]] = record["moves"][seats[0]] + ["t9-f1"]  # illegal: no t9
    record["times"][seats[0]] = record["times"][seats[0]] + [record["times"][seats[0]][-1] + 5]
    record["times"][seats[1]][1] = record["times"][seats[1]][0] - 3  # stepped back
    record["times"][seats[2]][-1] += 10**11  # three years later
    record["commitment"] = "ab" * 32
    record["id"] = "ab" * 8
    record["players"][0]["player"] = "NOT-a-player-id!"
    assert records.unpack(records.pack(record)) == record


def test_move_codes_that_read_back_as_other_moves_fail() -> None:
    """The moves' CRC: stored codes decoded by an engine whose move order changed would give
    other moves; unpack refuses instead."""
    record = build_record(finished_room("klondike", 3, seed=11))
    data = records.pack(record)
    inflate = zlib.decompressobj()
    body = msgpack.unpackb(inflate.decompress(data), raw=False, strict_map_key=False)
    body[13] ^= 1
    bad = zlib.compress(msgpack.packb(body, use_bin_type=True), 9) + inflate.unused_data
    with pytest.raises(ValueError, match="move order"):
        records.unpack(bad)


def test_rice_times_round_trip() -> None:
    values = [0, 1, 80, 1500, 3000, 2**30, 7, 0]
    for k in (0, 3, 10, 20):
        reader = record_times.RiceReader(
            record_times.bytes_to_bits(
                record_times.bits_to_bytes(record_times.rice_bits(values, k))
            )
        )
        times = list(itertools.accumulate(values))
        assert reader.times(len(values), k) == times
