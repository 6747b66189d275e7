"""Telling the server's race records from forgeries (issue 20, item 4).

Each forgery below is one a hostile player made against the old `solrace verify` and it
passed: a record that checks out on its own (legal moves on a committed deal, results that
follow) but that the server never made. With the server's public key every one fails on
the signature; the structural ones (finish before start, no seats, a move time past the
finish) fail without a key too; a file that is not a record gets a clear message, never a
KeyError or a traceback. All in one process (the CLI's `run`), no server: the e2e test in
test_records_e2e.py checks a real server's record with the key from its /api/key.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from helpers.records import finished_room
from solrace import verify_cli
from solrace.engine import new_game
from solrace.engine.solve import solve
from solrace.protocol import record_sign, record_text
from solrace.protocol.record_sign import check, key_info, signed
from solrace.protocol.record_verify import NotARecord, _replay_seat, structure, verify
from solrace.protocol.records import commitment, pack, rank, record_id, unpack
from solrace.server.league.records import build_record
from solrace.server.league.signing import ENV, signing_key, signing_key_key

SERVER_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
FORGER_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
PUBLIC = key_info(SERVER_KEY.public_key())["key"]
#: Putt Putt seed 1: the solver wins it (a forger replaces a seat's moves with that win)
SEED = 1

Record = dict[str, Any]


def server_record(seed: int = SEED, salt: int = 0) -> Record:
    """A race played by the room rules and signed by the server's key."""
    room = finished_room("puttputt", players=3, seed=seed)
    record = build_record(room)
    if salt:  # a race of the forger's own: its own salt and commitment
        record["salt"] = bytes([salt] * 16).hex()
        record["commitment"] = commitment(record["seed"], bytes.fromhex(record["salt"]))
        record["id"] = record_id(record["commitment"])
    return signed(record, SERVER_KEY)


def consistent(record: Record) -> Record:
    """What a forger does after an edit: the players' rows recomputed from the moves (status,
    progress, move count, time), ranked again, so the record checks out on its own."""
    rows = []
    for p in record["players"]:
        seat = str(p["seat"])
        _, row = _replay_seat(record, seat, record["moves"][seat], record["times"][seat])
        assert row is not None
        row["status"] = row["status"] or p["status"]
        rows.append({**p, **row, "place": 0})
    record["players"] = rank(rows)
    return record


# --- the forgeries ----------------------------------------------------------------------


def never_happened(r: Record) -> Record:
    """A race that never happened, with its own seed, salt and commitment (and the
    signature of a real record pasted on)."""
    fake = server_record(seed=SEED + 1, salt=7)
    fake["signature"] = r["signature"]
    return fake


def names_swapped(r: Record) -> Record:
    a, b = r["players"][0], r["players"][1]
    a["name"], b["name"] = b["name"], a["name"]
    return r


def player_ids_swapped(r: Record) -> Record:
    a, b = r["players"][0], r["players"][1]
    a["player"], b["player"] = b["player"], a["player"]
    assert a["player"] != b["player"]
    return r


def solver_win(r: Record) -> Record:
    """A seat's moves replaced by the solver's win, at a human pace, inside the race."""
    win = solve(new_game(r["game"], r["seed"], r["game_options"])).moves
    assert win, "the solver wins this deal"
    seat = str(r["players"][-1]["seat"])
    r["moves"][seat] = list(win)
    r["times"][seat] = [1000 * (i + 1) for i in range(len(win))]
    r["finished_at"] = max(r["finished_at"], r["starts_at"] + 1000 * len(win))
    consistent(r)
    assert r["players"][0]["seat"] == int(seat) and r["players"][0]["status"] == "won"
    return r


def start_edited(r: Record) -> Record:
    r["starts_at"] -= 60_000  # times are from the start: the moves still fit
    return r


def finish_edited(r: Record) -> Record:
    r["finished_at"] += 60_000
    return r


def room_edited(r: Record) -> Record:
    r["room"] = "ZZZZZ"
    return r


def time_limit_edited(r: Record) -> Record:
    last = max(t for ts in r["times"].values() for t in ts)
    r["options"]["time_limit"] = last // 1000 + 1
    return r


FORGERIES: dict[str, Callable[[Record], Record]] = {
    "a race that never happened": never_happened,
    "names swapped": names_swapped,
    "player ids swapped": player_ids_swapped,
    "a seat's moves replaced by a solver's win": solver_win,
    "start edited": start_edited,
    "finish edited": finish_edited,
    "room edited": room_edited,
    "time limit edited": time_limit_edited,
}


def finish_before_start(r: Record) -> Record:
    r["finished_at"] = r["starts_at"] - 1
    return r


def no_seats(r: Record) -> Record:
    r["players"], r["moves"], r["times"] = [], {}, {}
    return r


def last_move_five_seconds_later(r: Record) -> Record:
    """The race's last move 5 s later: after the race's finish."""
    seat = max(r["times"], key=lambda s: r["times"][s][-1] if r["times"][s] else -1)
    r["times"][seat][-1] += 5000
    return r


def seat_twice(r: Record) -> Record:
    r["players"].append(copy.deepcopy(r["players"][0]))
    return r


