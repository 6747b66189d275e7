"""solrace.server: the race server (room rules, Redis store, WebSocket transport, HTTP)."""


class ServerError(Exception):
    """Base of the server layer's own errors: internal conditions the server handles itself
    (a stale write to retry, ...), never sent to a client as such. What a client is told
    is a `solrace.protocol.messages.ProtocolError`."""
