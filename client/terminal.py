"""`solrace play`: race in the terminal.

On a terminal it is a full-screen program (`tui.RaceApp`, Textual): board, everyone's
progress and a prompt that nothing overwrites. With `--plain`, or when stdin or stdout is
not a terminal (pipes, scripts, tests), it is the line client below.

Input is read line by line (readline with tab completion on a terminal,
plain lines from a pipe) in a worker thread, so server pushes keep arriving
while the player types. A line is a move in canonical notation, the number
of a move in the printed list, or a command:
/ready /unready /start /resign /undo /hint /rematch /kick N /board /moves /quit
(/hint: the next move of a solution, in a solo room with hints on), and the host's series
controls: /series N|open|off [places|time] [points,...] (a series of N rounds, or until
/endseries), /endseries, /standings.

Decision on legal moves: the list offered (numbers and tab completion) is
computed from the player's own view by `moves.legal_moves`, which is exact
because legality in every solrace game depends only on visible cards; the
server still checks every move, and its refusal is printed as is.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import threading
from typing import Any

from . import events as ev
from .connection import Client, ConnectionLost, ErrorReply, Reconnected, Resynced
from .moves import legal_moves
from .options import parse_option, room_options
from .player_key import load_or_create
from .render import (
    event_line,
    player_line,
    render_player_screen,
    render_results,
    render_spectator_screen,
    render_standings,
)
from .urls import DEFAULT_SERVER, parse_target, share_link
from .verdicts import hint_line, solved_line

COMMANDS = [
    "/ready",
    "/unready",
    "/start",
    "/resign",
    "/undo",
    "/hint",
    "/rematch",
    "/kick",
    "/series",
    "/endseries",
    "/standings",
    "/board",
    "/moves",
    "/help",
    "/quit",
]
HELP = "type a move (t1-f1, w-t3, t2-t5:3, deal, recycle) or its number; commands: " + " ".join(
    COMMANDS
)


def move_text(line: str) -> str:
    """What the player typed, as canonical move text: any case and spacing is accepted
    (`T1-F1`, `t1 - f1`, `Deal`), since the rules' notation is lower case without spaces."""
    return "".join(line.split()).lower()


def completions(text: str, moves: list[str]) -> list[str]:
    """What tab completes `text` to: legal moves, or commands after a slash."""
    pool = COMMANDS if text.startswith("/") else moves
    typed = text if text.startswith("/") else move_text(text)
    return [m for m in pool if m.startswith(typed)]


def current_moves(client: Client) -> list[str]:
    view = client.room.view
    if view is None or client.room.state != "racing" or view.get("won") or view.get("dead"):
        return []
    return legal_moves(view)


def series_option(arg: str, current: dict[str, Any] | None) -> dict[str, Any] | None:
    """`/series N|open|off [places|time] [10,7,5,...]` as the room's `series` option (None: off);
    what is not said stays as it was."""
    words = arg.split()
    if not words:
        raise ValueError("usage: /series N|open|off [places|time] [points,...]")
    if words[0] == "off":
        return None
    series: dict[str, Any] = dict(current or {})
    if words[0] == "open":
        series["rounds"] = 0
    elif words[0].isdigit():
        series["rounds"] = int(words[0])
    else:
        raise ValueError("/series takes a number of rounds, open (until /endseries) or off")
    for word in words[1:]:
        if word in ("places", "time"):
            series["scoring"] = word
        elif all(part.isdigit() for part in word.split(",")):
            series["points"] = [int(part) for part in word.split(",")]
        else:
            raise ValueError(f"/series: {word!r} is not places, time or a list of points")
    return series


