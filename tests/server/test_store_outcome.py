"""`Store.outcome` against a real Redis: the fate of an append whose answer was lost is decided
once and for all (stored: found with its event number; not stored: it never will be)."""

from __future__ import annotations

import pytest
from solrace.server.store import Conflict, Store


@pytest.fixture
async def store(redis_url: str, key_prefix: str):
    s = Store.from_url(redis_url, key_prefix, finished_ttl=60, max_events=10)
    yield s
    keys = [k async for k in s.redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await s.redis.delete(*keys)
    await s.close()


DOC = {"code": "ABCDE", "seats": [{"seat": 0}, {"seat": 1}], "state": "racing"}


async def test_a_stored_append_is_found_with_its_event(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [{"kind": "x"}], seats=2)
    await store.append("ABCDE", 1, 0, 0, 0, "deal 1", {"kind": "p", "moves": 1})
    lost = await store.append("ABCDE", 1, 0, 1, 1, "t1-f1 2", {"kind": "p", "moves": 2})
    await store.append("ABCDE", 1, 1, 0, 0, "deal 3", {"kind": "p", "seat": 1})
    found = await store.outcome("ABCDE", 0, 1, 1, "t1-f1 2", {"kind": "p", "moves": 2})
    assert found is not None and found[:3] == lost[:3]  # its length, revision and event number
    again = await store.outcome("ABCDE", 0, 1, 1, "t1-f1 2", {"kind": "p", "moves": 2})
    assert again == found  # asking twice changes nothing
    # a later move of the seat does not make it look unstored
    await store.append("ABCDE", 1, 0, 2, 2, "t2-f1 4", {"kind": "p", "moves": 3})
    assert (await store.outcome("ABCDE", 0, 1, 1, "t1-f1 2", {"kind": "p", "moves": 2})) == found


async def test_an_append_not_yet_run_never_will_be(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    await store.append("ABCDE", 1, 0, 0, 0, "deal 1", {"kind": "p"})
    assert await store.outcome("ABCDE", 0, 1, 1, "t1-f1 2", {"kind": "p", "moves": 2}) is None
    with pytest.raises(Conflict) as exc:  # the lost append arrives late: refused
        await store.append("ABCDE", 1, 0, 1, 1, "t1-f1 2", {"kind": "p", "moves": 2})
    assert exc.value.what == "revision"
    assert await store.outcome("ABCDE", 0, 1, 1, "t1-f1 2", {"kind": "p", "moves": 2}) is None
    loaded = await store.load("ABCDE")
    assert [bytes(e) for e in loaded.logs[0]] == [b"deal 1"]


async def test_an_undo_is_found_or_fenced(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    await store.append("ABCDE", 1, 0, 0, 0, "deal 1", {"kind": "p"})
    await store.append("ABCDE", 1, 0, 1, 1, "t1-f1 2", {"kind": "p"})
    popped = await store.append("ABCDE", 1, 0, 2, 2, "t1-f1 2", {"kind": "u"}, pop=True)
    found = await store.outcome("ABCDE", 0, 2, 2, "t1-f1 2", {"kind": "u"}, pop=True)
    assert found is not None and found[:3] == popped[:3]
    assert await store.outcome("ABCDE", 0, 1, 3, "deal 1", {"kind": "u2"}, pop=True) is None
    with pytest.raises(Conflict):
        await store.append("ABCDE", 1, 0, 1, 3, "deal 1", {"kind": "u2"}, pop=True)
