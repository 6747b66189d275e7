"""`solrace bot`: bots that join a room, ready up and race at a set pace.

`run_bot` is the library coroutine (the load benchmark and the browser tests
start bots in-process with it); the command runs `--count` of them at once.
The bot only ever sees its own view; its choices come from
`strategy.choose_move`. It resigns when the strategy has nothing useful left
(so a race never waits forever on a stuck bot), and it readies again after a
rematch until `races` races are done or `stop` is set.

Two bots on one deal choose the same moves (the strategy is deterministic), so
without a tie-break they moved in lockstep and tied every race. Each bot has
its own random generator (`--seed` makes it reproducible) that varies each
pause between moves around `--pace`: bots of equal skill then finish at
different times, and the ranking tells them apart.

What the server calls normal does not stop a bot: `busy` and `rate_limited` are
retried by the client (and, still refused, by the bot after a pause), a request
cut off by a dropped socket is sent again once the client has reconnected and
resumed (a move carries its `n`, so a retry never plays it twice), and a server
restart is a pause in the race, not its end.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, cast

from . import events as ev
from .connection import Client, ConnectionLost, ErrorReply
from .moves import Board
from .options import parse_option, room_options
from .player_key import load_or_create, new_key
from .retry import RETRYABLE, backoff
from .strategy import choose_move
from .urls import DEFAULT_SERVER, parse_target, share_link, watch_link

log = logging.getLogger(__name__)

RACING = "racing"
#: each pause is the pace times a factor drawn from this range (the bots' tie-break)
PACE_JITTER = (0.75, 1.25)
#: races a bot plays before it leaves, unless told otherwise (it used to stay for ever)
DEFAULT_RACES = 1


@dataclass
class BotResult:
    """What a bot did, for tests and benchmarks."""

    room: str | None = None
    seat: int | None = None
    races: int = 0
    moves: int = 0
    statuses: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    move_latencies: list[float] = field(default_factory=list)


#: tries of a lobby request (ready, start) cut off by a dropped socket or refused as busy
STEADY_TRIES = 8


async def _steady(call: Callable[[], Any]) -> Any:
    """`call()` again while it fails for a passing reason: the socket dropped (the client
    reconnects and resumes; the next try waits for that) or the server stayed busy."""
    for attempt in range(STEADY_TRIES):
        try:
            return await call()
        except ConnectionLost:
            if attempt == STEADY_TRIES - 1:
                raise
        except ErrorReply as exc:
            if exc.code not in RETRYABLE or attempt == STEADY_TRIES - 1:
                raise
        await asyncio.sleep(backoff(attempt))
    raise AssertionError("unreachable")


async def _wait(client: Client, predicate: Any, stop: asyncio.Event, tick: float = 0.25) -> bool:
    """Consume pushes until `predicate()` holds; False when stopped first."""
    while not predicate():
        if stop.is_set():
            return False
        try:
            await client.next_event(timeout=tick)
        except TimeoutError:
            continue
    return True


def _my_status(client: Client) -> str | None:
    seat = client.room.seat
    view = client.room.view
    if view is not None and (view.get("won") or view.get("dead")):
        return "won" if view.get("won") else "dead"
    p = client.room.players.get(seat) if seat is not None else None
    return p.get("status") if p else None


async def _ensure_view(client: Client) -> None:
    """The start event carries no board; the client fetches it: wait for it."""
    if client.room.view is None:
        await client.wait_board()


def pause(pace: float, rng: random.Random | None) -> float:
    """Seconds to wait before the next move: `pace`, varied by the bot's own generator."""
    return pace * rng.uniform(*PACE_JITTER) if rng is not None and pace > 0 else pace


