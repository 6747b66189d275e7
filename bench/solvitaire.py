"""Our Klondike deals in Solvitaire's deal format, and Solvitaire run on them.

    python -m solrace.bench.solvitaire --seeds 1-200 --exe PATH [--type klondike] [--cap 10]
        [-o draw=3 -o moves=build]
    python -m solrace.bench.solvitaire --seeds 7 --export      # the deal's JSON only

Solvitaire (Blake & Gent, github.com/thecharlieblake/Solvitaire) is not part of this
project: build it apart and pass its binary with ``--exe`` (docs/SOLVABILITY.md, "Standard
Klondike against Solvitaire on the same deals", says how it was built here).

The mapping (``deal``): Solvitaire's ``"tableau piles"`` are ``t1..t7`` in order, each
listed bottom first like our position text; a face-down card is written with a lower-case
suit (``"9c"``), a face-up one upper case, a ten as ``10``. Its ``"stock"`` is listed bottom
first and dealt from the end, while our position text lists the stock from the next card
dealt: the JSON stock is our ``s`` line reversed (a first version left it unreversed and
"solved" a different deal: the replay below caught it). Three cards go to the waste one by
one in both, so the third is the waste's top; a recycle turns the waste over in both. The waste and the foundations are empty at the
deal. Its ``klondike`` preset is draw three, unlimited redeals, Kings (with what lies on
them) to empty piles, foundation cards back to the tableau, and part moves of a run only when
the card they uncover can go home at once (bench/part_moves.py); ``klondike-arbitrary-built-
moves`` moves any part of a run, RULES.md's ``moves=build``. The deal is the same for any
options but ``draw``: the preset fixes draw three (``klondike-deal-1`` is draw one).

The runner solves each seed in its own Solvitaire process (no streamliners: its default
outside ``--solvability``, so "unsolvable" is a proof) with the CPU limit ``RLIMIT_CPU`` =
the cap: a process killed by it is "unknown" (counted at the cap). CPU is the child's user
plus system time (``getrusage(RUSAGE_CHILDREN)``'s growth). Each win is replayed in our
engine (``replay``: Solvitaire's printed line, position by position; ``"replayed"`` in the
row). One JSON line per deal on stdout, a summary on stderr, in ``solve_sample``'s words
(won = Solvitaire's "solved", lost = "unsolvable").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from typing import Any

from solrace.engine import new_game

from .part_moves import piles
from .solve_sample import _load, _seeds, tally

STANDARD = {"draw": "3", "moves": "build"}
VERDICTS = {"solved": "won", "unsolvable": "lost"}


def card(text: str, face_up: bool) -> str:
    """Our card text (``TH``) in Solvitaire's (``10H``; ``10h`` face down)."""
    rank, suit = text[0], text[1]
    rank = "10" if rank == "T" else rank
    return rank + (suit.upper() if face_up else suit.lower())


def deal(seed: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Klondike deal for ``seed`` as Solvitaire's deal JSON (see the module's mapping)."""
    game = new_game("klondike", seed, dict(options or STANDARD))
    table = piles(game)
    return {
        "tableau piles": [[card(c, up) for c, up in table[f"t{k}"]] for k in range(1, 8)],
        "stock": [card(c, True) for c, _ in reversed(table["s"])],
    }


def run_one(exe: str, seed: int, options: dict[str, Any], kind: str, cap: float) -> dict[str, Any]:
    """Solvitaire on one deal under a CPU limit: its verdict, states searched and CPU."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(deal(seed, options), f)
        path = f.name
    secs = max(1, int(cap))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (secs, secs + 1))

    try:
        proc = subprocess.Popen(
            [exe, "--type", kind, path],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=limit,
            text=True,
        )
        out, _ = proc.communicate()
    finally:
        os.unlink(path)
    cpu = _child_cpu()
    row = {"seed": seed, **parse(out)}
    # killed by RLIMIT_CPU (its ticks run a little ahead of getrusage's count): the cap
    row["cpu"] = round(cap if row["verdict"] == "unknown" else min(cpu, cap), 3)
    if row["verdict"] == "won":
        row["replayed"] = replay(seed, out, options) is not None
    return row


_CHILD_CPU = [0.0]


