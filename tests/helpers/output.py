"""Reading a child process's output in a test: wait for a line that holds some text."""

from __future__ import annotations

import asyncio

from helpers.timing import scaled


async def read_until(stream: asyncio.StreamReader, needle: str, timeout: float = 15.0) -> str:
    """Everything the stream printed up to and including the first line holding `needle`.
    `timeout` is a hang bound on an idle machine (stretched by the time factor): the
    assertion says what was printed meanwhile, or that the stream ended first."""
    seen: list[str] = []
    bound = scaled(timeout)
    try:
        async with asyncio.timeout(bound):
            while True:
                line = (await stream.readline()).decode()
                if not line:
                    raise AssertionError(f"EOF before {needle!r}:\n{''.join(seen)}")
                seen.append(line)
                if needle in line:
                    return "".join(seen)
    except TimeoutError:
        raise AssertionError(f"no {needle!r} within {bound}s:\n{''.join(seen)}") from None


async def read_line_with(stream: asyncio.StreamReader, needle: str, timeout: float = 30.0) -> str:
    """The first line holding `needle` (as `read_until`, the line alone)."""
    return (await read_until(stream, needle, timeout)).splitlines(keepends=True)[-1]