async def play_race(
    client: Client,
    pace: float,
    stop: asyncio.Event,
    result: BotResult,
    rng: random.Random | None = None,
    max_moves: int = 0,
) -> str:
    """Play moves until this seat stops racing; returns its final status. With `max_moves`,
    resign after that many moves of this race (a benchmark's short races)."""
    history: list[str] = []
    seen: set[tuple[Any, ...]] = set()
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        if client.room.state != RACING:
            if client.room.state == "finished":
                break
            await _wait(client, lambda: client.room.state in (RACING, "finished"), stop)
            continue
        await _ensure_view(client)
        view = client.room.view
        status = _my_status(client)
        if view is None or status not in (RACING, "waiting", None):
            break
        seen.add(Board.from_view(view).key())
        move = choose_move(view, history, seen, rng=rng)
        if pace > 0:
            try:
                await asyncio.wait_for(stop.wait(), pause(pace, rng))
                break
            except TimeoutError:
                pass
        try:
            if move is None or (max_moves and len(history) >= max_moves):
                await client.resign()
                return "resigned"
            t0 = loop.time()
            ack = await client.move(move, n=int(view.get("moves", 0)) + 1)
            result.move_latencies.append(loop.time() - t0)
            history.append(move)
            result.moves += 1
            if ack.status and ack.status != RACING:
                return ack.status
        except ErrorReply as exc:
            result.errors.append(exc.code)
            if exc.code in ("illegal_move", "out_of_sync"):
                await _steady(client.resume)  # our view is stale: take the server's
            elif exc.code == "bad_state":
                await asyncio.sleep(0.05)
                if client.room.state == RACING and _my_status(client) != RACING:
                    break
            elif exc.code in RETRYABLE:  # still refused after the client's own retries
                await asyncio.sleep(backoff(3))
            else:
                raise
        except ConnectionLost:
            if client.ended:
                raise  # the client gave up reconnecting: nothing more will come
            # auto-resume is on: the retry waits for the resume and carries `n`
            await asyncio.sleep(0.05)
    return _my_status(client) or "unknown"


async def run_bot(
    url: str,
    room: str | None = None,
    name: str = "bot",
    pace: float = 0.5,
    stop_event: asyncio.Event | None = None,
    *,
    races: int | None = 1,
    create_options: dict[str, Any] | None = None,
    start_when: int | None = None,
    ready: bool = True,
    on_joined: Callable[[ev.Joined], None] | None = None,
    seed: int | str | None = None,
    player_key: str | None = None,
) -> BotResult:
    """Join `room` (or create one with `create_options`), ready up and race.

    Stops after `races` races (None: until `stop_event`). As host (created the
    room), it starts the race once `start_when` players are ready. `on_joined`
    hears the join reply (the room code of a room the bot created). `seed`
    seeds the bot's pauses (None: a fresh random one). Every hello says `bot: true`
    (a bot must say so); `player_key` gives the bot an identity of its own, so it can sit
    in rated rooms and keep a rating (shown as a bot's).
    """
    stop = stop_event or asyncio.Event()
    rng = random.Random(seed)
    result = BotResult()
    client = Client(
        url,
        auto_resume=True,
        throttle=True,
        client_name="solrace-bot/0.1",
        room=room,
        player_key=player_key,
        bot=True,
        connect_tries=16,
    )
    await client.connect()
    try:
        if room is None:
            joined: ev.Joined = await client.create(name, create_options or {})
        else:
            joined = await client.join(room, name)
        result.room, result.seat = joined.room, joined.seat
        if on_joined is not None:
            on_joined(joined)
        while not stop.is_set() and (races is None or result.races < races):
            if ready:
                await _steady(lambda: client.ready(True))
            if client.host_token and start_when:
                await _wait(
                    client,
                    lambda: (
                        sum(bool(p.get("ready")) for p in client.room.players.values())
                        >= start_when
                    ),
                    stop,
                )
                if stop.is_set():
                    break
                await _steady(client.start)
            if not await _wait(client, lambda: client.room.state in (RACING, "finished"), stop):
                break
            status = await play_race(client, pace, stop, result, rng)
            result.statuses.append(status)
            result.races += 1
            if races is not None and result.races >= races:
                break
            await _wait(client, lambda: client.room.state == "lobby", stop)
    finally:
        await client.close()
    return result


