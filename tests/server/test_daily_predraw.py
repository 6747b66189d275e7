"""`solrace serve --predraw-daily`: today's daily deals are drawn at start-up, in the
background, so the day's first player does not wait for the solver; with
`--no-predraw-daily` (the test suite's default) nothing is drawn until someone asks."""

from __future__ import annotations

import datetime

import redis.asyncio as aioredis
from helpers.race import until
from helpers.servers import serving
from solrace.protocol import messages as m

#: the draw budgets before issue 24 (a few CPU seconds for every game's deal): the serve
#: defaults would take the solver minutes on a loaded machine (Klondike at 100,000 positions)
SMALL_BUDGETS = [
    f"--draw-budget={game}={n}"
    for game, n in {
        "puttputt": 20_000,
        "tabbycat": 2_500,
        "manx": 2_500,
        "klondike": 500,
        # the compiled Leap Year search (runs of 200 positions, one more each) needs a run
        # longer than a deal's 215 moves to win one: 30,000 positions is ~0.005 CPU s there
        "leapyear": 30_000,
    }.items()
]


def deal_keys(prefix: str) -> list[str]:
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    return [f"{prefix}daily:{{{today}/{game}}}:deal" for game in m.GAME_NAMES]


async def test_a_server_started_with_predraw_has_every_deal_before_anyone_asks(
    redis_url: str, key_prefix: str
) -> None:
    r = aioredis.from_url(redis_url)
    keys = deal_keys(key_prefix)
    async with serving(redis_url, key_prefix, extra_args=["--no-predraw-daily"]):
        assert await r.exists(*keys) == 0  # up, and nothing drawn
    async with serving(redis_url, key_prefix, extra_args=["--predraw-daily", *SMALL_BUDGETS]):
        # no client connected: the server drew them itself (the solver takes a few seconds)
        await until(lambda: _all_there(r, keys), "every deal drawn", timeout=180)
    await r.aclose()


async def _all_there(r: aioredis.Redis, keys: list[str]) -> bool:
    return int(await r.exists(*keys)) == len(keys)
