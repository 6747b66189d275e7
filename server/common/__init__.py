"""Small parts every subsystem of the server uses: room codes, values derived from the server
secret, bounded caches, values fetched once for everyone asking, retry pauses, log redaction,
metrics, per-room locks.

May import: the engine and protocol packages only (no other server package)."""
