"""Players without accounts: a secret player key in, a stable public player id out.

A client makes a random key once and keeps it (the web client in localStorage, the Python
client in a file under the user's config directory) and sends it in `hello`. The server keeps
only the key's SHA-256 and shows everyone the id derived from that hash:

    key_hash  = hex( SHA-256( UTF-8 of the key ) )
    player id = base32, lower case, of the first 10 bytes of
                SHA-256( b"solrace player id:" + key_hash as 32 bytes )      (16 characters)

Why two steps: a server (or a leaked Redis dump) that holds only key hashes can still derive
every id, and an id (public, in every record) gives away neither the key nor the stored hash.
Losing the key loses the history, nothing else.

A `hello` with a key stores nothing: the player's entry (`player:{PID}`, server/league/records.py)
is written with the first finished keyed race, so keys made up by the million cost no Redis.
"""

from __future__ import annotations

import base64
import hashlib

from solrace.protocol.messages import ProtocolError
from solrace.server.rules.room import token_hash

#: a key shorter than this cannot hold 128 random bits in url-safe base64
KEY_MIN = 22
KEY_MAX = 128
ID_PREFIX = b"solrace player id:"


def key_hash(key: str) -> str:
    """Only this is stored, as for a seat token (`room.token_hash`: the same hash)."""
    return token_hash(key)


def player_id(khash: str) -> str:
    digest = hashlib.sha256(ID_PREFIX + bytes.fromhex(khash)).digest()
    return base64.b32encode(digest[:10]).decode().lower()


def check_key(key: str) -> None:
    """A player key is 22 to 128 printable ASCII characters (`bad_message` otherwise)."""
    if not KEY_MIN <= len(key) <= KEY_MAX or not (key.isascii() and key.isprintable()):
        raise ProtocolError(
            "bad_message",
            f"player_key is {KEY_MIN} to {KEY_MAX} printable ASCII characters",
            field="player_key",
        )


def is_player_id(text: str) -> bool:
    return len(text) == 16 and all(c in "abcdefghijklmnopqrstuvwxyz234567" for c in text)
