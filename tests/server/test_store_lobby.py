"""The lobby as a maintained summary (real Redis): rows written only when they change, paged in
code order, a late retry never undoing a newer row, expired rows dropped, and a failed write
retried in the background without failing what caused it: a race's final move still gets
its ack, and the room leaves the lobby once Redis takes the write again."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from helpers.race import until
from helpers.views import putt_move
from solrace.protocol.messages import acked_view
from solrace.server.common.metrics import METRICS
from solrace.server.race.service import RoomService
from solrace.server.store import lobby_rows as store_mod
from solrace.server.store.store import Store


@pytest.fixture
async def store(redis_url: str, key_prefix: str) -> AsyncIterator[Store]:
    s = Store.from_url(redis_url, key_prefix)
    yield s
    keys = [k async for k in s.redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await s.redis.delete(*keys)
    await s.close()


def row(code: str, players: int = 1) -> dict:
    return {"room": code, "game": "golf", "state": "lobby", "players": players, "max_players": 8}


async def test_rows_are_paged_in_code_order_with_live_spectators(store: Store) -> None:
    codes = [f"L{i:03d}" for i in range(7)]
    for code in reversed(codes):
        await store.set_lobby(code, 1, row(code))
    await store.presence("L003", "spectators", +2)
    page1, cursor = await store.lobby_page(limit=3)
    assert [r["room"] for r in page1] == codes[:3] and cursor == "L002"
    page2, cursor = await store.lobby_page(after=cursor, limit=3)
    page3, end = await store.lobby_page(after=cursor, limit=3)
    assert [r["room"] for r in page2 + page3] == codes[3:] and end is None
    assert page2[0] == {**row("L003"), "spectators": 2}
    assert all(r["spectators"] == 0 for r in page1 + page3)


async def test_an_older_version_never_overwrites_a_newer_one(store: Store) -> None:
    await store.set_lobby("AAAAA", 5, row("AAAAA", players=3))
    await store.set_lobby("AAAAA", 4, row("AAAAA", players=2))  # a late retry of version 4
    assert [r["players"] for r in (await store.lobby_page())[0]] == [3]
    await store.set_lobby("AAAAA", 6, None)  # unlisted (the race began)
    await store.set_lobby("AAAAA", 5, row("AAAAA", players=3))  # a late retry of the listing
    assert (await store.lobby_page())[0] == []
    await store.set_lobby("AAAAA", 7, row("AAAAA", players=1))  # a rematch lists it again
    assert [r["players"] for r in (await store.lobby_page())[0]] == [1]


async def test_an_unchanged_row_is_not_written(store: Store) -> None:
    await store.set_lobby("BBBBB", 1, row("BBBBB"))
    rows_key = store.lobby_keys[0]
    before = await store.redis.hget(rows_key, "BBBBB")
    await store.set_lobby("BBBBB", 2, row("BBBBB"), was=row("BBBBB"))  # e.g. a ready flag
    assert await store.redis.hget(rows_key, "BBBBB") == before
    await store.set_lobby("BBBBB", 3, row("BBBBB", players=2), was=row("BBBBB"))
    assert await store.redis.hget(rows_key, "BBBBB") != before


async def test_rows_of_expired_rooms_are_dropped(store: Store) -> None:
    await store.set_lobby("OLD01", 1, row("OLD01"))
    await store.set_lobby("NEW01", 1, row("NEW01"))
    rows_key = store.lobby_keys[0]
    raw = await store.redis.hget(rows_key, "OLD01")
    ver, _at, body = raw.split(b":", 2)
    stale = int(time.time() * 1000) - store_mod.LOBBY_KEEP_MS - 1000
    await store.redis.hset(rows_key, "OLD01", b"%s:%d:%s" % (ver, stale, body))
    assert [r["room"] for r in (await store.lobby_page())[0]] == ["NEW01"]
    assert await store.redis.hget(rows_key, "OLD01") is None


async def test_a_failed_lobby_write_is_retried_and_never_raises(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_mod, "LOBBY_RETRY_S", 0.02)
    rows_key = store.lobby_keys[0]
    await store.redis.set(rows_key, "not a hash")  # every lobby write now fails (WRONGTYPE)
    errors = METRICS.redis_errors.labels("lobby")._value.get()
    await store.set_lobby("CCCCC", 1, row("CCCCC"))  # does not raise
    assert METRICS.redis_errors.labels("lobby")._value.get() > errors
    assert store._lobby_pending
    await store.redis.delete(rows_key)  # Redis takes writes again
    await until(lambda: not store._lobby_pending, "the retry written")
    assert [r["room"] for r in (await store.lobby_page())[0]] == ["CCCCC"]


async def test_the_final_move_is_acked_while_the_lobby_cannot_be_written(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race's last move stores the seat's end, and the race ends (results, unlisted from
    the lobby) in a commit whose lobby write fails: the move still gets its ack, not `busy`,
    and the room leaves the lobby once the write goes through."""
    monkeypatch.setattr(store_mod, "LOBBY_RETRY_S", 0.02)
    svc = RoomService(store)
    svc.lobby_cache.ttl = 0  # every ask reads the store
    made = await svc.create("solo", {"game": "puttputt", "countdown": 0, "public": True}, True)
    code = made["room"]
    assert [r["room"] for r in (await svc.lobby())[0]] == [code]
    await svc.start(code, made["host_token"])
    await svc.tick(code)
    await store.redis.set(store.lobby_keys[0], "not a hash")  # lobby writes fail from here on
    view = await svc.own_view(code, 0)
    status = "racing"
    while status == "racing":
        assert view is not None
        mv = putt_move(view)
        assert mv is not None
        ack = await svc.move(code, 0, mv, view["moves"] + 1)
        assert ack["type"] == "ack"
        view, status = acked_view(view, ack), ack["status"]  # the board after its change
    loaded = await store.load(code)
    assert loaded is not None and loaded.doc["state"] == "finished"
    assert store._lobby_pending  # the unlisting waits for Redis
    await store.redis.delete(store.lobby_keys[0])
    await until(lambda: not store._lobby_pending, "the unlisting written")
    assert (await svc.lobby())[0] == []
