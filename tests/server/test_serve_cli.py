"""`solrace serve` as users run it: with no Redis URL it starts an embedded redis-server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import urllib.request

from solrace.server.redis_process import free_port


async def test_serve_without_redis_url_uses_an_embedded_redis(wire) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    proc = subprocess.Popen([sys.executable, "-m", "solrace", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=0.5) as resp:
                    assert resp.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "server did not come up"
                await asyncio.sleep(0.1)
        c = await wire(f"ws://127.0.0.1:{port}/ws")
        joined = await c.request({"type": "create", "name": "solo", "options": {"game": "tabbycat"}})
        assert joined["type"] == "joined" and len(joined["room"]) == 5
        await c.close()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0, out.decode(errors="replace")[-2000:]
    assert b"embedded redis-server" in out
