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

from websockets.asyncio.server import ServerConnection, serve


async def echo(ws: ServerConnection) -> None:
    """Send back every message as received (bytes stay bytes)."""
    try:
        async for message in ws:
            await ws.send(message)
    except Exception:  # a client that vanishes mid-run is not the baseline's problem
        pass


async def serve_forever(host: str, port: int) -> None:
    stop = asyncio.get_running_loop().create_future()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    loop.add_signal_handler(signal.SIGINT, stop.set_result, None)
    # Same transport settings as the race server: no compression, 8 KiB frames.
    async with serve(echo, host, port, compression=None, max_size=8192):
        print(f"echo listening on {host}:{port}", flush=True)
        await stop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="bare websockets echo server (benchmark baseline)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    asyncio.run(serve_forever(args.host, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
