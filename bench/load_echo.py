"""The baseline: a bare `websockets` server that echoes every binary frame back.

The race server is judged against what the same websockets library on the same
machine does with no game, no Redis and no fan-out, driven by the same load
generator in the same run; the ratio is the figure, not either number alone.
Run as its own process (`python -m solrace.bench.load_echo --port N`) so it
has a core of its own and a PID whose RSS can be read, like the race server.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time

from solrace.protocol.messages import VERSION, decode, encode
from websockets.asyncio.server import ServerConnection, broadcast, serve


async def echo(ws: ServerConnection) -> None:
    """Send back every message as received (bytes stay bytes)."""
    try:
        async for message in ws:
            await ws.send(message)
    except Exception:  # a client that vanishes mid-run is not the baseline's problem
        pass


class Fanout:
    """The spectator baseline: what bare websockets does with the race server's fan-out shape.

    `hello` gets `welcome`, `spectate` makes the connection a spectator, and each `move`
    gets an `ack` and is broadcast to every spectator as a `board` frame the size of a
    real Klondike board plus a `progress` event, one encoded frame each
    (websockets.broadcast), with no game, no Redis.

    Frames go through the protocol's own codec rather than raw msgpack: that codec is
    msgpack's packb/unpackb plus a length check and two isinstance checks, which the race
    server pays on every frame too, so the baseline's per-frame cost stays of the same
    kind as the server's (the ratio then measures the game, Redis and room work) and the
    wire format keeps one definition. The plain `echo` never decodes: bytes go back as
    they came.
    """

    def __init__(self) -> None:
        from solrace.engine import new_game

        self.view = new_game("klondike", seed="solrace-bench").view()
        self.spectators: set[ServerConnection] = set()

    async def handler(self, ws: ServerConnection) -> None:
        try:
            async for frame in ws:
                msg = decode(frame)
                kind = msg.get("type")
                ref = msg.get("id")
                if kind == "hello":
                    await ws.send(encode({"type": "welcome", "version": VERSION}))
                elif kind == "spectate":
                    self.spectators.add(ws)
                    await ws.send(encode({"type": "joined", "ref": ref, "room": msg["room"]}))
                elif kind == "move":
                    n, seat = msg.get("n", 0), msg.get("seat", 0)
                    await ws.send(encode({"type": "ack", "ref": ref, "n": n, "status": "racing"}))
                    at = int(time.time() * 1000)
                    broadcast(
                        self.spectators,
                        encode({"type": "board", "seat": seat, "moves": n, "view": self.view}),
                    )
                    broadcast(
                        self.spectators,
                        encode(
                            {
                                "type": "event",
                                "n": n,
                                "kind": "progress",
                                "at": at,
                                "seat": seat,
                                "moves": n,
                                "home": 0,
                                "progress": 0.0,
                                "status": "racing",
                                "time": None,
                            }
                        ),
                    )
        except Exception:
            pass
        finally:
            self.spectators.discard(ws)


async def serve_forever(host: str, port: int, fanout: bool = False) -> None:
    stop = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    loop.add_signal_handler(signal.SIGINT, stop.set_result, None)
    # Same transport settings as the race server: no compression, 8 KiB frames.
    handler = Fanout().handler if fanout else echo
    async with serve(handler, host, port, compression=None, max_size=8192):
        print(f"echo listening on {host}:{port}", flush=True)
        await stop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bare websockets echo server (benchmark baseline)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fanout", action="store_true", help="the spectator baseline (see Fanout)")
    args = parser.parse_args(argv)
    asyncio.run(serve_forever(args.host, args.port, args.fanout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
