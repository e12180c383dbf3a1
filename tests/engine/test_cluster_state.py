"""ClusterState bookkeeping: incremental totals, assumptions, relists."""

from __future__ import annotations

from extender.engine.cluster import ClusterState
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.engine.plugins.coscheduling.store import PodGroupStore
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.scheduling import POD_GROUP_LABEL


def node(name: str, cpu: str = "4", pods: str = "110") -> k8s.Node:
    return k8s.convert({"metadata": {"name": name},
                        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods}}}, k8s.Node)


def pod(name: str, cpu: str = "1", node_name: str = "", phase: str = "Pending",
        labels: dict | None = None) -> k8s.Pod:
    return k8s.convert({
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": labels or {}},
        "spec": {"nodeName": node_name, "tolerations": [{"operator": "Exists"}],
                 "containers": [{"resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": phase}}, k8s.Pod)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pods_count_on_their_node_and_terminal_phase_frees_them():
    state = ClusterState()
    state.apply_node(node("n1"))
    state.apply_pod(pod("a", "1500m", "n1", "Running"))
    state.apply_pod(pod("b", "500m", "n1", "Running"))
    assert state.nodes["n1"].requested.milli_cpu == 2000
    assert state.nodes["n1"].free_cpu == 2000 and state.nodes["n1"].free_pods == 108
    state.apply_pod(pod("a", "1500m", "n1", "Succeeded"))
    assert state.nodes["n1"].requested.milli_cpu == 500
    state.delete_pod("default", "b")
    assert state.nodes["n1"].requested.milli_cpu == 0 and not state.nodes["n1"].pods


def test_pod_before_its_node_is_counted_when_the_node_arrives():
    state = ClusterState()
    state.apply_pod(pod("a", "1", "late", "Running"))
    assert "late" not in state.nodes
    state.apply_node(node("late"))
    assert state.nodes["late"].requested.milli_cpu == 1000


def test_node_update_keeps_pods_and_recomputes_free():
    state = ClusterState()
    state.apply_node(node("n1", cpu="4"))
    state.apply_pod(pod("a", "1", "n1", "Running"))
    state.apply_node(node("n1", cpu="8"))
    assert state.nodes["n1"].free_cpu == 7000 and len(state.nodes["n1"].pods) == 1


def test_bound_pods_drop_scheduling_matchers_and_share_labels():
    state = ClusterState()
    state.apply_node(node("n1"))
    first = state.apply_pod(pod("a", node_name="n1", phase="Running", labels={"app": "web"}))
    second = state.apply_pod(pod("b", node_name="n1", phase="Running", labels={"app": "web"}))
    pending = state.apply_pod(pod("c", labels={"app": "web"}))
    assert first.tolerations == () and pending.tolerations != ()
    assert first.labels is second.labels and first.requests is second.requests


def test_assumption_counts_at_once_and_expiry_restores_the_pending_pod():
    clock = FakeClock()
    state = ClusterState(clock)
    state.apply_node(node("n1"))
    state.apply_pod(pod("p", "2"))
    state.assume(state.pending_pod("uid-p"), "n1", ttl=30)
    assert state.nodes["n1"].requested.milli_cpu == 2000
    clock.now += 31
    assert [p.name for p in state.expire_assumptions()] == ["p"]
    assert state.nodes["n1"].requested.milli_cpu == 0
    assert state.pending_pod("uid-p") is not None and state.pods["uid-p"].node_name == ""


def test_watch_confirmation_replaces_the_assumption():
    clock = FakeClock()
    state = ClusterState(clock)
    state.apply_node(node("n1"))
    state.assume(PodView.from_k8s(pod("p", "2")), "n1", ttl=30)
    state.apply_pod(pod("p", "2", "n1", "Running"))
    assert not state.assumed
    clock.now += 60
    assert state.expire_assumptions() == []
    assert state.nodes["n1"].requested.milli_cpu == 2000


def test_an_event_older_than_the_bind_leaves_the_assumption_standing():
    # Seen on the real control plane: the extender's watch delivered a pod's creation after
    # kube-scheduler had already filtered it and the bind verb had bound it. Forgetting the
    # assumption freed its CPU and its quota, and the next pod was let in past the quota.
    clock = FakeClock()
    state = ClusterState(clock)
    state.apply_node(node("n1", cpu="4"))
    # Bound from the filter request's pod, before the watch ever showed it.
    state.assume(PodView.from_k8s(pod("p", "2")), "n1", ttl=30)
    generation = state.generation
    stale = state.apply_pod(pod("p", "2", labels={"seen": "late", POD_GROUP_LABEL: "g"}))
    assert stale is not None and stale.node_name == "n1"
    assert state.nodes["n1"].requested.milli_cpu == 2000 and set(state.nodes["n1"].pods) == {"uid-p"}
    assert state.store(QuotaStore).used("default").milli_cpu == 2000
    assert "uid-p" in state.assumed and state.pending_pod("uid-p") is None
    # The object is seen all the same: its PodGroup counts it, as upstream's pod lister would.
    assert state.store(PodGroupStore).members == {("default", "g"): {"uid-p": False}}
    assert state.generation > generation  # so replies kept for the old membership are not reused
    assert state.late_pod_events == 1  # /metrics: extender_informer_late_pod_events_total
    # Unconfirmed, it expires as before, back to the pod as last seen pending.
    clock.now += 31
    assert [p.name for p in state.expire_assumptions()] == ["p"]
    assert state.nodes["n1"].requested.milli_cpu == 0
    assert state.store(QuotaStore).used("default").milli_cpu == 0
    assert state.pending_pod("uid-p").labels == {"seen": "late", POD_GROUP_LABEL: "g"}


def test_after_the_bind_a_terminal_or_bound_event_still_applies():
    state = ClusterState(FakeClock())
    state.apply_node(node("n1"))
    state.apply_node(node("n2"))
    state.apply_pod(pod("p", "1"))
    state.assume(state.pending_pod("uid-p"), "n1", ttl=30)
    state.apply_pod(pod("p", "1", "n1", "Running"))  # the binding, confirmed
    assert not state.assumed and state.nodes["n1"].requested.milli_cpu == 1000
    state.apply_pod(pod("q", "1"))
    state.assume(state.pending_pod("uid-q"), "n2", ttl=30)
    state.apply_pod(pod("q", "1", phase="Failed"))  # gone before any node ran it
    assert "uid-q" not in state.pods and state.nodes["n2"].requested.milli_cpu == 0
    assert state.late_pod_events == 0


def test_recreated_pod_with_new_uid_replaces_the_old_one():
    state = ClusterState()
    state.apply_node(node("n1"))
    state.apply_pod(pod("p", "1", "n1", "Running"))
    fresh = pod("p", "3", "n1", "Running")
    fresh.metadata.uid = "uid-p-2"
    state.apply_pod(fresh)
    assert set(state.nodes["n1"].pods) == {"uid-p-2"}
    assert state.nodes["n1"].requested.milli_cpu == 3000


def test_replace_nodes_and_pods_converge_to_the_listed_set():
    state = ClusterState()
    for name in ("n1", "n2"):
        state.apply_node(node(name))
    state.apply_pod(pod("a", "1", "n1", "Running"))
    state.apply_pod(pod("b", "1", "n2", "Running"))
    state.replace_nodes([node("n1")])
    state.replace_pods([pod("a", "1", "n1", "Running")])
    assert set(state.nodes) == {"n1"} and set(state.pods) == {"uid-a"}
    assert state.nodes["n1"].requested.milli_cpu == 1000


def test_pod_index_forgets_an_emptied_namespace_and_counts_it_again_later():
    from extender.engine.evaluate import cluster_from_objects
    from extender.model import k8s
    from extender.model.selectors import selector_from_set
    from tests.engine.upstream.builders import node, pod

    state = cluster_from_objects([node("n1"), pod("a", "team", labels={"app": "x"}, node="n1")])
    index, web = state.pod_index, selector_from_set({"app": "x"})
    assert index.count_by_node("team", web, include_terminating=False) == {"n1": 1}
    state.delete_pod("team", "a")
    assert list(index.namespaces()) == [] and index.cached_matches() == 0
    state.apply("Pod", k8s.convert(pod("b", "team", labels={"app": "x"}, node="n1"), k8s.Pod))
    assert index.count_by_node("team", web, include_terminating=False) == {"n1": 1}
