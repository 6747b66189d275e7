"""`solrace play` on a terminal: a full-screen Textual app.

The screen is split so that nothing overwrites anything else: the room's header and clock on
top, the player's own board beside everyone's progress, a log of what happened (events,
refusals, the server's replies), the numbered legal moves, and at the bottom the prompt, a
Textual Input that keeps what the player is typing while the rest of the screen redraws.

What a line means is the line client's (`terminal.Terminal.handle_line`): a move in any
case, a move's number, or a /command; this module only routes its output to widgets.
Pipes and scripts (stdin or stdout not a terminal, or `--plain`) keep the line client.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, RichLog, Static

from . import events as ev
from .connection import Client
from .render import clock_text, header, progress_bar, render_results, render_view
from .room import RoomModel
from .terminal import HELP, Terminal, completions, current_moves


def players_panel(room: RoomModel) -> str:
    """Everyone's progress, one short line each (the side panel is narrower than a terminal)."""
    lines = []
    for seat, p in sorted(room.players.items()):
        you = "*" if seat == room.seat else " "
        away = "" if p.get("connected", True) else " away"
        t = p.get("time")
        progress = float(p.get("progress") or 0.0)
        lines.append(
            f"{you} {(p.get('name') or f'seat {seat}')[:10]:<10} {progress_bar(progress, 12)}"
            f" {round(100 * progress):>3}% {p.get('status', ''):<8} {p.get('moves', 0):>3} mv"
            + (f" {clock_text(t / 1000)}" if t is not None else "")
            + away
        )
    return "\n".join(lines)


class PanelTerminal(Terminal):
    """The line client's logic with its output sent to the app's widgets."""

    def __init__(self, client: Client, app: RaceApp) -> None:
        super().__init__(client, color=True)
        self.app = app

    def print(self, text: str = "") -> None:
        self.app.log_line(text)

    def draw(self, force: bool = True) -> None:
        self.app.redraw()

    def on_push(self, msg: ev.Message) -> None:
        if isinstance(msg, ev.Progress):
            return  # the players' panel shows it; the log keeps to what happened
        super().on_push(msg)


class Prompt(Input):
    """The prompt: a line leaves it the moment Enter is pressed, so lines typed ahead while
    the app still handles the last one (a move's round trip) stay apart (they were merged:
    `dealdealdeal`, since the app cleared the field only when it came to the line)."""

    async def action_submit(self) -> None:
        value = self.value
        self.value = ""
        self.post_message(self.Submitted(self, value, None))


class RaceApp(App[int]):
    """Board, opponents' progress, a log and a prompt that is never overwritten."""

    TITLE = "solrace"
    CSS = """
    #top { height: 1; background: $primary-darken-2; color: $text; padding: 0 1; }
    #main { height: 1fr; }
    #board { width: 1fr; min-width: 36; padding: 0 1; overflow-y: auto; }
    #side { width: 64; }
    #players { height: auto; max-height: 60%; border: round $secondary; padding: 0 1; overflow-y: auto; }
    #log { height: 1fr; border: round $secondary; }
    #moves { height: auto; max-height: 4; padding: 0 1; color: $text-muted; }
    #prompt { dock: bottom; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit_app", "Quit", priority=True),
        Binding("tab", "complete", "Complete", show=False, priority=True),
    ]

    def __init__(self, client: Client, intro: list[str] | None = None) -> None:
        super().__init__()
        self.client = client
        self.term = PanelTerminal(client, self)
        self.intro = intro or []
        self._pushes: asyncio.Task[None] | None = None
        self._widgets_up = False  # the widgets exist (output before that is dropped)

    def compose(self) -> ComposeResult:
        yield Static(id="top")
        with Horizontal(id="main"):
            yield Static(id="board")
            with Vertical(id="side"):
                yield Static(id="players")
                yield RichLog(id="log", wrap=True, markup=False, max_lines=500, min_width=20)
        yield Static(id="moves")
        yield Prompt(placeholder="a move (t1-f1, deal) or its number, or /help", id="prompt")

    async def on_mount(self) -> None:
        self._widgets_up = True
        for line in [*self.intro, HELP]:
            self.log_line(line)
        self.redraw()
        self.query_one("#prompt", Input).focus()
        self.set_interval(0.2, self._tick)
        self._pushes = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        """Server pushes: each updates the model (the client did), the log and the panels."""
        async for msg in self.client.events():
            self.term.on_push(msg)
            if isinstance(msg, ev.Start):
                await self.term._start_view()
            self.redraw()
        self.log_line("disconnected")

    def _tick(self) -> None:
        room = self.client.room
        if room.state in ("countdown", "racing"):
            # a query, not query_one: the clock's last tick can come as the app closes, with
            # its widgets already gone (seen beside a CPU hog: NoMatches at exit)
            for top in self.query("#top").results(Static):
                top.update(Text.from_ansi(header(room, color=True)))

    # ---- output -------------------------------------------------------------------------

    def log_line(self, text: str) -> None:
        if self._widgets_up:
            self.query_one("#log", RichLog).write(Text.from_ansi(text))

    def redraw(self) -> None:
        """Every panel from the room model; the prompt is another widget and keeps its text."""
        if not self._widgets_up:
            return
        room = self.client.room
        self.query_one("#top", Static).update(Text.from_ansi(header(room, color=True)))
        if self.client.role == "spectator":
            boards = [render_view(v, True) for _, v in sorted(room.boards.items())]
            board = "\n\n".join(boards) or "waiting for the race"
        elif room.view is not None:
            board = render_view(room.view, True)
        else:
            board = "your board appears when the race starts"
        if room.state == "finished" and room.results:
            board += "\n\n" + render_results(room)
        self.query_one("#board", Static).update(Text.from_ansi(board))
        self.query_one("#players", Static).update(Text.from_ansi(players_panel(room)))
        moves = current_moves(self.client)
        listed = "  ".join(f"{i}){m}" for i, m in enumerate(moves, 1))
        self.query_one("#moves", Static).update(Text("moves: " + listed if moves else ""))

    # ---- input ------------------------------------------------------------------------

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        line = (
            event.value.strip()
        )  # the prompt is empty already (Prompt): it may hold the next line
        if not line:
            return
        self.log_line(f"> {line}")
        if not await self.term.handle_line(line):
            self.exit(0)
            return
        self.redraw()

    def action_complete(self) -> None:
        """Tab completes a move or a command in the prompt (or lists the candidates)."""
        prompt = self.query_one("#prompt", Input)
        options = completions(prompt.value.strip(), current_moves(self.client))
        if len(options) == 1:
            prompt.value = options[0]
            prompt.cursor_position = len(prompt.value)
        elif options:
            self.log_line("  ".join(options))

    async def action_quit_app(self) -> None:
        self.exit(0)

    async def on_unmount(self) -> None:
        if self._pushes is not None:
            self._pushes.cancel()
