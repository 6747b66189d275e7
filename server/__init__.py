"""solrace.server: the race server, in subsystems (each package's docstring says its job and what
it may import; tests/test_repository.py enforces it):

    common  small shared parts        store   Redis plumbing        rules   race rules (sans-I/O)
    solver  the engine's solvers      league  dailies, boards, ratings, records
    race    the room service          net     sockets, handlers, fan-out, HTTP

`app` is the composition root that builds a process's parts; `main` is the `solrace serve`
command that runs them."""
