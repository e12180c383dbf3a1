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
    scenario.add_nodes(*(node(f"{scenario.name}-{i}", cpu="16", memory="64Gi", pods="250")
                         for i in range(3)))
    ns = scenario.namespace()
    scenario.start(policy=FIT)
    count, waves = 300, 30
    pods = [pod(f"p-{i:03d}", ns, scenario.scheduler, cpu="10m", memory="16Mi")
            for i in range(count)]

    # Pods keep arriving (a wave every 0.1 s); a third of the way through the extender is
    # killed (SIGKILL: requests in flight get no answer), and started again a second later.
    async def arrive(api: Api) -> None:
        per_wave = count // waves
        for wave in range(waves):
            if wave == waves // 3:
                scenario.stop_extender(kill=True)
            if wave == waves // 3 + 10:
                await asyncio.to_thread(scenario.restart_extender)
            await asyncio.gather(*(api.create(p) for p in
                                   pods[wave * per_wave:(wave + 1) * per_wave]))
            await asyncio.sleep(0.1)  # pacing the arrivals, not waiting for anything
    scenario.sandbox.run(arrive)
    placed = wait_until(lambda: len(b := bound(kube.pods(ns))) == count and b, timeout=300,
                        interval=1.0, what="every pod bound after the restart")
    # The restarted extender answered its share: the run really went on across the restart.
    assert scenario.extender_counts().get("bind", 0) >= count // 3
    # Every pod was bound once: one Scheduled event each from kube-scheduler. A bind the
    # extender completed at the API but whose answer the crash lost: kube-scheduler counts the
    # binding failed, then finds the pod bound — no second bind, and no Scheduled event for
    # it. kube-scheduler posts its events through its own rate-limited client, seconds after
    # the last binds: they are waited for.
    def events() -> tuple[Counter[str], set[str]]:
        scheduled: Counter[str] = Counter()
        failed: set[str] = set()
        for event in kube.list("Event", ns):
            if event.get("reason") == "Scheduled":
                scheduled[event["involvedObject"]["name"]] += event.get("count") or 1
            elif event.get("reason") == "FailedScheduling":
                failed.add(event["involvedObject"]["name"])
        return scheduled, failed

    def settled() -> tuple[Counter[str], set[str]] | None:
        scheduled, failed = events()
        return (scheduled, failed) if set(placed) - set(scheduled) <= failed else None

    try:
        scheduled, failed = wait_until(settled, timeout=60, interval=1.0,
                                       what="a Scheduled event for every pod bound (or a "
                                            "failed cycle for one whose reply was lost)")
    except AssertionError:
        scheduled, failed = events()
    assert max(scheduled.values()) == 1, scheduled.most_common(3)
    assert failed, "no pod met the extender down"
    lost_replies = set(placed) - set(scheduled)
    assert lost_replies <= failed, lost_replies - failed
    print(f"\n{len(failed)} of {count} pods failed a cycle while the extender was down")
