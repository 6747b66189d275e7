"""solrace.client: the Python client library, terminal client, spectator and bot.

    from solrace.client import Client, parse_target
    target = parse_target("http://host:8765/r/KX7QF")     # or a ws:// URL, or just "KX7QF"
    async with Client(target.url, auto_resume=True, room=target.room) as c:  # ?room= routes it
        joined = await c.join(target.room, "ann")
        await c.ready()
        async for message in c.events():                  # pushes, typed (events.py)
            draw(c.room)                                  # the room model, kept current

Commands: `solrace play CODE|URL [--name N]`, `solrace play --create GAME -o draw=3`,
`solrace watch CODE|URL`, `solrace bot CODE|URL --pace 0.5 --count 3`. A bare code uses
`--server`, default ws://127.0.0.1:8765/ws, the default of `solrace serve`.

Modules: connection (Client, ErrorReply), events (typed messages), room (RoomModel),
urls (targets and share links), codec (the wire seam), moves (legal moves from a view),
strategy (the bot's choose_move), render (pure text drawing), terminal, watch, bot.
"""

from .connection import Client, Closed, ConnectionLost, ErrorReply, Reconnected, Resynced
from .events import (
    Ack,
    Board,
    Connected,
    Countdown,
    Error,
    Event,
    Hint,
    Joined,
    Kicked,
    Lobby,
    Message,
    Ok,
    OptionsChanged,
    PlayerJoined,
    PlayerLeft,
    Pong,
    Progress,
    ProgressFrame,
    ReadyChanged,
    Rematch,
    Results,
    Snapshot,
    Solved,
    Start,
    Unknown,
    Welcome,
    parse_message,
)
from .room import RoomModel
from .urls import DEFAULT_PORT, DEFAULT_SERVER, Target, parse_target, share_link

__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_SERVER",
    "Ack",
    "Board",
    "Client",
    "Closed",
    "Connected",
    "ConnectionLost",
    "Countdown",
    "Error",
    "ErrorReply",
    "Event",
    "Hint",
    "Joined",
    "Kicked",
    "Lobby",
    "Message",
    "Ok",
    "OptionsChanged",
    "PlayerJoined",
    "PlayerLeft",
    "Pong",
    "Progress",
    "ProgressFrame",
    "ReadyChanged",
    "Reconnected",
    "Rematch",
    "Results",
    "Resynced",
    "RoomModel",
    "Snapshot",
    "Solved",
    "Start",
    "Target",
    "Unknown",
    "Welcome",
    "parse_message",
    "parse_target",
    "share_link",
]
