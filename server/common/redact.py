"""Logs never hold a secret: seat and host tokens, the server secret, a seed before its reveal.

Log lines outlive races and reach people (operators, bug reports, log services) who must not
take a seat or read a deal. The code that logs a client message passes it through
`protocol.messages.redacted`; this filter, on the process's log handlers, is the second line:
it blanks the server secret and anything shaped like a token (43 url-safe base64 characters,
what `secrets.token_urlsafe(32)` makes) in every record, exception text included, and cuts
anything shaped like a private room's code (20 characters of the code alphabet, the room's
only key) to its first characters, as `codes.shown` does.
"""

from __future__ import annotations

import logging
import re

from solrace.protocol.messages import REDACTED
from solrace.server.common.codes import shown_in

#: a seat or host token: 32 random bytes as url-safe base64 without padding, alone in its word
TOKEN_SHAPE = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")


class SecretFilter(logging.Filter):
    """Rewrites each record's text with every secret blanked; drops nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.known: set[str] = set()

    def add(self, secret: str | bytes) -> None:
        """A secret to blank wherever it appears (the server secret, once known)."""
        text = secret.decode(errors="replace") if isinstance(secret, bytes) else secret
        if text:
            self.known.add(text)

    def scrub(self, text: str) -> str:
        for secret in self.known:
            text = text.replace(secret, REDACTED)
        return shown_in(TOKEN_SHAPE.sub(REDACTED, text))

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = self.scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self.scrub(record.stack_info)
        return True


#: the one filter of this process (main.run puts it on the root logger's handlers)
SECRETS = SecretFilter()


def install(logger: logging.Logger | None = None) -> None:
    """Put SECRETS on every handler of `logger` (the root logger by default)."""
    for handler in (logger or logging.getLogger()).handlers:
        if SECRETS not in handler.filters:
            handler.addFilter(SECRETS)
