"""`solrace verify FILE`: check a race record: the server's signature, and its consistency.

FILE is a record's text file (`/api/record/ID.txt`) or its JSON (`/api/record/ID`); `-` reads
stdin. Always: the record's shape (protocol/record_verify.py `structure`), that the revealed
seed and salt are what the race committed to before it started, every seat's moves replayed
on that deal, each seat's result and place. With the server's public key (`--key`,
`--key-file`, or `--server URL` to fetch its /api/key) also the signature
(protocol/record_sign.py): only that tells the server's record from a made-up race that
checks out. Without a key it says so: "consistent, signature NOT checked".

A series record (`/api/series/ID`, docs/RECORDS.md) is checked with every round's race record:
each fetched from `--server URL` (its /api/record/ID) or read from the `--race FILE`s given;
each race record checked as above (and signed, given a key), then the series' own checks
(protocol/series.py `verify_series`: the rounds are those races, the standings follow).

Exits 0 when everything it checked holds, 1 when something does not (a bad signature, or,
given a key, no signature at all), 2 when FILE is not a record or the key cannot be had.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from solrace.protocol.record_sign import BadKey, check, parse_public_key
from solrace.protocol.record_text import RecordFormatError, parse
from solrace.protocol.record_verify import verify
from solrace.protocol.series import is_series_record, verify_series

#: the most of /api/key's answer read (it is ~200 bytes)
KEY_ANSWER_MAX = 64 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a record's text file or JSON (- for stdin)")
    key = parser.add_mutually_exclusive_group()
    key.add_argument(
        "--key",
        help="the server's public key: its 32 bytes as base64 or hex (the `key` of /api/key)",
    )
    key.add_argument(
        "--key-file",
        help="a file holding the public key: as --key, the JSON of /api/key, or a PEM key",
    )
    parser.add_argument(
        "--race",
        action="append",
        default=[],
        metavar="FILE",
        help="a series record's round: its race record (text or JSON); once per round",
    )
    key.add_argument(
        "--server",
        metavar="URL",
        help="fetch the public key from the server at URL (http(s)://host:port: its /api/key)",
    )


class NoKey(Exception):
    """The key asked for cannot be had; says why."""


def read_record(text: str) -> dict[str, Any]:
    """A record from its text file or its JSON (the API serves both)."""
    if not text.strip():
        raise RecordFormatError("the file is empty")
    if text.lstrip().startswith("{"):
        try:
            record = json.loads(text)
        except ValueError as exc:
            raise RecordFormatError(f"the JSON does not read: {exc}") from None
        if not isinstance(record, dict):
            raise RecordFormatError("the JSON is not a record")
        return record
    return parse(text)


def key_url(server: str) -> str:
    """The /api/key address of a server given as http(s)://host[:port][/...] (ws(s):// too)."""
    parts = urlsplit(server if "//" in server else f"http://{server}")
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    if scheme not in ("http", "https") or not parts.netloc:
        raise NoKey(f"--server is http(s)://host:port, not {server!r}")
    return urlunsplit((scheme, parts.netloc, "/api/key", "", ""))


def fetch_key(server: str, timeout: float = 10.0) -> Ed25519PublicKey:
    url = key_url(server)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            body = answer.read(KEY_ANSWER_MAX).decode("utf-8", errors="replace")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise NoKey(f"could not fetch {url}: {exc}") from None
    try:
        return parse_public_key(body)
    except BadKey as exc:
        raise NoKey(f"{url} did not answer with a key: {exc}") from None


def public_key(args: argparse.Namespace) -> Ed25519PublicKey | None:
    """The key the options name (None: none given)."""
    try:
        if getattr(args, "key", None):
            return parse_public_key(args.key)
        if getattr(args, "key_file", None):
            with open(args.key_file, encoding="utf-8") as f:
                return parse_public_key(f.read())
    except OSError as exc:
        raise NoKey(f"cannot read the key file: {exc}") from None
    except BadKey as exc:
        raise NoKey(str(exc)) from None
    if getattr(args, "server", None):
        return fetch_key(args.server)
    return None


