"""The server secret: what turns a public seed text into a deal nobody can compute.

A text seed (a room's word) is known to every racer, so a deal made from the text alone
could be computed before the race and every hidden card read off it. The deal's seed is
instead derived from the secret and the text (`room.text_deal_seed`; a daily's deal likewise,
`daily.candidate_seed`), each purpose under its own key derived from the secret with
length-prefixed inputs (server/common/derive.py), so no text seed is dealt a daily: the same text
deals the same on every process of a deployment, and differently on another deployment,
and the seed is still committed to before the race and revealed in the results.

Where it comes from: `SOLRACE_SECRET` when set (operators who want it kept outside Redis),
else a random one made once and kept in Redis (`<prefix>secret`, SET NX: the first process
makes it, all others read that one). It is never logged: `redact.SecretFilter` blanks it.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from typing import Any

from solrace.server.store import keys

#: the environment variable that sets the secret
ENV = "SOLRACE_SECRET"
#: bytes of a secret this server makes itself
SIZE = 32


def secret_key(prefix: str) -> str:
    return keys.secret(prefix)


async def server_secret(redis: Any, prefix: str, env: Mapping[str, str] = os.environ) -> bytes:
    """The deployment's secret: the environment's, else Redis's (made now if it has none)."""
    given = env.get(ENV)
    if given:
        return given.encode()
    key = secret_key(prefix)
    await redis.set(key, secrets.token_hex(SIZE), nx=True)
    kept = await redis.get(key)
    if not kept:
        raise RuntimeError(f"the server secret is missing from Redis ({key})")
    return kept if isinstance(kept, bytes) else str(kept).encode()
