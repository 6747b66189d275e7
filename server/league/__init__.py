"""The competitive layer on top of races: dailies, leaderboards, standings, ratings, signed race
records, replays and players.

May import: `common`, `store`, `rules`, `solver` (and engine, protocol)."""