def _child_cpu() -> float:
    """CPU of the child just reaped: the growth of this process's children's CPU."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = r.ru_utime + r.ru_stime
    cpu, _CHILD_CPU[0] = total - _CHILD_CPU[0], total
    return cpu


def parse(out: str) -> dict[str, Any]:
    """Solvitaire's verdict and states searched from its report (``Solution Type: solved``,
    ``States Searched: N``); no report (killed at the CPU limit) is "unknown"."""
    fields = {k.strip(): v.strip() for k, _, v in (x.partition(":") for x in out.splitlines()) if v}
    kind = fields.get("Solution Type")
    if kind is None:
        return {"verdict": "unknown", "states": -1}
    return {"verdict": VERDICTS.get(kind, "unknown"), "states": int(fields["States Searched"])}


# -- replaying Solvitaire's winning line in our engine ---------------------------------------

View = tuple[tuple[tuple[str, ...], ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _cells(line: str) -> list[str]:
    return list(line.rstrip("\n").split("\t"))


def states(text: str) -> list[View]:
    """The positions of Solvitaire's printed solution (``Solution:`` then one block a
    position, ``=====`` between), each as (tableau piles bottom first with ``##`` for a
    face-down card, the foundations' tops sorted, stock, waste)."""
    out: list[View] = []
    blocks = text.split("Solution:", 1)[-1].split("===================================")
    for block in blocks:
        lines = block.strip("\n").splitlines()
        if "--- Foundations ---------" not in lines:
            continue
        i = lines.index("--- Foundations ---------")
        j = lines.index("--- Tableau Piles -------")
        k = lines.index("--- Stock | Waste -------")
        found = tuple(sorted(c for c in _cells(lines[i + 1]) if c and c != "[]"))
        tab: list[list[str]] = [[] for _ in range(7)]
        for row in lines[j + 1 : k]:
            for col, c in enumerate(_cells(row)):
                if c and c != "[]":
                    tab[col].append(c)
        stock: list[str] = []
        waste: list[str] = []
        for row in lines[k + 1 :]:
            if not row.strip() or row.startswith(("Solution Type", "States")):
                break
            cells = [*_cells(row), "", ""]
            if cells[0] and cells[0] != "[]":
                stock.append(cells[0])
            if cells[1] and cells[1] != "[]":
                waste.append(cells[1])
        out.append((tuple(map(tuple, tab)), found, tuple(stock), tuple(waste)))
    return out


def view(game: Any) -> View:
    """Our position in the shape of ``states``."""
    table = piles(game)

    def show(c: str, up: bool) -> str:
        return card(c, True) if up else "##"

    tab = tuple(tuple(show(c, up) for c, up in table[f"t{k}"]) for k in range(1, 8))
    found = tuple(sorted(card(table[f"f{k}"][-1][0], True) for k in range(1, 5) if table[f"f{k}"]))
    stock = tuple(card(c, True) for c, _ in reversed(table["s"]))
    waste = tuple(card(c, True) for c, _ in table["w"])
    return tab, found, stock, waste


def replay(seed: int, text: str, options: dict[str, Any] | None = None) -> list[str] | None:
    """Our moves that go through Solvitaire's printed solution position by position (each
    of its moves is our deals and recycles, at most a lap and a half of them, then at most
    one other move: its stock move deals to the card it plays), ending won; None if some
    position of its line cannot be reached by our rules."""
    game = new_game("klondike", seed, dict(options or STANDARD))
    line = states(text)
    if not line or view(game) != line[0]:
        return None
    played: list[str] = []
    for target in line[1:]:
        step = _reach(game, target)
        if step is None:
            return None
        for m in step:
            game.play(m)
        played.extend(step)
    return played if game.is_won() else None


def _reach(game: Any, target: View) -> list[str] | None:
    """Deals/recycles then at most one move (and a recycle if it empties the stock) from
    ``game`` to the position ``target``."""
    probe = game.copy()
    stock_moves: list[str] = []
    for _ in range(40):
        for m in [None, *probe.legal_moves()]:
            text = None if m is None else str(m)
            if text in ("deal", "recycle"):
                continue
            step = [] if text is None else [text]
            for t in step:
                probe.play(t)
            # Solvitaire turns the waste over as soon as the stock runs out: a recycle here
            if view(probe) != target and "recycle" in map(str, probe.legal_moves()):
                probe.play("recycle")
                step.append("recycle")
            hit = view(probe) == target
            for _ in step:
                probe.undo()
            if hit:
                return stock_moves + step
        nxt = [str(m) for m in probe.legal_moves() if str(m) in ("deal", "recycle")]
        if not nxt:
            return None
        probe.play(nxt[0])
        stock_moves.append(nxt[0])
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="solvitaire")
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--exe", help="the Solvitaire binary")
    ap.add_argument("--type", default="klondike", help="Solvitaire's preset")
    ap.add_argument("--cap", type=float, default=10.0, help="CPU seconds per deal")
    ap.add_argument("-o", "--option", action="append", help="default: draw=3 moves=build")
    ap.add_argument("--export", action="store_true", help="print each deal's JSON only")
    args = ap.parse_args(argv)
    options: dict[str, Any] = (
        dict(kv.split("=", 1) for kv in args.option) if args.option else dict(STANDARD)
    )
    seeds = _seeds(args.seeds)
    if args.export:
        for seed in seeds:
            print(json.dumps(deal(seed, options)))
        return 0
    if not args.exe:
        ap.error("--exe is needed unless --export")
    counts = {"won": 0, "lost": 0, "unknown": 0}
    cpus: list[float] = []
    unreplayed: list[int] = []
    load0 = _load()
    for seed in seeds:
        row = run_one(args.exe, seed, options, args.type, args.cap)
        counts[row["verdict"]] += 1
        if row.get("replayed") is False:
            unreplayed.append(seed)
        cpus.append(row["cpu"])
        print(json.dumps(row), flush=True)
    verdicts, spread = tally(counts, cpus)
    print(
        f"solvitaire --type {args.type} seeds {args.seeds} cap {args.cap}s: {verdicts}; {spread}; "
        f"wins not replayed {unreplayed}; "
        f"load avg {load0} / {_load()}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
