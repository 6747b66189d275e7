"""Issue 10 item 2: a text seed (a daily deal) must not let a racer compute the deal.

The deal's seed is HMAC-SHA256 of the server's secret and the text (server/store/secret.py): two
deployments with different secrets deal the same text differently, the processes of one
deployment deal it the same, the results' seed still verifies against the commitment, and the
board is never the one the public text alone gives."""

from __future__ import annotations

import hashlib
from typing import Any

from helpers.servers import serving
from solrace.bench.server_process import ServerProcess
from solrace.engine import new_game, replay, seed_from_text

TEXT = "2026-11-23"


async def race_text_seed(url: str, wire: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A solo Putt Putt race on the text seed: (the racer's first board, the results)."""
    ann = await wire(url)
    created = await ann.request(
        {
            "type": "create",
            "name": "ann",
            "options": {"game": "puttputt", "countdown": 0, "seed": TEXT},
        }
    )
    assert created["type"] == "joined", created
    await ann.request({"type": "start", "host_token": created["host_token"]})
    snap = await ann.wait_for(lambda x: x["type"] == "snapshot" and x["snapshot"]["you"]["view"])
    countdown = next(
        x for x in ann.received if x.get("type") == "event" and x.get("kind") == "countdown"
    )
    assert (await ann.request({"type": "resign"}))["type"] == "ok"
    results = await ann.wait_event("results")
    assert results["commitment"] == countdown["commitment"]
    return snap["snapshot"]["you"]["view"], results


def check_reveal(board: dict[str, Any], results: dict[str, Any]) -> None:
    """The revealed seed is the committed one and deals the board the racer got."""
    salt = bytes.fromhex(results["salt"])
    digest = hashlib.sha256(salt + results["seed"].to_bytes(8, "big")).hexdigest()
    assert digest == results["commitment"]
    assert replay("puttputt", results["seed"], {}, []).view() == board
    assert board != new_game("puttputt", seed=seed_from_text(TEXT)).view()


async def test_same_text_deals_differently_under_different_secrets(
    redis_url, key_prefix, wire
) -> None:
    with (
        ServerProcess(redis_url, key_prefix + "a:", env={"SOLRACE_SECRET": "first secret"}) as a,
        ServerProcess(redis_url, key_prefix + "b:", env={"SOLRACE_SECRET": "second secret"}) as b,
    ):
        board_a, results_a = await race_text_seed(a.ws_url, wire)
        board_b, results_b = await race_text_seed(b.ws_url, wire)
    check_reveal(board_a, results_a)
    check_reveal(board_b, results_b)
    assert results_a["seed"] != results_b["seed"] and board_a != board_b


async def test_processes_of_one_deployment_share_the_secret_kept_in_redis(
    redis_url, key_prefix, wire
) -> None:
    """No SOLRACE_SECRET: the first process makes the secret in Redis, the others read it, so
    a daily deal is the same deal on every process; another deployment's differs."""
    unset = {"SOLRACE_SECRET": ""}  # as a deployment that set none
    async with serving(redis_url, key_prefix, count=2, env=unset) as (one, two):
        board_one, results_one = await race_text_seed(one.ws_url, wire)
        board_two, results_two = await race_text_seed(two.ws_url, wire)
    async with serving(redis_url, key_prefix + "other:", env=unset) as (other,):
        board_other, results_other = await race_text_seed(other.ws_url, wire)
    for board, results in (
        (board_one, results_one),
        (board_two, results_two),
        (board_other, results_other),
    ):
        check_reveal(board, results)
    assert results_one["seed"] == results_two["seed"] and board_one == board_two
    assert results_other["seed"] != results_one["seed"]
