"""Preemption through kube-scheduler's extender round (`preemptVerb`, `nodeCacheCapable`):
kube-scheduler's DefaultPreemption proposes victims per node, the extender confirms or prunes
them, kube-scheduler picks among what is left (fewest PDB violations first), evicts, and binds
the preemptor once the victims are gone."""

from __future__ import annotations

import pytest

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
    scenario.priority_classes(ns)
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
