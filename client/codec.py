"""Frame encoding for the client, in one place.

The protocol package owns the wire format; this module is the one seam the
client goes through, so that the client keeps working whether or not
`solrace.protocol` exposes its own `encode`/`decode` yet, and so both can
never disagree on the basics (one msgpack map per binary frame, str keys,
no extension types).
"""

from __future__ import annotations

from typing import Any

import msgpack

try:  # the protocol package's codec: one definition of the wire format for everyone
    from solrace.protocol.messages import decode as _proto_decode
    from solrace.protocol.messages import encode as _proto_encode
except ImportError:  # pragma: no cover - only while the protocol package was being written
    _proto_decode = None
    _proto_encode = None

#: server frames may exceed the 8 KiB client limit (a spectator snapshot with boards)
MAX_SERVER_FRAME = 2**24


class FrameError(ValueError):
    """A frame from the server that is not one msgpack map with a `type`."""


def encode(message: dict[str, Any]) -> bytes:
    """Encode one message as the bytes of a binary frame."""
    if _proto_encode is not None:
        return _proto_encode(message)
    return msgpack.packb(message, use_bin_type=True)


def decode(frame: bytes | str) -> dict[str, Any]:
    """Decode one server frame into its message map (raises FrameError)."""
    if isinstance(frame, str):
        raise FrameError("text frame from server")
    if _proto_decode is not None:
        try:
            msg = _proto_decode(frame, MAX_SERVER_FRAME)
        except Exception as exc:  # the protocol package's own error type
            raise FrameError(str(exc)) from exc
    else:
        try:
            msg = msgpack.unpackb(frame, raw=False, strict_map_key=False)
        except Exception as exc:
            raise FrameError(f"undecodable frame: {exc}") from exc
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        raise FrameError("frame is not a map with a string 'type'")
    return msg
