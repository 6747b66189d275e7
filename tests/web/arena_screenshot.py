"""A real Chromium screenshot of an arena's event page mid-event, for docs/web-arena.png (not a
test): `.venv/bin/python tests/web/arena_screenshot.py REDIS_URL docs/web-arena.png`."""

import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

from playwright.async_api import async_playwright
from solrace.bench.load_procs import RaceServer
from solrace.client.bot import run_arena_bot
from solrace.client.connection import Client
from solrace.client.player_key import new_key

NAMES = ["Ann", "Bob", "Cleo", "Dev", "Edda", "Finn", "Gus", "Hana", "Ivo", "Jun"]


async def main(server: RaceServer, out: str) -> None:
    url = server.ws_url
    host = Client(url, player_key=new_key())
    await host.connect()
    aid = (await host.arena_create("puttputt", 10, 3, title="Thursday club night")).arena["id"]
    stop = asyncio.Event()
    bots = [
        asyncio.create_task(run_arena_bot(url, aid, n, 0.05, stop, seed=i))
        for i, n in enumerate(NAMES)
    ]
    for _ in range(200):
        await asyncio.sleep(3)
        v = (await host.arena_watch(aid)).arena
        print(v["races"], flush=True)
        if v["races"] >= 14:
            break
    http = server.ws_url.replace("ws://", "http://").rsplit("/ws", 1)[0]
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path="/usr/bin/chromium")
        page = await b.new_page(viewport={"width": 1280, "height": 900})
        await page.goto(f"{http}/event/{aid}")
        await page.wait_for_selector("[data-testid=arena-board] tbody tr")
        await page.wait_for_timeout(1500)
        await page.screenshot(path=out, clip={"x": 0, "y": 0, "width": 1280, "height": 900})
        await b.close()
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)
    await host.close()


if __name__ == "__main__":
    with (
        tempfile.TemporaryDirectory() as work,
        RaceServer(
            Path(work), sys.argv[1], f"shot-{uuid.uuid4().hex[:6]}:", ["--exempt", "127.0.0.1"]
        ) as server,
    ):
        asyncio.run(main(server, sys.argv[2]))
