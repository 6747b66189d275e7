"""What a racing page's redraws cost its renderer (not a test; figures for BENCHMARKS.md).

    .venv/bin/python tests/web/render_cpu.py [--pages 3] [--seconds 20] [--pace 0.2]

A Klondike race of `--pages` pages in one headless Chromium (the tests' browser and flags):
each page moves every `--pace` seconds through its own connection (deal, and recycle when the
stock is out), so every page redraws on its own acks and on the others' progress, as mid-race.
Over `--seconds` it reads, per page, Chromium's own counters (CDP Performance.getMetrics:
TaskDuration, ScriptDuration, LayoutDuration, RecalcStyleDuration), and the CPU that the
browser's renderer processes and all its processes took (/proc via psutil), and prints one line
with the load average. The server and the web files are those of the Python that runs it, so
`OTHER/.venv/bin/python tests/web/render_cpu.py` measures another checkout's page.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright
from solrace.bench.server_process import ServerProcess
from solrace.server.store.redis_process import RedisProcess
from web.conftest import CHROMIUM, LAUNCH_ARGS
from web.pages import configure, create_room, join_room, js, new_page, ready, start

METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")

MOVER = """pace => {
  window.__moves = 0;
  window.__mover = setInterval(async () => {
    const { stockMove } = await import("/js/moves.js");
    const s = window.solrace.state;
    if (!s.view || !s.snap || s.snap.state !== "racing" || window.__busy) return;
    const move = stockMove(s.view);
    if (!move) return;
    window.__busy = true;
    try {
      const reply = await window.solrace.conn.request({ type: "move", move, n: s.view.moves + 1 });
      if (reply.type !== "error") window.__moves++;
    } finally { window.__busy = false; }
  }, pace * 1000);
}"""


def chromium_cpu(kind: str | None) -> float:
    """CPU seconds of this script's Chromium processes (`kind`: only `--type=KIND` ones)."""
    total = 0.0
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "chrom" not in p.name():
                continue
            if kind and f"--type={kind}" not in " ".join(p.cmdline()):
                continue
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def metrics(cdp: Any) -> dict[str, float]:
    got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {k: got.get(k, 0.0) for k in METRICS}


def run(url: str, args: argparse.Namespace) -> str:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        errors: list[str] = []
        pages = [new_page(browser, errors, f"p{i}") for i in range(args.pages)]
        code = create_room(pages[0], url, "Host")
        configure(pages[0], game="klondike", seed=args.seed)
        for i, page in enumerate(pages[1:], 1):
            join_room(page, url, code, f"P{i}")
            ready(page)
        start(pages[0])
        for page in pages:
            js(page, "S.snap.state === 'racing' && S.view !== null")
        cdps = [page.context.new_cdp_session(page) for page in pages]
        for cdp in cdps:
            cdp.send("Performance.enable")
        for page in pages:
            page.evaluate(MOVER, args.pace)
        time.sleep(2)  # the movers under way
        m0 = [metrics(c) for c in cdps]
        r0, a0, t0 = chromium_cpu("renderer"), chromium_cpu(None), time.monotonic()
        moves0 = [page.evaluate("window.__moves") for page in pages]
        time.sleep(args.seconds)
        r1, a1, t1 = chromium_cpu("renderer"), chromium_cpu(None), time.monotonic()
        m1 = [metrics(c) for c in cdps]
        moves = sum(page.evaluate("window.__moves") for page in pages) - sum(moves0)
        browser.close()
        assert not errors, errors
    wall = t1 - t0
    per = {k: sum(b[k] - a[k] for a, b in zip(m0, m1, strict=True)) / args.pages for k in METRICS}
    load = os.getloadavg()[0]
    return (
        f"renderers {(r1 - r0) / wall / args.pages:.3f} core/page, chromium {(a1 - a0) / wall:.3f} core"
        f" | per page per s: task {per['TaskDuration'] / wall * 1000:.0f} ms, script "
        f"{per['ScriptDuration'] / wall * 1000:.0f}, layout {per['LayoutDuration'] / wall * 1000:.0f}, "
        f"style {per['RecalcStyleDuration'] / wall * 1000:.0f}"
        f" | {moves / wall:.1f} moves/s in all | load {load:.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--pace", type=float, default=0.2)
    parser.add_argument("--seed", default="render-cpu")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as work,
        RedisProcess(data_dir=work) as redis,
        ServerProcess(redis.url, f"render-cpu-{uuid.uuid4().hex[:6]}:") as server,
    ):
        print(run(server.url, args), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
