"""The extender's watch behind kube-scheduler's, on the real control plane: the extender
reaches the API server through `WatchLag`, which holds each watch event 3 s (as a CPU-starved
or far-away replica's watch runs behind) and answers its other calls at once.

The first three cases parked the pod for `podMaxInUnschedulablePodsDuration` (5 minutes) in
this quiet cluster before the extender caught up with the API server on its own
(`api.catchup`, `state.catchup`): the pod binds within seconds now, and the extender's
counters say why. The last, a gang, needs no catching up, and shows why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.lag import WatchLag
from tests.e2e.realcluster import Scenario, Watch, bound, node, pod, wait_until

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
    with WatchLag(scenario.sandbox.state_dir / "extender.kubeconfig", delay=DELAY) as lag:
        scenario.start(policy=POLICY, extender_args=[
            "--kubeconfig", str(lag.kubeconfig(tmp_path / "lagged.kubeconfig"))])
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
    kube = scenario.kube
    small, big = f"{scenario.name}-small", f"{scenario.name}-big"
    scenario.add_nodes(node(small, cpu="1"))
    ns = scenario.namespace()
    with WatchLag(scenario.sandbox.state_dir / "extender.kubeconfig", delay=DELAY) as lag:
        scenario.start(policy=POLICY, extender_args=[
            "--kubeconfig", str(lag.kubeconfig(tmp_path / "lagged.kubeconfig"))])
        kube.create(pod("waiting", ns, scenario.scheduler, cpu="2"))
        wait_until(lambda: any(e.get("reason") == "FailedScheduling"
                               for e in kube.events_for(ns, "waiting")),
                   timeout=30, what="the pod to wait for room")
        scenario.add_nodes(node(big, cpu="4"))
        assert _bound(scenario, ns, "waiting") == big
        assert scenario.extender_metric("extender_informer_nodes_seen_before_watch_total") >= 1


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
            f"requests: {scenario.extender_counts()}") from None


def _filter(scenario: Scenario, args: dict[str, object]) -> list[str]:
    assert scenario.extender is not None
    reply = httpx.post(f"{scenario.extender.url}/filter", json=args, timeout=5,
                       trust_env=False).json()
    return reply.get("NodeNames") or []


GANG = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: TaintToleration}, {name: NodeResourcesFit}, {name: Coscheduling}]
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 8, podGroupBackoffSeconds: 0}
"""
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def test_a_gang_created_with_its_podgroup_binds_whole_though_the_watch_runs_behind(
        scenario: Scenario, tmp_path: Path) -> None:
    """A PodGroup and its pods created together, as a job controller does: kube-scheduler
    tries the pods at once, before the extender's watch has delivered the group. Its members
    pass PreFilter as upstream's do (a group not found is no gang there), but Permit, in the
    bind verb, refuses them (`PodGroup not found`): none binds alone. kube-scheduler retries a
    failed bind after its backoff, by when the group is known: the whole group binds, together,
    within seconds (4.4 s after the group on 2026-12-02), with no catching up needed."""
    kube = scenario.kube
    names = [f"{scenario.name}-{i}" for i in range(3)]
    scenario.add_nodes(*(node(n, cpu="2", memory="8Gi") for n in names))
    ns = scenario.namespace()
    members = {f"train-{i}" for i in range(3)}
    with WatchLag(scenario.sandbox.state_dir / "extender.kubeconfig", delay=DELAY) as lag:
        scenario.start(policy=GANG, extender_args=[
            "--kubeconfig", str(lag.kubeconfig(tmp_path / "lagged.kubeconfig"))])
        kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                     "metadata": {"name": "train", "namespace": ns}, "spec": {"minMember": 3}})
        watch = Watch(kube, f"/api/v1/namespaces/{ns}/pods")
        try:
            for name in sorted(members):
                kube.create(pod(name, ns, scenario.scheduler, cpu="1500m",
                                labels={GROUP_LABEL: "train"}))
            wait_until(lambda: members <= set(bound(kube.pods(ns))) or None, timeout=60,
                       what="the whole group bound (kube-scheduler retries a failed bind)")
        finally:
            watch.stop()
        outcomes = scenario.extender_counts("extender_bind_total", "outcome")
    first_bound: dict[str, float] = {}
    for t, kind, obj in watch.events:
        if kind == "MODIFIED" and obj["spec"].get("nodeName"):
            first_bound.setdefault(obj["metadata"]["name"], t)
    assert first_bound.keys() == members
    # Together: released at once by the last member's Permit, not one by one.
    assert max(first_bound.values()) - min(first_bound.values()) < 1.0, first_bound
    assert outcomes.get("rejected", 0) >= 1, outcomes  # the group was not yet known
    assert outcomes.get("bound") == 3, outcomes
