"""Socket reads asked for in pieces that stay on the heap.

CPython's selector transports (3.11, 3.12) read with `sock.recv(max_size)`, `max_size` 256 KiB:
a new bytes object of that size each read, shrunk to what came. 256 KiB is over glibc's mmap
threshold (128 KiB, and a shrunk block never raises it), so every read of a move's 60 bytes
was an `mmap`, a page fault, an `mremap` and a `munmap`: ~12 µs against ~2 for the read
itself (strace and a socketpair's loop, 2026-12-05), ~1.4 reads a paced move (its frame,
and a Redis reply now and then). Under the threshold the block comes from the heap."""

from __future__ import annotations

import asyncio

#: bytes a read asks for: under glibc's mmap threshold, and over any message a client may
#: send (protocol/messages.py MAX_FRAME, 8 KiB) or a turn's usual replies; more takes reads
READ_SIZE = 64 * 1024


def small_reads(transport: asyncio.BaseTransport) -> None:
    """Have asyncio's transport read at most READ_SIZE a time (nothing for transports that
    read into buffers of their own: uvloop's, TLS's)."""
    if getattr(transport, "max_size", 0) > READ_SIZE:
        try:
            transport.max_size = READ_SIZE  # type: ignore[attr-defined]
        except AttributeError:  # pragma: no cover - a transport of C without the attribute
            pass
