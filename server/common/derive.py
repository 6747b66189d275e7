"""Everything the server derives from its secret, each purpose under its own key.

A value derived from the secret is only as private as the inputs that could yield it: when a
room's text seed was HMAC(secret, text) and a daily's candidate HMAC(secret, "daily|DATE|..."),
a private room with the seed text "daily|2026-11-26|puttputt|{}|0" was dealt that day's daily.
So no two purposes share a key, and no two inputs of one purpose share an encoding:

    key_for(purpose) = HMAC-SHA256(secret, b"solrace/v1/key/" + purpose)
    derive(purpose, f1, f2, ...) = HMAC-SHA256(key_for(purpose), len(f1) f1 len(f2) f2 ...)

where each field is its UTF-8 (an int: its decimal digits) behind its length as 4 bytes
big-endian. Purposes (`PURPOSES`) are fixed names the code spells, never a client's text
(`key_for` refuses any other). Whatever a client sends is only ever a field, so it cannot reach another purpose's key, nor
another input of its own purpose.

The unkeyed hashes elsewhere are not derivations of a secret (anybody may compute them) and
their inputs are unambiguous as they stand: a seat token's and a player key's SHA-256
(`room.token_hash`, one random text each), the player id (a tag and a fixed 32-byte hash,
`players.player_id`), a client address (tagged, `room.addr_hash`), the commitment (16 bytes
of salt and an 8-byte seed, `protocol.records.commitment`), an HTTP ETag and the worker a
room code routes to (`front.py`).
"""

from __future__ import annotations

import hashlib
import hmac

#: the prefix of every purpose's key input; a new scheme takes a new version
TAG = b"solrace/v1/key/"
#: a room's text seed (`room.text_deal_seed`)
ROOM_TEXT_SEED = "room-text-seed"
#: a daily's candidate deal (`daily.candidate_seed`)
DAILY_CANDIDATE = "daily-candidate"
#: the order of a shipped deal pool's seeds for dailies (`deal_pool.daily_pick`)
DAILY_POOL = "daily-pool"
PURPOSES = frozenset({ROOM_TEXT_SEED, DAILY_CANDIDATE, DAILY_POOL})


def key_for(secret: bytes, purpose: str) -> bytes:
    """The key of one purpose: nothing derived under another purpose's key reveals it."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown derivation purpose {purpose!r}")
    if not secret:
        raise ValueError("a derivation needs the server secret")
    return hmac.new(secret, TAG + purpose.encode(), hashlib.sha256).digest()


def encode_fields(*fields: str | int) -> bytes:
    """Length-prefixed fields: no two field lists share an encoding."""
    out = bytearray()
    for f in fields:
        raw = str(f).encode() if isinstance(f, int) else f.encode()
        out += len(raw).to_bytes(4, "big") + raw
    return bytes(out)


def derive(secret: bytes, purpose: str, *fields: str | int) -> bytes:
    """HMAC-SHA256 under the purpose's key of the length-prefixed fields."""
    return hmac.new(key_for(secret, purpose), encode_fields(*fields), hashlib.sha256).digest()


def derive_seed(secret: bytes, purpose: str, *fields: str | int) -> int:
    """A u64 deal seed: the first 8 bytes, big-endian, of `derive`."""
    return int.from_bytes(derive(secret, purpose, *fields)[:8], "big")
