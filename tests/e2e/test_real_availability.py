"""The extender down or restarted under a real kube-scheduler: `ignorable` decides whether
scheduling goes on without it, and a restart mid-run loses no pod and binds none twice."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from extender.sandbox.api import Api
from extender.sandbox.controlplane import SchedulerOptions
from tests.e2e.realcluster import Scenario, bound, node, pod, wait_until

pytestmark = pytest.mark.e2e

FIT = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: TaintToleration}, {name: NodeResourcesFit}]
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
"""


def test_ignorable_extender_down_scheduling_goes_on(scenario: Scenario) -> None:
    kube = scenario.kube
    scenario.add_nodes(node(f"{scenario.name}-0"))
    ns = scenario.namespace()
    # `ignorable` covers filter and prioritize; a bind verb would still need the extender
    # (kube-scheduler's extender binding is not skipped), so this one does not bind.
    scenario.start(policy=FIT, options=SchedulerOptions(verbs=("filter", "prioritize"),
                                                        ignorable=True))
    scenario.stop_extender()
    for i in range(3):
        kube.create(pod(f"p-{i}", ns, scenario.scheduler))
    wait_until(lambda: len(bound(kube.pods(ns))) == 3, timeout=60,
               what="the pods bound without the extender")


def test_required_extender_down_pods_wait_with_the_error(scenario: Scenario) -> None:
    kube = scenario.kube
    scenario.add_nodes(node(f"{scenario.name}-0"))
    ns = scenario.namespace()
    scenario.start(policy=FIT)
    assert scenario.extender is not None
    url = scenario.extender.url
    scenario.stop_extender()
    kube.create(pod("stuck", ns, scenario.scheduler))
    messages = wait_until(lambda: kube.scheduler_messages(ns, "stuck", scenario.scheduler),
                          timeout=60, what="kube-scheduler's FailedScheduling event")
    assert f'Post "{url}/filter"' in messages[0] and "connection refused" in messages[0], \
        messages[0]
    assert not bound(kube.pods(ns))

    # Back up: the pod is scheduled (kube-scheduler retries it after its backoff).
    scenario.restart_extender()
    wait_until(lambda: "stuck" in bound(kube.pods(ns)), timeout=120,
               what="the pod bound once the extender is back")


def test_restart_mid_run_loses_no_pod_and_binds_none_twice(scenario: Scenario) -> None:
    kube = scenario.kube
    scenario.add_nodes(*(node(f"{scenario.name}-{i}") for i in range(3)))
    ns = scenario.namespace()
    scenario.start(policy=FIT)
    pods = [pod(f"p-{i:03d}", ns, scenario.scheduler) for i in range(120)]

    async def create_all(api: Api) -> None:
        await asyncio.gather(*(api.create(p) for p in pods))
    scenario.sandbox.run(create_all)
    wait_until(lambda: len(bound(kube.pods(ns))) >= 20, timeout=60, interval=0.05,
               what="a first part of the pods bound")
    scenario.stop_extender()  # SIGTERM mid-run: requests in flight fail
    scenario.restart_extender()
    placed = wait_until(lambda: len(b := bound(kube.pods(ns))) == 120 and b, timeout=300,
                        interval=1.0, what="every pod bound after the restart")
    assert len(placed) == 120
    # Every pod was bound once: one Scheduled event each from kube-scheduler, and the API's
    # binding is the node kube-scheduler reported.
    scheduled: Counter[str] = Counter()
    for event in kube.list("Event", ns):
        if event.get("reason") == "Scheduled":
            scheduled[event["involvedObject"]["name"]] += event.get("count") or 1
    assert set(scheduled) == set(placed)
    assert max(scheduled.values()) == 1, scheduled.most_common(3)
