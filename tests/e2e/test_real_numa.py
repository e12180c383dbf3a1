"""NodeResourceTopologyMatch's overreserve cache under a real kube-scheduler: a pod the bind
verb bound counts against every NUMA cell of its node until the node agent's report that
counts it (its pod fingerprint) is taken at a resync; a report made before is not."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from extender.model import podfingerprint
from tests.e2e.realcluster import Scenario, bound, node, pod, wait_until

pytestmark = pytest.mark.e2e

NUMA = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: NodeResourcesFit}, {name: NodeResourceTopologyMatch}]
pluginConfig:
  - name: NodeResourceTopologyMatch
    args: {cacheResyncPeriodSeconds: 1}
"""


def report(name: str, cell0_cpu: str, pods: list[tuple[str, str]]) -> dict[str, Any]:
    """The agent's NodeResourceTopology: two cells of 4 cpus and 8Gi, single-numa-node."""
    def cell(i: int, cpu: str) -> dict[str, Any]:
        return {"name": f"node-{i}", "type": "Node", "resources": [
            {"name": "cpu", "capacity": "4", "allocatable": "4", "available": cpu},
            {"name": "memory", "capacity": "8Gi", "allocatable": "8Gi", "available": "8Gi"}]}

    return {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
            "metadata": {"name": name}, "zones": [cell(0, cell0_cpu), cell(1, "4")],
            "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                           {"name": "topologyManagerScope", "value": "container"},
                           {"name": podfingerprint.ATTRIBUTE,
                            "value": podfingerprint.sign(pods)}]}


def guaranteed(name: str, ns: str, scheduler: str, node_name: str) -> dict[str, Any]:
    obj = pod(name, ns, scheduler, cpu="3", memory="1Gi",
              nodeSelector={"kubernetes.io/hostname": node_name})
    main = obj["spec"]["containers"][0]
    main["resources"]["limits"] = dict(main["resources"]["requests"])
    return obj


def test_a_bind_counts_until_the_report_that_counts_its_pod(scenario: Scenario) -> None:
    kube = scenario.kube
    name = f"{scenario.name}-numa"
    scenario.add_nodes(node(name, cpu="8", memory="16Gi"))
    kube.create(report(name, "4", []))
    scenario.cleanups.append(("NodeResourceTopology", name))
    ns = scenario.namespace()
    scenario.start(policy=NUMA)
    assert scenario.extender is not None
    metrics_url = f"{scenario.extender.url}/metrics"

    def metric(metric_name: str) -> float:
        for line in httpx.get(metrics_url, timeout=5, trust_env=False).text.splitlines():
            if line.startswith(metric_name + " "):
                return float(line.split()[1])
        return 0.0

    def refused() -> list[str]:
        return [m for m in kube.scheduler_messages(ns, "second", scenario.scheduler)
                if "cannot align container" in m]

    def numa_rejections() -> int:
        return scenario.extender_counts("extender_filter_rejections_total", "plugin").get(
            "NodeResourceTopologyMatch", 0)

    def retry_second() -> None:
        """A cluster event, so kube-scheduler tries the pending pod again."""
        kube.patch("Node", name, {"metadata": {"labels": {"touched": str(metric(
            "extender_nrt_cache_resyncs_total"))}}})

    kube.create(guaranteed("first", ns, scenario.scheduler, name))
    wait_until(lambda: bound(kube.pods(ns)).get("first") == name, timeout=60,
               what="the first pod bound")
    # 1 cpu left on either cell, as far as the cache knows: the second cannot align.
    kube.create(guaranteed("second", ns, scenario.scheduler, name))
    wait_until(refused, timeout=60, what="the second pod refused: cannot align container")
    wait_until(lambda: kube.get("Pod", "first", ns).get("status", {}).get("phase") == "Running",
               timeout=60, what="the first pod running")

    # The agent reports before the kubelet admitted `first`: a fingerprint of no pod.
    kube.patch("NodeResourceTopology", name, {"attributes": report(name, "4", [])["attributes"]})
    rounds = metric("extender_nrt_cache_resyncs_total")
    wait_until(lambda: metric("extender_nrt_cache_resyncs_total") >= rounds + 2, timeout=30,
               what="two resyncs after the early report")
    before = numa_rejections()
    retry_second()
    # The only node the pod may take refused again (kube-scheduler binds nothing after that).
    wait_until(lambda: numa_rejections() > before, timeout=60,
               what="the second pod refused again after the early report")
    assert "second" not in bound(kube.pods(ns))
    assert metric("extender_nrt_cache_flushed_nodes_total") == 0

    # The report that counts `first` (on cell 0) is taken, and the second fits cell 1.
    kube.patch("NodeResourceTopology", name, {
        "zones": report(name, "1", [])["zones"],
        "attributes": report(name, "1", [(ns, "first")])["attributes"]})
    wait_until(lambda: metric("extender_nrt_cache_flushed_nodes_total") >= 1, timeout=30,
               what="the resync to take the report that counts the first pod")
    retry_second()
    wait_until(lambda: bound(kube.pods(ns)).get("second") == name, timeout=60,
               what="the second pod bound once the cache took the report")


