"""solrace.server: the race server, in subsystems (each package's docstring says its job and what
it may import; tests/test_repository.py enforces it):

    common  small shared parts        store   Redis plumbing        rules   race rules (sans-I/O)
    solver  the engine's solvers      league  dailies, boards, ratings, records
    race    the room service          net     sockets, handlers, fan-out, HTTP

`config` is the server's settings in one frozen object (`ServerConfig`); `app` is the
composition root that builds a process's parts from it; `main` is the `solrace serve` command
that makes the settings from its flags and runs the parts."""
