"""`solrace verify FILE`: check a race record on its own, with the engine.

FILE is a record's text file (`/api/record/ID.txt`) or its JSON (`/api/record/ID`); `-` reads
stdin. It checks that the revealed seed and salt are what the race committed to before it
started, replays every seat's moves on that deal, and checks each seat's result and place
(protocol/record_verify.py says exactly what). Prints `ok` and a line about the race, or one
line per failure; exits 0 when the record checks out, 1 when it does not, 2 when FILE is not
a record.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from solrace.protocol.record_text import RecordFormatError, parse
from solrace.protocol.record_verify import verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a record's text file or JSON (- for stdin)")


def read_record(text: str) -> dict[str, Any]:
    """A record from its text file or its JSON (the API serves both)."""
    if text.lstrip().startswith("{"):
        record = json.loads(text)
        if not isinstance(record, dict):
            raise RecordFormatError("the JSON is not a record")
        return record
    return parse(text)


def run(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        record = read_record(text)
        fails = verify(record)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"solrace verify: {args.file}: not a race record: {exc}", file=sys.stderr)
        return 2
    if fails:
        for line in fails:
            print(f"FAIL {line}")
        return 1
    seats = len(record["players"])
    moves = sum(len(m) for m in record["moves"].values())
    print(
        f"ok: record {record['id']} ({record['game']}, {seats} players, {moves} moves): "
        "the commitment matches the seed and salt, every move is legal, the results follow"
    )
    return 0
