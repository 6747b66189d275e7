"""The py-spy summary the load benchmark prints: shares computed from collapsed stacks."""

from __future__ import annotations

from solrace.bench.load_profile import components, short, summarize

RAW = "\n".join(
    [
        "run (solrace/server/main.py:80);_move (solrace/server/service.py:260);is_dead (solrace/engine/klondike.py:300) 30",
        "run (solrace/server/main.py:80);append (solrace/server/store.py:239);execute_command (redis/asyncio/client.py:700) 50",
        "run (solrace/server/main.py:80);send (websockets/asyncio/connection.py:400);write (asyncio/selector_events.py:1000) 20",
    ]
)


def test_short_names_keep_folder_and_function() -> None:
    assert short("is_dead (solrace/engine/klondike.py:300)") == "engine/klondike.py:is_dead"


def test_summarize_self_and_inclusive_shares() -> None:
    total, top_self, top_incl = summarize(RAW)
    assert total == 100
    assert dict(top_self)["asyncio/client.py:execute_command"] == 0.5
    assert dict(top_incl)["server/main.py:run"] == 1.0


def test_components_attribute_each_sample_once() -> None:
    parts = dict(
        components(RAW.replace("write (asyncio", "_SelectorSocketTransport.write (asyncio"))
    )
    assert parts["redis-py client"] == 0.5
    assert parts["engine (rules, views, dead check)"] == 0.3
    assert parts["socket write syscall (WebSocket)"] == 0.2
    assert abs(sum(parts.values()) - 1.0) < 1e-9
