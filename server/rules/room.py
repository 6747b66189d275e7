"""Room and race rules, sans-I/O: commands in, events and replies out.

Nothing here touches a socket, Redis or the clock: the caller passes `now`
(Unix ms) and any randomness, and persists what comes back. That keeps every
rule (lobby, countdown, moves, undo policy, ranking, time limit, rematch)
testable without a network, and lets any server process rebuild a room from
the document plus the move logs kept in Redis.

The room document (`Room.doc`) is plain data (msgpack-able). Each seat in the
current race also has a `SeatRace`: its engine Game and its move log.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any

from solrace.engine import BadOptions, Effect, Game, IllegalMove, new_game
from solrace.engine.moves import Move
from solrace.protocol.messages import (
    DEFAULT_OPTIONS,
    ProtocolError,
    merge_options,
    view_change,
)
from solrace.protocol.names import clean_name
from solrace.protocol.records import OUT_STATUSES, commitment, day_end_ms, rank, record_id
from solrace.protocol.series import round_rows, series_id, standings
from solrace.server.common.derive import ROOM_TEXT_SEED, derive_seed

LOBBY, COUNTDOWN, RACING, FINISHED = "lobby", "countdown", "racing", "finished"
#: statuses kept in the document are OUT_STATUSES, "waiting" and "racing"; won/dead are read
#: off the seat's game
#: client addresses (`addr_hash`) kept per seat: the racer's own, not to be shown boards
MAX_SEAT_ADDRS = 8


def token_hash(token: str) -> str:
    """Only this is stored: a leaked Redis dump must not let anyone take a seat."""
    return hashlib.sha256(token.encode()).hexdigest()


def addr_hash(addr: str) -> str:
    """A client address as the room keeps it (seat limits, kicks): not the address itself."""
    return hashlib.sha256(b"solrace-addr:" + addr.encode()).hexdigest()[:24] if addr else ""


def text_deal_seed(secret: bytes, text: str) -> int:
    """The deal seed of a text seed: `derive.derive_seed(secret, ROOM_TEXT_SEED, text)`.

    The text is public (every racer of the room knows it); without the server's secret nobody
    can turn it into the deal before the results reveal the seed. Its own key keeps it apart
    from every other value derived from the secret (a daily's deal above all: server/common/derive.py).
    """
    if not secret:
        raise ValueError("a text seed needs the server secret")
    return derive_seed(secret, ROOM_TEXT_SEED, text)


@dataclass
class Entry:
    """One stored move: its text and the server time it was made."""

    move: str
    at: int

    def encode(self) -> str:
        return f"{self.move} {self.at}"

    @classmethod
    def decode(cls, raw: str | bytes) -> Entry:
        text = raw.decode() if isinstance(raw, bytes) else raw
        move, at = text.rsplit(" ", 1)
        return cls(move, int(at))


class SeatRace:
    """One seat's deal and move log: the engine Game kept in step with the stored log."""

    def __init__(self, game: str, seed: int, game_options: dict[str, Any]) -> None:
        self.game_name = game
        self.seed = seed
        self.game_options = dict(game_options)
        self.game: Game = new_game(game, seed=seed, options=self.game_options)
        #: the log: each stored move's text and time, in two lists (a str and an int a move:
        #: nothing the garbage collector tracks, where an `Entry` a move was one more object
        #: for every later collection of an older generation to walk; `entries` builds them)
        self._texts: list[str] = []
        self._times: list[int] = []
        self.homes: list[int] = []  # home count after each entry, for "when progress was reached"
        self.revealed: list[
            tuple[str, ...]
        ] = []  # per entry: cards that move revealed (undo policy)
        self.home0 = self.game.home()
        self.rev = 0  # bumped on every stored append or pop; guards against a stale cache
        self.state = 0  # bumped on every change of the game: the key of the cached view
        self._view: tuple[int, dict[str, Any]] | None = None
        #: the view built before `_view` (an ack sends what changed since: `change`)
        self._before: tuple[int, dict[str, Any]] | None = None
        #: each pile's state as `_view` was built (`Game.view_since`)
        self._pile_states: list[Any] = []
        #: the piles changed since `_view` was built (`Game.touched`; None: not known)
        self._touched: set[int] | None = None
        #: the names of the piles that may differ between `_before` and `_view` (`change`)
        self._changed: tuple[str, ...] | None = None

    def play(self, text: str, at: int) -> Effect:
        eff = self.game.play(text)
        self.state += 1
        self._touch(eff.move)
        self._texts.append(eff.move.text)
        self._times.append(at)
        self.homes.append(self.game.home())
        self.revealed.append(tuple(eff.revealed))
        return eff

    def pop(self) -> Entry:
        self._touch(self.game.undo())
        self.state += 1
        self.homes.pop()
        self.revealed.pop()
        return Entry(self._texts.pop(), self._times.pop())

    @property
    def entries(self) -> list[Entry]:
        """The stored log, move by move (a new list: built each time it is asked for)."""
        return [Entry(m, t) for m, t in zip(self._texts, self._times, strict=True)]

    def move_texts(self) -> list[str]:
        """The log's moves' texts, in order (a new list)."""
        return list(self._texts)

    def last_entry(self) -> Entry:
        """The log's last move (IndexError when it has none)."""
        return Entry(self._texts[-1], self._times[-1])

    @property
    def last_at(self) -> int | None:
        """The time of the log's last move; None before the first."""
        return self._times[-1] if self._times else None

    def _touch(self, move: Move) -> None:
        """A move played or taken back: its piles are among those the next view compares."""
        touched = self._touched
        if touched is not None:
            piles = self.game.touched(move)
            if piles is None:
                self._touched = None
            else:
                touched.update(piles)

    def load(self, entries: list[Entry], rev: int) -> None:
        """Bring the game to the stored log: extend when ours is a prefix, else rebuild."""
        mine = list(zip(self._texts, self._times, strict=True))
        theirs = [(e.move, e.at) for e in entries]
        if theirs[: len(mine)] != mine:
            self.game = new_game(self.game_name, seed=self.seed, options=self.game_options)
            self.state += 1
            self._touched = None  # every pile is compared with the last view
            self._texts, self._times, self.homes, self.revealed = [], [], [], []
        for e in entries[len(self._texts) :]:
            self.play(e.move, e.at)
        self.rev = rev

    @property
    def moves(self) -> int:
        return len(self._texts)

    def view(self) -> dict[str, Any]:
        """The engine view of the game as it is now, built once per game state.

        A move needs the seat's status several times (may it move, its progress event,
        the ack) and the view for the ack and the spectators' board; `is_dead` is a full
        legal-move search (Klondike simulates the stock), so it runs once per state, here.
        Callers must not change the returned dict: it is shared until the next move.
        """
        if self._view is None or self._view[0] != self.state:
            self._before = self._view
            before = self._view[1] if self._view is not None else None
            # only the piles the game changed since the last view are built again, and only
            # those its moves touched are compared (every pile when that is not known)
            touched = self._touched if before is not None else None
            game = self.game
            self._view = (self.state, game.view_since(before, self._pile_states, touched))
            names = game.PILE_NAMES
            self._changed = None if touched is None else tuple([names[i] for i in sorted(touched)])
            self._touched = set()
        return self._view[1]

    def change(self) -> dict[str, Any] | None:
        """What the last change of the game (a move, an undo) did to the view
        (`protocol.messages.view_change`, over the piles it touched), or None when the view
        before it was not built."""
        after = self.view()
        before = self._before
        if before is None or before[0] != self.state - 1:
            return None
        return view_change(before[1], after, self._changed)

    def won(self) -> bool:
        return self.game.is_won()

    def dead(self) -> bool:
        """No legal move left (never true of a won game: the engine's is_dead excludes it)."""
        return bool(self.view()["dead"])

    def reached_at(self) -> int | None:
        """Server time the seat first reached the home count it has now (None: it had it at the start)."""
        final = self.homes[-1] if self.homes else self.home0
        if final == self.home0:
            return None
        for i, h in enumerate(self.homes):
            if h == final:
                return self._times[i]
        return None  # pragma: no cover - final is one of homes


@dataclass
class MovePlan:
    """A validated move applied to the cached game, waiting to be stored; then acked."""

    seat: int
    entry: Entry
    expected_len: int
    expected_rev: int
    revealed: tuple[str, ...]
    event: dict[str, Any]
    undone: bool = False


@dataclass
class Room:
    doc: dict[str, Any]
    races: dict[int, SeatRace] = field(default_factory=dict)

    # --- construction -------------------------------------------------------------------

    @classmethod
    def new(cls, code: str, host_hash: str, options: dict[str, Any] | None, now: int) -> Room:
        opts = merge_options(DEFAULT_OPTIONS, options or {})
        check_game_options(opts)
        doc = {
            "code": code,
            "state": LOBBY,
            "round": 1,
            "options": opts,
            "host_hash": host_hash,
            "host_seat": None,
            "seats": [],
            "created": now,
            "seed": None,
            "salt": None,
            "commitment": None,
            "starts_at": None,
            "ends_at": None,
            "finished_at": None,
            "results": None,
        }
        return cls(doc)

    def clone(self) -> Room:
        """A copy whose document may be changed freely; the seat games are shared (read-only)."""
        return Room(copy.deepcopy(self.doc), self.races)

    def build_races(self) -> None:
        """The deals of the current race (one per seat in it), from seed and options."""
        d = self.doc
        self.races = {}
        if d["seed"] is None:
            return
        for s in d["seats"]:
            if s and s.get("in_race"):
                self.races[s["seat"]] = SeatRace(
                    d["options"]["game"], d["seed"], d["options"]["game_options"]
                )

    # --- reading ------------------------------------------------------------------------

    @property
    def code(self) -> str:
        return str(self.doc["code"])

    @property
    def state(self) -> str:
        return str(self.doc["state"])

    @property
    def options(self) -> dict[str, Any]:
        options: dict[str, Any] = self.doc["options"]
        return options

    def seats(self) -> list[dict[str, Any]]:
        return [s for s in self.doc["seats"] if s]

    def seat(self, seat: int) -> dict[str, Any]:
        seats = self.doc["seats"]
        if not (0 <= seat < len(seats)) or not seats[seat]:
            raise ProtocolError("not_player", f"there is no seat {seat} in this room")
        found: dict[str, Any] = seats[seat]
        return found

    def seat_by_token(self, thash: str) -> dict[str, Any] | None:
        for s in self.seats():
            if s["token_hash"] == thash:
                return s
        return None

    def is_host(self, thash: str) -> bool:
        return bool(self.doc["host_hash"] == thash)

    def status(self, seat: int) -> str:
        s = self.seat(seat)
        if s["status"] in OUT_STATUSES:
            return str(s["status"])
        race = self.races.get(seat)
        if race is not None and s.get("in_race"):
            if race.won():
                return "won"
            if race.dead():
                return "dead"
        return str(s["status"])

    def racing_seats(self) -> list[int]:
        return [
            s["seat"]
            for s in self.seats()
            if s.get("in_race") and self.status(s["seat"]) == "racing"
        ]

    def stats(self, seat: int) -> dict[str, Any]:
        """Public progress of a seat: safe for every viewer (no cards)."""
        race = self.races.get(seat)
        if race is None:
            return {"moves": 0, "home": 0, "progress": 0.0, "time": None}
        start = self.doc["starts_at"] or 0
        last = race.last_at
        at = None if last is None else last - start
        return {
            "moves": race.moves,
            "home": race.game.home(),
            "progress": race.game.progress(),
            "time": at,
        }

    def progress_event(self, seat: int, now: int) -> dict[str, Any]:
        """The seat's `progress` event: its status and its `stats`, built as one dict (a
        move builds one: no dict of the stats to merge)."""
        race = self.races.get(seat)
        if race is None:
            return {"kind": "progress", "at": now, "seat": seat, "status": self.status(seat),
                    **self.stats(seat)}  # fmt: skip
        last = race.last_at
        game = race.game
        return {
            "kind": "progress",
            "at": now,
            "seat": seat,
            "status": self.status(seat),
            "moves": race.moves,
            "home": game.home(),
            "progress": game.progress(),
            "time": None if last is None else last - (self.doc["starts_at"] or 0),
        }

    # --- lobby commands (they change only the document) ---------------------------------

    def join(
        self,
        name: str,
        thash: str,
        now: int,
        player: str | None = None,
        *,
        addr: str = "",
        per_address: int = 0,
        bot: bool = False,
    ) -> tuple[int, list[dict[str, Any]]]:
        """Seat a player; `player` is its public player id (None: joined without a key), `bot`
        whether its hello said it is a program (a marked bot: rated, and shown, as one).
        `addr` is the client address's hash (`addr_hash`): a kicked player's address stays
        out for the room's life, and one address holds at most `per_address` seats (0: any
        number)."""
        if self.state != LOBBY:
            raise ProtocolError(
                "bad_state", "the race has started; join as a spectator or wait for the rematch"
            )
        name = clean_name(name)
        if player is None and self.options.get("rated"):
            raise ProtocolError(
                "player_key_required",
                "this room is rated: say hello with a player key to take a seat",
            )
        if addr and addr in self.doc.get("banned", ()):
            raise ProtocolError("not_allowed", "the host removed you from this room")
        if len(self.seats()) >= self.options["max_players"]:
            raise ProtocolError(
                "room_full", f"the room is full ({self.options['max_players']} players)"
            )
        mine = sum(1 for s in self.seats() if addr and s.get("addr") == addr)
        if per_address and mine >= per_address:
            raise ProtocolError(
                "not_allowed", f"your address holds {mine} seats of this room already"
            )
        seat = len(self.doc["seats"])
        self.doc["seats"].append(
            {
                "seat": seat,
                "name": name,
                "token_hash": thash,
                "ready": False,
                "status": "waiting",
                "in_race": False,
                "joined": now,
                "player": player,
                "addr": addr,
                "addrs": [addr] if addr else [],
                "bot": bot,
            }
        )
        joined = {"kind": "player_joined", "at": now, "seat": seat, "name": name, "player": player}
        if bot:
            joined["bot"] = True
        return seat, [joined]

    def note_address(self, seat: int, addr: str) -> list[dict[str, Any]]:
        """A connection from `addr` took the seat (create, join, resume): boards of the seat's
        race are kept from that address until the seat is done (`watching_own_race`).
        The newest MAX_SEAT_ADDRS are kept; no event (addresses are nobody's business)."""
        addrs = self.seat(seat).setdefault("addrs", [])
        if addr in addrs:
            return []
        addrs.append(addr)
        del addrs[:-MAX_SEAT_ADDRS]
        return []

    def watching_own_race(self, addr: str | None) -> bool:
        """Is `addr` the address of a seat still in this room's race? Then no board of the race
        may go there: every racer has the same deal, so another's board shows one's own
        hidden cards. A seat that is done (won, dead, resigned, out) may watch; so may
        everyone once the race is finished. No address (no socket peer): treated as a racer's."""
        if addr is None:
            return self.state in (COUNTDOWN, RACING) and bool(self.racing_seats())
        return addr in self.racing_addresses()

    def racing_addresses(self) -> frozenset[str]:
        """The addresses of every seat still in this room's race (none outside a race): a board
        going out to many spectators checks each against this one set."""
        if self.state not in (COUNTDOWN, RACING):
            return frozenset()
        return frozenset(
            a
            for s in self.seats()
            if s.get("in_race") and self.status(s["seat"]) == "racing"
            for a in s.get("addrs", ())
        )

    def leave(self, seat: int, now: int) -> list[dict[str, Any]]:
        s = self.seat(seat)
        if self.state in (COUNTDOWN, RACING) and s.get("in_race") and self.status(seat) == "racing":
            s["status"] = "left"
            return [
                {"kind": "player_left", "at": now, "seat": seat},
                self.progress_event(seat, now),
            ]
        if self.state == LOBBY:
            self.doc["seats"][seat] = None
            if self.doc["host_seat"] == seat:
                self.doc["host_seat"] = None
        else:
            s["left"] = True
        return [{"kind": "player_left", "at": now, "seat": seat}]

    def set_ready(self, seat: int, ready: bool, now: int) -> list[dict[str, Any]]:
        s = self.seat(seat)
        if self.state != LOBBY:
            raise ProtocolError("bad_state", "ready is for the lobby")
        if s["ready"] == ready:
            return []
        s["ready"] = ready
        return [{"kind": "ready", "at": now, "seat": seat, "ready": ready}]

    def configure(self, change: dict[str, Any], now: int) -> list[dict[str, Any]]:
        if self.state != LOBBY:
            raise ProtocolError("bad_state", "options can change only in the lobby")
        opts = merge_options(self.options, change)
        check_game_options(opts)
        check_series_change(self.doc.get("series"), self.options.get("series"), opts.get("series"))
        if len(self.seats()) > opts["max_players"]:
            raise ProtocolError("bad_options", "max_players is below the number of seated players")
        check_solo_hints(opts, len(self.seats()))
        check_rated_seats(opts, self.seats())
        self.doc["options"] = opts
        return [{"kind": "options", "at": now, "options": public_options(opts)}]

    def kick(self, seat: int, now: int) -> list[dict[str, Any]]:
        """Remove a seat; its player's address may not take a seat again in this room."""
        s = self.seat(seat)
        events = [{"kind": "kicked", "at": now, "seat": seat}]
        if s.get("addr") and s["addr"] not in self.doc.setdefault("banned", []):
            self.doc["banned"].append(s["addr"])
        if self.state == LOBBY:
            self.doc["seats"][seat] = None
            if self.doc["host_seat"] == seat:
                self.doc["host_seat"] = None
        else:
            s["kicked"] = True
            if s.get("in_race") and self.status(seat) == "racing":
                s["status"] = "left"
                events.append(self.progress_event(seat, now))
        return events

    def start(
        self,
        now: int,
        seed: int,
        salt: bytes,
        solution: int | None = None,
        *,
        secret: bytes = b"",
        max_race: int = 0,
    ) -> list[dict[str, Any]]:
        """Host starts: countdown. `seed` is the fresh secret seed, used unless a text seed is set
        (then the seed is `text_deal_seed(secret, text)`: the server's secret is required);
        `solution` is the length of the solver's win when the seed was drawn winnable.
        `max_race`: the server's longest race, seconds (0: none), the backstop that ends a race
        with no time limit (or a longer one) even if no player finishes, resigns or leaves."""
        if self.state != LOBBY:
            raise ProtocolError("bad_state", f"the room is in {self.state}, not the lobby")
        players = self.seats()
        if not players:
            raise ProtocolError("bad_state", "no players to race")
        check_solo_hints(self.options, len(players))
        text_seed = self.options.get("seed")
        if text_seed:
            seed = text_deal_seed(secret, text_seed)
        d = self.doc
        d["seed"], d["salt"] = seed, salt.hex()
        d["solution"] = solution
        d["commitment"] = commitment(seed, salt)
        d["starts_at"] = now + self.options["countdown"] * 1000
        limit = self.options["time_limit"]
        if max_race and (not limit or limit > max_race):
            limit = max_race
        d["ends_at"] = d["starts_at"] + limit * 1000 if limit else None
        d["state"] = COUNTDOWN
        for s in players:
            s["in_race"], s["status"], s["ready"] = True, "racing", False
        self.build_races()
        countdown = {
            "kind": "countdown",
            "at": now,
            "starts_at": d["starts_at"],
            "commitment": d["commitment"],
            "players": [s["seat"] for s in players],
        }
        series = self.series_round(now)
        if series is not None:
            countdown["series"] = series
        return [countdown]

    # --- series (protocol/series.py: the scoring; PROTOCOL.md, Series) -------------------

    def series_active(self) -> dict[str, Any] | None:
        """The series under way (begun, not ended), if there is one."""
        series: dict[str, Any] | None = self.doc.get("series")
        if series is None or series.get("ended_at") is not None:
            return None
        return series

    def series_round(self, now: int) -> dict[str, Any] | None:
        """A race is starting: it is the next round of the series under way, or the first
        of a new one (the room has the `series` option and no series under way)."""
        option = self.options.get("series")
        series = self.series_active()
        if series is None:
            if option is None:
                return None
            last = self.doc.get("series")
            series = self.doc["series"] = {
                "id": series_id(self.doc["commitment"]),
                "number": (last["number"] + 1) if last else 1,
                "option": dict(option),
                "rounds": [],
                "players": {},
                "started_at": now,
                "ended_at": None,
            }
        return {
            "id": series["id"],
            "round": len(series["rounds"]) + 1,
            "rounds": series["option"]["rounds"],
        }

    def series_result(self, ranking: list[dict[str, Any]], now: int) -> None:
        """A race of the series is over: its rows count, and the last round ends the series."""
        series = self.series_active()
        if series is None or self.doc["commitment"] is None:
            return
        series["rounds"].append(
            {
                "round": self.doc["round"],
                "record": record_id(self.doc["commitment"]),
                "rows": round_rows(ranking),
            }
        )
        for row in ranking:
            s = self.seat(row["seat"])
            series["players"][str(row["seat"])] = {
                "name": s["name"],
                "player": s.get("player"),
                "bot": bool(s.get("bot")),
            }
        wanted = series["option"]["rounds"]
        if wanted and len(series["rounds"]) >= wanted:
            series["ended_at"] = now

    def series_view(self) -> dict[str, Any] | None:
        """The room's series as every viewer may see it (the last one, ended or not): its
        rule, the rounds played and their race records, and the standings."""
        series = self.doc.get("series")
        if series is None:
            return None
        present = {s["seat"] for s in self.seats() if not s.get("left") and not s.get("kicked")}
        players = {
            str(s["seat"]): {
                "name": s["name"],
                "player": s.get("player"),
                "bot": bool(s.get("bot")),
            }
            for s in self.seats()
            if s["seat"] in present
        }
        for seat, info in series["players"].items():
            players[seat] = {**info, "left": int(seat) not in present}
        ended = series["ended_at"] is not None
        return {
            "id": series["id"],
            "number": series["number"],
            **series["option"],
            "played": len(series["rounds"]),
            "ended": ended,
            "records": [r["record"] for r in series["rounds"]],
            "standings": standings(
                series["option"], series["rounds"], players, () if ended else sorted(present)
            ),
        }

    def end_series(self, now: int) -> list[dict[str, Any]]:
        """The host ends the series under way between races (any series: "until I stop", or
        one cut short). With no round played it is simply dropped."""
        series = self.series_active()
        if series is None:
            raise ProtocolError("bad_state", "no series is under way")
        if self.state not in (LOBBY, FINISHED):
            raise ProtocolError("bad_state", "a series ends between races, not during one")
        if not series["rounds"]:
            self.doc["series"] = None
            return []
        series["ended_at"] = now
        view = self.series_view()
        assert view is not None
        return [{"kind": "series_end", "at": now, "series": view}]

    def begin(self, now: int) -> list[dict[str, Any]]:
        """Countdown over: the race is on (idempotent: no events when it already is)."""
        if self.state != COUNTDOWN or now < self.doc["starts_at"]:
            return []
        self.doc["state"] = RACING
        return [
            {
                "kind": "start",
                "at": now,
                "starts_at": self.doc["starts_at"],
                "ends_at": self.doc["ends_at"],
            }
        ]

    def resign(self, seat: int, now: int, status: str = "resigned") -> list[dict[str, Any]]:
        s = self.seat(seat)
        if self.state not in (COUNTDOWN, RACING) or not s.get("in_race"):
            raise ProtocolError("bad_state", "there is no race of yours to resign")
        if self.status(seat) != "racing":
            raise ProtocolError("bad_state", f"you are already {self.status(seat)}")
        s["status"] = status
        return [self.progress_event(seat, now)]

    def rematch(self, now: int) -> list[dict[str, Any]]:
        if self.state != FINISHED:
            raise ProtocolError("bad_state", "a rematch follows a finished race")
        d = self.doc
        d["seats"] = [
            s if s and not s.get("left") and not s.get("kicked") else None for s in d["seats"]
        ]
        for s in self.seats():
            s.update(ready=False, status="waiting", in_race=False)
        d.update(
            state=LOBBY,
            round=d["round"] + 1,
            seed=None,
            salt=None,
            commitment=None,
            starts_at=None,
            ends_at=None,
            finished_at=None,
            results=None,
        )
        self.races = {}
        event = {"kind": "rematch", "at": now, "options": public_options(self.options)}
        series = self.series_view()
        if series is not None:
            event["series"] = series
        return [event]

    # --- race clock ---------------------------------------------------------------------

    def tick(self, now: int) -> list[dict[str, Any]]:
        """Everything the clock alone decides: the start, the time limit, the end of the race."""
        events = self.begin(now)
        if self.state == RACING:
            ends = self.doc["ends_at"]
            if ends is not None and now >= ends:
                for seat in self.racing_seats():
                    self.seat(seat)["status"] = "timeout"
                    events.append(self.progress_event(seat, now))
            events += self.finish_if_done(now)
        return events

    def finish_if_done(self, now: int) -> list[dict[str, Any]]:
        if self.state != RACING or self.racing_seats():
            return []
        d = self.doc
        d["state"], d["finished_at"] = FINISHED, now
        d["results"] = self.results()
        if self.series_active() is not None:
            self.series_result(d["results"]["ranking"], now)
            d["results"]["series"] = self.series_view()
        events = [{"kind": "results", "at": now, **d["results"]}]
        if d.get("series") and d["series"]["ended_at"] == now and d["series"]["rounds"]:
            events.append({"kind": "series_end", "at": now, "series": d["results"]["series"]})
        return events

    def ranking(self) -> list[dict[str, Any]]:
        """Winners by finish time; the rest by progress, then by when they reached it; then
        seat (`records.rank`: a verifier ranks a record with the same rule)."""
        start = self.doc["starts_at"] or 0
        rows = []
        for s in self.seats():
            if not s.get("in_race"):
                continue
            seat = s["seat"]
            race = self.races[seat]
            reached = race.reached_at()
            rows.append(
                {
                    "seat": seat,
                    "name": s["name"],
                    "player": s.get("player"),
                    "status": self.status(seat),
                    "progress": race.game.progress(),
                    "moves": race.moves,
                    "time": None if reached is None else reached - start,
                }
            )
        return rank(rows)

    def results(self) -> dict[str, Any]:
        """The race's results. A scored daily attempt's leave the seed and salt out until its
        day is over (`reveal_at`): a later racer of the day would read every card off them.
        Practice plays a past day's deal, revealed already."""
        d = self.doc
        daily = d.get("daily")
        hidden = {"reveal_at": day_end_ms(daily["date"]), "daily": daily["id"]} if daily else {}
        hide = daily is not None and not daily.get("practice")  # practice: a past, revealed day
        return {
            "ranking": self.ranking(),
            "record": record_id(d["commitment"]),
            "seed": None if hide else d["seed"],
            "salt": None if hide else d["salt"],
            **hidden,
            "game": d["options"]["game"],
            "game_options": dict(d["options"]["game_options"]),
            "commitment": d["commitment"],
            "deal": d["options"].get("deal", "any"),
            "solution_moves": d.get("solution"),
            "moves": {str(seat): race.move_texts() for seat, race in sorted(self.races.items())},
        }

    # --- moves (they change only a seat's log) ------------------------------------------

    def check_can_move(self, seat: int, now: int) -> SeatRace:
        s = self.seat(seat)
        if self.state == COUNTDOWN and now < (self.doc["starts_at"] or 0):
            raise ProtocolError("bad_state", "the race has not started yet")
        if self.state != RACING:
            raise ProtocolError("bad_state", f"no race is on (the room is in {self.state})")
        if not s.get("in_race"):
            raise ProtocolError("bad_state", "you are not in this race")
        ends = self.doc["ends_at"]
        if ends is not None and now >= ends:
            raise ProtocolError("bad_state", "the time is up")
        st = self.status(seat)
        if st != "racing":
            raise ProtocolError("bad_state", f"you are {st}")
        return self.races[seat]

    def play(self, seat: int, text: str, n: int | None, now: int) -> MovePlan:
        """Check and apply a move to the cached game; the caller stores it, or calls `rollback`."""
        race = self.check_can_move(seat, now)
        if n is not None and n != race.moves + 1:
            raise ProtocolError(
                "out_of_sync",
                f"that would be move {race.moves + 1}, not {n}",
                expected=race.moves + 1,
            )
        expected_len, rev = race.moves, race.rev
        try:
            eff = race.play(text, now)
        except IllegalMove as exc:
            raise ProtocolError("illegal_move", str(exc) or f"illegal move {text!r}") from None
        return MovePlan(
            seat,
            race.last_entry(),
            expected_len,
            rev,
            tuple(eff.revealed),
            self.progress_event(seat, now),
        )

    def undo(self, seat: int, n: int | None, now: int) -> MovePlan:
        race = self.check_can_move(seat, now)
        if self.options["undo"] != "safe":
            raise ProtocolError("undo_refused", "undo is off in this room")
        if not race.moves:
            raise ProtocolError("undo_refused", "there is no move to take back")
        if n is not None and n != race.moves:
            raise ProtocolError(
                "out_of_sync", f"your last move is {race.moves}, not {n}", expected=race.moves
            )
        if race.revealed[-1]:
            raise ProtocolError(
                "undo_refused", "that move revealed a card; it cannot be taken back"
            )
        expected_len, rev = race.moves, race.rev
        entry = race.pop()
        return MovePlan(
            seat, entry, expected_len, rev, (), self.progress_event(seat, now), undone=True
        )

    def rollback(self, plan: MovePlan) -> None:
        """The store refused the plan (someone else moved first): put the cached game back."""
        race = self.races[plan.seat]
        if plan.undone:
            race.play(plan.entry.move, plan.entry.at)
        else:
            race.pop()


def check_game_options(opts: dict[str, Any]) -> None:
    """The engine is the judge of rule options; fill in its defaults so everyone sees them."""
    try:
        g = new_game(opts["game"], seed=0, options=opts["game_options"])
    except BadOptions as exc:
        raise ProtocolError("bad_options", f"game options: {exc}") from None
    opts["game_options"] = dict(g.options)


def check_solo_hints(opts: dict[str, Any], players: int) -> None:
    """Hints are practice: never on while two or more players sit (and so might race)."""
    if opts.get("hints") and players > 1:
        raise ProtocolError(
            "bad_options", "hints are for solo practice: turn them off to race two or more"
        )


def check_series_change(
    series: dict[str, Any] | None, old: dict[str, Any] | None, new: dict[str, Any] | None
) -> None:
    """Under way, a series keeps its scoring (the points already given would mean something
    else); its number of rounds may grow, or shrink to no fewer than those played."""
    if series is None or series.get("ended_at") is not None or old == new:
        return
    if new is None:
        raise ProtocolError("bad_options", "a series is under way: end it first (end_series)")
    if new["scoring"] != series["option"]["scoring"] or new["points"] != series["option"]["points"]:
        raise ProtocolError("bad_options", "a series under way keeps its scoring")
    if new["rounds"] and new["rounds"] <= len(series["rounds"]):
        raise ProtocolError(
            "bad_options", f"the series has played {len(series['rounds'])} rounds already"
        )
    series["option"] = dict(new)


def check_rated_seats(opts: dict[str, Any], seats: list[dict[str, Any]]) -> None:
    """A room turned rated must already have a player key behind every seat (as a join would)."""
    if not opts.get("rated"):
        return
    for s in seats:
        if s.get("player") is None:
            raise ProtocolError(
                "player_key_required",
                f"seat {s['seat']} has no player key: a rated room seats only keyed players",
            )


def public_options(opts: dict[str, Any]) -> dict[str, Any]:
    """Room options as every viewer may see them: a text seed would give the deal away."""
    out = {k: v for k, v in opts.items() if k != "seed"}
    out["text_seed"] = bool(opts.get("seed"))
    return out
