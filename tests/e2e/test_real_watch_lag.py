"""The extender's watch behind kube-scheduler's, on the real control plane: the extender
reaches the API server through `WatchLag`, which holds each watch event 3 s (as a CPU-starved
or far-away replica's watch runs behind) and answers its other calls at once.

Each case parked the pod for `podMaxInUnschedulablePodsDuration` (5 minutes) in this quiet
cluster before the extender caught up with the API server on its own (`api.catchup`,
`state.catchup`): the pod binds within seconds now, and the extender's counters say why.
(A gang created with its PodGroup needs no catching up: `test_real_gang.py`.)"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from extender.simulator.arrivals import RUN_FOR_ANNOTATION
from tests.e2e.lag import lagged
from tests.e2e.realcluster import Scenario, bound, node, pod, wait_until

pytestmark = pytest.mark.e2e

DELAY = 3.0
POLICY = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: TaintToleration}, {name: NodeResourcesFit}]
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
  postFilter:
    enabled: [{name: DefaultPreemption}]
"""


@pytest.mark.parametrize("victim_watched", [True, False],
                         ids=["victim-watched-first", "victim-just-bound"])
def test_a_preemptor_binds_though_the_extenders_watch_runs_behind(
        scenario: Scenario, tmp_path: Path, victim_watched: bool) -> None:
    """kube-scheduler retries the preemptor on its nominated node as soon as its own watch
    shows the victim gone, while the extender still counts it: without catching up the
    extender rejects the node. With the victim bound a moment before the preemptor comes,
    kube-scheduler proposes a victim the extender has not seen yet: without catching up, the
    extender finds the pod fitting as is, drops the node, and kube-scheduler finds no
    candidate."""
    kube = scenario.kube
    target = f"{scenario.name}-n"
    scenario.add_nodes(node(target, cpu="2"))
    ns = scenario.namespace()
    scenario.priority_classes(ns)
    with lagged(scenario, tmp_path, POLICY, delay=DELAY):
        kube.create(pod("low", ns, scenario.scheduler, cpu="2", priority_class=f"{ns}-low",
                        nodeName=target))
        if victim_watched:
            probe = {"Pod": {**pod("probe", ns, scenario.scheduler, cpu="1"),
                             "metadata": {"name": "probe", "namespace": ns, "uid": "probe"}},
                     "NodeNames": [target]}
            wait_until(lambda: target not in _filter(scenario, probe), timeout=30,
                       what="the extender to count the victim")
        kube.create(pod("urgent", ns, scenario.scheduler, cpu="2",
                        priority_class=f"{ns}-high"))
        assert _bound(scenario, ns, "urgent") == target
        assert "low" not in {p["metadata"]["name"] for p in kube.pods(ns)}
        assert scenario.extender_metric("extender_informer_pods_gone_before_watch_total") >= 1
        if not victim_watched:
            assert scenario.extender_metric(
                "extender_informer_pods_seen_before_watch_total") >= 1


def test_a_node_added_while_the_extenders_watch_runs_behind_takes_the_waiting_pod(
        scenario: Scenario, tmp_path: Path) -> None:
    """A pod waits for room; a node is added for it (as a cluster autoscaler adds one), and
    kube-scheduler, seeing it, retries the pod there at once. The extender, whose watch has
    not delivered the node yet, rejected it as not found in its state."""
    small, big = f"{scenario.name}-small", f"{scenario.name}-big"
    scenario.add_nodes(node(small, cpu="1"))
    ns = scenario.namespace()
    with lagged(scenario, tmp_path, POLICY, delay=DELAY):
        _waiting(scenario, ns, cpu="2")
        scenario.add_nodes(node(big, cpu="4"))
        assert _bound(scenario, ns, "waiting") == big
        assert scenario.extender_metric("extender_informer_nodes_seen_before_watch_total") >= 1


