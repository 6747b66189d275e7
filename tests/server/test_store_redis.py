"""The store against a real Redis, without the race rules: atomic appends (and the fate of one
whose answer was lost), event numbering, expiry of finished rooms, hash-tagged keys, presence
counts."""

from __future__ import annotations

import asyncio

import pytest
from solrace.server.store.store import ACTIVE_TTL_MS, Conflict, Store


@pytest.fixture
async def store(redis_url: str, key_prefix: str):
    s = Store.from_url(redis_url, key_prefix, finished_ttl=60, max_events=10)
    yield s
    keys = [k async for k in s.redis.scan_iter(match=f"{key_prefix}*")]
    if keys:
        await s.redis.delete(*keys)
    await s.close()


DOC = {"code": "ABCDE", "seats": [{"seat": 0}, {"seat": 1}], "state": "lobby"}


async def test_keys_share_the_room_hash_tag(store: Store, key_prefix: str) -> None:
    await store.commit("ABCDE", 0, DOC, [{"kind": "x"}], seats=2)
    await store.append("ABCDE", 1, 0, 0, 0, "deal 5", {"kind": "progress"})
    keys = sorted([k.decode() async for k in store.redis.scan_iter(match=f"{key_prefix}*")])
    assert keys and all(k.startswith(f"{key_prefix}room:{{ABCDE}}:") for k in keys)
    assert store.log_key("ABCDE", 0) in keys and store.key("ABCDE", "events") in keys


async def test_commit_is_a_compare_and_set(store: Store) -> None:
    ver, ns = await store.commit("ABCDE", 0, DOC, [{"kind": "a"}, {"kind": "b"}], seats=2)
    assert ver == 1 and ns == [1, 2]
    with pytest.raises(Conflict):
        await store.commit(
            "ABCDE", 0, DOC, [{"kind": "c"}], seats=2
        )  # create over an existing room
    ver, ns = await store.commit(
        "ABCDE", 1, {**DOC, "state": "countdown"}, [{"kind": "c"}], seats=2
    )
    assert (ver, ns) == (2, [3])
    loaded = await store.load("ABCDE")
    assert loaded.doc["state"] == "countdown" and loaded.ver == 2 and loaded.seq == 3