async def run_quick_bot(
    url: str,
    game: str,
    name: str = "bot",
    pace: float = 0.5,
    stop_event: asyncio.Event | None = None,
    *,
    races: int | None = 1,
    seed: int | str | None = None,
    player_key: str | None = None,
    on_matched: Callable[[ev.Matched], None] | None = None,
) -> BotResult:
    """A marked bot in `game`'s quick-match queue (PROTOCOL.md, Quick match): the server seats
    it only beside a player who has waited alone for its `--quick-bots` seconds. Each match: take
    the seat over a connection naming the room, race, and queue again; `races` matches (None:
    until `stop_event`). Rated unless it has no `player_key` (then casual)."""
    stop = stop_event or asyncio.Event()
    rng = random.Random(seed)
    result = BotResult()
    while not stop.is_set() and (races is None or result.races < races):
        queue = Client(url, client_name="solrace-bot/0.1", player_key=player_key, bot=True)
        await queue.connect()
        try:
            await queue.quick(game, name, rated=player_key is not None)
            matched_task = asyncio.ensure_future(queue.wait_matched())
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait({matched_task, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not matched_task.done():
                matched_task.cancel()
                break
            matched = matched_task.result()
        finally:
            await queue.close()
        if on_matched is not None:
            on_matched(matched)
        client = Client(
            url,
            auto_resume=True,
            throttle=True,
            client_name="solrace-bot/0.1",
            room=matched.room,
            player_key=player_key,
            bot=True,
            connect_tries=16,
        )
        await client.connect()
        try:
            await _race_match(client, matched, pace, stop, result, rng)
        finally:
            await client.close()
    return result


async def run_arena_bot(
    url: str,
    arena: str,
    name: str = "bot",
    pace: float = 0.5,
    stop_event: asyncio.Event | None = None,
    *,
    races: int | None = None,
    seed: int | str | None = None,
    player_key: str | None = None,
    on_paired: Callable[[ev.ArenaPaired], None] | None = None,
    on_wait: Callable[[float], None] | None = None,
    race_moves: int = 0,
) -> BotResult:
    """A marked bot as an arena's member (PROTOCOL.md, Arena): join, then for each
    `arena_paired` take the seat (on this connection when its process serves the room, else
    over a new one naming the room, which joins the arena again as the member's presence),
    race, and wait to be paired again; until `stop_event` (or `races` races). An arena's
    members need a player key: one is made when none is given. `on_wait` is told each wait
    for a pairing (s): from the join, or from the race's results, to `arena_paired`. With
    `race_moves`, each race is resigned after that many moves (a benchmark's short races)."""
    stop = stop_event or asyncio.Event()
    rng = random.Random(seed)
    result = BotResult()
    key = player_key or new_key()

    def connect_to(room: str | None) -> Client:
        return Client(
            url,
            throttle=True,
            client_name="solrace-bot/0.1",
            room=room,
            player_key=key,
            bot=True,
            connect_tries=16,
        )

    client = connect_to(None)
    await client.connect()
    try:
        await client.arena_join(arena, name)
        free = time.monotonic()
        while not stop.is_set() and (races is None or result.races < races):
            paired_task = asyncio.ensure_future(
                client.wait_for(lambda x: isinstance(x, ev.ArenaPaired), timeout=None)
            )
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait({paired_task, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not paired_task.done():
                paired_task.cancel()
                break
            paired = cast(ev.ArenaPaired, paired_task.result())
            if on_wait is not None:
                on_wait(time.monotonic() - free)
            if on_paired is not None:
                on_paired(paired)
            if not paired.here:
                await client.close()
                client = connect_to(paired.room)
                await client.connect()
                await client.arena_join(arena, name)
            await _race_match(client, paired, pace, stop, result, rng, race_moves)
            # free again once the race's results are in (the next pairing follows them)
            await client.wait_until(partial(_finished, client.room), timeout=None)
            free = time.monotonic()
    finally:
        await client.close()
    return result


def _finished(room: Any) -> bool:
    return bool(room.state == "finished")


async def _race_match(
    client: Client,
    matched: ev.Matched | ev.ArenaPaired,
    pace: float,
    stop: asyncio.Event,
    result: BotResult,
    rng: random.Random,
    max_moves: int = 0,
) -> None:
    await client.resume(matched.room, matched.token)
    result.room, result.seat = matched.room, matched.seat
    if await _wait(client, lambda: client.room.state in (RACING, "finished"), stop):
        result.statuses.append(await play_race(client, pace, stop, result, rng, max_moves))
        result.races += 1


# ---- command ----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="?",
        default="",
        help="room link, ws:// URL or room code (omit with --create)",
    )
    parser.add_argument(
        "--create", metavar="GAME", help="the first bot creates a room for GAME and hosts it"
    )
    parser.add_argument(
        "--arena",
        metavar="ID",
        help="join the arena ID as marked bots (one member each, a player key each: --keys keeps "
        "them); each is paired, races and is paired again until stopped (or --races)",
    )
    parser.add_argument(
        "--quick",
        metavar="GAME",
        help="wait in GAME's quick-match queue as fill-ins: the server seats bots beside a "
        "player who waited alone (solrace serve --quick-bots SECONDS); rated with --keys",
    )
    parser.add_argument(
        "--start-when",
        type=int,
        default=0,
        help="with --create: start once this many players are ready (default --count)",
    )
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        type=parse_option,
        metavar="KEY=VALUE",
        help="room or game option for --create, e.g. -o countdown=1",
    )
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"server for a bare room code (default {DEFAULT_SERVER})",
    )
    parser.add_argument("--name", default="bot", help="player name (numbered when --count > 1)")
    parser.add_argument("--pace", type=float, default=1.0, help="seconds between moves")
    parser.add_argument("--count", type=int, default=1, help="how many bots to run")
    parser.add_argument(
        "--races",
        type=int,
        default=DEFAULT_RACES,
        help=f"leave after this many races (default {DEFAULT_RACES}; 0: stay until interrupted)",
    )
    parser.add_argument(
        "--seed",
        help="seed of the bots' random tie-break (their pauses vary around --pace); "
        "bot N uses SEED:N, so a run can be repeated",
    )
    parser.add_argument(
        "--keys",
        metavar="DIR",
        type=Path,
        help="give each bot a player key kept in DIR (bot N's in DIR/bot-N, made once), so "
        "the bots can sit in rated rooms and keep ratings of their own",
    )


def key_of(folder: Path | None, index: int) -> str | None:
    """Bot `index`'s player key under `--keys` (None: anonymous)."""
    return None if folder is None else load_or_create(folder / f"bot-{index}")


def seed_of(seed: str | None, index: int) -> str | None:
    """Bot `index`'s own seed under `--seed` (distinct per bot, repeatable per run)."""
    return None if seed is None else f"{seed}:{index}"


async def _main(args: argparse.Namespace) -> int:
    target = parse_target(args.target, args.server)
    if not target.room and not args.create and not args.quick and not args.arena:
        print(
            "solrace bot: name a room (a link or a code), or use --create GAME, --quick GAME "
            "or --arena ID"
        )
        return 2
    stop = asyncio.Event()
    names = [args.name] if args.count == 1 else [f"{args.name}-{i + 1}" for i in range(args.count)]
    races = args.races or None
    if args.arena or args.quick:
        return await _fill_ins(args, target.url, names, stop, races)
    room = target.room
    tasks = []
    if args.create:
        created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def announce(joined: ev.Joined) -> None:
            print(f"room {joined.room}: {share_link(target.url, joined.room)}", flush=True)
            print(f"watch it: {watch_link(target.url, joined.room)}", flush=True)
            created.set_result(joined.room)

        options = room_options(args.create, args.option)
        tasks.append(
            asyncio.create_task(
                run_bot(
                    target.url,
                    None,
                    names[0],
                    args.pace,
                    stop,
                    races=races,
                    create_options=options,
                    start_when=args.start_when or args.count,
                    on_joined=announce,
                    seed=seed_of(args.seed, 0),
                    player_key=key_of(args.keys, 0),
                )
            )
        )
        room = await asyncio.wait_for(asyncio.shield(created), 30)
        names_to_join = names[1:]
    else:
        names_to_join = names
    first = len(names) - len(names_to_join)
    tasks += [
        asyncio.create_task(
            run_bot(
                target.url,
                room,
                n,
                args.pace,
                stop,
                races=races,
                seed=seed_of(args.seed, i),
                player_key=key_of(args.keys, i),
            )
        )
        for i, n in enumerate(names_to_join, start=first)
    ]
    results = await asyncio.gather(*tasks, return_exceptions=True)
    return _report(names, results)


async def _fill_ins(
    args: argparse.Namespace, url: str, names: list[str], stop: asyncio.Event, races: int | None
) -> int:
    """`--arena ID` or `--quick GAME`: the bots wait to be seated by the server (an arena's
    pairing, the quick-match queue) rather than in a room of their own; each says where."""

    def paired(p: ev.ArenaPaired) -> None:
        print(f"paired in room {p.room}: {', '.join(p.players)}", flush=True)

    def matched(m: ev.Matched) -> None:
        print(f"matched in room {m.room}: {', '.join(m.players)}", flush=True)

    def one(i: int, name: str) -> Awaitable[BotResult]:
        seed, key = seed_of(args.seed, i), key_of(args.keys, i)
        if args.arena:
            return run_arena_bot(
                url, args.arena, name, args.pace, stop, races=races, seed=seed, player_key=key,
                on_paired=paired,
            )  # fmt: skip
        return run_quick_bot(
            url, args.quick, name, args.pace, stop, races=races, seed=seed, player_key=key,
            on_matched=matched,
        )  # fmt: skip

    results = await asyncio.gather(
        *(one(i, n) for i, n in enumerate(names)), return_exceptions=True
    )
    return _report(names, results)


def _report(names: list[str], results: list[Any]) -> int:
    code = 0
    for n, r in zip(names, results, strict=False):
        if isinstance(r, BaseException):
            print(f"{n}: error: {r}")
            code = 1
        else:
            print(f"{n}: seat {r.seat}, {r.races} race(s), {r.moves} moves, {r.statuses}")
    return code


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except KeyboardInterrupt:
        return 130
