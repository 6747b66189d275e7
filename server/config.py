"""The server's settings, one frozen object: what `solrace serve`'s flags say.

`server/main.py` builds it from the command line (tests build it directly) and hands it to
the composition root (`app.build`), which gives each part its group through its constructor:
the connections' limits (`net.conn.Limits`, with the send limits of `net.ws_limits`), the
per-address caps and the server's budget (`net.guard.GuardLimits`), the operators' access
(`net.admin.AdminSettings`), quick match's knobs (`race.quick.QuickConfig`), how long records
and daily boards are kept, and which room codes this process may draw (`--workers`). Nothing
is set on a part after it is built. The store's own settings (Redis, key prefix, lifetimes)
go into the store the caller makes (`build`'s `make_store`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from solrace.server.league.daily import DEFAULT_BOARD_DAYS
from solrace.server.league.records import DEFAULT_RECORD_DAYS, RECORD_DUE_MS
from solrace.server.net.admin import AdminSettings
from solrace.server.net.conn import Limits
from solrace.server.net.guard import GuardLimits
from solrace.server.race.quick import QuickConfig
from solrace.server.solver.deal_pool import DEFAULT_MODE


def any_code(code: str) -> bool:
    """One process (no front): every room code is this process's to draw."""
    return True


@dataclass(frozen=True)
class ServerConfig:
    """Every setting of a server process (see the module's docstring)."""

    limits: Limits = field(default_factory=Limits)
    guard: GuardLimits = field(default_factory=GuardLimits)
    admin: AdminSettings = field(default_factory=AdminSettings)
    quick: QuickConfig = field(default_factory=QuickConfig)
    #: days a race record is kept (`--record-days`)
    record_days: int = DEFAULT_RECORD_DAYS
    #: ms after a race's results that another process writes its record if this one has not
    record_due_ms: int = RECORD_DUE_MS
    #: days a daily's board and deal are kept after its day (`--daily-days`)
    daily_days: int = DEFAULT_BOARD_DAYS
    #: draw budgets of winnable deals by game, over the solver's (`--draw-budget GAME=N`)
    draw_budgets: dict[str, int] = field(default_factory=dict)
    #: where shipped deal pools deal winnable deals (`--deal-pool`, server/solver/deal_pool.py)
    deal_pool: str = DEFAULT_MODE
    #: winnable deals kept drawn ahead per stocked rule set (`--deal-stock`; 0: none)
    deal_stock: int = 0
    #: search post-race verdicts left "unknown" again at the background budget (`--deep-verdicts`)
    deep_verdicts: bool = False
    #: which codes this process may give a new room (`--workers`: those the front routes to it)
    owns: Callable[[str], bool] = any_code
