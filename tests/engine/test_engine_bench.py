"""The engine benchmark runs end to end and prints its table (figures are not asserted)."""

from __future__ import annotations

from solrace.bench import engine_bench


def test_bench_prints_baseline_and_rows(capsys):
    assert (
        engine_bench.main(
            [
                "--playouts",
                "2",
                "--max-moves",
                "30",
                "--repeat",
                "1",
                "--games",
                "puttputt",
                "klondike",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("baseline:")
    rows = [ln.split()[0] for ln in out[4:]]
    assert rows == ["puttputt", "klondike", "klondike"]


def test_recorded_playouts_replay_exactly():
    recorded = engine_bench.record_playouts("tabbycat", {}, 2, 40, 3)
    for start, moves in recorded:
        g = start.copy()
        for m in moves:
            g.play(m)
        assert len(g.history) == len(moves) and start.history == []
