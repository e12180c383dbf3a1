"""Gang scheduling (Coscheduling's Permit as the bind verb) under a real kube-scheduler, whose
binding cycle runs in a goroutine per pod: a group without room binds nothing, binds whole
once room appears, and other pods keep being scheduled while the group's binds are held."""

from __future__ import annotations

import time

import pytest

from tests.e2e.realcluster import Scenario, Watch, bound, node, pod, wait_until

pytestmark = pytest.mark.e2e

GANG = """
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  filter:
    enabled:
      - {name: NodeUnschedulable}
      - {name: TaintToleration}
      - {name: NodeAffinity}
      - {name: NodeResourcesFit}
      - {name: Coscheduling}
  score:
    enabled: [{name: NodeResourcesFit, weight: 1}]
pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 8, podGroupBackoffSeconds: 0}
"""
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


def held_binds(scenario: Scenario) -> int:
    return scenario.extender_counts("extender_bind_total", "outcome").get("held", 0)


def test_gang_binds_whole_or_not_at_all(scenario: Scenario) -> None:
    kube = scenario.kube
    names = [f"{scenario.name}-{i}" for i in range(3)]
    # Room for three 1500m members: one per 2-cpu node.
    scenario.add_nodes(*(node(n, cpu="2", memory="8Gi") for n in names))
    ns = scenario.namespace()
    scenario.start(policy=GANG)
    kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": "train", "namespace": ns}, "spec": {"minMember": 4}})
    watch = Watch(kube, f"/api/v1/namespaces/{ns}/pods")
    try:
        for i in range(4):
            kube.create(pod(f"train-{i}", ns, scenario.scheduler, cpu="1500m",
                            labels={GROUP_LABEL: "train"}))

        # Three members reach the bind verb and are held there; the fourth fits nowhere.
        wait_until(lambda: held_binds(scenario) >= 3, timeout=60, what="three held binds")
        # While they are held, kube-scheduler goes on scheduling other pods.
        created = time.monotonic()
        kube.create(pod("web", ns, scenario.scheduler, cpu="100m"))
        wait_until(lambda: "web" in bound(kube.pods(ns)), timeout=10, interval=0.05,
                   what="the non-gang pod bound while the gang's binds are held")
        web_latency = time.monotonic() - created
        assert web_latency < 2.0, f"web bound {web_latency:.2f}s after creation"

        # The group's wait (8 s) runs out: every held bind fails, none is bound. Wait past it
        # and through kube-scheduler's retries of the three.
        wait_until(lambda: scenario.extender_counts("extender_bind_total", "outcome")
                   .get("permit_rejected", 0) >= 3 or None, timeout=60,
                   what="the held binds rejected when the group's wait ran out")
        members = {f"train-{i}" for i in range(4)}
        assert not members & set(bound(kube.pods(ns))), "a member was bound without its group"

        # Room for the fourth: the whole group binds.
        scenario.add_nodes(node(f"{scenario.name}-3", cpu="2", memory="8Gi"))
        placed = wait_until(lambda: members <= set(b := bound(kube.pods(ns))) and b,
                            timeout=120, what="the whole group bound")
        assert len({placed[m] for m in members}) == 4  # one member per node
    finally:
        watch.stop()

    # Over everything the watch saw: no member was bound while the group lacked room, and the
    # four binds came together.
    bind_times = {}
    for at, _, obj in watch.snapshot():
        name = obj["metadata"]["name"]
        if name in members and obj["spec"].get("nodeName") and name not in bind_times:
            bind_times[name] = at
    assert set(bind_times) == members
    assert max(bind_times.values()) - min(bind_times.values()) < 2.0, bind_times
    print(f"\nnon-gang pod bound {web_latency * 1000:.0f} ms after creation while 3 binds "
          f"were held")