class Terminal:
    """The I/O half of `solrace play`: feeds lines to the client, prints what happens."""

    def __init__(self, client: Client, color: bool, out: Any = None) -> None:
        self.client = client
        self.color = color
        self.out = out or sys.stdout
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self.done = asyncio.Event()
        self._ticker: asyncio.Task[None] | None = None
        self._last_drawn: tuple[Any, ...] | None = None
        #: seat -> name as last seen: a player who left the lobby is named in its event
        self.names: dict[int, str] = {}
        #: an arena member's next pairing (`solrace play --arena`): it ends `run`
        self.paired: asyncio.Queue[ev.ArenaPaired] = asyncio.Queue()
        #: a `solved` of the race just finished was printed: a later one was searched further
        self._solved_said = False

    def print(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def draw(self, force: bool = True) -> None:
        """Print the whole screen; unforced, only when something changed since the last one."""
        room = self.client.room
        signature = (
            room.event,
            room.state,
            (room.view or {}).get("moves"),
            tuple((k, v.get("moves")) for k, v in sorted(room.boards.items())),
        )
        if not force and signature == self._last_drawn:
            return
        self._last_drawn = signature
        if self.client.role == "spectator":  # a host who created the room without a seat
            self.print(render_spectator_screen(room, self.color))
        else:
            self.print(render_player_screen(room, self.color, moves=current_moves(self.client)))

    # ---- input ----------------------------------------------------------------

    def start_reader(self, loop: asyncio.AbstractEventLoop) -> None:
        interactive = sys.stdin.isatty()
        if interactive:
            self._setup_readline()

        def reader() -> None:
            while True:
                try:
                    line = input("> ") if interactive else sys.stdin.readline()
                except (EOFError, KeyboardInterrupt):
                    line = ""
                if not line and not interactive:
                    loop.call_soon_threadsafe(self.lines.put_nowait, None)
                    return
                loop.call_soon_threadsafe(self.lines.put_nowait, line.strip())

        threading.Thread(target=reader, daemon=True, name="solrace-stdin").start()

    def _setup_readline(self) -> None:
        try:
            import readline
        except ImportError:  # pragma: no cover - platform without readline
            return

        def complete(text: str, state: int) -> str | None:
            options = completions(text, current_moves(self.client))
            return options[state] if state < len(options) else None

        readline.set_completer_delims(" ")
        readline.set_completer(complete)
        readline.parse_and_bind("tab: complete")

    async def handle_line(self, line: str) -> bool:
        """Act on one input line; False to quit."""
        if not line:
            return True
        c = self.client
        try:
            if line.startswith("/"):
                return await self._command(line)
            moves = current_moves(c)
            if line.isdigit():
                i = int(line)
                if not 1 <= i <= len(moves):
                    self.print(f"no move number {i} (1..{len(moves)})")
                    return True
                line = moves[i - 1]
            else:
                line = move_text(line)
            view = c.room.view or {}
            ack = await c.move(line, n=int(view.get("moves", 0)) + 1)
            extra = f" revealed {' '.join(ack.revealed)}" if ack.revealed else ""
            self.print(f"ok {ack.move} (move {ack.n}){extra}")
            self.draw()
        except ErrorReply as exc:
            self.print(f"refused: {exc.code}: {exc.message}")
        except ConnectionLost as exc:
            self.print(f"connection lost: {exc}")
        return True

    async def _command(self, line: str) -> bool:
        c = self.client
        cmd, _, arg = line.partition(" ")
        if cmd == "/quit":
            return False
        if cmd == "/help":
            self.print(HELP)
        elif cmd == "/ready":
            await c.ready(True)
            self.print("ready")
        elif cmd == "/unready":
            await c.ready(False)
            self.print("not ready")
        elif cmd == "/start":
            await c.start()
        elif cmd == "/resign":
            await c.resign()
            self.print("resigned")
        elif cmd == "/undo":
            ack = await c.undo()
            self.print(f"took back {ack.undone}")
            self.draw()
        elif cmd == "/hint":
            hint = await c.request({"type": "hint"}, timeout=60)
            self.print(hint_line(hint.raw))
        elif cmd == "/rematch":
            await c.rematch()
        elif cmd == "/kick":
            await c.kick(int(arg))
        elif cmd == "/series":
            try:
                series = series_option(arg, c.room.options.get("series"))
            except ValueError as exc:
                self.print(str(exc))
                return True
            await c.configure({"series": series})
            self.print("series: " + ("off" if series is None else str(series)))
        elif cmd == "/endseries":
            await c.end_series()
        elif cmd == "/standings":
            self.print(render_standings(c.room.series) or "no series in this room")
        elif cmd in ("/board", "/moves"):
            self.draw()
        else:
            self.print(f"unknown command {cmd}; {HELP}")
        return True

    # ---- pushes -----------------------------------------------------------------

    def on_push(self, msg: ev.Message) -> None:
        self._said(msg)
        room = self.client.room
        self.names.update(
            {seat: str(p["name"]) for seat, p in room.players.items() if p.get("name")}
        )

    def _said(self, msg: ev.Message) -> None:
        room = self.client.room
        if isinstance(msg, ev.Progress):
            if msg.seat != room.seat:
                self.print(player_line(room.players.get(msg.seat, {}), color=self.color))
        elif isinstance(msg, ev.Countdown):
            self._ticker = asyncio.get_running_loop().create_task(self._count_down())
        elif isinstance(msg, ev.Start):
            self.print("GO!")
        elif isinstance(msg, ev.Results):
            self._solved_said = False
            self.print(render_results(room))
        elif isinstance(msg, ev.SeriesEnd):
            self.print("the series is over: " + render_standings(msg.series))
        elif isinstance(
            msg,
            (
                ev.PlayerJoined,
                ev.PlayerLeft,
                ev.Kicked,
                ev.ReadyChanged,
                ev.OptionsChanged,
                ev.Rematch,
                ev.Connected,
            ),
        ):
            welcome = self.client.welcome
            grace = welcome.limits.get("grace") if welcome is not None else None
            self.print(event_line(msg.kind, msg.raw, room, grace, self.names))
        elif isinstance(msg, (ev.Snapshot, ev.Board, Resynced, Reconnected)):
            self.draw(force=False)
        elif isinstance(msg, ev.Event) and msg.kind == "solved":
            names = {seat: p.get("name", "") for seat, p in room.players.items()}
            self.print(solved_line(msg.raw, names, again=self._solved_said))
            self._solved_said = True
        elif isinstance(msg, ev.Error):
            self.print(f"server: {msg.code}: {msg.message}")
        elif isinstance(msg, ev.Arena):
            self.print(arena_line(msg.arena, _me(self.client)))
        elif isinstance(msg, ev.ArenaPaired):
            self.paired.put_nowait(msg)
            self.done.set()

    async def _count_down(self) -> None:
        """3... 2... 1... while the room counts down (the server's clock decides)."""
        room = self.client.room
        while room.state == "countdown":
            left = room.countdown_left()
            if left is None or left <= 0:
                return
            whole = math.ceil(left)
            self.print(f"the race starts in {whole}...")
            await asyncio.sleep(left - (whole - 1))  # until the next whole second

    async def _start_view(self) -> None:
        if self.client.role == "player" and self.client.room.view is None:
            try:
                await self.client.wait_board()
            except TimeoutError:
                self.print("no board from the server yet; type /board to retry")
                return
        self.draw(force=False)

    async def run(self) -> None:
        async def pushes() -> None:
            async for msg in self.client.events():
                self.on_push(msg)
                if isinstance(msg, ev.Start):
                    await self._start_view()
            self.print("disconnected")
            self.done.set()

        push_task = asyncio.create_task(pushes())
        done = asyncio.create_task(self.done.wait())
        try:
            while not self.done.is_set():
                get = asyncio.create_task(self.lines.get())
                finished, _ = await asyncio.wait(
                    {get, push_task, done}, return_when=asyncio.FIRST_COMPLETED
                )
                if get not in finished:
                    get.cancel()
                    break
                line = get.result()
                if line is None or not await self.handle_line(line):
                    break
        finally:
            push_task.cancel()
            done.cancel()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        default="",
        help="room link, ws:// URL or room code (omit with --create)",
    )
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"server for a bare room code or --create (default {DEFAULT_SERVER})",
    )
    parser.add_argument("--name", default=os.environ.get("USER", "player")[:24])
    parser.add_argument(
        "--create",
        metavar="GAME",
        help="create a room for GAME (tabbycat manx puttputt klondike leapyear)",
    )
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        type=parse_option,
        metavar="KEY=VALUE",
        help="room or game option for --create, e.g. -o draw=3 -o time_limit=300",
    )
    parser.add_argument(
        "--spectate-only", action="store_true", help="with --create: host without a seat"
    )
    parser.add_argument(
        "--daily",
        metavar="GAME",
        help="race today's daily deal of GAME, alone against everyone who played it "
        "(your first go today counts on its board)",
    )
    parser.add_argument(
        "--practice",
        action="store_true",
        help="with --daily: a practice go, off the board, on yesterday's deal",
    )
    parser.add_argument(
        "--date",
        metavar="YYYY-MM-DD",
        help="with --daily: practise that past day's daily (the last 30 days)",
    )
    parser.add_argument(
        "--quick",
        metavar="GAME",
        help="race now: whoever is waiting for GAME, paired by rating (rated; Ctrl-C cancels)",
    )
    parser.add_argument(
        "--arena",
        metavar="ID",
        help="take part in the arena ID (PROTOCOL.md, Arena): paired race after race until you "
        "/quit; the leaderboard is printed as it changes",
    )
    parser.add_argument(
        "--casual",
        action="store_true",
        help="with --quick: an unrated race (no player key needed)",
    )
    parser.add_argument(
        "--anonymous",
        action="store_true",
        help="race without the player key (kept in ~/.config/solrace/player-key: your history)",
    )
    parser.add_argument("--no-color", action="store_true", help="plain text output")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="line by line instead of the full-screen program (the default off a terminal)",
    )


