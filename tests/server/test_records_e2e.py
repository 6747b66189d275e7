"""Race records through a real server and a real Redis: a race played over WebSockets leaves
a record, served as JSON and as a text file (with ETags) that `solrace verify` checks, listed
in each keyed player's history across a server restart; player ids from player keys, and
the keys themselves never stored."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import redis
from helpers.http_get import aget
from helpers.race import play, until
from solrace.engine import new_game
from solrace.protocol import messages as m
from solrace.protocol import record_text
from solrace.protocol.record_verify import verify
from solrace.protocol.records import unpack

KEY_A = "A" * 20 + "-key-of-player-a-0123456789"
KEY_B = "B" * 20 + "-key-of-player-b-0123456789"


async def hello(wire: Any, url: str, key: str | None) -> tuple[Any, dict[str, Any]]:
    client = await wire(url, hello=False)
    msg: dict[str, Any] = {"type": "hello", "version": m.VERSION, "client": "solrace-tests"}
    if key is not None:
        msg["player_key"] = key
    return client, await client.request(msg)


async def race(wire: Any, url: str) -> tuple[list[Any], dict[str, Any]]:
    """Ann (key A) hosts, Bob (key B) and Cy (no key) join; each plays a few Putt Putt moves
    and resigns; returns the clients and the results event."""
    (ann, wa), (bob, wb), (cy, wc) = [await hello(wire, url, k) for k in (KEY_A, KEY_B, None)]
    assert wa["player"] and wb["player"] and wa["player"] != wb["player"] and wc["player"] is None
    created = await ann.request(
        {"type": "create", "name": "ann", "options": {"game": "puttputt", "countdown": 0}}
    )
    code = created["room"]
    for c, name in ((bob, "bob"), (cy, "cy")):
        joined = await c.request({"type": "join", "room": code, "name": name})
        assert joined["type"] == "joined", joined
    players = joined["snapshot"]["players"]
    assert [p["player"] for p in players] == [wa["player"], wb["player"], None]
    assert (await ann.request({"type": "start", "host_token": created["host_token"]}))[
        "type"
    ] == "ok"
    clients = [ann, bob, cy]
    for c in clients:
        await c.wait_for(lambda x: x["type"] == "snapshot")
    for i, c in enumerate(clients):
        await play(c, 3 + i)
    for c in clients:
        done = await c.request({"type": "resign"})
        assert done["type"] in ("ok", "error"), done  # error: the seat had already ended
    results = await ann.wait_event("results")
    return clients, {**results, "keys": (wa["player"], wb["player"]), "code": code}


async def fetch_record(port: int, rid: str) -> dict[str, Any]:
    """The record once its background write has landed."""
    got: list[bytes] = []

    async def stored() -> bool:
        status, _, body = await aget(port, f"/api/record/{rid}")
        got.append(body)
        return status == 200

    await until(stored, f"record {rid} served")
    return json.loads(got[-1])


def verify_cli(
    tmp_path: Path, name: str, text: str, *options: str
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / name
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "solrace", "verify", str(path), *options],
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_race_leaves_a_record_that_exports_verifies_and_outlives_a_restart(
    race_server, wire, tmp_path
) -> None:
    port = race_server.port
    _, results = await race(wire, race_server.ws_url)
    pid_a, pid_b = results["keys"]
    rid = results["record"]
    assert rid == results["commitment"][:16]
    assert {r["player"] for r in results["ranking"]} == {pid_a, pid_b, None}

    record = await fetch_record(port, rid)
    assert record["id"] == rid and record["game"] == "puttputt"
    assert record["seed"] == results["seed"] and record["salt"] == results["salt"]
    assert record["moves"] == results["moves"]
    assert [
        {k: p[k] for k in ("seat", "name", "place", "status", "moves", "time")}
        for p in record["players"]
    ] == [
        {k: r[k] for k in ("seat", "name", "place", "status", "moves", "time")}
        for r in results["ranking"]
    ]
    assert {p["name"]: p["player"] for p in record["players"]} == {
        "ann": pid_a,
        "bob": pid_b,
        "cy": None,
    }
    assert all(len(record["times"][s]) == len(record["moves"][s]) for s in record["moves"])
    assert verify(record) == []

    # the text file: same record back, ETag and 304, and `solrace verify` on it
    status, headers, body = await aget(port, f"/api/record/{rid}.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    text = body.decode()
    assert record_text.parse(text) == record
    status, again, body304 = await aget(
        port, f"/api/record/{rid}.txt", {"If-None-Match": headers["ETag"]}
    )
    assert status == 304 and body304 == b"" and again["ETag"] == headers["ETag"]
    status, jheaders, _ = await aget(port, f"/api/record/{rid}")
    assert jheaders["ETag"] != headers["ETag"]
    assert (await aget(port, f"/api/record/{rid}", {"If-None-Match": jheaders["ETag"]}))[0] == 304

    ok = verify_cli(tmp_path, "race.txt", text)
    assert ok.returncode == 0, ok  # no key given: it says it checked consistency only
    assert ok.stdout.startswith(f"consistent, signature NOT checked: record {rid}"), ok
    assert verify_cli(tmp_path, "race.json", json.dumps(record)).returncode == 0

    seat = next(s for s, moves in record["moves"].items() if len(moves) >= 2)
    tampered = json.loads(json.dumps(record))
    # a move that is well formed but illegal where it stands (the deal is fresh each run)
    game = new_game(record["game"], seed=record["seed"], options=record["game_options"])
    game.play(record["moves"][seat][0])
    legal = {str(mv) for mv in game.legal_moves()}
    tampered["moves"][seat][1] = next(
        t for t in [f"t{i}-f1" for i in range(1, 8)] + ["deal"] if t not in legal
    )
    bad = verify_cli(tmp_path, "move.txt", record_text.export(tampered))
    assert bad.returncode == 1 and f"FAIL seat {seat}: move 2 " in bad.stdout, bad
    salted = text.replace(record["salt"], "0" * 32)
    bad = verify_cli(tmp_path, "salt.txt", salted)
    assert bad.returncode == 1 and "FAIL commitment: sha256(salt + seed) is" in bad.stdout, bad
    garbled = verify_cli(tmp_path, "junk.txt", "not a record\n")
    assert garbled.returncode == 2 and "not a race record" in garbled.stderr

    # history: each keyed player's page lists it; it is still there after a restart
    async def histories() -> None:
        for pid, name in ((pid_a, "ann"), (pid_b, "bob")):
            status, headers, body = await aget(port, f"/api/player/{pid}")
            assert status == 200, body
            page = json.loads(body)
            assert page["name"] == name and page["total"] == 1
            assert [r["id"] for r in page["races"]] == [rid]
            assert page["races"][0]["name"] == name and page["races"][0]["players"] == 3
            assert (await aget(port, f"/api/player/{pid}", {"If-None-Match": headers["ETag"]}))[
                0
            ] == 304

    await histories()
    await asyncio.to_thread(race_server.restart)
    await histories()
    assert (await aget(port, f"/api/record/{rid}"))[0] == 200
    assert (await aget(port, "/api/player/" + "a" * 16))[0] == 404
    assert (await aget(port, "/api/record/" + "0" * 16))[0] == 404
    assert (await aget(port, "/api/record/nothex"))[0] == 404


async def test_player_id_stable_per_key_and_the_key_never_stored(
    race_server, wire, redis_url, key_prefix
) -> None:
    url = race_server.ws_url
    ids = [(await hello(wire, url, key))[1]["player"] for key in (KEY_A, KEY_A, KEY_B, None)]
    assert ids[0] == ids[1] != ids[2] and ids[3] is None
    client, refused = await hello(wire, url, "too-short")
    assert refused["code"] == "bad_message" and refused["field"] == "player_key"
    welcome = await client.request({"type": "hello", "version": m.VERSION, "player_key": KEY_B})
    assert welcome["type"] == "welcome" and welcome["player"] == ids[2]  # a refusal changed nothing

    await race(wire, url)  # records and histories too must not hold a key
    r = redis.Redis.from_url(redis_url)
    try:
        khash = hashlib.sha256(KEY_A.encode()).hexdigest()
        await until(lambda: bool(r.keys(f"{key_prefix}record:*")), "a record stored")
        # the entry holds the name (written with the race), never the key nor its hash
        entry = f"{key_prefix}player:{{{ids[0]}}}"
        await until(lambda: r.hget(entry, "name") == b"ann", "ann's entry written")
        stored = b""
        for key in r.scan_iter(match=f"{key_prefix}*"):
            kind = r.type(key).decode()
            stored += key
            if kind == "string":
                value = r.get(key) or b""
                stored += json.dumps(unpack(value)).encode() if b"record:" in key else value
            elif kind == "hash":
                stored += b"".join(k + v for k, v in r.hgetall(key).items())
            elif kind == "zset":
                stored += b"".join(r.zrange(key, 0, -1))
            elif kind == "list":
                stored += b"".join(r.lrange(key, 0, -1))
            elif kind == "set":
                stored += b"".join(r.smembers(key))
            elif kind == "stream":
                stored += b"".join(v for _, fields in r.xrange(key) for v in fields.values())
        assert stored and KEY_A.encode() not in stored and KEY_B.encode() not in stored
        assert khash.encode() not in stored  # the id is derived from it; nothing keeps it
    finally:
        r.close()


async def test_a_real_record_verifies_with_the_servers_key_and_one_edited_byte_fails(
    race_server, wire, tmp_path, redis_url, key_prefix
) -> None:
    """The server signs what it stores: the record's text and JSON verify with the key from
    /api/key (fetched by `solrace verify --server` itself, or given with --key), the same key
    `solrace serve --print-public-key` prints and the server still has after a restart; one
    byte changed anywhere in the signed part, or in the signature, fails."""
    port = race_server.port
    _, results = await race(wire, race_server.ws_url)
    rid = results["record"]
    record = await fetch_record(port, rid)
    assert record["signature"].startswith("ed25519:")
    status, _, body = await aget(port, "/api/key")
    assert status == 200, body
    info = json.loads(body)
    assert info["algorithm"] == "Ed25519" and info["encoding"] == "base64"
    assert len(base64.b64decode(info["key"])) == 32 and len(info["key_id"]) == 16
    assert record["signature"].split(":")[1] == info["key_id"]
    text = (await aget(port, f"/api/record/{rid}.txt"))[2].decode()
    assert f'[Signature "{record["signature"]}"]' in text

    server = f"http://127.0.0.1:{port}"
    ok = verify_cli(tmp_path, "race.txt", text, "--server", server)
    assert ok.returncode == 0, ok
    assert ok.stdout.startswith(f"ok: record {rid}") and info["key_id"] in ok.stdout, ok
    ok = verify_cli(tmp_path, "race.json", json.dumps(record), "--key", info["key"])
    assert ok.returncode == 0 and ok.stdout.startswith(f"ok: record {rid}"), ok

    # one byte: a racer's name (the race still checks out), or the signature itself
    name = record["players"][0]["name"]
    renamed = text.replace(f'[Name "{name}"]', f'[Name "{chr(ord(name[0]) + 1)}{name[1:]}"]', 1)
    assert renamed != text and len(renamed) == len(text)
    bad = verify_cli(tmp_path, "renamed.txt", renamed, "--server", server)
    assert bad.returncode == 1 and "FAIL signature: the signature does not match" in bad.stdout
    assert verify_cli(tmp_path, "renamed.txt", renamed).returncode == 0  # consistent, unchecked
    sig = record["signature"]
    flipped = sig[:-4] + ("A" if sig[-4] != "A" else "B") + sig[-3:]
    bad = verify_cli(tmp_path, "sig.txt", text.replace(sig, flipped), "--key", info["key"])
    assert bad.returncode == 1 and "FAIL signature" in bad.stdout, bad
    stripped = "\n".join(line for line in text.splitlines() if "[Signature" not in line)
    bad = verify_cli(tmp_path, "unsigned.txt", stripped, "--key", info["key"])
    assert bad.returncode == 1 and "FAIL unsigned" in bad.stdout, bad

    printed = await asyncio.to_thread(
        subprocess.run,
        [
            *(sys.executable, "-m", "solrace", "serve", "--print-public-key"),
            *("--redis-url", redis_url, "--redis-prefix", key_prefix),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert printed.returncode == 0 and json.loads(printed.stdout) == info, printed
    await asyncio.to_thread(race_server.restart)
    assert json.loads((await aget(port, "/api/key"))[2]) == info  # kept in Redis


async def test_a_private_rooms_record_does_not_publish_its_code(race_server, wire) -> None:
    """Records are public (/api/record) and a private room's 20-character code is the key to
    the room (its next rounds, its seats): the record names the room only by the start logs
    show, in the JSON and in the text file."""
    port = race_server.port
    _, results = await race(wire, race_server.ws_url)
    code = results["code"]
    assert len(code) == 20, code  # the race helper's room is private
    record = await fetch_record(port, results["record"])
    text = (await aget(port, f"/api/record/{results['record']}.txt"))[2].decode()
    assert code not in json.dumps(record) and code not in text
    assert record["room"] == code[:5] + "…"
