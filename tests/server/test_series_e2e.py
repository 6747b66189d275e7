"""A series through a real server and Redis: two rounds over WebSockets on fresh seeds, the
standings in the results and in a spectator's snapshot, the series record served at
/api/series/ID, and `solrace verify` checking it with every round's race record (and catching
a forged standing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.http_get import aget
from helpers.race import current_view, play, seated_room, until
from helpers.views import putt_move


async def fetch(port: int, path: str) -> dict[str, Any]:
    got: list[bytes] = []

    async def stored() -> bool:
        status, _, body = await aget(port, path)
        got.append(body)
        return status == 200

    await until(stored, f"{path} served")
    return json.loads(got[-1])


async def send_home(client: Any, cards: int) -> None:
    """Moves until `cards` cards are home. Counting moves would not do: a fresh seed's first
    moves may all be `deal`s, which send nothing home, and a round where the player meant to
    win only dealt ends in a tie (3.5 points each) instead."""
    home = 0
    while home < cards:
        move = putt_move(current_view(client))
        assert move is not None, "the seat ran out of moves"
        await play(client, 1)
        home += move != "deal"


async def one_round(clients: list[Any], host_token: str, home: list[int]) -> dict[str, Any]:
    host = clients[0]
    assert (await host.request({"type": "start", "host_token": host_token}))["type"] == "ok"
    for c in clients:
        await c.wait_for(lambda x: x["type"] == "snapshot" and x["snapshot"]["state"] == "racing")
    for c, n in zip(clients, home, strict=True):
        await send_home(c, n)
    for c in clients:
        await c.request({"type": "resign"})
    results = await host.wait_event("results")
    return results


async def test_a_series_is_scored_served_and_verified(race_server, wire, tmp_path: Path) -> None:
    url, port = race_server.ws_url, race_server.port
    clients, _, code, host_token = await seated_room(
        url, wire, 2, series={"rounds": 2, "points": [5, 2]}
    )
    watcher = await wire(url)
    joined = await watcher.request({"type": "spectate", "room": code})
    assert joined["snapshot"]["series"] is None  # not begun until the first start

    first = await one_round(clients, host_token, [4, 0])
    assert first["series"]["played"] == 1 and not first["series"]["ended"]
    assert [(r["seat"], r["points"]) for r in first["series"]["standings"]] == [(0, 5), (1, 2)]
    assert (await clients[0].request({"type": "rematch", "host_token": host_token}))["type"] == "ok"
    again = await (await wire(url)).request({"type": "spectate", "room": code})
    assert again["snapshot"]["state"] == "lobby"
    assert [r["points"] for r in again["snapshot"]["series"]["standings"]] == [5, 2]

    second = await one_round(clients, host_token, [0, 4])
    assert second["seed"] != first["seed"]
    end = await clients[0].wait_event("series_end")
    series = end["series"]
    assert series["ended"] and series["records"] == [first["record"], second["record"]]
    assert [(r["seat"], r["points"], r["place"]) for r in series["standings"]] == [
        (0, 7, 1),
        (1, 7, 1),
    ]

    record = await fetch(port, f"/api/series/{series['id']}")
    assert record["kind"] == "series" and record["signature"].startswith("ed25519:")
    assert code not in json.dumps(record)  # a private room's code is its key: cut, as in races
    series_file = tmp_path / "series.json"
    series_file.write_text(json.dumps(record))
    key = await fetch(port, "/api/key")
    races = []
    for rid in series["records"]:
        race = await fetch(port, f"/api/record/{rid}")
        path = tmp_path / f"{rid}.json"
        path.write_text(json.dumps(race))
        races += ["--race", str(path)]

    def verify(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "solrace", "verify", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    ok = verify(str(series_file), "--key", key["key"], *races)
    assert ok.returncode == 0 and ok.stdout.startswith("ok: series"), ok.stdout + ok.stderr
    fetched = verify(str(series_file), "--server", f"http://127.0.0.1:{port}")
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    missing = verify(str(series_file), *races[:2])
    assert missing.returncode == 1 and "missing" in missing.stdout
    forged = dict(record)
    forged["standings"] = [{**record["standings"][0], "points": 9}, *record["standings"][1:]]
    series_file.write_text(json.dumps(forged))
    bad = verify(str(series_file), "--key", key["key"], *races)
    assert bad.returncode == 1 and "FAIL signature" in bad.stdout and "standings" in bad.stdout
