"""The extender's reasons reach the pod's FailedScheduling event, in kube-scheduler's own
sentence."""

from __future__ import annotations

import pytest

from tests.e2e.realcluster import Scenario, fit_error, node, pod, wait_until

pytestmark = pytest.mark.e2e

# The extender's NodeAffinity adds a required term kube-scheduler's own profile does not have
# (addedAffinity), so only the extender rejects the untainted node.
GOLD_ONLY = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: NodeAffinity}, {name: NodeResourcesFit}]
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
            - matchExpressions: [{key: e2e/pool, operator: In, values: [gold]}]
"""


def test_extender_reasons_in_failed_scheduling(scenario: Scenario) -> None:
    kube = scenario.kube
    plain, tainted = f"{scenario.name}-plain", f"{scenario.name}-tainted"
    scenario.add_nodes(node(plain), node(tainted, taints=[
        {"key": "e2e/dedicated", "value": "infra", "effect": "NoSchedule"}]))
    ns = scenario.namespace()
    scenario.start(policy=GOLD_ONLY)
    kube.create(pod("lonely", ns, scenario.scheduler))

    messages = wait_until(lambda: kube.scheduler_messages(ns, "lonely", scenario.scheduler),
                          timeout=60, what="kube-scheduler's FailedScheduling event")
    # The extender's reason (scheduler-enforced affinity: its addedAffinity) beside
    # kube-scheduler's own (the taint), counted over all nodes.
    assert messages[0] == fit_error(
        scenario.sandbox.binaries.version,
        "0/2 nodes are available: 1 node(s) didn't match scheduler-enforced node affinity, "
        "1 node(s) had untolerated taint(s)",
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert kube.get("Pod", "lonely", ns)["spec"].get("nodeName") is None
    # The extender's own event counts only the candidates kube-scheduler sent it. Its
    # recorder posts it on its own schedule: it may come after kube-scheduler's.
    ours = wait_until(lambda: kube.scheduler_messages(ns, "lonely", "scheduler-extender"),
                      timeout=30, what="the extender's FailedScheduling event")
    assert ours == ["0/1 nodes are available: 1 node(s) didn't match scheduler-enforced node "
                    "affinity."]
