"""A spectator's tick arrives as one `batch` frame (PROTOCOL.md, `batch`): the Python client
handles its messages one by one, in order, exactly as if each had come in its own frame."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import solrace.protocol.messages as m
from solrace.client import Client
from solrace.client import events as ev


class ScriptedSocket:
    """What the client's read loop needs of a websocket: its frames, then a normal close."""

    close_code = 1000
    close_reason = ""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for frame in self.frames:
            yield frame


def progress(n: int, seat: int, moves: int) -> dict[str, Any]:
    return m.event(
        n, "progress", 5, seat=seat, moves=moves, home=0, progress=0.0, status="racing", time=10 * n
    )


async def test_a_batch_frame_is_handled_as_its_messages_in_order() -> None:
    client = Client("ws://127.0.0.1:1/ws", record=True)
    client.room.apply(
        ev.parse_message(
            {
                "type": "joined",
                "room": "ABCDE",
                "role": "spectator",
                "snapshot": {
                    "room": "ABCDE",
                    "state": "racing",
                    "event": 3,
                    "players": [
                        {
                            "seat": s,
                            "name": f"p{s}",
                            "ready": True,
                            "connected": True,
                            "status": "racing",
                            "moves": 0,
                            "home": 0,
                            "progress": 0.0,
                            "time": None,
                        }
                        for s in (0, 1)
                    ],
                    "boards": {},
                    "options": {},
                    "round": 1,
                    "now": 0,
                },
            }
        )
    )
    tick = [
        progress(4, 0, 1),
        {
            "type": "progress",
            "from": 5,
            "n": 6,
            "at": 5,
            "seats": [
                {"seat": 0, "moves": 2, "home": 0, "progress": 0.0, "status": "racing", "time": 9},
                {"seat": 1, "moves": 1, "home": 0, "progress": 0.0, "status": "racing", "time": 8},
            ],
        },
        {"type": "board", "seat": 0, "moves": 2, "view": {"moves": 2}},
    ]
    alone = progress(7, 1, 2)
    frames = [m.batch_frame([m.encode(x) for x in tick]), m.encode(alone)]
    await client._read_loop(ScriptedSocket(frames))  # type: ignore[arg-type]
    assert client.received == [*tick, alone]  # unbatched, in order
    pushed = []
    async for msg in client.events():
        pushed.append(msg)
    assert [type(x).__name__ for x in pushed[:4]] == [
        "Progress",
        "ProgressFrame",
        "Board",
        "Progress",
    ]
    assert client.room.event == 7 and not client.room.gaps
    assert {p["seat"]: p["moves"] for p in client.room.players.values()} == {0: 2, 1: 2}
    assert client.room.boards[0] == {"moves": 2}