async def _main(args: argparse.Namespace) -> int:
    target = parse_target(args.target, args.server)
    color = not args.no_color and sys.stdout.isatty()
    client = Client(
        target.url,
        auto_resume=True,
        client_name="solrace-terminal/0.1",
        room=target.room,
        player_key=None if args.anonymous else load_or_create(),
    )
    try:
        await client.connect()
    except OSError as exc:
        print(f"cannot connect to {target.url}: {exc}")
        return 1
    full_screen = not args.plain and sys.stdin.isatty() and sys.stdout.isatty()
    try:
        if args.arena:
            return await arena_loop(client, target, args, color)
        if args.quick:
            client, joined, said = await quick_match(client, target, args)
        elif args.create:
            joined = await client.create(
                args.name, room_options(args.create, args.option), play=not args.spectate_only
            )
            said = (
                f"room {joined.room} created; share {target.share_link(joined.room)}"
                f" or the code {joined.room}"
            )
        elif args.daily:
            joined = await client.daily(
                args.daily, args.name, practice=args.practice, date=args.date
            )
            said = daily_said(joined, target)
        elif target.room:
            joined = await client.join(target.room, args.name)
            said = f"joined room {joined.room} as seat {joined.seat}"
        else:
            print("solrace play: name a room, or use --create GAME, --daily GAME or --quick GAME")
            return 2
        term = Terminal(client, color)
        if full_screen:
            from .tui import RaceApp

            code = await RaceApp(client, intro=[said]).run_async()
            print(said)  # the link stays on the terminal after the full screen is gone
            return code or 0
        term.print(said)
        term.print(HELP)
        term.draw()
        term.start_reader(asyncio.get_running_loop())
        await term.run()
    except ErrorReply as exc:
        print(f"refused: {exc.code}: {exc.message}")
        if exc.code == "daily_played":
            print("practise yesterday's with: solrace play --daily GAME --practice")
        return 1
    finally:
        await client.close()
    return 0


