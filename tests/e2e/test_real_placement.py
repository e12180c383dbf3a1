"""A real kube-scheduler places pods where only the extender's plugins would put them."""

from __future__ import annotations

from typing import Any

import pytest

from extender.sandbox.controlplane import SchedulerOptions
from tests.e2e.realcluster import Scenario, bound, node, pod, wait_until

pytestmark = pytest.mark.e2e

# NodeResourcesAllocatable (scheduler-plugins) in Least mode: the smallest node first. No
# in-tree plugin scores allocatable alone; LeastAllocated prefers the big, emptier node.
SMALLEST_FIRST = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: NodeResourcesFit}]
  score:
    enabled: [{name: NodeResourcesAllocatable, weight: 1}]
pluginConfig:
  - name: NodeResourcesAllocatable
    args: {mode: Least}
"""


@pytest.mark.parametrize("node_cache", [True, False], ids=["names", "nodes"])
def test_extender_decides_placement(scenario: Scenario, node_cache: bool) -> None:
    kube = scenario.kube
    small, big = f"{scenario.name}-small", f"{scenario.name}-big"
    scenario.add_nodes(node(small, cpu="2", memory="4Gi"), node(big, cpu="32", memory="128Gi"))
    ns = scenario.namespace()
    args = [] if node_cache else ["--nodes-form"]
    scenario.start(policy=SMALLEST_FIRST, extender_args=args,
                   options=SchedulerOptions(weight=5, node_cache=node_cache))
    plain = f"{scenario.scheduler}-plain"
    scenario.start_plain_scheduler(plain)

    # The plain scheduler's pods first, then the extender's one at a time, each once the one
    # before runs: the informer events of other pods (their binds, the node agent marking them
    # Running) then do not fall between a filter's reply and its bookkeeping, which drops
    # what it would have prepared (below) when the state changed in between.
    for i in range(3):
        kube.create(pod(f"alone-{i}", ns, plain))
    wait_until(lambda: _running(kube.pods(ns)) >= {f"alone-{i}" for i in range(3)}, timeout=60,
               what="the plain scheduler's three pods running")
    for i in range(3):
        # Each its own spec: no filter reply is reused for another (see below).
        kube.create(pod(f"with-{i}", ns, scenario.scheduler, cpu=f"{100 + 10 * i}m"))
        wait_until(lambda i=i: f"with-{i}" in _running(kube.pods(ns)), timeout=60,
                   what=f"with-{i} running")
    placed = bound(kube.pods(ns))

    assert {placed[f"with-{i}"] for i in range(3)} == {small}
    assert {placed[f"alone-{i}"] for i in range(3)} == {big}
    # Each pod went through the extender's filter, prioritize and bind exactly once. (A
    # request is counted once answered, just after the binding it wrote is visible.)
    once = {"filter": 3, "prioritize": 3, "bind": 3}
    try:
        wait_until(lambda: scenario.extender_counts() == once, timeout=10,
                   what="one filter, prioritize and bind counted per pod")
    except AssertionError:
        pass
    counts = scenario.extender_counts()
    assert counts == once, counts
    if node_cache:
        # kube-scheduler's prioritize named the nodes the filter passed, byte for byte: from
        # the second pod on, a filter prepares its pod's prioritize reply unless an informer
        # event came between its reply and the preparing (the node agent's heartbeat, say),
        # and the prioritize is served it unless one came before the prioritize. Nothing at
        # all is prepared if the prioritize names another list. (Distinct pods: one prepared
        # reply serves one.)
        anticipated = scenario.extender_counts("extender_prioritize_anticipated_total",
                                               "outcome")
        assert 1 <= anticipated.get("prepared", 0) <= 2, anticipated
        assert anticipated.get("used", 0) <= anticipated["prepared"], anticipated


def _running(pods: list[dict[str, Any]]) -> set[str]:
    return {p["metadata"]["name"] for p in pods if p.get("status", {}).get("phase") == "Running"}
