"""The server's record-signing key: what lets anyone tell its race records from forgeries.

Every record the server stores is signed with one Ed25519 key (protocol/record_sign.py says
what is signed); its public key is served at `/api/key` and printed by
`solrace serve --print-public-key`, and `solrace verify --key/--server` checks a record with it.

Where the private key comes from: `SOLRACE_SIGNING_KEY` when set (its 32-byte seed as 64 hex
digits or as base64: operators who keep keys outside Redis, or several deployments that
share one), else a random seed made once and kept in Redis (`<prefix>signing-key`, as hex,
SET NX: the first process makes it, all others read that one, as server/store/secret.py does for
the server secret). It is never logged: `redact.SECRETS` blanks both its forms.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Mapping
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from solrace.protocol.record_sign import KEY_BYTES, parse_private_key
from solrace.server.common.redact import SECRETS
from solrace.server.store import keys

#: the environment variable that sets the signing key
ENV = "SOLRACE_SIGNING_KEY"


def signing_key_key(prefix: str) -> str:
    return keys.signing_key(prefix)


def _forget_in_logs(key: Ed25519PrivateKey, given: str = "") -> None:
    """Every form of the seed a log line could show, blanked by the process's log filter."""
    seed = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    for text in (
        given.strip(),
        seed.hex(),
        seed.hex().upper(),
        base64.b64encode(seed).decode(),
        base64.urlsafe_b64encode(seed).decode(),
        base64.b64encode(seed).decode().rstrip("="),
        base64.urlsafe_b64encode(seed).decode().rstrip("="),
    ):
        SECRETS.add(text)


async def signing_key(
    redis: Any, prefix: str, env: Mapping[str, str] = os.environ
) -> Ed25519PrivateKey:
    """The deployment's signing key: the environment's, else Redis's (made now if it has none).
    ValueError when SOLRACE_SIGNING_KEY is set to something that is not a key."""
    given = env.get(ENV)
    if given:
        key = parse_private_key(given)
        _forget_in_logs(key, given)
        return key
    name = signing_key_key(prefix)
    await redis.set(name, secrets.token_hex(KEY_BYTES), nx=True)
    kept = await redis.get(name)
    if not kept:
        raise RuntimeError(f"the signing key is missing from Redis ({name})")
    text = kept.decode() if isinstance(kept, bytes) else str(kept)
    key = parse_private_key(text)
    _forget_in_logs(key, text)
    return key
