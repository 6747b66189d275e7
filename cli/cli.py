"""The `solrace` command line.

Each subcommand lives in the package that owns it and exposes two functions,
`add_arguments(parser)` and `run(args) -> int`; this module only dispatches,
importing a subcommand's module when that subcommand is used so that
`solrace deal` never pays for websockets or Redis.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "deal": ("solrace.deal_cli", "print the position text of a deal"),
    "solve": ("solrace.solve_cli", "judge deals: won (with the moves), lost or unknown"),
    "verify": ("solrace.verify_cli", "check a race record: commitment, moves, results"),
    "serve": ("solrace.server.main", "run the race server (WebSockets + web client)"),
    "play": ("solrace.client.terminal", "race in the terminal"),
    "watch": ("solrace.client.watch", "spectate a room in the terminal"),
    "bot": ("solrace.client.bot", "join a room with a bot player"),
    "bench": ("solrace.bench.main", "run a benchmark (engine, load)"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="solrace", description="Multiplayer solitaire races.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    chosen = argv[0] if argv else None
    for name, (module_name, help_text) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            module = importlib.import_module(module_name)
            module.add_arguments(sp)
            sp.set_defaults(_run=module.run)
    args = parser.parse_args(argv)
    return int(args._run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
