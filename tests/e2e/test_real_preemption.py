"""Preemption through kube-scheduler's extender round (`preemptVerb`, `nodeCacheCapable`):
kube-scheduler's DefaultPreemption proposes victims per node, the extender confirms or prunes
them, kube-scheduler picks among what is left (fewest PDB violations first), evicts, and binds
the preemptor once the victims are gone."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.lag import WatchLag
from tests.e2e.realcluster import Scenario, bound, node, pod, wait_until

pytestmark = pytest.mark.e2e

GPU = "example.com/gpu"
# The extender alone judges the extended resource: kube-scheduler ignores it
# (managedResources ignoredByScheduler), so its dry run proposes nodes without any GPU.
POLICY = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: TaintToleration}, {name: NodeAffinity}, {name: NodeResourcesFit}]
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
  postFilter:
    enabled: [{name: DefaultPreemption}]
"""


def test_preemption_honours_pdbs_and_the_extenders_pruning(scenario: Scenario) -> None:
    from extender.sandbox.controlplane import SchedulerOptions

    kube = scenario.kube
    guarded_node, open_node = f"{scenario.name}-gpu", f"{scenario.name}-plain"
    scenario.add_nodes(node(guarded_node, cpu="2", extended={GPU: "1"}),
                       node(open_node, cpu="2"))
    ns = scenario.namespace()
    _priority_classes(scenario, ns)
    scenario.start(policy=POLICY, options=SchedulerOptions(managed_resources=(GPU,),
                                                           ignored_by_scheduler=True))

    # Both nodes full of low-priority pods; those on the GPU node are guarded by a PDB that
    # allows no disruption.
    kube.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                 "metadata": {"name": "guarded", "namespace": ns},
                 "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "guarded"}}}})
    for i in range(2):
        kube.create(pod(f"guarded-{i}", ns, scenario.scheduler, cpu="1", labels={"app": "guarded"},
                        priority_class=f"{ns}-low", nodeName=guarded_node))
        kube.create(pod(f"open-{i}", ns, scenario.scheduler, cpu="1", labels={"app": "open"},
                        priority_class=f"{ns}-low", nodeName=open_node))
    wait_until(lambda: kube.get("PodDisruptionBudget", "guarded", ns).get("status", {})
               .get("currentHealthy") == 2, timeout=60, what="the PDB to count both pods healthy")

    # A preemptor without a GPU: both nodes can be freed; kube-scheduler takes the one whose
    # victim violates no PDB, and the extender agrees.
    kube.create(pod("urgent", ns, scenario.scheduler, cpu="1", priority_class=f"{ns}-high"))
    placed = wait_until(lambda: bound(kube.pods(ns)).get("urgent"), timeout=60,
                        what="urgent bound")
    assert placed == open_node
    left = {p["metadata"]["name"] for p in kube.pods(ns)}
    assert len(left & {"open-0", "open-1"}) == 1 and {"guarded-0", "guarded-1"} <= left

    # A preemptor needing the GPU: kube-scheduler's dry run (blind to GPUs) proposes the open
    # node again (no PDB violated there); the extender drops it — evicting cannot give it a
    # GPU — so kube-scheduler must evict a guarded pod on the GPU node.
    kube.create(pod("trainer", ns, scenario.scheduler, cpu="1", priority_class=f"{ns}-high",
                    extended={GPU: "1"}))
    try:
        placed = wait_until(lambda: bound(kube.pods(ns)).get("trainer"), timeout=90,
                            what="trainer bound")
    except AssertionError as exc:
        # A rejection by the extender after the victims went is its watch running behind
        # kube-scheduler's (docs/operations.md, "When the extender's watch runs behind").
        raise AssertionError(f"{exc}; trainer's events: "
                             f"{[e.get('message') for e in kube.events_for(ns, 'trainer')]}"
                             ) from None
    assert placed == guarded_node
    left = {p["metadata"]["name"]: p for p in kube.pods(ns)}
    assert len(left.keys() & {"guarded-0", "guarded-1"}) == 1
    assert "urgent" in left
    assert scenario.extender_counts("extender_preempt_node_drops_total", "reason"), \
        "the extender dropped no node"


@pytest.mark.parametrize("victim_watched", [True, False],
                         ids=["victim-watched-first", "victim-just-bound"])
def test_a_preemptor_binds_though_the_extenders_watch_runs_behind(
        scenario: Scenario, tmp_path: Path, victim_watched: bool) -> None:
    """The extender's pod watch runs 3 s behind kube-scheduler's (`WatchLag`).

    kube-scheduler retries the preemptor on its nominated node as soon as its own watch shows
    the victim gone, while the extender still counts it: without catching up (`api.catchup`)
    the extender rejects the node and kube-scheduler parks the pod for
    `podMaxInUnschedulablePodsDuration` (5 minutes) in this quiet cluster. With the victim
    bound a moment before the preemptor comes, kube-scheduler proposes a victim the extender
    has not seen yet: without catching up, the extender finds the pod fitting as is, drops the
    node, and kube-scheduler finds no candidate."""
    kube = scenario.kube
    target = f"{scenario.name}-n"
    scenario.add_nodes(node(target, cpu="2"))
    ns = scenario.namespace()
    _priority_classes(scenario, ns)
    with WatchLag(scenario.sandbox.state_dir / "extender.kubeconfig", delay=3.0) as lag:
        lagged = lag.kubeconfig(tmp_path / "lagged.kubeconfig")
        scenario.start(policy=POLICY, extender_args=["--kubeconfig", str(lagged)])
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
        try:
            placed = wait_until(lambda: bound(kube.pods(ns)).get("urgent"), timeout=60,
                                what="urgent bound (kube-scheduler parks it for 5 minutes "
                                     "when the extender rejects its nominated node or drops "
                                     "it from the preemption's candidates)")
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}; urgent's events: "
                f"{[e.get('message') for e in kube.events_for(ns, 'urgent')]}; the extender's "
                f"requests: {scenario.extender_counts()}") from None
        assert placed == target
        assert "low" not in {p["metadata"]["name"] for p in kube.pods(ns)}
        assert _metric(scenario, "extender_informer_pods_gone_before_watch_total") >= 1
        if not victim_watched:
            assert _metric(scenario, "extender_informer_pods_seen_before_watch_total") >= 1


def _priority_classes(scenario: Scenario, ns: str) -> None:
    """`NS-low` (10) and `NS-high` (1000), deleted after the test."""
    for name, value in (("low", 10), ("high", 1000)):
        scenario.kube.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": f"{ns}-{name}"}, "value": value})
    scenario.cleanups.extend(("PriorityClass", f"{ns}-{n}") for n in ("low", "high"))


def _filter(scenario: Scenario, args: dict[str, object]) -> list[str]:
    assert scenario.extender is not None
    reply = httpx.post(f"{scenario.extender.url}/filter", json=args, timeout=5,
                       trust_env=False).json()
    return reply.get("NodeNames") or []


def _metric(scenario: Scenario, name: str) -> float:
    assert scenario.extender is not None
    text = httpx.get(f"{scenario.extender.url}/metrics", timeout=5, trust_env=False).text
    values = [float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " ")]
    assert len(values) == 1, f"{name} not in /metrics"
    return values[0]