def test_a_node_freed_while_the_extenders_watch_runs_behind_takes_the_waiting_pod(
        scenario: Scenario, tmp_path: Path) -> None:
    """A pod waits for a tainted node (a new node not yet Ready, a node under maintenance);
    the taint goes, and kube-scheduler, seeing it, retries the pod there at once. The
    extender, whose watch still shows the taint, refused the node: only a guess can tell
    (`api.catchup.passed_none`)."""
    kube = scenario.kube
    name = f"{scenario.name}-m"
    scenario.add_nodes(node(name, cpu="4", taints=[{"key": "example.com/maintenance",
                                                     "effect": "NoSchedule"}]))
    ns = scenario.namespace()
    with lagged(scenario, tmp_path, POLICY, delay=DELAY):
        _waiting(scenario, ns, cpu="1")
        freed = kube.get("Node", name)
        freed["spec"].pop("taints")
        kube.request("PUT", f"/api/v1/nodes/{name}", freed)
        assert _bound(scenario, ns, "waiting") == name
        assert scenario.extender_metric("extender_informer_nodes_seen_before_watch_total") >= 1


def _waiting(scenario: Scenario, ns: str, *, cpu: str) -> None:
    """A pod `waiting` that no node takes yet, once kube-scheduler has said so."""
    kube = scenario.kube
    kube.create(pod("waiting", ns, scenario.scheduler, cpu=cpu))
    wait_until(lambda: any(e.get("reason") == "FailedScheduling"
                           for e in kube.events_for(ns, "waiting")),
               timeout=30, what="the pod to wait")


def _bound(scenario: Scenario, ns: str, name: str) -> Any:
    kube = scenario.kube
    try:
        return wait_until(lambda: bound(kube.pods(ns)).get(name), timeout=60,
                          what=f"{name} bound (kube-scheduler parks it for 5 minutes when "
                               "the extender judges by what its watch has not delivered)")
    except AssertionError as exc:
        raise AssertionError(
            f"{exc}; {name}'s events: "
            f"{[e.get('message') for e in kube.events_for(ns, name)]}; the extender's "
            f"requests: {scenario.extender_counts()}; the end of its log:\n"
            f"{scenario.sandbox.log_tail(_extender_name(scenario), 40)}") from None


def _extender_name(scenario: Scenario) -> str:
    assert scenario.extender is not None
    return scenario.extender.name


def _filter(scenario: Scenario, args: dict[str, object]) -> list[str]:
    assert scenario.extender is not None
    reply = httpx.post(f"{scenario.extender.url}/filter", json=args, timeout=5,
                       trust_env=False).json()
    return reply.get("NodeNames") or []


QUOTA_POLICY = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: NodeResourcesFit}, {name: CapacityScheduling}]
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
"""


def test_a_pod_waiting_on_its_quota_binds_when_room_frees_while_the_watch_runs_behind(
        scenario: Scenario, tmp_path: Path) -> None:
    """A namespace's ElasticQuota (max 1 cpu) full with one pod; a second pod waits; the
    first succeeds, and kube-scheduler, seeing it, retries the second at once. The extender,
    whose watch has not delivered the change, still counted the first pod against the quota
    and refused it again: parked (5 minutes) with nothing else to retry it on. It now reads
    the namespace's pods for such a refusal (`api.catchup.pods_first`)."""
    kube = scenario.kube
    scenario.add_nodes(node(f"{scenario.name}-q", cpu="4"))
    ns = scenario.namespace()
    kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                 "metadata": {"name": "quota", "namespace": ns},
                 "spec": {"min": {"cpu": "1", "memory": "8Gi"},
                          "max": {"cpu": "1", "memory": "8Gi"}}})
    with lagged(scenario, tmp_path, QUOTA_POLICY, delay=DELAY):
        # The node agent lets `first` succeed 8 s after it starts: its quota's room frees.
        first = pod("first", ns, scenario.scheduler, cpu="1")
        first["metadata"]["annotations"] = {RUN_FOR_ANNOTATION: "8s"}
        kube.create(first)
        wait_until(lambda: "first" in bound(kube.pods(ns)) or None, timeout=30,
                   what="the first pod bound")
        _waiting(scenario, ns, cpu="1")
        waited = time.monotonic()
        assert _bound(scenario, ns, "waiting") == f"{scenario.name}-q"
        # Within seconds of the room freeing, not at kube-scheduler's 5-minute flush.
        assert time.monotonic() - waited < 30