async def quick_match(
    client: Client, target: Any, args: argparse.Namespace
) -> tuple[Client, ev.Joined, str]:
    """Queue on `client` for a race of `args.quick`; once matched, take the seat on it when its
    process serves the room (`here`), else on a new connection naming the room (so it reaches
    the process serving it). Returns the racing client, its `joined` and the line to say."""
    queued = await client.quick(args.quick, args.name, rated=not args.casual)
    kind = f"rated, your rating {queued.rating:.1f}" if queued.rated else "casual"
    print(f"waiting for players of {args.quick} ({kind}); Ctrl-C cancels", flush=True)
    matched = await client.wait_matched()
    racer = client
    if not matched.here:  # the room is served elsewhere: a connection naming it reaches it
        await client.close()
        racer = Client(
            target.url,
            auto_resume=True,
            client_name="solrace-terminal/0.1",
            room=matched.room,
            player_key=client.player_key,
        )
        await racer.connect()
    joined = await racer.resume(matched.room, matched.token)
    others = [p for i, p in enumerate(matched.players) if i != matched.seat]
    said = (
        f"quick match: racing {', '.join(others) or 'nobody'} in room {matched.room} "
        f"as seat {matched.seat}{' (rated)' if matched.rated else ''}"
    )
    return racer, joined, said