def time_goes_back(r: Record) -> Record:
    seat = next(s for s, ts in r["times"].items() if len(ts) >= 3)
    r["times"][seat][1] = r["times"][seat][0] - 1
    return r


def moves_of_no_seat(r: Record) -> Record:
    r["moves"]["9"], r["times"]["9"] = [], []
    return r


def past_time_limit(r: Record) -> Record:
    """A time limit the race's last move is past."""
    last = max(t for ts in r["times"].values() for t in ts)
    r["options"]["time_limit"] = last // 1000
    return r


STRUCTURAL: dict[str, tuple[Callable[[Record], Record], str]] = {
    "finish before start": (finish_before_start, "the race finishes 1 ms before it starts"),
    "no seats": (no_seats, "the record has no seats"),
    "the last move 5 s later": (last_move_five_seconds_later, "after the race finished"),
    "a seat twice": (seat_twice, "is listed 2 times"),
    "a move time going back": (time_goes_back, "before move 1's"),
    "moves of a seat that is not a player": (moves_of_no_seat, "seat 9 has moves"),
    "a move past the time limit": (past_time_limit, "at or past the time limit"),
}


def run_cli(tmp_path: Path, text: str, *options: str) -> tuple[int, str, str]:
    """`solrace verify FILE OPTIONS` on `text`, in this process: exit code, stdout, stderr."""
    path = tmp_path / "record"
    path.write_text(text)
    parser = argparse.ArgumentParser()
    verify_cli.add_arguments(parser)
    args = parser.parse_args([str(path), *options])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = verify_cli.run(args)
    return code, out.getvalue(), err.getvalue()


# --- tests --------------------------------------------------------------------------------


def test_the_servers_record_verifies_from_every_form() -> None:
    record = server_record()
    assert verify(record) == [] and check(record, SERVER_KEY.public_key()).ok
    text = record_text.export(record)
    assert record_text.parse(text) == record  # the signature reads back from the text file
    assert check(record_text.parse(text), SERVER_KEY.public_key()).ok
    assert unpack(pack(record)) == record  # and from the stored form
    assert check(json.loads(json.dumps(record)), SERVER_KEY.public_key()).ok


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_consistent_forgery_passes_only_without_the_key(name: str, tmp_path: Path) -> None:
    forged = FORGERIES[name](server_record())
    assert verify(forged) == []  # a forgery that checks out on its own
    found = check(forged, SERVER_KEY.public_key())
    assert found.state == "bad", found

    code, out, _ = run_cli(tmp_path, record_text.export(forged), "--key", PUBLIC)
    assert code == 1 and out.startswith("FAIL signature: "), out
    code, out, _ = run_cli(tmp_path, json.dumps(forged), "--key", PUBLIC)
    assert code == 1 and "FAIL signature" in out, out
    # without a key it says plainly that it checked consistency only
    code, out, _ = run_cli(tmp_path, record_text.export(forged))
    assert code == 0 and out.startswith("consistent, signature NOT checked"), out


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forgery_unsigned_or_signed_by_another_key_fails_with_the_key(
    name: str, tmp_path: Path
) -> None:
    forged = FORGERIES[name](server_record())
    unsigned = {k: v for k, v in forged.items() if k != "signature"}
    code, out, _ = run_cli(tmp_path, record_text.export(unsigned), "--key", PUBLIC)
    assert code == 1 and out.startswith("FAIL unsigned: "), out
    own = signed(unsigned, FORGER_KEY)
    assert check(own, SERVER_KEY.public_key()).state == "bad"
    # the forger's signature, claiming the server's key id
    kid = record_sign.key_id(SERVER_KEY.public_key())
    _, sig = record_sign.split_signature(own["signature"])
    posing = {**unsigned, "signature": record_sign.signature_text(kid, sig)}
    code, out, _ = run_cli(tmp_path, record_text.export(posing), "--key", PUBLIC)
    assert code == 1 and "FAIL signature: the signature does not match" in out, out


@pytest.mark.parametrize("name", list(STRUCTURAL))
def test_a_structural_forgery_fails_with_or_without_the_key(name: str, tmp_path: Path) -> None:
    forge, why = STRUCTURAL[name]
    forged = forge(server_record())
    fails = verify(forged)
    assert fails and any(why in f for f in fails), fails
    assert check(forged, SERVER_KEY.public_key()).state == "bad"
    for options in ((), ("--key", PUBLIC)):
        code, out, err = run_cli(tmp_path, json.dumps(forged), *options)
        assert code == 1 and why in out and "Traceback" not in out + err, (out, err)
    if name != "moves of a seat that is not a player":  # the text file has no such section
        code, out, _ = run_cli(tmp_path, record_text.export(forged))
        assert code == 1 and why in out, out


