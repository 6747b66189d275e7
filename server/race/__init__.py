"""The race core that applies the rules to the stored rooms: the room service (load, judge, store,
recover) and the lobby's pages.

May import: `common`, `store`, `rules`, `solver`, `league` (and engine, protocol)."""
