"""Quick match's pairing rule, sans-I/O: who races whom, and when a group is sealed.

A `Ticket` is one player asking to race now (its rating in the game, when it asked, its
address's keyed hash); the `Pairing` holds the groups being formed and, at each `step(tickets,
now)` given every ticket still in the queue, says which groups are sealed (to become rooms).
Nothing here reads a clock, a socket or Redis: the queue (server/race/quick.py) feeds it.

The rule (PROTOCOL.md, Quick match):

* two tickets may race together when their ratings differ by at most the smaller of their
  two windows; a ticket's window is `base` rating points, widened by `widen` points per second
  it has waited (lichess widens its range the same way), up to `widest`;
* the oldest ticket not yet in a group is paired first, with the closest-rated ticket its
  window allows; the group then takes every other waiting ticket close enough to all its
  members, up to `max_players`;
* a group of two or more is sealed `gather` seconds after its oldest member asked, but no
  sooner than `gather_min` after it formed (the short countdown: more may join meanwhile; a
  player who waited alone has had its countdown already), at once when full; a member that left (a cancel) leaves the
  group, and a group left with one member breaks up (that member waits on);
* one address holds at most `per_address` seats of a group (0: any), as a room's seats;
* marked bots (a `hello` with `bot: true`, e.g. `solrace bot --quick GAME`) wait in the queue
  as fill-ins only: they are never paired with each other nor put in a group of players;
  with `bots_after` set, a player who has waited that long alone is sealed at once in a group
  with up to `bot_seats` of them (the closest rated first; ratings keep bots and players
  apart unless a room says `rated_bots`: docs/LEADERBOARDS.md).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["Group", "Pairing", "Rules", "Ticket", "compatible", "window"]


@dataclass(frozen=True)
class Ticket:
    """One player waiting: `rating` in the game (openskill's mu), `at` when it asked (s)."""

    id: str
    rating: float
    at: float
    addr: str = ""
    bot: bool = False


@dataclass(frozen=True)
class Rules:
    #: rating points either side a fresh ticket accepts, and how fast that widens (per second)
    base: float = 3.0
    widen: float = 1.0
    widest: float = math.inf
    #: seconds after its oldest member asked that a group of two or more is sealed (more may
    #: join until then), and the least it waits once formed
    gather: float = 1.0
    gather_min: float = 0.25
    min_players: int = 2
    max_players: int = 8
    #: seats one address may hold in a group (0: any number)
    per_address: int = 0
    #: seconds a player waits alone before it races marked bots (0: never), and how many
    bots_after: float = 0.0
    bot_seats: int = 3


@dataclass
class Group:
    """A group being formed: its members in the order they came, when it formed and when it
    is sealed (unless full first)."""

    id: str
    members: list[Ticket]
    formed: float
    closes: float

    def ids(self) -> list[str]:
        return [t.id for t in self.members]


def window(ticket: Ticket, now: float, rules: Rules) -> float:
    """The rating points either side that `ticket` accepts at `now`."""
    return min(rules.widest, rules.base + rules.widen * max(0.0, now - ticket.at))


def compatible(a: Ticket, b: Ticket, now: float, rules: Rules) -> bool:
    """Whether `a` and `b` may race together now: each within the other's window."""
    return abs(a.rating - b.rating) <= min(window(a, now, rules), window(b, now, rules))


def _room_for(group: list[Ticket], t: Ticket, rules: Rules) -> bool:
    if len(group) >= rules.max_players:
        return False
    if rules.per_address and t.addr:
        return sum(1 for m in group if m.addr == t.addr) < rules.per_address
    return True


@dataclass
class Pairing:
    """The groups being formed, between steps (the queue's matcher holds one)."""

    rules: Rules = field(default_factory=Rules)
    groups: dict[str, Group] = field(default_factory=dict)
    _next: int = 0

    def grouped(self) -> set[str]:
        return {t.id for g in self.groups.values() for t in g.members}

    def _new_id(self) -> str:
        self._next += 1
        return f"g{self._next}"

    def step(self, tickets: Iterable[Ticket], now: float) -> list[Group]:
        """Given every ticket in the queue now, form and grow groups; returns the groups sealed
        (removed from this pairing: the caller makes their rooms). A sealed group's members
        must leave the queue (the caller claims them) or they are paired again."""
        rules = self.rules
        present = {t.id: t for t in tickets}
        # members that left (cancelled, claimed elsewhere) leave their groups
        for gid in list(self.groups):
            g = self.groups[gid]
            g.members = [t for t in g.members if t.id in present]
            if len(g.members) < rules.min_players:
                del self.groups[gid]
        taken = self.grouped()
        free = _Free(t for t in present.values() if t.id not in taken and not t.bot)
        bots = _Free(t for t in present.values() if t.bot)
        # groups forming take the free tickets close enough to all their members
        for g in sorted(self.groups.values(), key=lambda g: g.formed):
            self._fill(g, free, now)
        # the oldest free ticket first: its closest match, then all who fit
        for t in sorted(free.tickets, key=lambda t: (t.at, t.id)):
            if t.id not in free:
                continue  # taken by a group made this step
            mate = self._closest(t, free, now)
            if mate is None:
                continue
            free.remove(t)
            free.remove(mate)
            waited = now - min(t.at, mate.at)
            closes = now + max(rules.gather_min, rules.gather - waited)
            g = Group(self._new_id(), [t, mate], now, closes)
            self.groups[g.id] = g
            self._fill(g, free, now)
        sealed = [
            g
            for g in self.groups.values()
            if g.closes <= now or len(g.members) >= rules.max_players
        ]
        if rules.bots_after > 0 and bots.tickets:
            for t in sorted(free.tickets, key=lambda t: (t.at, t.id)):
                if now - t.at < rules.bots_after or not bots.tickets:
                    continue
                members = [t]
                for b in bots.outwards(t.rating, math.inf):
                    if len(members) > rules.bot_seats or len(members) >= rules.max_players:
                        break
                    if _room_for(members, b, rules):
                        members.append(b)
                if len(members) > 1:
                    for b in members[1:]:
                        bots.remove(b)
                    sealed.append(Group(self._new_id(), members, now, now))
        for g in sealed:
            self.groups.pop(g.id, None)
        return sealed

    def _closest(self, t: Ticket, free: _Free, now: float) -> Ticket | None:
        """The free ticket closest in rating to `t` that may race it (the older on a tie)."""
        best: Ticket | None = None
        for c in free.outwards(t.rating, window(t, now, self.rules)):
            if c.id == t.id:
                continue
            if best is not None and abs(c.rating - t.rating) > abs(best.rating - t.rating):
                break
            closer = best is None or (abs(c.rating - t.rating), c.at) < (
                abs(best.rating - t.rating),
                best.at,
            )
            if closer and compatible(t, c, now, self.rules) and _room_for([t], c, self.rules):
                best = c
        return best

    def _fill(self, g: Group, free: _Free, now: float) -> None:
        """Add free tickets close enough to every member of `g`, nearest the group's mean
        rating first, until it is full."""
        rules = self.rules
        if len(g.members) >= rules.max_players or not free.tickets:
            return
        mean = sum(m.rating for m in g.members) / len(g.members)
        # a candidate is within every member's window: no further from the mean than this
        reach = max(abs(m.rating - mean) + window(m, now, rules) for m in g.members)
        chosen: list[Ticket] = []
        for c in free.outwards(mean, reach):
            if len(g.members) >= rules.max_players:
                break
            if all(compatible(c, m, now, rules) for m in g.members) and _room_for(
                g.members, c, rules
            ):
                g.members.append(c)
                chosen.append(c)
        for c in chosen:
            free.remove(c)


class _Free:
    """The tickets not in a group, sorted by rating (then id) for range walks."""

    def __init__(self, tickets: Iterable[Ticket]) -> None:
        self.tickets = sorted(tickets, key=lambda t: (t.rating, t.id))
        self.keys = [(t.rating, t.id) for t in self.tickets]
        self.ids = {t.id for t in self.tickets}

    def __contains__(self, tid: str) -> bool:
        return tid in self.ids

    def remove(self, t: Ticket) -> None:
        i = bisect.bisect_left(self.keys, (t.rating, t.id))
        assert self.tickets[i].id == t.id
        del self.tickets[i], self.keys[i]
        self.ids.discard(t.id)

    def outwards(self, centre: float, reach: float) -> Iterator[Ticket]:
        """The tickets rated within `reach` of `centre`, nearest first (a snapshot: the caller
        may not remove tickets while it walks)."""
        lo = bisect.bisect_left(self.keys, (centre - reach,))
        hi = bisect.bisect_left(self.keys, (math.nextafter(centre + reach, math.inf),))
        right = bisect.bisect_left(self.keys, (centre,), lo, hi)
        left = right - 1
        tickets = self.tickets
        while left >= lo or right < hi:
            if right >= hi or (
                left >= lo and centre - tickets[left].rating <= tickets[right].rating - centre
            ):
                yield tickets[left]
                left -= 1
            else:
                yield tickets[right]
                right += 1
