"""The network edge: the WebSocket server (sans-I/O), the message handlers, connections and their
limits, per-address guards, the fan-out hub, room supervision (presence, clocks, janitor), the
HTTP pages and API (daily pages included), and the front of `--workers N`.

May import: every other server package (nothing imports it but `config`, `app` and `main`)."""
