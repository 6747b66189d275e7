"""solrace.server."""
