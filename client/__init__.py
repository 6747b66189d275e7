"""solrace.client: the Python client library, terminal client, spectator and bot.

    from solrace.client import Client, parse_target
    async with Client(parse_target("http://host:8765/r/KX7QF").url) as c:
        joined = await c.join("KX7QF", "ann")
        await c.ready()
        async for message in c.events(): ...
"""

from .connection import Client, Closed, ConnectionLost, Reconnected, ServerError
from .events import (
    Ack, Board, Connected, Countdown, Error, Event, Joined, Kicked, Lobby, Message, Ok,
    OptionsChanged, PlayerJoined, PlayerLeft, Pong, Progress, ReadyChanged, Rematch, Results,
    Snapshot, Start, Unknown, Welcome, parse_message,
)
from .room import RoomModel
from .urls import DEFAULT_PORT, DEFAULT_SERVER, Target, parse_target, share_link

__all__ = [
    "Ack", "Board", "Client", "Closed", "Connected", "ConnectionLost", "Countdown",
    "DEFAULT_PORT", "DEFAULT_SERVER", "Error", "Event", "Joined", "Kicked", "Lobby", "Message",
    "Ok", "OptionsChanged", "PlayerJoined", "PlayerLeft", "Pong", "Progress", "ReadyChanged",
    "Reconnected", "Rematch", "Results", "RoomModel", "ServerError", "Snapshot", "Start",
    "Target", "Unknown", "Welcome", "parse_message", "parse_target", "share_link",
]
