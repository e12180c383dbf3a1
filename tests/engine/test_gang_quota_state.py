"""`ClusterState`'s incremental quota use and PodGroup membership, held to a recomputation
from scratch over random sequences of pod adds, updates, deletes, binds and expiries."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from extender.engine.cluster import ClusterState
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.engine.plugins.coscheduling.store import PodGroupStore
from extender.model import k8s
from extender.model.resources import Resources
from extender.model.scheduling import POD_GROUP_LABEL

NAMESPACES = ("a", "b")
NODES = ("n1", "n2")


def _node(name: str) -> k8s.Node:
    return k8s.convert({"metadata": {"name": name},
                        "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"}}},
                       k8s.Node)


def _pod(i: int, ns: str, cpu: int, node: str, phase: str, group: str, gated: bool) -> k8s.Pod:
    spec: dict = {"nodeName": node,
                  "containers": [{"resources": {"requests": {"cpu": f"{cpu}m"}}}],
                  "initContainers": [{"resources": {"requests": {"cpu": f"{cpu + 50}m"}}}]}
    if gated:
        spec["schedulingGates"] = [{"name": "wait"}]
    labels = {POD_GROUP_LABEL: group} if group else {}
    return k8s.convert({"metadata": {"name": f"p{i}", "namespace": ns, "uid": f"u{i}",
                                     "labels": labels},
                        "spec": spec, "status": {"phase": phase}}, k8s.Pod)


op = st.one_of(
    st.tuples(st.just("apply"), st.integers(0, 7), st.sampled_from(NAMESPACES),
              st.integers(0, 500), st.sampled_from(("", *NODES)),
              st.sampled_from(("Pending", "Running", "Succeeded")),
              st.sampled_from(("", "g1", "g2")), st.booleans()),
    st.tuples(st.just("delete"), st.integers(0, 7)),
    st.tuples(st.just("assume"), st.integers(0, 7), st.sampled_from(NODES)),
    st.tuples(st.just("expire")),
    st.tuples(st.just("delete_node"), st.sampled_from(NODES)),
    st.tuples(st.just("add_node"), st.sampled_from(NODES)),
)


def _expected_used(state: ClusterState, ns: str) -> Resources:
    total = Resources()
    for pod in state.pods.values():
        if pod.namespace == ns and pod.node_name:
            total.add(pod.quota_requests)
    return total


def _expected_members(state: ClusterState, pods: dict[int, k8s.Pod]) -> dict:
    members: dict = {}
    for pod in pods.values():
        group = (pod.metadata.labels or {}).get(POD_GROUP_LABEL)
        if group and pod.status.phase not in ("Succeeded", "Failed"):
            members.setdefault((pod.metadata.namespace, group), {})[pod.metadata.uid] = bool(
                pod.spec.scheduling_gates)
    return members


@settings(max_examples=150, deadline=None)
@given(st.lists(op, max_size=40))
# A bind, then the watch's late event of the pod's creation: Hypothesis seldom draws it.
@example([("apply", 1, "a", 100, "", "Pending", "g1", False), ("assume", 1, "n1"),
          ("apply", 1, "a", 100, "", "Pending", "g2", False)])
def test_incremental_quota_use_and_membership_equal_a_recount(ops: list[tuple]) -> None:
    now = [0.0]
    state = ClusterState(clock=lambda: now[0])
    for name in NODES:
        state.apply_node(_node(name))
    live: dict[int, k8s.Pod] = {}  # what the API server holds
    for step in ops:
        kind = step[0]
        if kind == "apply":
            _, i, ns, cpu, node, phase, group, gated = step
            old = live.get(i)
            if old is not None and old.metadata.namespace != ns:
                state.delete_pod(old.metadata.namespace, old.metadata.name, old.metadata.uid)
            pod = _pod(i, ns, cpu, node, phase, group, gated)
            assumed = state.assumed.get(pod.metadata.uid)
            live[i] = pod
            state.apply_pod(pod)
            if assumed is not None and not node and phase == "Pending":
                # After a bind, an event without a node is older than the binding: the
                # assumed pod stands (its PodGroup membership follows the object).
                assert state.assumed[pod.metadata.uid] is assumed
                assert state.pods[pod.metadata.uid].node_name == assumed.node_name
        elif kind == "delete":
            old = live.pop(step[1], None)
            if old is not None:
                state.delete_pod(old.metadata.namespace, old.metadata.name, old.metadata.uid)
        elif kind == "assume":
            view = state.pending_pod(f"u{step[1]}")
            if view is not None:
                state.assume(view, step[2], ttl=5.0)
        elif kind == "expire":
            now[0] += 10.0
            state.expire_assumptions()
        elif kind == "delete_node":
            state.delete_node(step[1])
        else:
            state.apply_node(_node(step[1]))
        for ns in NAMESPACES:
            assert state.store(QuotaStore).used(ns) == _expected_used(state, ns)
    assert state.store(PodGroupStore).members == _expected_members(state, live)
