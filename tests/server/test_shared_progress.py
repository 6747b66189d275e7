"""A players' tick whose racers are at different places (a mover's ack carried its own event,
so it is one ahead of the others) sends them all one `progress` frame, encoded once, from the
earliest place (a frame may overlap what a client has: PROTOCOL.md, `progress`); when the
run holds news, each place gets its own frames as before."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from solrace.protocol import messages as m
from solrace.server.net.conn import Bucket, Conn
from solrace.server.net.fanout import Hub
from websockets.protocol import OPEN


class FakeWs:
    """What the hub's broadcast touches: the protocol's state and `push` (framed bytes)."""

    def __init__(self) -> None:
        self.protocol = SimpleNamespace(state=OPEN)
        self.frames: list[bytes] = []

    def push(self, frame: bytes) -> None:
        self.frames.append(frame)


def payload(frame: bytes) -> dict[str, Any]:
    """A server frame's message (unmasked, under 65,536 bytes)."""
    length = frame[1] & 0x7F
    return m.decode_trusted(frame[4:] if length == 126 else frame[2:])


def progress(n: int, seat: int, status: str = "racing") -> dict[str, Any]:
    return {
        "type": "event", "n": n, "kind": "progress", "at": 1000 + n, "seat": seat,
        "moves": n, "home": 0, "progress": 0.0, "status": status, "time": n,
    }  # fmt: skip


def room(last: list[int]) -> tuple[Hub, list[Conn], list[FakeWs]]:
    hub = Hub()
    sockets = [FakeWs() for _ in last]
    conns = []
    for seat, (ws, place) in enumerate(zip(sockets, last, strict=True)):
        conn = Conn(ws=ws, bucket=Bucket(10, 10.0), room="R", role="player", seat=seat)  # type: ignore[arg-type]
        conn.last_event = place
        hub.add("R", conn)
        conns.append(conn)
    return hub, conns, sockets


def test_racers_at_two_places_get_one_shared_progress_frame() -> None:
    hub, conns, sockets = room([1, 0, 0, 0])  # seat 0 moved (event 1) and has its ack
    events = [progress(1, 0), progress(2, 1), progress(3, 2)]
    for event in events:
        hub._heard("R", event)
    hub._send("R", events)
    assert all(len(ws.frames) == 1 for ws in sockets)
    assert len({ws.frames[0] for ws in sockets}) == 1  # the same bytes: encoded once
    frame = payload(sockets[0].frames[0])
    assert frame["type"] == "progress" and (frame["from"], frame["n"]) == (1, 3)
    assert [line["seat"] for line in frame["seats"]] == [0, 1, 2]
    assert all(c.last_event == 3 for c in conns)


def test_news_in_the_run_gives_each_place_its_own_frames() -> None:
    hub, conns, sockets = room([1, 0, 0])
    events = [progress(1, 0), progress(2, 1), progress(3, 2, status="won")]
    for event in events:
        hub._heard("R", event)
    hub._send("R", events)
    ahead = [payload(f) for f in sockets[0].frames]
    behind = [payload(f) for f in sockets[1].frames]
    # the one ahead gets only what it lacks, from event 2: no overlap where news is
    assert [x.get("from", x["n"]) for x in ahead] == [2, 3]
    assert [x.get("from", x["n"]) for x in behind] == [1, 3]
    assert all(c.last_event == 3 for c in conns)
