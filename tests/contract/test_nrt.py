"""NodeResourceTopologyMatch through the real HTTP app (snapshot mode): the single-numa-node
reason on /filter (FailedNodes: preemption may help, as upstream's Unschedulable), the NUMA
scores on /prioritize, and a bind counted by the next filter (overreserve cache)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.evaluate import cluster_from_objects
from extender.engine.plugins.node_resource_topology.store import TopologyStore
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.binder import BindError, SnapshotBinder
from tests.engine.nrt_builders import guaranteed, node_for, nrt, nrt_policy
from tests.serving import eventually

CPU, MEMORY = "cpu", "memory"


def zones(cpu0: str, cpu1: str) -> list:
    return [("node-0", [(CPU, "16", cpu0), (MEMORY, "32Gi", "16Gi")], None),
            ("node-1", [(CPU, "16", cpu1), (MEMORY, "32Gi", "16Gi")], None)]


# numa-a: 4 + 4 free cpus (8 on the node, never 6 in one cell); numa-b: 8 + 2; numa-c: 12 + 12,
# best-effort policy (the filter does not apply); plain: no NodeResourceTopology at all.
NODES = {"numa-a": zones("4", "4"), "numa-b": zones("8", "2"), "numa-c": zones("12", "12"),
         "plain": zones("12", "12")}


def objects() -> list[dict]:
    out = [node_for(name, z) for name, z in NODES.items()]
    out += [nrt(name, NODES[name], ["SingleNUMANodeContainerLevel"], resource_version="1")
            for name in ("numa-a", "numa-b")]
    out.append(nrt("numa-c", NODES["numa-c"], attributes={
        "topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod"}))
    return out


def client_for(args: dict) -> TestClient:
    state = cluster_from_objects(objects())
    profile = build_profile(parse_policy(nrt_policy(args=args)))
    return TestClient(create_app(Runtime(profile, state, SnapshotBinder(state, 30.0))))


def names_args(pending: dict, names: list[str]) -> dict:
    return {"Pod": pending, "Nodes": None, "NodeNames": names}


def test_filter_reason_and_prioritize_scores() -> None:
    pending = guaranteed("db", {CPU: "6", MEMORY: "4Gi"})
    with client_for({"scoringStrategy": {"type": "MostAllocated"}}) as client:
        reply = client.post("/filter", json=names_args(pending, list(NODES))).json()
        assert reply["Error"] == ""
        assert reply["NodeNames"] == ["numa-b", "numa-c", "plain"]
        assert reply["FailedNodes"] == {"numa-a": "cannot align container"}
        assert not reply["FailedAndUnresolvableNodes"]
        scores = client.post("/prioritize", json=names_args(pending, reply["NodeNames"])).json()
    # numa-b: node-0 scores (75 + 25) / 2 = 50 (6 of 8 cpus, 4Gi of 16Gi); node-1 cannot hold
    # 6 cpus, so its cpu term is 0, but its memory term is not: (0 + 25) / 2 = 12. The node's
    # score is the smallest non-zero cell score, 12 (upstream's scoreForEachNUMANode), so 1 on
    # the wire. numa-c (best-effort policy) and plain (no report) score 0 for MostAllocated.
    assert scores == [{"Host": "numa-b", "Score": 1}, {"Host": "numa-c", "Score": 0},
                      {"Host": "plain", "Score": 0}]


def test_least_numa_nodes_prioritize() -> None:
    pending = guaranteed("db", {CPU: "6", MEMORY: "4Gi"})
    with client_for({"scoringStrategy": {"type": "LeastNUMANodes"}}) as client:
        scores = client.post("/prioritize", json=names_args(pending, list(NODES))).json()
    # One cell (numa-b, numa-c): 100 - 12 + 6 = 94 (no costs: 255 everywhere is the minimum);
    # two cells (numa-a): 100 - 24 + 6 = 82; no report: 0.
    assert scores == [{"Host": "numa-a", "Score": 8}, {"Host": "numa-b", "Score": 9},
                      {"Host": "numa-c", "Score": 9}, {"Host": "plain", "Score": 0}]


def test_a_bound_pod_counts_until_the_next_report() -> None:
    first = guaranteed("first", {CPU: "6", MEMORY: "4Gi"})
    second = guaranteed("second", {CPU: "2", MEMORY: "4Gi"})
    with client_for({"cacheResyncPeriodSeconds": 5}) as client:
        assert client.post("/filter", json=names_args(first, ["numa-b"])).json()["NodeNames"] == [
            "numa-b"]
        bind = {"PodName": "first", "PodNamespace": "default",
                "PodUID": first["metadata"]["uid"], "Node": "numa-b"}
        assert client.post("/bind", json=bind).json() == {"Error": ""}
        # Until numa-b reports again, `first` is taken from both cells: 2 and 0 cpus left...
        reply = client.post("/filter", json=names_args(second, ["numa-b"])).json()
        assert reply["NodeNames"] == ["numa-b"]
        third = guaranteed("third", {CPU: "3", MEMORY: "1Gi"})
        reply = client.post("/filter", json=names_args(third, ["numa-b"])).json()
        assert reply["FailedNodes"] == {"numa-b": "cannot align container"}


class HeldBinder:
    """Binds that wait until released, then bind offline, or fail when `refuse` is set."""

    def __init__(self, inner: SnapshotBinder) -> None:
        self.inner = inner
        self.released = asyncio.Event()
        self.refuse = False

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   deadline: float | None = None) -> None:
        await self.released.wait()
        if self.refuse:
            raise BindError("the API server refused the binding", "api_error")
        await self.inner.bind(namespace, name, uid, node, deadline=deadline)


FIRST = guaranteed("first", {CPU: "6", MEMORY: "4Gi"})
#: `first` to numa-b.
BIND_FIRST = {"PodName": "first", "PodNamespace": "default", "PodUID": FIRST["metadata"]["uid"],
              "Node": "numa-b"}


def held_binds(args: dict) -> tuple[httpx.AsyncClient, HeldBinder, TopologyStore]:
    """A client of the app over `objects()` with the plugin's `args`, whose binds wait for
    the binder's release; and the plugin's store."""
    state = cluster_from_objects(objects())
    binder = HeldBinder(SnapshotBinder(state, 30.0))
    app = create_app(Runtime(build_profile(parse_policy(nrt_policy(args=args))), state, binder))
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")
    return client, binder, state.store(TopologyStore)


@pytest.mark.anyio
async def test_a_bind_under_way_counts_and_a_failed_one_stops_counting() -> None:
    # kube-scheduler reserves a pod (upstream's Reserve: the cache takes it from every cell)
    # before its Permit and its bind, and starts the next pod's cycle at once: that pod's
    # filter may come while the bind is held or waits on the API server. A failed bind is
    # unreserved.
    third = guaranteed("third", {CPU: "3", MEMORY: "1Gi"})
    client, binder, store = held_binds({"cacheResyncPeriodSeconds": 5})
    async with client:
        async def fits(pending: dict) -> dict:
            reply = (await client.post("/filter", json=names_args(pending, ["numa-b"]))).json()
            return reply["FailedNodes"]

        assert await fits(FIRST) == {}
        assert await fits(third) == {}  # numa-b has 8 + 2 free cpus
        held = asyncio.ensure_future(client.post("/bind", json=BIND_FIRST))
        await eventually(lambda: store.reservations("numa-b"), "the bind's reservation")
        # `first` may go to either cell: 2 and 0 cpus left for `third` while its bind is held.
        assert await fits(third) == {"numa-b": "cannot align container"}
        binder.refuse = True
        binder.released.set()
        assert (await held).json() == {"Error": "the API server refused the binding"}
        assert store.reservations("numa-b") == ()
        assert await fits(third) == {}
        # Bound: it counts until a resync takes a report that counts it.
        binder.refuse = False
        assert (await client.post("/bind", json=BIND_FIRST)).json() == {"Error": ""}
        assert len(store.reservations("numa-b")) == 1
        assert await fits(third) == {"numa-b": "cannot align container"}


@pytest.mark.anyio
async def test_discard_reserved_nodes_while_a_bind_is_under_way() -> None:
    # upstream's DiscardReserved cache: a node with a pod between Reserve and PostBind (or
    # Unreserve) is invalid to Filter and 0 to Score; otherwise the reports as they are.
    other = guaranteed("other", {CPU: "1", MEMORY: "1Gi"})
    client, binder, store = held_binds({"discardReservedNodes": True,
                                        "cacheResyncPeriodSeconds": 5,
                                        "scoringStrategy": {"type": "LeastNUMANodes"}})
    nodes = ["numa-a", "numa-b"]
    async with client:
        async def verbs(pending: dict) -> tuple[dict, list]:
            body = names_args(pending, nodes)
            failed = (await client.post("/filter", json=body)).json()["FailedNodes"]
            return failed, (await client.post("/prioritize", json=body)).json()

        assert await verbs(other) == ({}, [{"Host": "numa-a", "Score": 9},
                                           {"Host": "numa-b", "Score": 9}])
        assert (await client.post("/filter", json=names_args(FIRST, ["numa-b"]))).json()[
            "NodeNames"] == ["numa-b"]
        held = asyncio.ensure_future(client.post("/bind", json=BIND_FIRST))
        await eventually(lambda: store.binding, "the bind under way")
        assert await verbs(other) == ({"numa-b": "invalid node topology data"},
                                      [{"Host": "numa-a", "Score": 9},
                                       {"Host": "numa-b", "Score": 0}])
        binder.released.set()
        assert (await held).json() == {"Error": ""}
        # PostBind: the node is read again, from its report as it is (no reservation: the
        # discarding cache keeps none).
        assert store.binding == {}
        assert await verbs(other) == ({}, [{"Host": "numa-a", "Score": 9},
                                           {"Host": "numa-b", "Score": 9}])
