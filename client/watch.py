"""`solrace watch`: spectate a room in the terminal, redrawn as events arrive.

Every board the room shows spectators (live or delayed, per the room's
`spectator_view`), everyone's progress, the countdown and the race clock.
A redraw is at most every `--interval` seconds so a busy room does not flood
the terminal; with `--once` it prints one screen and exits (scripts, tests).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from .connection import Client, ErrorReply
from .render import render_spectator_screen
from .urls import DEFAULT_SERVER, parse_target

CLEAR = "\x1b[H\x1b[2J"


async def watch(
    url: str,
    room: str,
    *,
    color: bool,
    interval: float,
    once: bool,
    clear: bool,
    out: TextIO | None = None,
) -> int:
    out = out or sys.stdout
    client = Client(url, auto_resume=True, client_name="solrace-watch/0.1", room=room)
    await client.connect()
    try:
        await client.spectate(room)

        def draw() -> None:
            out.write((CLEAR if clear else "") + render_spectator_screen(client.room, color) + "\n")
            out.flush()

        draw()
        if once:
            return 0
        loop = asyncio.get_running_loop()
        last = loop.time()
        dirty = False
        while True:
            try:
                await client.next_event(timeout=max(0.05, interval - (loop.time() - last)))
                dirty = True
            except TimeoutError:
                dirty = dirty or client.room.state in ("countdown", "racing")  # the clock ticks
            if dirty and loop.time() - last >= interval:
                draw()
                last, dirty = loop.time(), False
    finally:
        await client.close()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="room link, ws:// URL or room code")
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"server for a bare room code (default {DEFAULT_SERVER})",
    )
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between redraws")
    parser.add_argument("--once", action="store_true", help="print one screen and exit")
    parser.add_argument("--no-color", action="store_true", help="plain text, no screen clearing")


def run(args: argparse.Namespace) -> int:
    target = parse_target(args.target, args.server)
    if not target.room:
        print("solrace watch: name a room (a link or a code)")
        return 2
    tty = sys.stdout.isatty() and not args.no_color
    try:
        return asyncio.run(
            watch(
                target.url,
                target.room,
                color=tty,
                interval=args.interval,
                once=args.once,
                clear=tty,
            )
        )
    except ErrorReply as exc:
        print(f"refused: {exc.code}: {exc.message}")
        return 1
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        print(f"cannot connect to {target.url}: {exc}")
        return 1
