"""Elastic quotas (CapacityScheduling in the filter verb, its reservations standing in for
Reserve) under a real kube-scheduler, with 200 pods in three namespaces created at once."""

from __future__ import annotations

import asyncio
from collections import defaultdict

import pytest

from extender.sandbox.api import Api
from tests.e2e.realcluster import Scenario, Watch, bound, fit_error, node, pod, wait_until

pytestmark = pytest.mark.e2e

QUOTA = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled:
      - {name: NodeUnschedulable}
      - {name: TaintToleration}
      - {name: NodeAffinity}
      - {name: NodeResourcesFit}
      - {name: CapacityScheduling}
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
  postFilter:
    enabled: [{name: CapacityScheduling}]
"""
MIN_MILLI, MAX_MILLI, POD_MILLI = 2000, 3000, 100
TEAMS = ("alpha", "beta", "gamma")


def cpu_milli(p: dict) -> int:
    text = p["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    return int(text[:-1]) if text.endswith("m") else int(float(text) * 1000)


def test_quotas_never_exceed_max_and_borrowing_stops_at_the_sum_of_mins(
        scenario: Scenario) -> None:
    kube = scenario.kube
    # Far more room than the quotas allow: only the quotas stop the pods.
    scenario.add_nodes(*(node(f"{scenario.name}-{i}", cpu="16", memory="64Gi")
                         for i in range(3)))
    namespaces = [scenario.namespace(f"{scenario.name[:20]}-{t}") for t in TEAMS]
    for ns in namespaces:
        kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                     "metadata": {"name": "quota", "namespace": ns},
                     # Memory too: a resource left out of a given max is a max of 0 upstream,
                     # which would turn away every pod requesting memory.
                     "spec": {"min": {"cpu": f"{MIN_MILLI}m", "memory": "8Gi"},
                              "max": {"cpu": f"{MAX_MILLI}m", "memory": "16Gi"}}})
    scenario.start(policy=QUOTA, options=_options())
    watches = [Watch(kube, f"/api/v1/namespaces/{ns}/pods") for ns in namespaces]

    # 200 pods, created at once from concurrent requests, interleaved across the namespaces.
    pods = [pod(f"job-{i}", namespaces[i % 3], scenario.scheduler, cpu=f"{POD_MILLI}m")
            for i in range(200)]

    async def create_all(api: Api) -> None:
        await asyncio.gather(*(api.create(p) for p in pods))
    scenario.sandbox.run(create_all)

    sum_of_mins = MIN_MILLI * len(TEAMS)

    def settled() -> dict[str, int] | None:
        per_ns = {ns: len(bound(kube.pods(ns))) * POD_MILLI for ns in namespaces}
        pending = [p for ns in namespaces for p in kube.pods(ns)
                   if not p["spec"].get("nodeName")]
        # Done once the total is at the sum of the mins and every pending pod has been turned
        # away at least once.
        if sum(per_ns.values()) < sum_of_mins:
            return None
        turned_away = {(ns, name) for ns in namespaces
                       for name in kube.pods_reported(ns, scenario.scheduler)}
        if any((p["metadata"]["namespace"], p["metadata"]["name"]) not in turned_away
               for p in pending):
            return None
        return per_ns
    per_ns = wait_until(settled, timeout=180, interval=1.0, what="the quotas to fill")
    for ns, w in zip(namespaces, watches, strict=True):
        w.catch_up(bound(kube.pods(ns)))  # the bindings below are read from the watches
        w.stop()

    # Never over max, at any moment the watches saw.
    used: dict[str, int] = defaultdict(int)
    seen: set[tuple[str, str]] = set()
    for at, _, obj in sorted((e for w in watches for e in w.snapshot()), key=lambda e: e[0]):
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        if obj["spec"].get("nodeName") and key not in seen:
            seen.add(key)
            used[key[0]] += cpu_milli(obj)
            assert used[key[0]] <= MAX_MILLI, f"{key[0]} used {used[key[0]]}m > max at {at}"
            assert sum(used.values()) <= sum_of_mins, f"total {sum(used.values())}m at {at}"
    assert dict(used) == per_ns

    # Contended, it stops at the sum of the mins: CapacityScheduling turns away every pod once
    # the quotas' total use would pass it (counting the pods on their way to a bind), however
    # much room the nodes have left.
    total = sum(per_ns.values())
    assert total == sum_of_mins, per_ns
    pending = [p for ns in namespaces for p in kube.pods(ns) if not p["spec"].get("nodeName")]
    assert len(pending) == 200 - total // POD_MILLI
    for p in pending:
        meta = p["metadata"]
        last = kube.scheduler_messages(meta["namespace"], meta["name"], scenario.scheduler)[-1]
        assert last == fit_error(
            scenario.sandbox.binaries.version,
            f"0/3 nodes are available: 3 Pod {meta['namespace']}/{meta['name']} is rejected in "
            "PreFilter because total ElasticQuota used is more than min",
            "0/3 nodes are available: 3 No preemption victims found for incoming pod."), last
    # A namespace may end under its min while another borrowed: upstream reclaims that through
    # CapacityScheduling's PostFilter, preempting borrowers of any priority, but kube-scheduler's
    # DefaultPreemption proposes only lower-priority victims to the extender (README).
    print(f"\nbound per namespace (m): {per_ns}; total {total}m, sum of mins {sum_of_mins}m")


def _options():
    from extender.sandbox.controlplane import SchedulerOptions

    return SchedulerOptions(qps=200, burst=400)
