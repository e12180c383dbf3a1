"""Gang scheduling (Coscheduling's Permit as the bind verb) under a real kube-scheduler, whose
binding cycle runs in a goroutine per pod: a group without room binds nothing, binds whole
once room appears, and other pods keep being scheduled while the group's binds are held."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from extender.sandbox.api import Api
from tests.e2e.lag import lagged
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
        # Well inside the group's 8 s wait, which it would have waited out behind the held
        # binds (a full cycle through the extender on a loaded machine: up to seconds).
        assert web_latency < 5.0, f"web bound {web_latency:.2f}s after creation"

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
        watch.catch_up(members)  # the bindings below are read from the watch
    finally:
        watch.stop()

    # Over everything the watch saw: no member was bound while the group lacked room, and the
    # four binds came together.
    bind_times = {name: at for name, at in watch.first_bound().items() if name in members}
    assert set(bind_times) == members
    assert max(bind_times.values()) - min(bind_times.values()) < 5.0, bind_times
    print(f"\nnon-gang pod bound {web_latency * 1000:.0f} ms after creation while 3 binds "
          f"were held")


@pytest.mark.slow
# Not `alone`: beside two to four busy loops that keep both cores full, the 600 binds came
# 7.5–8.5 s after the first create (2026-12-03), far inside the 60 s permit wait.
def test_a_gang_past_the_connection_cap_binds_whole_at_default_settings(scenario: Scenario) -> None:
    # kube-scheduler binds each member in its own goroutine, on its own connection to the
    # extender: 600 binds held at once, past the default --max-connections of 512. (2 000
    # held binds, in-process: tests/e2e/test_big_gangs.py.)
    kube = scenario.kube
    members = 600
    scenario.add_nodes(*(node(f"{scenario.name}-{i}", cpu="64", memory="256Gi", pods="250")
                         for i in range(10)))
    ns = scenario.namespace()
    scenario.start(policy=GANG.replace("permitWaitingTimeSeconds: 8", "permitWaitingTimeSeconds: 60"))
    kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                 "metadata": {"name": "train", "namespace": ns},
                 "spec": {"minMember": members}})
    pods = [pod(f"w-{i:04d}", ns, scenario.scheduler, cpu="10m", memory="16Mi",
                labels={GROUP_LABEL: "train"}) for i in range(members)]

    async def create_all(api: Api) -> None:
        limit = asyncio.Semaphore(32)

        async def one(p: dict) -> None:
            async with limit:
                await api.create(p)
        await asyncio.gather(*(one(p) for p in pods))
    watch = Watch(kube, f"/api/v1/namespaces/{ns}/pods")
    try:
        started = time.monotonic()
        scenario.sandbox.run(create_all)
        placed = wait_until(lambda: len(b := bound(kube.pods(ns))) == members and b,
                            timeout=300, interval=1.0, what="the whole gang bound")
        elapsed = time.monotonic() - started
        watch.catch_up(placed)
    finally:
        watch.stop()
    assert len(placed) == members
    outcomes = scenario.extender_counts("extender_bind_total", "outcome")
    # (With the filter's rejections by plugin: a member parked by a rejection made the held
    # ones wait out the group's timeout, as one did once: `api.catchup.pods_first`.)
    assert outcomes.get("held", 0) >= members - 1 and not outcomes.get("permit_rejected"), \
        (outcomes, scenario.extender_counts("extender_filter_rejections_total", "plugin"))
    # Every member but the last was held, none rejected: none bound before the group was whole.
    bind_times = sorted(watch.first_bound().values())
    first_bound = bind_times[0] - started
    print(f"\n{members}-member gang: created and scheduled, first bind {first_bound:.1f}s, "
          f"all bound {elapsed:.1f}s after the first create; binds spread over "
          f"{bind_times[-1] - bind_times[0]:.1f}s")


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
    with lagged(scenario, tmp_path, GANG):
        kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                     "metadata": {"name": "train", "namespace": ns}, "spec": {"minMember": 3}})
        watch = Watch(kube, f"/api/v1/namespaces/{ns}/pods")
        try:
            for name in sorted(members):
                kube.create(pod(name, ns, scenario.scheduler, cpu="1500m",
                                labels={GROUP_LABEL: "train"}))
            wait_until(lambda: members <= set(bound(kube.pods(ns))) or None, timeout=60,
                       what="the whole group bound (kube-scheduler retries a failed bind)")
            watch.catch_up(members)
        finally:
            watch.stop()
        outcomes = scenario.extender_counts("extender_bind_total", "outcome")
    first_bound = watch.first_bound()
    assert first_bound.keys() == members
    # Together: released at once by the last member's Permit, not one by one.
    assert max(first_bound.values()) - min(first_bound.values()) < 1.0, first_bound
    assert outcomes.get("rejected", 0) >= 1, outcomes  # the group was not yet known
    assert outcomes.get("bound") == 3, outcomes


def test_a_gangs_members_arriving_while_the_watch_runs_behind_bind_within_seconds(
        scenario: Scenario, tmp_path: Path) -> None:
    """A PodGroup the extender knows, then its pods created back to back while the extender's
    watch runs 3 s behind kube-scheduler's. Coscheduling's PreFilter refuses each member at
    first (its siblings not yet watched); kube-scheduler retries each as the others arrive and
    a backoff later, which the last arrival is the last event for: without reading the group's
    pods again (`api.catchup.pods_first`) the extender refused that retry too, and the members
    waited, parked, for kube-scheduler's 5-minute flush."""
    kube = scenario.kube
    names = [f"{scenario.name}-{i}" for i in range(3)]
    scenario.add_nodes(*(node(n, cpu="2", memory="8Gi") for n in names))
    ns = scenario.namespace()
    members = {f"train-{i}" for i in range(3)}
    with lagged(scenario, tmp_path, GANG):
        kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                     "metadata": {"name": "train", "namespace": ns}, "spec": {"minMember": 3}})
        assert scenario.extender is not None
        wait_until(lambda: scenario.extender_counts("extender_informer_events_total",
                                                    "resource").get("podgroups", 0) >= 1,
                   timeout=30, what="the extender to know the group")
        created = time.monotonic()
        for name in sorted(members):
            kube.create(pod(name, ns, scenario.scheduler, cpu="1500m",
                            labels={GROUP_LABEL: "train"}))
        try:
            wait_until(lambda: members <= set(bound(kube.pods(ns))) or None, timeout=60,
                       what="the whole group bound")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the end of the extender's log:\n"
                                 f"{scenario.sandbox.log_tail(scenario.extender.name, 30)}") from None
        elapsed = time.monotonic() - created
        seen = scenario.extender_metric("extender_informer_pods_seen_before_watch_total")
    assert elapsed < 30, f"the group bound {elapsed:.1f}s after its pods were created"
    assert seen >= 1  # the group's pods were read before their watch events came
