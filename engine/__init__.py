"""solrace.engine."""
