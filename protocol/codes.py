"""The shape of a room code, shared by the server (which checks it) and the clients (which may
draw the code of a room they are about to create: PROTOCOL.md, Room codes and links).

A client that draws the code itself can name it in its connection's URL (`/ws?room=CODE`)
before `create`, so the proxy and the front route that connection, and every later one of the
room, to the host and worker its code hashes to: the room lives in one process from its
first message on.
"""

from __future__ import annotations

import secrets

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
#: a public room's code: short, easy to read out (the lobby lists it anyway)
CODE_LENGTH = 5
#: a private room's code: the link is its only key, so 20 characters (100 bits) nobody guesses
PRIVATE_CODE_LENGTH = 20


def new_code(length: int = CODE_LENGTH) -> str:
    """A fresh code of `length` characters from CODE_ALPHABET (a CSPRNG's choice)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def code_for(public: bool) -> str:
    """A fresh code for a new room: short for a public room, long for a private one."""
    return new_code(CODE_LENGTH if public else PRIVATE_CODE_LENGTH)


def valid_new_code(code: str, public: bool) -> bool:
    """Whether a client's proposed code fits the room it creates: the alphabet, and the
    length its `public` option gives (a private room must not get a short, guessable code)."""
    length = CODE_LENGTH if public else PRIVATE_CODE_LENGTH
    return len(code) == length and all(c in CODE_ALPHABET for c in code)
