"""`solrace bench peer --quick` runs solrace and the Colyseus peer end to end and prints every
figure; the peer's Klondike is the engine's.

Shape only, never speed (the machine is shared). The peer's node_modules are installed with
`npm ci` once and kept in bench/peers/colyseus/node_modules; when that install fails (no
network, no npm) these tests fail: a peer bench that cannot run the peer is broken.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path

import pytest
from helpers.timing import scaled
from solrace.bench.peer import PEER_DIR, ensure_node_modules, main
from solrace.engine import new_game

NUMBER = r"[0-9]+(?:\.[0-9]+)?"
LATENCY = rf"p50 {NUMBER} ms  p99 {NUMBER} ms  max {NUMBER} ms  n [1-9][0-9]*"


def side_lines(what: str, side: str) -> list[str]:
    """The figures each run of one side prints (print_load's lines)."""
    label = rf"{what} {side}, run 1"
    return [
        rf"{label} moves/s acknowledged: {NUMBER}",
        rf"{label} move-to-ack latency: {LATENCY}",
        rf"{label} server CPU per move: {NUMBER} us",
        rf"{label} Redis CPU per move \(INFO cpu before/after\): {NUMBER} us",
    ]


def compared(what: str, label: str, unit: str) -> str:
    return (
        rf"{what} {label} \(median of 1\): solrace {NUMBER}{unit}  colyseus {NUMBER}{unit}  "
        rf"ratio solrace/colyseus {NUMBER}"
    )


EXPECTED = [
    r"peer: @colyseus/core 0\.18\.[0-9]+  @colyseus/redis-presence 0\.18\.[0-9]+",
    r"== throughput: 2 rooms of 8 = 16 players",
    r"== paced: 16 players in 2 rooms of 8",
    r"cpu \(cores busy\): colyseus [0-9.]+  redis [0-9.]+  loadgen0 [0-9.]+",
]
for _what in ("full speed", "paced"):
    EXPECTED += side_lines(_what, "solrace") + side_lines(_what, "colyseus")
    EXPECTED += [
        compared(_what, "moves/s acknowledged", ""),
        compared(_what, "move-to-ack p50", " ms"),
        compared(_what, "move-to-ack p99", " ms"),
        compared(_what, "server CPU per move", " us"),
        compared(_what, "Redis CPU per move", " us"),
    ]


@pytest.fixture(scope="session")
def peer_installed() -> Path:
    """The peer's packages, installed once a session (and kept between sessions)."""
    return ensure_node_modules()


@pytest.mark.timeout(scaled(120))
def test_quick_peer_run_prints_every_figure(
    peer_installed: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # --quick's windows (0.3 s warm-up, 0.5 s at full speed, 1 s paced) stretched by the time
    # factor: at load 20 a full-speed window of 0.5 s once closed before the first ack.
    windows = {"--warmup": 0.3, "--duration": 0.5, "--paced-duration": 1.0}
    stretched = [arg for flag, s in windows.items() for arg in (flag, str(scaled(s)))]
    assert main(["--quick", "--workers", "1", *stretched, "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert list(tmp_path.glob("race-*.log")) and list(tmp_path.glob("colyseus-*.log")), out
    for pattern in EXPECTED:
        assert re.search(pattern, out), f"missing /{pattern}/ in output:\n{out}"
    goals = re.findall(r"^  (MET|MISSED|n/a) +(.+)$", out, re.MULTILINE)
    assert len(goals) == 3, out  # full-speed CPU; paced p99 and CPU
    # both sides' moves were real: acked, none refused as illegal or out of sync
    for side in ("solrace", "colyseus"):
        rate = re.search(rf"full speed {side}, run 1 moves/s acknowledged: ({NUMBER})", out)
        assert rate and float(rate.group(1)) > 0, out
    assert " errors: " not in out, out


def _engine_walk(seed: str, steps: int) -> list[dict]:
    """A random walk through legal moves: at each step the legal moves and the view after."""
    rng = random.Random(seed)
    game = new_game("klondike", seed=seed)
    out = []
    for _ in range(steps):
        legal = sorted(str(m) for m in game.legal_moves())
        if not legal:
            break
        move = rng.choice(legal)
        game.play(move)
        view = game.view()
        out.append(
            {
                "legal": legal,
                "move": move,
                "view": {k: view[k] for k in ("piles", "stock", "moves", "home")},
            }
        )
    return out


#: the peer's side of the walk: its legal moves (every pile pair, deal, recycle) and views
NODE_WALK = """
const { Klondike } = require("./klondike.js");
const walks = JSON.parse(require("fs").readFileSync(0, "utf8"));
const names = ["t1","t2","t3","t4","t5","t6","t7","f1","f2","f3","f4","s","w"];
const out = {};
for (const [seed, moves] of Object.entries(walks)) {
  const g = new Klondike(seed);
  out[seed] = moves.map((move) => {
    const legal = ["deal", "recycle"];
    for (const a of names) for (const b of names) if (a !== b) legal.push(`${a}-${b}`);
    const ok = legal.filter((m) => g.check(m) === null).sort();
    if (g.check(move) !== null) throw new Error(`${seed}: ${move} refused`);
    g.play(move);
    const v = g.view();
    return { legal: ok, move, view: { piles: v.piles, stock: v.stock, moves: v.moves, home: v.home } };
  });
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.timeout(scaled(60))
def test_peer_klondike_deals_and_judges_moves_as_the_engine(peer_installed: Path) -> None:
    """The peer's room must do solrace's job: the same deal, the same legal moves, the same
    views, over random walks of every kind of move (draw one, moves=top, unlimited passes)."""
    seeds = ["solrace-bench", "2026-11-22", "peer"]
    walks = {seed: _engine_walk(seed, 250) for seed in seeds}
    done = subprocess.run(
        ["node", "-e", NODE_WALK],
        input=json.dumps({s: [step["move"] for step in w] for s, w in walks.items()}),
        capture_output=True,
        text=True,
        cwd=PEER_DIR,
        timeout=30,
        check=True,
    )
    peer = json.loads(done.stdout)
    for seed in seeds:
        assert len(peer[seed]) == len(walks[seed]) > 100
        for i, (want, got) in enumerate(zip(walks[seed], peer[seed], strict=True)):
            assert got == want, f"{seed}, step {i + 1} ({want['move']})"
