"""`/metrics` on the server's own port, in the Prometheus text format, counting what happened:
a real `solrace serve` runs a race and the scrape is parsed with prometheus-client's parser."""

from __future__ import annotations

import asyncio
import urllib.request

from helpers.race import play, start_race
from helpers.timing import scaled
from helpers.views import ELSEWHERE
from prometheus_client.parser import text_string_to_metric_families


def scrape(url: str) -> tuple[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]]:
    """The content type and every sample, keyed by name and labels."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=scaled(10)) as resp:
        content_type = resp.headers["Content-Type"]
        body = resp.read().decode()
    samples = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return content_type, samples


async def test_metrics_count_a_race(race_server, wire) -> None:
    content_type, before = await asyncio.to_thread(scrape, race_server.url)
    assert content_type.startswith("text/plain") and "version=" in content_type
    assert before[("solrace_moves_acked_total", ())] == 0
    assert before[("solrace_connections", ())] == 0
    (a, b), _, code, _ = await start_race(race_server.ws_url, wire)
    spectator = await wire(race_server.ws_url, source=ELSEWHERE)
    await spectator.request({"type": "spectate", "room": code})
    acks = await play(a, 4) + await play(b, 3)
    _, after = await asyncio.to_thread(scrape, race_server.url)
    assert after[("solrace_moves_acked_total", ())] == len(acks)
    assert after[("solrace_ack_seconds_count", ())] == len(acks)
    assert after[("solrace_ack_seconds_bucket", (("le", "+Inf"),))] == len(acks)
    assert after[("solrace_connections", ())] == 3
    assert after[("solrace_rooms", (("state", "racing"),))] == 1
    assert after[("solrace_rooms_owned", ())] == 1
    # the moves went out to the room's other two connections (coalesced: fewer frames than
    # moves; the spectator's per tick)
    assert after[("solrace_fanout_frames_total", ())] >= 2
    assert ("solrace_redis_errors_total", (("where", "request"),)) not in after or (
        after[("solrace_redis_errors_total", (("where", "request"),))] == 0
    )
    assert after[("solrace_rooms_taken_over_total", ())] == 0