def _me(client: Client) -> str | None:
    """This client's public player id (its welcome's)."""
    return client.welcome.player if client.welcome is not None else None


def arena_line(view: dict[str, Any], me: str | None, top: int = 5) -> str:
    """The arena's state and leaderboard in a few lines (the member's own row marked)."""
    state = view.get("state")
    head = (
        f"arena {view.get('title') or view.get('id')} ({view.get('game')}): {state}, "
        f"{view.get('members', 0)} members, {view.get('races', 0)} races"
    )
    if state == "ended" and view.get("running"):
        head += f", {view['running']} still racing"
    rows = []
    for row in view.get("standings", []):
        if row["rank"] > top and row["player"] != me:
            continue
        mark = "*" if row["player"] == me else " "
        fire = " (on fire)" if row.get("fire") else ""
        bot = " [bot]" if row.get("bot") else ""
        rows.append(
            f"{mark}{row['rank']:>3}. {row['name']}{bot}: {row['score']} pts, "
            f"{row['wins']}/{row['races']} wins{fire}"
        )
    return "\n".join([head, *rows])


async def arena_loop(client: Client, target: Any, args: argparse.Namespace, color: bool) -> int:
    """`solrace play --arena ID`: join, then race each pairing (on this connection when its
    process serves the room, else on a new one naming it, which joins the arena again as the
    member's presence) in the line-by-line terminal, until /quit or the arena is over."""
    if client.player_key is None:
        print("solrace play --arena: an arena's members need the player key (drop --anonymous)")
        return 2
    view = await client.arena_join(args.arena, args.name)
    term = Terminal(client, color)
    term.print(arena_line(view.arena, _me(client)))
    term.print("waiting to be paired; /quit leaves")
    term.start_reader(asyncio.get_running_loop())
    while True:
        term.done.clear()
        await term.run()
        if term.paired.empty():
            return 0  # /quit, or the connection is gone
        paired = term.paired.get_nowait()
        if not paired.here:
            await term.client.close()
            racer = Client(
                target.url,
                auto_resume=True,
                client_name="solrace-terminal/0.1",
                room=paired.room,
                player_key=client.player_key,
            )
            await racer.connect()
            await racer.arena_join(args.arena, args.name)
            term.client = client = racer
        await client.resume(paired.room, paired.token)
        others = [p for i, p in enumerate(paired.players) if i != paired.seat]
        term.print(f"arena: racing {', '.join(others) or 'nobody'} in room {paired.room}")
        term.print(HELP)
        term.draw()


def daily_said(joined: ev.Joined, target: Any) -> str:
    """The first line of a daily race: which daily, scored or practice, and where its board is."""
    info = joined.daily or {}
    if info.get("scored"):
        kind = "scored: your first go today"
    else:
        kind = f"practice on the daily of {info.get('date')}: not on the board"
    board = share_link(target.url, None) + f"api/daily/{info.get('id')}"
    return f"daily {info.get('id')} ({kind}); its board: {board}"


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except KeyboardInterrupt:
        return 130