async def test_append_refuses_stale_length_revision_and_version(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    assert (await store.append("ABCDE", 1, 0, 0, 0, "deal 1", {"kind": "p"}))[:3] == (1, 1, 1)
    with pytest.raises(Conflict) as exc:  # a second writer that also saw length 0
        await store.append("ABCDE", 1, 0, 0, 0, "t1-f1 2", {"kind": "p"})
    assert exc.value.what == "length"
    with pytest.raises(Conflict) as exc:  # right length, stale revision
        await store.append("ABCDE", 1, 0, 1, 0, "t1-f1 2", {"kind": "p"})
    assert exc.value.what == "revision"
    with pytest.raises(Conflict) as exc:  # the document moved on (e.g. the race ended)
        await store.append("ABCDE", 0, 0, 1, 1, "t1-f1 2", {"kind": "p"})
    assert exc.value.what == "version"
    # pop only the entry the caller saw last
    with pytest.raises(Conflict) as exc:
        await store.append("ABCDE", 1, 0, 1, 1, "other 9", {"kind": "p"}, pop=True)
    assert exc.value.what == "entry"
    assert (await store.append("ABCDE", 1, 0, 1, 1, "deal 1", {"kind": "p"}, pop=True))[:3] == (
        0,
        2,
        2,
    )
    loaded = await store.load("ABCDE")
    assert loaded.logs == {0: [], 1: []} and loaded.revs == {0: 2}


async def test_concurrent_appends_store_each_move_once(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    results = await asyncio.gather(
        *(store.append("ABCDE", 1, 1, 0, 0, f"m{i} 1", {"kind": "p"}) for i in range(20)),
        return_exceptions=True,
    )
    wins = [r for r in results if not isinstance(r, Exception)]
    assert len(wins) == 1 and all(isinstance(r, Conflict) for r in results if r not in wins)
    assert len((await store.load("ABCDE")).logs[1]) == 1


async def test_events_are_numbered_and_capped(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [{"kind": "e", "i": i} for i in range(25)], seats=2)
    assert await store.last_event("ABCDE") == 25
    after = await store.events_after("ABCDE", 20)
    assert [n for n, _ in after] == [21, 22, 23, 24, 25] and after[0][1] == {"kind": "e", "i": 20}
    assert await store.events_after("ABCDE", 25) == []
    assert await store.events_after("ABCDE", 2) is None  # older than the kept history: resync


async def test_pubsub_carries_numbered_events(store: Store) -> None:
    ps = store.redis.pubsub(ignore_subscribe_messages=True)
    await ps.subscribe(store.channel("ABCDE"))
    await store.commit("ABCDE", 0, DOC, [{"kind": "hello"}], seats=2)
    msg = None
    for _ in range(50):
        msg = await ps.get_message(timeout=0.1)
        if msg:
            break
    assert msg is not None and msg["data"].startswith(
        b"e" + store.origin + b"1:"
    )  # tagged by its origin
    await ps.aclose()


async def test_finished_rooms_expire_and_others_get_a_day(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    await store.append("ABCDE", 1, 0, 0, 0, "deal 1", {"kind": "p"})
    ttl = await store.redis.pttl(store.key("ABCDE", "meta"))
    assert 0 < ttl <= ACTIVE_TTL_MS and ttl > 60_000
    # a seat's log and the revisions get the room's lifetime at the seat's first store
    for part in ("log:0", "revs"):
        assert 60_000 < await store.redis.pttl(store.key("ABCDE", part)) <= ACTIVE_TTL_MS
    await store.commit(
        "ABCDE",
        1,
        {**DOC, "state": "finished"},
        [{"kind": "results"}],
        seats=2,
        finished=True,
        revs={0: 1},
    )
    for part in ("meta", "events", "log:0", "revs"):
        ttl = await store.redis.pttl(store.key("ABCDE", part))
        assert 0 < ttl <= 60_000, part


async def test_finish_refused_when_a_log_moved(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    await store.append("ABCDE", 1, 0, 0, 0, "deal 1", {"kind": "p"})
    with pytest.raises(Conflict) as exc:
        await store.commit("ABCDE", 1, DOC, [], seats=2, finished=True, revs={0: 0})
    assert exc.value.what == "log"


async def test_rematch_clears_logs(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    await store.append("ABCDE", 1, 0, 0, 0, "deal 1", {"kind": "p"})
    await store.commit("ABCDE", 1, DOC, [{"kind": "rematch"}], seats=2, clear_logs=True)
    loaded = await store.load("ABCDE")
    assert loaded.logs == {0: [], 1: []} and loaded.revs == {}


async def test_presence_emits_only_when_crossing_zero(store: Store) -> None:
    await store.commit("ABCDE", 0, DOC, [], seats=2)
    on, off = {"kind": "connected", "connected": True}, {"kind": "connected", "connected": False}
    assert await store.presence("ABCDE", "0", 1, on, off) == (1, 1)
    assert await store.presence("ABCDE", "0", 1, on, off) == (2, 0)
    assert await store.presence("ABCDE", "0", -1, on, off) == (1, 0)
    assert await store.presence("ABCDE", "0", -1, on, off) == (0, 2)
    assert await store.presence("ABCDE", "spectators", 1) == (1, 0)
    assert await store.connections("ABCDE") == {"0": 0, "spectators": 1}
    assert [e for _, e in await store.events_after("ABCDE", 0)] == [on, off]


# --- an append whose answer was lost: `Store.outcome` decides its fate once and for all ----


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


async def test_unsubscribe_racing_a_subscribe_leaves_the_process_listed(store: Store) -> None:
    """The room's last connection leaves as a new one arrives: the process listens again, so it
    must stay listed in `here` (else other processes stop publishing the room's moves to it)."""
    here = store.key("ABCDE", "here")
    await store.subscribe("ABCDE")
    for _ in range(5):
        await asyncio.gather(store.unsubscribe("ABCDE"), store.subscribe("ABCDE"))
        assert await store.redis.sismember(here, store.origin)
    await store.unsubscribe("ABCDE")
    assert not await store.redis.sismember(here, store.origin)
