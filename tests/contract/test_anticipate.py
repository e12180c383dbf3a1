"""A pod's prioritize reply, prepared as soon as its filter is answered (`api.prioritize.
anticipate_prioritize`), is the reply the prioritize itself would give, and is served only while
kube-scheduler follows its filters with a prioritize of the nodes that passed.

Through the real app: `TestClient` for the replies, and the protocol uvicorn runs (fed bytes
as a socket would) for when the preparing runs: after the filter's reply is written."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY
from starlette.testclient import TestClient
from uvicorn.server import ServerState

from extender.api import filter as filter_verb
from extender.api import prioritize
from extender.api.app import create_app
from extender.api.offload import Offloader
from extender.api.protocol import ConnectionLimits, guarded_protocol
from extender.api.runtime import Runtime
from extender.engine.evaluate import DEFAULT_POLICY, cluster_from_objects
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.state.binder import SnapshotBinder
from tests.contract.rawhttp import RecordingTransport
from tests.contract.test_direct import eventually, post
from tests.contract.test_reply_reuse import (
    LEAST_ALLOCATED_ONLY,
    NAMES,
    cluster_objects,
    mutate,
    pending_pod,
    per_node,
    send,
)
from tests.contract.test_request_reading import compact
from tests.engine.upstream.builders import node, pod

#: Nodes the test's pending pods fit on (and a fifth they do not).
ROOMY = [node(f"r{i}", {}, allocatable={"cpu": "8", "memory": "8Gi", "pods": "110"})
         for i in range(4)] + [node("full", {}, allocatable={"cpu": "100m", "memory": "8Gi",
                                                             "pods": "110"})]
ROOMY_NAMES = [f"r{i}" for i in range(4)] + ["full"]
#: scheduler-plugins' NodeResourcesAllocatable (the smallest node first) beside LeastAllocated.
SMALLEST_FIRST = {
    "apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
    "plugins": {"filter": {"enabled": [{"name": "NodeResourcesFit"}]},
                "score": {"enabled": [{"name": "NodeResourcesAllocatable", "weight": 2},
                                      {"name": "NodeResourcesFit", "weight": 1}]}},
    "pluginConfig": [{"name": "NodeResourcesAllocatable", "args": {"mode": "Least"}}],
}


def distinct(serial: int) -> dict:
    """A pending pod whose spec no earlier one shares (a filter of it is never reused)."""
    return pod(f"d-{serial}", requests={"cpu": f"{100 + serial}m", "memory": "1Gi"})


def anticipated(outcome: str) -> float:
    return REGISTRY.get_sample_value("extender_prioritize_anticipated_total",
                                     {"outcome": outcome}) or 0.0


def runtime_for(objects: list[dict], policy: dict) -> Runtime:
    state = cluster_from_objects(objects)
    return Runtime(build_profile(parse_policy(policy)), state, SnapshotBinder(state, 30.0))


def settled(client: TestClient) -> None:
    """Every callback the app's loop had queued has run (a request queued behind them has
    been answered): what a filter left to prepare is prepared."""
    assert client.get("/healthz").status_code == 200


def cycle(client: TestClient, pending: dict, names: list[str]) -> tuple[list[str], object]:
    """Filter, then prioritize what passed, as kube-scheduler does with one extender."""
    passed = send(client, "filter", pending, names)["NodeNames"]  # type: ignore[index]
    settled(client)
    return passed, send(client, "prioritize", pending, passed)


def test_a_prioritize_is_answered_with_the_reply_prepared_after_its_filter(monkeypatch):
    runtime = runtime_for(ROOMY, LEAST_ALLOCATED_ONLY)
    with TestClient(create_app(runtime)) as client:
        # The first filter prepares nothing: no prioritize has yet named what a filter passed.
        prepared, used = anticipated("prepared"), anticipated("used")
        passed, first = cycle(client, pending_pod(0, 1), ROOMY_NAMES)
        assert passed == ROOMY_NAMES[:4]
        assert (anticipated("prepared"), anticipated("used")) == (prepared, used)

        # From then on each pod's reply is ready when its prioritize comes, and is that reply.
        for serial in range(2, 5):
            pending = distinct(serial)
            passed, reply = cycle(client, pending, ROOMY_NAMES)
            assert reply == per_node(client, runtime, monkeypatch, "prioritize", pending, passed)
        assert anticipated("prepared") == prepared + 3
        assert anticipated("used") == used + 3

        # A pod bound to a node that passed, between the filter and the prioritize: the
        # prepared reply no longer holds, and the prioritize scores afresh.
        pending = distinct(5)
        passed = send(client, "filter", pending, ROOMY_NAMES)["NodeNames"]  # type: ignore[index]
        settled(client)
        runtime.state.apply_pod(k8s.convert(pod("landed", node="r0", requests={"cpu": "7"}),
                                            k8s.Pod))
        reply = send(client, "prioritize", pending, passed)
        assert reply == per_node(client, runtime, monkeypatch, "prioritize", pending, passed)
        assert reply != first  # r0 is now the fullest: the binding changed the scores
        assert anticipated("prepared") == prepared + 4
        assert anticipated("used") == used + 3


def test_nothing_is_prepared_unless_kube_scheduler_prioritizes_what_passed():
    runtime = runtime_for(ROOMY, LEAST_ALLOCATED_ONLY)
    with TestClient(create_app(runtime)) as client:
        cycle(client, pending_pod(0, 1), ROOMY_NAMES)
        prepared = anticipated("prepared")
        # One node passing: kube-scheduler prioritizes nothing.
        assert send(client, "filter", distinct(2), ["r1", "full"])["NodeNames"] == ["r1"]  # type: ignore[index]
        settled(client)
        assert anticipated("prepared") == prepared
        # A prioritize naming other nodes than the filter passed (another extender filtered
        # after this one): later filters prepare nothing.
        send(client, "filter", distinct(3), ROOMY_NAMES)
        settled(client)
        assert anticipated("prepared") == prepared + 1
        send(client, "prioritize", distinct(3), ROOMY_NAMES[:2])
        send(client, "filter", distinct(4), ROOMY_NAMES)
        settled(client)
        assert anticipated("prepared") == prepared + 1
        # Following again: preparing again.
        send(client, "prioritize", distinct(4), ROOMY_NAMES[:4])
        send(client, "filter", distinct(5), ROOMY_NAMES)
        settled(client)
        assert anticipated("prepared") == prepared + 2

    # A filter worked on in the large-request worker prepares nothing (its bookkeeping is done
    # there, at once): the loop's next turn would come before its answer.
    runtime = runtime_for(ROOMY, LEAST_ALLOCATED_ONLY)
    runtime.offload = Offloader(threshold=1)
    with TestClient(create_app(runtime)) as client:
        for serial in range(3):
            _, reply = cycle(client, distinct(10 + serial), ROOMY_NAMES)
            assert [entry["Host"] for entry in reply] == ROOMY_NAMES[:4]  # type: ignore[union-attr]
    assert anticipated("prepared") == prepared + 2

    # `serve --no-anticipate`, and `--reply-cache 0` (a prepared reply is served by reuse).
    for setting in ("anticipate", "reply_reuse"):
        runtime = runtime_for(ROOMY, LEAST_ALLOCATED_ONLY)
        setattr(runtime, setting, 0)
        with TestClient(create_app(runtime)) as client:
            for serial in range(3):
                cycle(client, distinct(serial), ROOMY_NAMES)
        assert anticipated("prepared") == prepared + 2


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1),
       policy=st.sampled_from(["default", "rows-only", "allocatable"]))
def test_prepared_replies_equal_the_per_node_path_while_the_state_changes(seed, policy, monkeypatch):
    rng = random.Random(seed)
    document = {"default": DEFAULT_POLICY, "rows-only": LEAST_ALLOCATED_ONLY,
                "allocatable": SMALLEST_FIRST}[policy]
    runtime = runtime_for(cluster_objects(rng), document)
    used = anticipated("used")
    # Prioritizes that nothing kept from being served what their filter prepared (a filter
    # of a spec and list seen before may have been answered by reuse: it prepares nothing).
    must_use = 0
    followed = False
    seen: set[tuple[int, bool]] = set()
    with TestClient(create_app(runtime)) as client:
        for serial in range(20):
            kind, reverse = rng.randrange(4), rng.random() < 0.5
            pending = pending_pod(kind, serial)
            new = (kind, reverse) not in seen
            seen.add((kind, reverse))
            passed = send(client, "filter", pending, NAMES[::-1] if reverse else NAMES)["NodeNames"]  # type: ignore[index]
            settled(client)
            changed = rng.random() < 0.4
            if changed:  # a change between the filter and its prioritize
                mutate(runtime, rng, serial)
            if passed:
                served = send(client, "prioritize", pending, passed)
                assert served == per_node(client, runtime, monkeypatch, "prioritize", pending,
                                          passed)
                must_use += followed and new and len(passed) >= 2 and not changed
                followed = True
            if rng.random() < 0.3:
                mutate(runtime, rng, 1000 + serial)
    assert anticipated("used") - used >= must_use


def test_on_the_direct_path_the_filter_reply_is_written_before_the_preparing(monkeypatch):
    runtime = runtime_for(ROOMY, LEAST_ALLOCATED_ONLY)
    app = create_app(runtime)
    protocol_class = guarded_protocol(ConnectionLimits())
    config = uvicorn.Config(app, http=protocol_class, log_config=None, access_log=False,
                            proxy_headers=False)
    written_before: list[int] = []
    booked_after: list[int] = []
    original, bookkeeping = prioritize._anticipate, filter_verb._after_reply

    def spy(*args, **kwargs):
        written_before.append(len(transport.writes))
        return original(*args, **kwargs)

    def book(*args, **kwargs):
        booked_after.append(len(transport.writes))
        return bookkeeping(*args, **kwargs)

    monkeypatch.setattr(prioritize, "_anticipate", spy)
    monkeypatch.setattr(filter_verb, "_after_reply", book)

    def request(verb: str, pending: dict, names: list[str]) -> bytes:
        return post(f"/{verb}", compact({"Pod": pending, "Nodes": None, "NodeNames": names}))

    async def exchange(data: bytes) -> bytes:
        before = len(transport.writes)
        protocol.data_received(data)
        await eventually(lambda: len(transport.writes) > before, transport.writes, timeout=2)
        assert len(transport.writes) == before + 1
        return transport.writes[-1].partition(b"\r\n\r\n")[2]

    async def scenario() -> None:
        await exchange(request("filter", pending_pod(0, 1), ROOMY_NAMES))
        await exchange(request("prioritize", pending_pod(0, 1), ROOMY_NAMES[:4]))
        used = anticipated("used")
        await exchange(request("filter", distinct(2), ROOMY_NAMES))
        reply = await exchange(request("prioritize", distinct(2), ROOMY_NAMES[:4]))
        assert json.loads(reply)[0]["Host"] == "r0"
        assert anticipated("used") == used + 1

    transport = RecordingTransport()

    async def main() -> None:
        nonlocal protocol
        protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
        protocol.connection_made(transport)
        await scenario()

    protocol = None

    asyncio.run(main())
    # Each filter's bookkeeping ran once its reply (the first and third writes) was out, and
    # before the next request; the second prepared its pod's prioritize.
    assert booked_after == [1, 3]
    assert written_before == [3]


def test_a_change_before_the_filters_bookkeeping_keeps_nothing_of_it():
    """A change the loop handles between a filter's reply and its bookkeeping (an event
    queued before it) must not have the reply kept as if it described the state after it."""
    from extender.api import filter as verb
    from extender.api.observe import RequestRecord

    runtime = runtime_for(ROOMY, LEAST_ALLOCATED_ONLY)

    def body(pending: dict) -> bytes:
        return compact({"Pod": pending, "Nodes": None, "NodeNames": ROOMY_NAMES})

    async def scenario() -> tuple[bytes, bytes]:
        await verb.handle(runtime, body(pending_pod(1, 1)), RequestRecord("filter"))
        # r0 is cordoned before the bookkeeping's turn of the loop.
        runtime.state.set_node_unschedulable("r0", True)
        await asyncio.sleep(0)
        # Another pod of the same spec over the same nodes: a kept reply would be reused.
        again = await verb.handle(runtime, body(pending_pod(1, 2)), RequestRecord("filter"))
        await asyncio.sleep(0)
        runtime.reply_reuse = 0
        fresh = await verb.handle(runtime, body(pending_pod(1, 3)), RequestRecord("filter"))
        return again.body, fresh.body

    again, fresh = asyncio.run(scenario())
    assert json.loads(again)["NodeNames"] == ["r1", "r2", "r3"]
    assert again == fresh
