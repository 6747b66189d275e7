"""A server's log tells its operator what rooms do (issue 12, bug 10): each room's creation and
each change of its state at INFO, with its code and game, and never a token. A private room's
code is its link's secret (issue 10, item 10): the log shows only its head."""

from __future__ import annotations

import asyncio
import re

from helpers.race import log_showing, start_race
from solrace.server.common.codes import shown


async def test_room_lifecycle_is_logged_at_info_without_secrets(race_server, wire) -> None:
    clients, tokens, code, host_token = await start_race(race_server.ws_url, wire)
    for c in clients:
        assert (await c.request({"type": "resign"}))["type"] == "ok"
    await clients[0].wait_for(lambda x: x["type"] == "event" and x["kind"] == "results")
    head = re.escape(shown(code))
    assert shown(code) != code  # a private room: its code is long
    log = await asyncio.to_thread(
        log_showing, race_server, f"room {shown(code)} (puttputt): racing -> finished"
    )
    assert re.search(rf"INFO .*room {head} created \(puttputt, private\)", log), log[-2000:]
    assert f"room {shown(code)} (puttputt): lobby -> racing" in log  # countdown 0: straight on
    assert f"room {shown(code)} (puttputt): racing -> finished" in log
    for secret in [*tokens, host_token, code]:
        assert secret not in log
