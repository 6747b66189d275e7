"""The engine's solvers off the event loop: worker processes, the priority queue in front of them,
and the server's questions to them (winnable deals, verdicts after a race, practice hints).

May import: `common`, `rules` (and engine, protocol)."""