def test_a_text_file_with_no_seat_section_is_not_ok(tmp_path: Path) -> None:
    text = record_text.export(server_record())
    head = text[: text.index("\n[Seat")] + "\n"
    code, out, _ = run_cli(tmp_path, head)
    assert code == 1 and "FAIL the record has no seats" in out, out


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "not a race record: the file is empty"),
        ("\n  \n", "not a race record: the file is empty"),
        ("hello, world\n", "not a race record: line 1: moves before any [Seat] tag"),
        ("\x00\x01garbage", "not a race record: line 1: moves before any [Seat] tag"),
        ("{not json", "not a race record: the JSON does not read"),
        ("[1, 2]", "not a race record: line 1: not a tag line"),
        ('{"v": 1}', "not a race record: the record has no `id`"),
        (
            '; only a comment\n[Format "1"]\n[Seat "0"]\n',
            "not a race record: the header has no [Record] [Game] [Room] [Round] [GameOptions] "
            "[TimeLimit] [Undo] [Deal] [Start] [Finish] [Seed] [Salt] [Commitment] tags",
        ),
    ],
)
def test_a_file_that_is_not_a_record_gets_a_clear_message(
    tmp_path: Path, text: str, why: str
) -> None:
    code, out, err = run_cli(tmp_path, text)
    assert code == 2 and out == "" and why in err, err
    assert "KeyError" not in err and "Traceback" not in err


def test_a_record_missing_a_field_or_of_an_unknown_format_gets_a_clear_message(
    tmp_path: Path,
) -> None:
    text = record_text.export(server_record())
    no_limit = "".join(line for line in text.splitlines(True) if "[TimeLimit" not in line)
    code, _, err = run_cli(tmp_path, no_limit)
    assert code == 2 and "the header has no [TimeLimit] tag" in err, err
    no_status = text.replace('[Status "', '[Statue "', 1)
    code, _, err = run_cli(tmp_path, no_status)
    assert code == 2 and '[Seat "0"] has no [Status] tag' in err, err
    code, _, err = run_cli(tmp_path, text.replace('[Format "1"]', '[Format "7"]'))
    assert code == 2 and "record format 7 is not one this verifier knows" in err, err
    record = server_record()
    del record["players"][1]["progress"]
    with pytest.raises(NotARecord, match="player row 2 has no `progress`"):
        structure(record)
    code, _, err = run_cli(tmp_path, json.dumps(record))
    assert code == 2 and "player row 2 has no `progress`" in err, err


def test_keys_are_read_from_every_form_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    record = server_record()
    text = record_text.export(record)
    public = SERVER_KEY.public_key()
    raw = record_sign.raw_public(public)
    pem = public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    for form in (PUBLIC, raw.hex(), json.dumps(key_info(public)), pem):
        keyfile = tmp_path / "key"
        keyfile.write_text(form)
        code, out, _ = run_cli(tmp_path, text, "--key-file", str(keyfile))
        assert code == 0 and out.startswith(f"ok: record {record['id']}"), out
    code, _, err = run_cli(tmp_path, text, "--key", "not-a-key")
    assert code == 2 and "no key: a public key is 32 bytes" in err, err
    other = key_info(FORGER_KEY.public_key())["key"]
    code, out, _ = run_cli(tmp_path, text, "--key", other)
    assert code == 1 and "signed by key" in out and "the key given is" in out, out


def test_the_canonical_form_is_rfc_8785() -> None:
    """Key order by UTF-16 code units, numbers as ECMAScript writes them, no whitespace:
    what a third party's JCS library makes (RFC 8785's own examples)."""
    assert record_sign.canonical({"b": [1, 2.0, None, True], "a": 0.4}) == (
        b'{"a":0.4,"b":[1,2,null,true]}'
    )
    for value, text in [
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (333333333.3333333, "333333333.3333333"),
        (0.000001, "0.000001"),
        (-0.0, "0"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ]:
        assert record_sign.canonical(value).decode() == text
    assert record_sign.canonical({"€": 1, "\U0001f600": 2, "\r": 3}) == (
        '{"\\r":3,"€":1,"\U0001f600":2}'.encode()
    )


async def test_the_signing_key_comes_from_the_environment_or_once_from_redis(
    redis_url: str, key_prefix: str
) -> None:
    """SOLRACE_SIGNING_KEY (hex or base64 of the 32-byte seed) wins; else the first process
    makes one in Redis (SET NX) and every later one reads that same key."""
    seed = bytes(range(32))
    want = record_sign.key_id(SERVER_KEY.public_key())
    for given in (seed.hex(), base64.b64encode(seed).decode()):
        key = await signing_key(None, key_prefix, env={ENV: given})
        assert record_sign.key_id(key.public_key()) == want
    with pytest.raises(ValueError, match="32 bytes") as refused:
        await signing_key(None, key_prefix, env={ENV: "secret-but-not-a-key"})
    assert "secret-but-not-a-key" not in str(refused.value)  # a mistyped key is not echoed

    client = aioredis.Redis.from_url(redis_url)
    try:
        first = await signing_key(client, key_prefix, env={})
        second = await signing_key(client, key_prefix, env={})
        assert record_sign.key_id(first.public_key()) == record_sign.key_id(second.public_key())
        assert len(bytes.fromhex((await client.get(signing_key_key(key_prefix))).decode())) == 32
    finally:
        await client.delete(signing_key_key(key_prefix))
        await client.aclose()
