"""Plain HTTP GETs of the server's JSON API from a test (a real socket, stdlib client)."""

from __future__ import annotations

import asyncio
import http.client

from helpers.timing import scaled


def get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=scaled(10))
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


async def aget(
    port: int, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict, bytes]:
    """`get` off the event loop (the server under test may run in the same loop)."""
    return await asyncio.to_thread(get, port, path, headers)
