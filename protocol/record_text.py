"""A race record as a text file, in the spirit of PGN: tag lines, then each seat's moves.

`export(record)` writes it, `parse(text)` reads it back to the same record (docs/RECORDS.md
has the format and an example). Values that are numbers in the record are written so that
they read back exactly: times in ms as seconds with three decimals, progress as Python's
shortest repr of the float, instants as UTC ISO 8601 with milliseconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from solrace.protocol.record_sign import FIELD as SIGNATURE
from solrace.protocol.records import RACE_OPTIONS

HEADER = "; solrace race record: docs/RECORDS.md; check it with `solrace verify FILE`"
_TAG = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$')
_NUMBER = re.compile(r"^(\d+)\.$")
_SECONDS = re.compile(r"^(-?)(\d+)\.(\d{3})$")
LINE_WIDTH = 79

#: header tags: record key -> tag name (options and game options have their own)
_HEAD = {
    "id": "Record",
    "game": "Game",
    "room": "Room",
    "round": "Round",
    "seed": "Seed",
    "salt": "Salt",
    "commitment": "Commitment",
}
_OPTION_TAGS = {"time_limit": "TimeLimit", "undo": "Undo", "deal": "Deal"}
#: the tags every header has, in the order they are written
_HEADER_TAGS = (
    "Format",
    *list(_HEAD.values())[:4],
    "GameOptions",
    *_OPTION_TAGS.values(),
    "Start",
    "Finish",
    *list(_HEAD.values())[4:],
)
_SEAT = {
    "name": "Name",
    "player": "Player",
    "place": "Place",
    "status": "Status",
    "progress": "Progress",
    "moves": "Moves",
    "time": "Time",
}


class RecordFormatError(ValueError):
    """The text is not a record file; says the line."""


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _unquote(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _instant(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    )


def _ms_of_instant(text: str) -> int:
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return int(moment.timestamp()) * 1000 + moment.microsecond // 1000


def _seconds(ms: int) -> str:
    sign = "-" if ms < 0 else ""
    return f"{sign}{abs(ms) // 1000}.{abs(ms) % 1000:03d}"


def _ms_of_seconds(text: str) -> int:
    m = _SECONDS.match(text)
    if not m:
        raise ValueError(f"{text!r} is not seconds with three decimals")
    ms = int(m.group(2)) * 1000 + int(m.group(3))
    return -ms if m.group(1) else ms


def _options_text(options: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in options.items())


def _options_of(text: str) -> dict[str, Any]:
    """`draw=1 moves=top`: digits are ints (no game option takes a text of digits)."""
    out: dict[str, Any] = {}
    for item in text.split():
        k, _, v = item.partition("=")
        out[k] = int(v) if v.isdigit() else v
    return out


def _tag(name: str, value: Any) -> str:
    return f'[{name} "{_quote(str(value))}"]'


def export(record: dict[str, Any]) -> str:
    """The text file of a record: header tags, then one section per seat in ranking order."""
    lines = [HEADER, _tag("Format", record["v"])]
    if record.get(SIGNATURE) is not None:  # the server's signature of the record (record_sign)
        lines.append(_tag("Signature", record[SIGNATURE]))
    for key, tag in _HEAD.items():
        if key == "seed":
            lines.append(_tag("GameOptions", _options_text(record["game_options"])))
            for opt in RACE_OPTIONS:
                lines.append(_tag(_OPTION_TAGS[opt], record["options"][opt]))
            if record.get("daily"):  # a daily race: its day, and whether it was scored
                lines.append(_tag("Daily", record["daily"]))
                lines.append(_tag("Scored", "true" if record.get("scored") else "false"))
            lines.append(_tag("Start", _instant(record["starts_at"])))
            lines.append(_tag("Finish", _instant(record["finished_at"])))
        lines.append(_tag(tag, record[key]))
    for p in record["players"]:
        seat = str(p["seat"])
        lines += ["", _tag("Seat", seat)]
        for key, tag in _SEAT.items():
            value = p[key]
            if key == "player" and value is None:
                continue  # anonymous: no Player tag
            if key == "time":
                value = "-" if value is None else _seconds(value)
            elif key == "progress":
                value = repr(float(value))
            lines.append(_tag(tag, value))
        lines += _movetext(record["moves"].get(seat, []), record["times"].get(seat, []))
    return "\n".join(lines) + "\n"


def _movetext(moves: list[str], times: list[int]) -> list[str]:
    """`1. t3-f1 2.013 2. deal 0.870 …`: each move, then seconds since the seat's previous
    move (the first: since the start), wrapped at LINE_WIDTH."""
    lines: list[str] = []
    line = ""
    prev = 0
    for i, (move, t) in enumerate(zip(moves, times, strict=True)):
        token = f"{i + 1}. {move} {_seconds(t - prev)}"
        prev = t
        if line and len(line) + 1 + len(token) > LINE_WIDTH:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines


def parse(text: str) -> dict[str, Any]:
    """A record from its text file; RecordFormatError names the line or the tag that is wrong."""
    if not text.strip():
        raise RecordFormatError("the file is empty")
    head: dict[str, str] = {}
    seats: list[tuple[dict[str, str], list[str]]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(";"):
            continue
        try:
            if line.startswith("["):
                m = _TAG.match(line)
                if not m:
                    raise ValueError(f"not a tag line: {line!r}")
                name, value = m.group(1), _unquote(m.group(2))
                if name == "Seat":
                    seats.append(({"Seat": value}, []))
                elif seats:
                    seats[-1][0][name] = value
                else:
                    head[name] = value
            elif seats:
                seats[-1][1].extend(line.split())
            else:
                raise ValueError("moves before any [Seat] tag")
        except ValueError as exc:
            raise RecordFormatError(f"line {number}: {exc}") from None
    if not head and not seats:
        raise RecordFormatError("no tag lines: this is not a record file")
    missing = [t for t in _HEADER_TAGS if t not in head]
    if missing:
        raise RecordFormatError(f"the header has no {_tags(missing)}")
    for tags, _ in seats:
        missing = [t for t in ("Seat", *_SEAT.values()) if t not in tags and t != "Player"]
        if missing:
            raise RecordFormatError(f'[Seat "{tags["Seat"]}"] has no {_tags(missing)}')
    try:
        return _build(head, seats)
    except ValueError as exc:
        raise RecordFormatError(f"a tag's value does not read: {exc}") from None


def _tags(names: list[str]) -> str:
    return " ".join(f"[{n}]" for n in names) + (" tag" if len(names) == 1 else " tags")


def _build(head: dict[str, str], seats: list[tuple[dict[str, str], list[str]]]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for opt in RACE_OPTIONS:
        value = head[_OPTION_TAGS[opt]]
        options[opt] = int(value) if value.isdigit() else value
    record: dict[str, Any] = {
        "v": int(head["Format"]),
        "id": head["Record"],
        "game": head["Game"],
        "game_options": _options_of(head["GameOptions"]),
        "options": options,
        "seed": int(head["Seed"]),
        "salt": head["Salt"],
        "commitment": head["Commitment"],
        "room": head["Room"],
        "round": int(head["Round"]),
        "starts_at": _ms_of_instant(head["Start"]),
        "finished_at": _ms_of_instant(head["Finish"]),
        "players": [],
        "moves": {},
        "times": {},
    }
    for tags, tokens in seats:
        seat = tags["Seat"]
        time = tags["Time"]
        record["players"].append(
            {
                "seat": int(seat),
                "name": tags["Name"],
                "player": tags.get("Player"),
                "place": int(tags["Place"]),
                "status": tags["Status"],
                "progress": float(tags["Progress"]),
                "moves": int(tags["Moves"]),
                "time": None if time == "-" else _ms_of_seconds(time),
            }
        )
        record["moves"][seat], record["times"][seat] = _moves_of(tokens)
    if "Daily" in head:
        record["daily"], record["scored"] = head["Daily"], head.get("Scored") == "true"
    if "Signature" in head:
        record[SIGNATURE] = head["Signature"]
    return record  # an id that is not the commitment's is kept as written: `verify` says so


def _moves_of(tokens: list[str]) -> tuple[list[str], list[int]]:
    if len(tokens) % 3:
        raise ValueError("movetext is not `N. move seconds` triples")
    moves: list[str] = []
    times: list[int] = []
    t = 0
    for i in range(0, len(tokens), 3):
        m = _NUMBER.match(tokens[i])
        if not m or int(m.group(1)) != len(moves) + 1:
            raise ValueError(f"expected move number {len(moves) + 1}., not {tokens[i]!r}")
        t += _ms_of_seconds(tokens[i + 2])
        moves.append(tokens[i + 1])
        times.append(t)
    return moves, times
