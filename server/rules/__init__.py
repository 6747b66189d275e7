"""The race rules, sans-I/O: the room document and each seat's engine game (`room`), and what each
viewer may see of them (`projection`). Commands in, events out: no sockets, no Redis, no clock
of their own, so every race rule is tested without a network.

May import: `common` (and engine, protocol)."""
