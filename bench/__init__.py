"""solrace.bench."""
