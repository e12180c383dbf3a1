"""The outcome a request is counted and logged with (`extender_requests_total{outcome}`): an
answer of 5xx is never counted as `ok`."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from tests.contract.test_recording import bind_body, gang_policy, gang_snapshot, until
from tests.serving import serve_args, served


def bind_requests(outcome: str) -> float:
    return REGISTRY.get_sample_value(
        "extender_requests_total", {"verb": "bind", "outcome": outcome}) or 0.0


def test_a_request_cancelled_without_a_reply_counts_as_an_error(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A bind held at Coscheduling's Permit whose request is cancelled (what a replay does to
    # a request its recording ends before answering): it ends with no reply, logged 500.
    args = serve_args("--snapshot", str(gang_snapshot(tmp_path, 2)), "--policy",
                      str(gang_policy(tmp_path, 30)))
    before = {outcome: bind_requests(outcome) for outcome in ("ok", "error")}

    async def run() -> None:
        async with served(args) as (client, runtime):
            held = asyncio.ensure_future(client.post("/bind", content=bind_body("m0")))
            await until(lambda: runtime.binder.held_count() == 1)  # type: ignore[attr-defined]
            held.cancel()
            await asyncio.gather(held, return_exceptions=True)

    with caplog.at_level(logging.ERROR, logger="extender.request"):
        asyncio.run(run())
    assert {outcome: bind_requests(outcome) - before[outcome]
            for outcome in ("ok", "error")} == {"ok": 0.0, "error": 1.0}
    (line,) = [r for r in caplog.records if r.name == "extender.request"]
    assert line.getMessage() == "bind error"
    assert (line.fields["outcome"], line.fields["status"]) == ("error", 500)  # type: ignore[attr-defined]
