"""solrace.server: the race server (room rules, Redis store, WebSocket transport, HTTP)."""
