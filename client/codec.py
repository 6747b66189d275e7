"""Frame encoding for the client, in one place.

The protocol package owns the wire format (`solrace.protocol.messages`); this
module is the client's one seam over it, so the client and the server can never
disagree on the basics (one msgpack map per binary frame, str keys, no extension
types). What the client adds: a larger frame limit for server frames and one
error type, `FrameError`, for everything a bad frame can be.
"""

from __future__ import annotations

from typing import Any

from solrace.protocol.messages import ProtocolError
from solrace.protocol.messages import decode as _proto_decode
from solrace.protocol.messages import encode as _proto_encode
from solrace.protocol.messages import unbatch as _proto_unbatch

#: server frames may exceed the 8 KiB client limit (a spectator snapshot with boards)
MAX_SERVER_FRAME = 2**24


class FrameError(ValueError):
    """A frame from the server that is not one msgpack map with a `type`."""


def encode(message: dict[str, Any]) -> bytes:
    """Encode one message as the bytes of a binary frame."""
    return _proto_encode(message)


def decode(frame: bytes | str) -> dict[str, Any]:
    """Decode one server frame into its message map (raises FrameError)."""
    if isinstance(frame, str):
        raise FrameError("text frame from server")
    try:
        return _proto_decode(frame, MAX_SERVER_FRAME)
    except ProtocolError as exc:
        raise FrameError(f"{exc.code}: {exc.message}") from exc


def messages(frame: bytes | str) -> list[dict[str, Any]]:
    """The messages of one server frame, in order: a spectator's tick comes as one `batch`
    frame of several (PROTOCOL.md, `batch`); any other frame is one message (FrameError as
    `decode`)."""
    return _proto_unbatch(decode(frame))
