"""The dailies' HTTP pages (`/api/daily`, `/api/daily/archive`, `/api/daily/DATE/GAME`, and a
player's streak on `/api/player/ID`): read from the dailies' boards, deals and live figures
(server/league/daily.py), each page kept a moment (a poll every few seconds is live enough).
server/net/api.py serves them."""

from __future__ import annotations

import datetime
from typing import Any

from solrace.engine import game_titles
from solrace.protocol import messages as m
from solrace.protocol.records import day_end_ms
from solrace.server.common.shared import Shared
from solrace.server.league.daily import Dailies, board_name, daily_id, default_options


class DailyPages:
    """The pages of one deployment's dailies."""

    def __init__(self, dailies: Dailies) -> None:
        self.dailies = dailies
        #: `/api/daily` and board pages, a moment each (a poll every few seconds is live enough)
        self.pages: Shared[dict[str, Any]] = Shared(ttl=2.0, size=256)

    async def listing(self, player: str | None = None) -> dict[str, Any]:
        """Today's dailies (`/api/daily`), a moment old at most; with a player id, whether
        that player has had their scored attempt at each (`played`)."""
        date = self.dailies.today()
        return await self.pages.get(f"{date}?{player or ''}", lambda: self._listing(date, player))

    async def _listing(self, date: str, player: str | None) -> dict[str, Any]:
        counts = await self.dailies.counts(date, list(m.GAME_NAMES))
        if player is not None:
            pipe = self.dailies.redis.pipeline(transaction=False)
            for game in m.GAME_NAMES:
                pipe.zscore(self.dailies.boards.keys(board_name(date, game))[0], player)
            for game, score in zip(m.GAME_NAMES, await pipe.execute(), strict=True):
                counts[game]["played"] = score is not None
        titles = game_titles()
        return {
            "date": date,
            "reveal_at": day_end_ms(date),
            "dailies": [
                {
                    "id": daily_id(date, game),
                    "game": game,
                    "title": titles[game],
                    "game_options": default_options(game),
                    **counts[game],
                }
                for game in m.GAME_NAMES
            ],
        }

    def past_days(self) -> list[str]:
        """The archive's days, newest first: yesterday back `archive_days` days."""
        day = datetime.date.fromisoformat(self.dailies.today())
        return [
            (day - datetime.timedelta(days=i)).isoformat()
            for i in range(1, self.dailies.archive_days + 1)
        ]

    async def archive(self) -> dict[str, Any]:
        """`/api/daily/archive`: the past days whose dailies can be practised (their deal is
        kept: dealt in its day), each game's finishers; a moment old at most."""
        return await self.pages.get(f"archive:{self.dailies.today()}", self._archive)

    async def _archive(self) -> dict[str, Any]:
        days = self.past_days()
        games = list(m.GAME_NAMES)
        pipe = self.dailies.redis.pipeline(transaction=False)
        for date in days:
            for game in games:
                pipe.exists(self.dailies.key(date, game, "deal"))
                pipe.zcard(self.dailies.boards.keys(board_name(date, game))[0])
        replies = iter(await pipe.execute())
        titles = game_titles()
        out = []
        for date in days:
            dailies = []
            for game in games:
                kept, players = next(replies), next(replies)
                if kept:
                    dailies.append(
                        {
                            "id": daily_id(date, game),
                            "game": game,
                            "title": titles[game],
                            "players": int(players),
                        }
                    )
            if dailies:
                out.append({"date": date, "dailies": dailies})
        return {"today": self.dailies.today(), "days": out}

    async def streak(self, player: str) -> dict[str, Any]:
        """A player's daily streak: `current` (days in a row with a scored attempt at any
        game, ending today, or yesterday when today is not played yet), `best` within the
        kept days, and `days` (the kept days played, newest first). One pipeline of ZSCOREs
        over the kept boards (`archive_days` + 1 days x games)."""
        days = [self.dailies.today(), *self.past_days()]
        games = list(m.GAME_NAMES)
        pipe = self.dailies.redis.pipeline(transaction=False)
        for date in days:
            for game in games:
                pipe.zscore(self.dailies.boards.keys(board_name(date, game))[0], player)
        scores = await pipe.execute()
        played = [
            any(scores[i * len(games) + j] is not None for j in range(len(games)))
            for i in range(len(days))
        ]
        current, run, best = 0, 0, 0
        start = 0 if played[0] else 1  # today not played yet: the streak is still yesterday's
        for p in played[start:]:
            if not p:
                break
            current += 1
        for p in played:
            run = run + 1 if p else 0
            best = max(best, run)
        return {
            "current": current,
            "best": best,
            "today": played[0],
            "days": [d for d, p in zip(days, played, strict=True) if p],
        }

    async def board(
        self, date: str, game: str, start: int, count: int, player: str | None
    ) -> dict[str, Any]:
        """A page of a daily's board with its live figures (and the player's own entry)."""
        key = f"{date}/{game}?{start}&{count}&{player or ''}"
        return await self.pages.get(key, lambda: self._board(date, game, start, count, player))

    async def _board(
        self, date: str, game: str, start: int, count: int, player: str | None
    ) -> dict[str, Any]:
        page = await self.dailies.boards.page(board_name(date, game), start, count)
        counts = (await self.dailies.counts(date, [game]))[game]
        out = {"id": daily_id(date, game), "date": date, "game": game, **counts, **page}
        if player is not None:
            out["you"] = await self.dailies.boards.entry(board_name(date, game), player)
        return out
