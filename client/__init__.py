"""solrace.client."""
