"""The sandbox's node agent under a loaded API server: a write failing in transport is tried
again, and a watch whose handler fails gives its connection back (a leaked stream per failure
once emptied the pool, and new nodes never became Ready)."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from extender.sandbox import agent as agent_module
from extender.sandbox.agent import NodeAgent
from extender.sandbox.api import TransportError


class _FlakyApi:
    """Lists one node, then streams one event; every Node status patch times out at first."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.patches = 0
        self.streams_open = 0
        self.streams_opened = 0

    async def get(self, url: str, params: dict[str, str] | None = None) -> Any:
        return {"items": [], "metadata": {"resourceVersion": "1"}}

    async def watch(self, url: str, version: str, **params: str,
                    ) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
        self.streams_open += 1
        self.streams_opened += 1
        try:
            yield "ADDED", {"metadata": {"name": "n1", "resourceVersion": "2"}, "status": {}}
            await asyncio.Event().wait()  # the stream stays open until closed
        finally:
            self.streams_open -= 1

    async def patch(self, url: str, body: Any, *, kind: str = "merge") -> Any:
        self.patches += 1
        if self.patches <= self.failures:
            raise TransportError("PATCH: timed out after 30s")
        return {}


async def _run_until(check: Any, coro: Any) -> None:
    task = asyncio.ensure_future(coro)
    try:
        for _ in range(500):
            if check():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("condition never held")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_module, "PAUSE", 0.0)


def test_a_write_failing_in_transport_is_tried_again() -> None:
    api = _FlakyApi(failures=2)
    agent = NodeAgent(api, [])  # type: ignore[arg-type]
    asyncio.run(_run_until(lambda: api.patches == 3, agent.watch_nodes()))
    assert api.patches == 3  # two timeouts, then the node is Ready


def test_a_failing_handler_gives_the_stream_back(caplog: pytest.LogCaptureFixture) -> None:
    api = _FlakyApi(failures=10_000)
    agent = NodeAgent(api, [])  # type: ignore[arg-type]

    async def handler_raises(kind: str, obj: dict[str, Any]) -> None:
        raise TransportError("GET: timed out after 30s")

    async def follow() -> None:
        await agent._follow("/api/v1/nodes", handler_raises, {})

    # Each failure relists after a second: wait for the second stream, then check the first
    # was closed.
    asyncio.run(_run_until(lambda: api.streams_opened >= 2, follow()))
    assert api.streams_open <= 1
    assert "watch /api/v1/nodes: TransportError: GET: timed out after 30s; relisting" in caplog.text


def test_every_attempt_failing_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    api = _FlakyApi(failures=10_000)
    agent = NodeAgent(api, [])  # type: ignore[arg-type]
    done = asyncio.run(agent._send("node n1 Ready", lambda: api.patch("/x", {})))
    assert done is False and api.patches == agent_module.ATTEMPTS
    assert (f"node n1 Ready: PATCH: timed out after 30s ({agent_module.ATTEMPTS} attempts)"
            in caplog.text)


def test_a_request_in_flight_is_not_cancelled_by_the_pods_deletion() -> None:
    """The agent finishes a pod's deletion (DELETE, grace 0) once its grace period is over;
    the DELETED event that follows must not cancel that request mid-flight."""
    started, release = asyncio.Event(), asyncio.Event()
    finished: list[str] = []

    class Api:
        async def delete(self, url: str, **kwargs: Any) -> None:
            started.set()
            await release.wait()
            finished.append(url)

    async def scenario() -> None:
        agent = NodeAgent(Api(), [])  # type: ignore[arg-type]
        pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u1",
                            "deletionTimestamp": "2020-01-01T00:00:00Z"},
               "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}
        await agent._pod_event("MODIFIED", pod)
        await asyncio.wait_for(started.wait(), 5)
        await agent._pod_event("DELETED", pod)
        release.set()
        for _ in range(100):
            if finished:
                break
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert finished == ["/api/v1/namespaces/ns/pods/p"]


def test_the_grace_period_counts_from_when_the_agent_sees_the_deletion(monkeypatch) -> None:
    """As a kubelet: `deletionGracePeriodSeconds` from the moment the deletion is seen, not
    the `deletionTimestamp` (whole seconds: victims deleted within a second would all go at
    once); without the field, the timestamp."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recorded_sleep(seconds: float, *args: Any, **kwargs: Any) -> None:
        waits.append(seconds)
        await real_sleep(0)

    deleted: list[str] = []

    class Api:
        async def delete(self, url: str, **kwargs: Any) -> None:
            deleted.append(url)

    later = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=30)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")

    async def scenario() -> None:
        agent = NodeAgent(Api(), [])  # type: ignore[arg-type]
        for name, extra in (("graced", {"deletionGracePeriodSeconds": 2}), ("stamped", {})):
            pod = {"metadata": {"name": name, "namespace": "ns", "uid": name,
                                "deletionTimestamp": later, **extra},
                   "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}
            await agent._pod_event("MODIFIED", pod)
        for _ in range(100):
            if len(deleted) == 2:
                break
            await real_sleep(0.01)

    monkeypatch.setattr(asyncio, "sleep", recorded_sleep)
    asyncio.run(scenario())
    assert sorted(deleted) == ["/api/v1/namespaces/ns/pods/graced",
                               "/api/v1/namespaces/ns/pods/stamped"]
    # The stamp has whole seconds (up to 1 s lost) and a loaded machine may take a while to
    # get here: most of the 30 s, not all of it.
    assert waits[0] == 2.0 and 25 < waits[1] <= 30
