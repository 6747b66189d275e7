"""Read-only HTTP JSON on the WebSocket port: race records and players' histories.

    GET /api/record/ID       the record as JSON (docs/RECORDS.md)
    GET /api/record/ID.txt   the record as a text file (what `solrace verify` reads)
    GET /api/series/ID       a series record as JSON (docs/RECORDS.md, Series records)
    GET /api/key             the public key records are signed with: {"algorithm": "Ed25519",
                             "encoding": "base64", "key": raw 32 bytes, "key_id": 16 hex, ...}
    GET /api/player/ID       a player's name, newest races (`?limit=N`, 1-200, default 50) and
                             figures per game (`games`: races, wins, best time, rating)
    GET /api/leaderboard/GAME/KIND?options=...&start=N&count=M
                             a page of an all-time board: KIND is wins, time or rating
                             (docs/LEADERBOARDS.md); `options` the game options of the board
                             (`draw=3,moves=build`; missing ones are the defaults; ignored
                             for rating, which is per game), `start` 0.., `count` 1-100 (50)
    GET /api/ratings/GAME?players=ID,ID,...
                             the ratings of up to RATINGS_MAX players in one game, as shown
                             beside their names (rating, provisional, rated races, the change
                             of their latest rated race); players never rated are left out
    GET /api/event/ID        an arena: settings, state, every standing, every scored race with its
                             record id (server/race/arena.py, PROTOCOL.md, Arena)
    GET /api/room/CODE       what an invite link shows before one joins: the room's game,
                             host, seats and state (charged like `spectate`, a miss spends
                             a guess: a private code is the key to its room)
    GET /api/daily           today's dailies with their live figures (server/net/daily_pages.py)
    GET /api/daily/archive   the past days whose dailies can be practised (`date`)
    GET /api/daily/DATE/GAME a daily's board (`?start=N&count=M`, `&player=ID`: their entry)
    GET /api/replay/ID       the race move by move for the web replay viewer (server/league/replay.py)

A daily race's record (and its replay) is 403 until its UTC day is over (`hidden_until`): it
holds the day's deal.

Every answer has an ETag; a request whose If-None-Match names it gets 304 and no body. A
record never changes once written, so its ETag is its id and format, and it may be cached for
a day; a player's page changes with every race, so its ETag is a digest of the body and it
must be revalidated (no-cache); a leaderboard page's ETag is a digest of its body too, and
it may be cached for BOARD_MAX_AGE seconds. Unknown ids, games and kinds are 404 and a bad
query is 400, each with a JSON `{"error": ...}`.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from solrace.engine import GAMES, BadOptions, game_titles
from solrace.protocol.messages import GAME_NAMES, ProtocolError
from solrace.protocol.record_sign import key_info
from solrace.protocol.record_text import export
from solrace.protocol.records import RECORD_VERSION, hidden_until, is_record_id
from solrace.protocol.replay import REPLAY_VERSION
from solrace.server.league.boards import PAGE_MAX
from solrace.server.league.daily import Dailies
from solrace.server.league.players import is_player_id
from solrace.server.league.ratings import rating_view, shown
from solrace.server.league.records import Records
from solrace.server.league.replay import Busy, Replays
from solrace.server.league.standings import KINDS, Standings, board_name, board_options
from solrace.server.net.conn import IPNetwork, forwarded_for
from solrace.server.net.daily_pages import DailyPages
from solrace.server.net.guard import Guard
from solrace.server.net.http import API_PREFIX, response
from websockets.http11 import Request, Response

log = logging.getLogger("solrace.server")

IMMUTABLE = "public, max-age=86400, immutable"
JSON = "application/json"
#: a leaderboard page may be this many seconds old in a cache
BOARD_MAX_AGE = 10
#: the longest `start` a leaderboard page may ask for (boards hold at most 1,000,000)
START_MAX = 10_000_000
#: the most players one /api/ratings request may name (a room's seats)
RATINGS_MAX = 16


def _json(status: HTTPStatus, body: Any, extra: dict[str, str] | None = None) -> Response:
    return response(status, json.dumps(body, separators=(",", ":")).encode(), JSON, extra)


def not_found(what: str) -> Response:
    return _json(HTTPStatus.NOT_FOUND, {"error": f"no such {what}"})


def bad_request(why: str) -> Response:
    return _json(HTTPStatus.BAD_REQUEST, {"error": why})


def _digest_etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def parse_game_options(game: str, text: str) -> str | None:
    """`draw=3,moves=build` -> the board's option set (`board_options`); missing options are
    the defaults, an unknown one or a bad value is ValueError, None: an option set that has
    no board (an open-ended option over its bound)."""
    given: dict[str, Any] = {}
    for part in filter(None, text.split(",")):
        name, eq, value = part.partition("=")
        if not eq or not name or name in given:
            raise ValueError(f"options are name=value pairs separated by commas, not {part!r}")
        given[name] = value
    try:
        return board_options(game, given)
    except BadOptions as exc:
        raise ValueError(str(exc)) from None


def _number(query: dict[str, list[str]], name: str, default: int, lo: int, hi: int) -> int:
    text = (query.get(name) or [str(default)])[0]
    if not text.isdigit() or not lo <= int(text) <= hi:
        raise ValueError(f"{name} is a number from {lo} to {hi}")
    return int(text)


def hidden(record: dict[str, Any], now: int) -> Response | None:
    """403 for a record that may not be shown yet (a daily race before its day ends)."""
    reveal = hidden_until(record, now)
    if reveal is None:
        return None
    refusal = {"error": "daily deal: hidden until the day ends", "reveal_at": reveal}
    return _json(HTTPStatus.FORBIDDEN, refusal, {"Cache-Control": "no-store"})


def accepts_gzip(request: Request) -> bool:
    """Whether Accept-Encoding names gzip (without q=0)."""
    for part in request.headers.get("Accept-Encoding", "").split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() == "gzip":
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def _cached(
    request: Request,
    body: bytes,
    content_type: str,
    etag: str,
    cache: str,
    extra: dict[str, str] | None = None,
) -> Response:
    """200 with the body, or 304 when the client already has this ETag."""
    headers = {"ETag": etag, "Cache-Control": cache, **(extra or {})}
    wanted = request.headers.get("If-None-Match", "")
    if etag in [t.strip() for t in wanted.split(",")] or wanted.strip() == "*":
        return response(HTTPStatus.NOT_MODIFIED, b"", content_type, headers)
    return response(HTTPStatus.OK, body, content_type, headers)


def _revalidated(request: Request, body: Any) -> Response:
    """A page that changes: its ETag is a digest of the body, and it must be revalidated."""
    data = json.dumps(body, separators=(",", ":")).encode()
    return _cached(request, data, JSON, _digest_etag(data), "no-cache")


def _is_date(text: str) -> bool:
    try:
        return datetime.date.fromisoformat(text).isoformat() == text
    except ValueError:
        return False


class Api:
    def __init__(
        self,
        records: Records,
        standings: Standings | None = None,
        replays: Replays | None = None,
        dailies: Dailies | None = None,
        clock: Callable[[], int] | None = None,
        guard: Guard | None = None,
        trusted_proxies: tuple[IPNetwork, ...] = (),
        rooms: Callable[[str], Awaitable[dict[str, Any] | None]] | None = None,
        arenas: Callable[[str], Awaitable[dict[str, Any]]] | None = None,
    ) -> None:
        self.records = records
        #: an arena's view with every standing and race (ArenaService.view), /api/event/ID
        self.arenas = arenas
        #: a room's document by code (Store.doc), for /api/room/CODE
        self.rooms = rooms
        #: per-address budgets (the WebSocket side's, so one address has one budget)
        self.guard = guard or Guard()
        self.trusted_proxies = trusted_proxies
        self.standings = standings
        self.replays = replays or Replays()
        self.dailies = dailies
        #: the dailies' pages (server/net/daily_pages.py), kept a moment each
        self.daily_pages = DailyPages(dailies) if dailies is not None else None
        #: now in ms: whether a daily's record may be shown yet
        self.clock: Callable[[], int] = clock or (lambda: int(time.time() * 1000))

    async def handle(self, request: Request, peer: str = "") -> Response:
        url = urlsplit(request.path)
        parts = url.path[len(API_PREFIX) :].split("/")
        if len(parts) == 2 and parts[0] == "record":
            return await self.record(request, parts[1], peer)
        if len(parts) == 2 and parts[0] == "series":
            return await self.series(request, parts[1], peer)
        if parts == ["key"]:
            return self.key(request)
        if len(parts) == 2 and parts[0] == "player":
            return await self.player(request, parts[1], parse_qs(url.query), peer)
        if len(parts) == 2 and parts[0] == "replay":
            return await self.replay(request, parts[1], peer)
        if len(parts) == 2 and parts[0] == "event" and self.arenas is not None:
            return await self.event(request, parts[1], peer)
        if len(parts) == 2 and parts[0] == "room" and self.rooms is not None:
            return await self.room(request, parts[1], peer)
        if len(parts) == 2 and parts[0] == "ratings" and self.standings is not None:
            return await self.ratings(request, parts[1], parse_qs(url.query))
        if len(parts) == 3 and parts[0] == "leaderboard" and self.standings is not None:
            return await self.leaderboard(request, parts[1], parts[2], parse_qs(url.query))
        if parts[0] == "daily" and self.daily_pages is not None:
            if parts == ["daily", "archive"]:
                return _revalidated(request, await self.daily_pages.archive())
            if len(parts) == 1:
                return await self.daily_listing(request, parse_qs(url.query))
            if len(parts) == 3:
                return await self.daily_board(request, parts[1], parts[2], parse_qs(url.query))
        return not_found("endpoint")

    async def readable(self, rid: str) -> dict[str, Any] | Response:
        """A stored record that may be shown now, or the answer that refuses it (404, or 403
        for a daily's record before its day ends): every endpoint that reveals a record's
        deal goes through here."""
        record = await self.records.get(rid)
        if record is None:
            return not_found("record")
        refused = hidden(record, self.clock())
        return record if refused is None else refused

    def key(self, request: Request) -> Response:
        """The public key the server signs records with (protocol/record_sign.py `key_info`);
        503 in the moment before the server has loaded it (start-up)."""
        signer = self.records.signer
        if signer is None:
            return _json(
                HTTPStatus.SERVICE_UNAVAILABLE,
                {"error": "the signing key is not loaded yet"},
                {"Retry-After": "1"},
            )
        info = key_info(signer.public_key())
        body = json.dumps(info, separators=(",", ":")).encode()
        return _cached(request, body, JSON, f'"{info["key_id"]}"', "no-cache")

    async def record(self, request: Request, name: str, peer: str = "") -> Response:
        """A record (JSON, or `.txt`: the export): a Redis read and an unpack (a replay of
        the moves, in a thread) charged to the address like any lookup."""
        rid, dot, ext = name.partition(".")
        if not is_record_id(rid) or (dot and ext != "txt"):
            return not_found("record")
        refused = self.charge(request, peer, "record")
        if refused is not None:
            return refused
        record = await self.readable(rid)
        if isinstance(record, Response):
            return record
        etag = f'"{rid}-v{RECORD_VERSION}-{ext or "json"}"'
        if ext == "txt":
            body = export(record).encode()
            return _cached(request, body, "text/plain; charset=utf-8", etag, IMMUTABLE)
        body = json.dumps(record, separators=(",", ":")).encode()
        return _cached(request, body, JSON, etag, IMMUTABLE)

    async def series(self, request: Request, sid: str, peer: str = "") -> Response:
        """A series record (docs/RECORDS.md, Series records): JSON, as stored and signed."""
        if not is_record_id(sid):
            return not_found("series")
        refused = self.charge(request, peer, "record")
        if refused is not None:
            return refused
        record = await self.records.get_series(sid)
        if record is None:
            return not_found("series")
        body = json.dumps(record, separators=(",", ":")).encode()
        return _cached(request, body, JSON, f'"{sid}-series"', IMMUTABLE)

    async def player(
        self, request: Request, pid: str, query: dict[str, list[str]], peer: str = ""
    ) -> Response:
        """A player's page: up to 200 records read and unpacked, charged to the address."""
        limit_text = (query.get("limit") or ["50"])[0]
        if not is_player_id(pid):
            return not_found("player")
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= 200:
            return _json(HTTPStatus.BAD_REQUEST, {"error": "limit is a number from 1 to 200"})
        refused = self.charge(request, peer, "player")
        if refused is not None:
            return refused
        if self.standings is None:
            page = await self.records.player(pid, int(limit_text))
        else:  # the reads at once: one round trip's wait
            page, games = await asyncio.gather(
                self.records.player(pid, int(limit_text)), self.standings.player_games(pid)
            )
            if page is not None:
                page["games"] = games
        if page is not None and self.daily_pages is not None:
            page["streak"] = await self.daily_pages.streak(pid)
        if page is None:
            return not_found("player")
        page["titles"] = game_titles()  # the page has no welcome to read them from
        body = json.dumps(page, separators=(",", ":")).encode()
        return _cached(request, body, JSON, _digest_etag(body), "no-cache")

    async def leaderboard(
        self, request: Request, game: str, kind: str, query: dict[str, list[str]]
    ) -> Response:
        """A page of an all-time board (one round trip: `Boards.page`)."""
        assert self.standings is not None
        if game not in GAMES:
            return not_found("game")
        if kind not in KINDS:
            return not_found("leaderboard")
        try:
            start = _number(query, "start", 0, 0, START_MAX)
            count = _number(query, "count", 50, 1, PAGE_MAX)
            # ratings are per game: a rating page takes no option set
            text = "" if kind == "rating" else (query.get("options") or [""])[0]
            opts = parse_game_options(game, text)
        except ValueError as exc:
            return bad_request(str(exc))
        if opts is None:
            page: dict[str, Any] = {"total": 0, "entries": [], "next": None}
        else:
            page = await self.standings.boards.page(board_name(kind, game, opts), start, count)
        if kind == "rating":  # the rating as shown beside names (ratings.shown)
            for entry in page["entries"]:
                entry["rating"] = shown(entry["ordinal"])
        body = json.dumps(
            {
                "game": game,
                "kind": kind,
                "options": None if kind == "rating" else opts,
                **page,
                "titles": game_titles(),  # the page has no welcome to read them from
            },
            separators=(",", ":"),
        ).encode()
        cache = f"public, max-age={BOARD_MAX_AGE}"
        return _cached(request, body, JSON, _digest_etag(body), cache)

    async def event(self, request: Request, aid: str, peer: str = "") -> Response:
        """An arena's settings, state, every member's standing and every scored race (each
        with its record id: PROTOCOL.md, Arena), charged like `spectate`."""
        assert self.arenas is not None
        if not aid.isalnum() or not 1 <= len(aid) <= 32:
            return not_found("event")
        refused = self.charge(request, peer, "spectate")
        if refused is not None:
            return refused
        try:
            body = await self.arenas(aid)
        except ProtocolError:
            return not_found("event")
        return _revalidated(request, body)

    async def room(self, request: Request, code: str, peer: str = "") -> Response:
        """An invite link's room, as its page shows it before anyone joins (no token, no
        seat's address, no text seed): charged like `spectate`; a code that names no room
        spends one of the address's guesses, as at `join`."""
        assert self.rooms is not None
        code = code.upper()
        if not code.isalnum() or not 1 <= len(code) <= 32:
            return not_found("room")
        host = forwarded_for(peer, request.headers.get("X-Forwarded-For"), self.trusted_proxies)
        key = self.guard.key_of(host)
        refused = self.charge(request, peer, "spectate")
        if refused is not None:
            return refused
        doc = await self.rooms(code)
        if doc is None:
            self.guard.missed(key, "no_room")
            return not_found("room")
        opts = doc["options"]
        seats = [s for s in doc["seats"] if s]
        host_seat = doc.get("host_seat")
        hosts = [s["name"] for s in seats if s.get("seat") == host_seat]
        body = {
            "room": doc["code"],
            "game": opts["game"],
            "title": game_titles().get(opts["game"], opts["game"]),
            "state": doc["state"],
            "host": hosts[0] if hosts else None,
            "players": [
                {"name": s["name"], "player": s.get("player"), "bot": bool(s.get("bot"))}
                for s in seats
            ],
            "max_players": opts["max_players"],
            "spectators": bool(opts.get("spectators", True)),
            "public": bool(opts.get("public")),
            "rated": bool(opts.get("rated")),
            "time_limit": opts.get("time_limit", 0),
            "daily": doc.get("daily") is not None,
        }
        return _json(HTTPStatus.OK, body, {"Cache-Control": "no-store"})

    async def ratings(self, request: Request, game: str, query: dict[str, list[str]]) -> Response:
        """Players' ratings in one game, as shown beside their names (one HMGET)."""
        assert self.standings is not None
        if game not in GAMES:
            return not_found("game")
        ids = list(dict.fromkeys(filter(None, (query.get("players") or [""])[0].split(","))))
        if not 1 <= len(ids) <= RATINGS_MAX or not all(is_player_id(p) for p in ids):
            return bad_request(f"players is 1 to {RATINGS_MAX} player ids separated by commas")
        rows = await self.standings.redis.hmget(self.standings.ratings.keys(game)[1], ids)
        players = {
            pid: rating_view(json.loads(data)) for pid, data in zip(ids, rows, strict=True) if data
        }
        return _revalidated(request, {"game": game, "players": players})

    async def daily_listing(self, request: Request, query: dict[str, list[str]]) -> Response:
        assert self.daily_pages is not None
        player = query["player"][0] if query.get("player") else None
        if player is not None and not is_player_id(player):
            return _json(HTTPStatus.BAD_REQUEST, {"error": "no such player id"})
        return _revalidated(request, await self.daily_pages.listing(player))

    async def daily_board(
        self, request: Request, date: str, game: str, query: dict[str, list[str]]
    ) -> Response:
        assert self.daily_pages is not None
        if not _is_date(date) or game not in GAME_NAMES:
            return not_found("daily")
        try:
            start = _number(query, "start", 0, 0, START_MAX)
            count = _number(query, "count", 50, 1, PAGE_MAX)
        except ValueError as exc:
            return bad_request(str(exc))
        player = query["player"][0] if query.get("player") else None
        if player is not None and not is_player_id(player):
            return _json(HTTPStatus.BAD_REQUEST, {"error": "no such player id"})
        page = await self.daily_pages.board(date, game, start, count, player)
        return _revalidated(request, page)

    def charge(self, request: Request, peer: str, kind: str) -> Response | None:
        """Charge a costly request to its client address like an expensive WebSocket request
        (server/net/guard.py); the 429 that refuses it, or None when it may go on."""
        host = forwarded_for(peer, request.headers.get("X-Forwarded-For"), self.trusted_proxies)
        try:
            self.guard.check(self.guard.key_of(host), kind)
        except ProtocolError as exc:
            wait = max(1, math.ceil(exc.extra["retry_after"] / 1000))
            body = {"error": exc.message, "limit": exc.extra["limit"]}
            return _json(HTTPStatus.TOO_MANY_REQUESTS, body, {"Retry-After": str(wait)})
        return None

    async def replay(self, request: Request, rid: str, peer: str = "") -> Response:
        """The replay of a record (protocol/replay.py): a kept body needs no Redis read, and
        costs nothing; a build (a Redis read and a worker's CPU) is charged to the address."""
        if not is_record_id(rid):
            return not_found("record")
        encoded = self.replays.cached(rid)
        if encoded is None:
            refused = self.charge(request, peer, "replay")
            if refused is not None:
                return refused
            record = await self.readable(rid)
            if isinstance(record, Response):
                return record
            try:
                encoded = await self.replays.build(rid, record)
            except Busy:
                busy = {"error": "busy: too many replays being built, try again"}
                return _json(HTTPStatus.SERVICE_UNAVAILABLE, busy, {"Retry-After": "1"})
            except ValueError as exc:  # the engine refused a stored move: a bug, said plainly
                log.error("record %s does not replay: %s", rid, exc)
                failed = {"error": "this record does not replay"}
                return _json(HTTPStatus.INTERNAL_SERVER_ERROR, failed)
        etag = f"{rid}-v{RECORD_VERSION}-replay{REPLAY_VERSION}"
        vary = {"Vary": "Accept-Encoding"}
        if accepts_gzip(request):
            gz = {**vary, "Content-Encoding": "gzip"}
            return _cached(request, encoded.gzip, JSON, f'"{etag}-gz"', IMMUTABLE, gz)
        return _cached(request, encoded.json, JSON, f'"{etag}"', IMMUTABLE, vary)