def run(args: argparse.Namespace) -> int:
    try:
        key = public_key(args)
    except NoKey as exc:
        print(f"solrace verify: no key: {exc}", file=sys.stderr)
        return 2
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        record = read_record(text)
        if is_series_record(record):
            return run_series(args, record, key)
        fails = verify(record)
    except (OSError, ValueError, TypeError) as exc:  # RecordFormatError, NotARecord: ValueError
        print(f"solrace verify: {args.file}: not a race record: {exc}", file=sys.stderr)
        return 2
    signature = None if key is None else check(record, key)
    if signature is not None and not signature.ok:
        what = "unsigned" if signature.state == "unsigned" else "signature"
        print(f"FAIL {what}: {signature.message}")
    for line in fails:
        print(f"FAIL {line}")
    if fails or (signature is not None and not signature.ok):
        if signature is not None and signature.state == "unsigned" and not fails:
            print("(consistent, but nothing shows that the server made this record)")
        return 1
    seats = len(record["players"])
    moves = sum(len(m) for m in record["moves"].values())
    race = f"record {record['id']} ({record['game']}, {seats} players, {moves} moves)"
    facts = "the commitment matches the seed and salt, every move is legal, the results follow"
    if signature is not None:
        print(f"ok: {race}: {signature.message}; {facts}")
    elif "signature" in record:
        print(
            f"consistent, signature NOT checked: {race}: {facts}; its signature needs the "
            "server's key (--key, --key-file or --server)"
        )
    else:
        print(
            f"consistent, unsigned (signature NOT checked: there is none): {race}: {facts}; "
            "a record stored before records were signed, or not the server's"
        )
    return 0


def fetch_race(server: str, rid: str, timeout: float = 10.0) -> dict[str, Any] | None:
    """A race record from the server's /api/record/ID (None: not there)."""
    url = key_url(server).removesuffix("/api/key") + f"/api/record/{rid}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return read_record(answer.read().decode("utf-8", errors="replace"))
    except (urllib.error.URLError, OSError, ValueError):
        return None


def run_series(
    args: argparse.Namespace, record: dict[str, Any], key: Ed25519PublicKey | None
) -> int:
    """A series record: every round's race record checked, then the standings."""
    races: dict[str, dict[str, Any] | None] = {}
    for path in getattr(args, "race", []) or []:
        try:
            with open(path, encoding="utf-8") as f:
                given = read_record(f.read())
        except (OSError, ValueError) as exc:
            print(f"solrace verify: {path}: not a race record: {exc}", file=sys.stderr)
            return 2
        races[str(given.get("id"))] = given
    fails: list[str] = []
    found = record.get("rounds")
    rounds: list[Any] = found if isinstance(found, list) else []
    for rnd in rounds:
        rid = rnd.get("record") if isinstance(rnd, dict) else None
        if not isinstance(rid, str):
            continue
        if rid not in races and getattr(args, "server", None):
            races[rid] = fetch_race(args.server, rid)
        race = races.get(rid)
        if race is None:
            continue  # verify_series says it is missing
        try:
            fails += [f"race {rid}: {line}" for line in verify(race)]
        except ValueError as exc:
            fails.append(f"race {rid}: not a race record: {exc}")
        if key is not None:
            sig = check(race, key)
            if not sig.ok:
                fails.append(f"race {rid}: signature: {sig.message}")
    fails += verify_series(record, races)
    signature = None if key is None else check(record, key)
    if signature is not None and not signature.ok:
        print(f"FAIL signature: {signature.message}")
    for line in fails:
        print(f"FAIL {line}")
    if fails or (signature is not None and not signature.ok):
        return 1
    what = f"series {record['id']} ({len(rounds)} rounds, {len(record['standings'])} players)"
    facts = "every round's race record checks out, the standings follow from their results"
    if signature is not None:
        print(f"ok: {what}: {signature.message}; {facts}")
    else:
        print(f"consistent, signature NOT checked: {what}: {facts}; give the server's key")
    return 0