GANG_NUMA = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled: [{name: NodeResourcesFit}, {name: Coscheduling}, {name: NodeResourceTopologyMatch}]
pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 8, podGroupBackoffSeconds: 120}
  - name: NodeResourceTopologyMatch
    args: {cacheResyncPeriodSeconds: 1}
"""


def test_a_held_bind_counts_and_its_rejection_gives_the_room_back(scenario: Scenario) -> None:
    # kube-scheduler reserves a pod before its Permit and binds it from a goroutine while it
    # schedules the next pods; here a gang member's bind is held at Coscheduling's Permit (in
    # the bind verb) while another pod asks for the same NUMA room.
    kube = scenario.kube
    name = f"{scenario.name}-numa"
    scenario.add_nodes(node(name, cpu="8", memory="16Gi"))
    kube.create(report(name, "4", []))  # no pod counted: no resync ever takes a newer one
    scenario.cleanups.append(("NodeResourceTopology", name))
    ns = scenario.namespace()
    scenario.start(policy=GANG_NUMA)
    kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": "pair", "namespace": ns}, "spec": {"minMember": 2}})
    member = guaranteed("member", ns, scenario.scheduler, name)
    member["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "pair"}
    # Its sibling exists (PreFilter counts it) but fits no node: `member` waits for it.
    sibling = guaranteed("sibling", ns, scenario.scheduler, f"{scenario.name}-nowhere")
    sibling["metadata"]["labels"] = dict(member["metadata"]["labels"])
    kube.create(sibling)
    kube.create(member)
    touches = iter(range(1_000_000))

    def held() -> int:
        count = scenario.extender_counts("extender_bind_total", "outcome").get("held", 0)
        if not count:
            # Coscheduling's PreFilter (the extender's filter) may have met `member` before the
            # extender's watch brought `sibling`: a node event makes kube-scheduler retry it.
            kube.patch("Node", name, {"metadata": {"labels": {"touched": str(next(touches))}}})
        return count

    wait_until(held, timeout=60, interval=1.0, what="the member's bind held at Permit")

    def refused() -> list[str]:
        return [m for m in kube.scheduler_messages(ns, "solo", scenario.scheduler)
                if "cannot align container" in m]

    # The held member counts on both cells (1 cpu left on each): `solo` cannot align.
    kube.create(guaranteed("solo", ns, scenario.scheduler, name))
    wait_until(refused, timeout=30, what="solo refused while the member's bind is held")
    assert "solo" not in bound(kube.pods(ns))
    # The group's wait runs out: the held bind fails and is unreserved (the group then backs
    # off for 2 minutes), and kube-scheduler's retry of `solo` finds a whole cell again.
    placed = wait_until(lambda: bound(kube.pods(ns)).get("solo"), timeout=60,
                        what="solo bound once the member's bind failed")
    assert placed == name
    assert "member" not in bound(kube.pods(ns))
