"""The player key the Python client keeps: made once, kept in a file, sent in every `hello`.

The key is the player's only identity (no accounts): the server stores its hash and shows a
public player id derived from it (PROTOCOL.md, Identity), under which the player's races are
listed. The file is `$XDG_CONFIG_HOME/solrace/player-key` (`~/.config/solrace/player-key`
without XDG_CONFIG_HOME), readable by its owner only; losing it loses the history, nothing else.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def default_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "solrace" / "player-key"


def new_key() -> str:
    """32 random bytes, url-safe base64 (43 characters), as the web client makes them."""
    return secrets.token_urlsafe(32)


def load_or_create(path: Path | None = None) -> str:
    """The key in `path` (default: `default_path()`), made and written there the first time."""
    path = path or default_path()
    try:
        key = path.read_text().strip()
        if key:
            return key
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = new_key()
    # created 0600 from the start: the key never sits in a file others can read
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return key
