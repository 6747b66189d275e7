"""`solrace bench winnable --difficulty --pool`: each shipped pool beside the part of it a
search at the draw budget could take, read from the pool files alone."""

from __future__ import annotations

from solrace.bench.draw_difficulty import NOT_A_CUT, pool_rows
from solrace.server.solver import deal_pool
from solrace.server.solver.solving import Budgets


def test_each_pool_is_described_beside_what_a_search_draw_could_take() -> None:
    rows = pool_rows()
    pools = {(p.game, p.budget): p for p in deal_pool.shipped().values()}
    by_game: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_game.setdefault(row["game"], {})[row["set"]] = row
    assert set(by_game) == {p.game for p in pools.values()}
    for game, sets in by_game.items():
        pooled, drawn = sets["pool"], sets["search draw"]
        pool = pools[(game, pooled["budget"])]
        draw = Budgets().for_draw(game)
        assert pooled["deals"] == len(pool.seeds) and drawn["budget"] == draw
        assert drawn["deals"] == sum(s.positions <= draw for s in pool.seeds) <= pooled["deals"]
        # Leap Year's pool is decided past its draw budget, and a smaller Leap Year budget
        # is not the larger one's run cut short: the row says its count is an estimate
        exact = game not in NOT_A_CUT or draw >= pool.budget
        assert drawn["inferred_exactly"] is exact
    assert by_game["leapyear"]["search draw"]["inferred_exactly"] is False
