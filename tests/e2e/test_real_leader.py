"""Two extender replicas behind a Service, electing a leader (serve --leader-elect), under the
real kube-scheduler: the leader is killed while a gang's binds are held there. No partial
group, no pod lost, and scheduling resumes within the lease duration."""

from __future__ import annotations

import time

import pytest

from extender.sandbox.controlplane import LEASE_NAMESPACE, ExtenderEndpoint, SchedulerOptions
from tests.e2e.proxy import Backend, ReadyProxy
from tests.e2e.realcluster import Scenario, Watch, bound, node, pod, wait_until
from tests.e2e.test_real_gang import GANG, GROUP_LABEL

pytestmark = pytest.mark.e2e

LEASE_DURATION = 6.0


def _held(scenario: Scenario, endpoint: ExtenderEndpoint) -> int:
    import httpx

    text = httpx.get(f"{endpoint.url}/metrics", timeout=5, trust_env=False).text
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.splitlines()
               if line.startswith('extender_bind_total{outcome="held"}'))


def test_leader_killed_while_a_gang_is_held(scenario: Scenario) -> None:
    kube, sandbox = scenario.kube, scenario.sandbox
    scenario.add_nodes(*(node(f"{scenario.name}-{i}", cpu="2", memory="8Gi") for i in range(3)))
    ns = scenario.namespace()
    policy = sandbox.state_dir / f"{scenario.name}-policy.yaml"
    policy.write_text(GANG.replace("permitWaitingTimeSeconds: 8",
                                   "permitWaitingTimeSeconds: 30"))
    # The Lease the manifests' Role lets the extender update (components/ha).
    args = ["--leader-elect", "--leader-elect-resource-namespace", LEASE_NAMESPACE,
            "--leader-elect-lease-duration", f"{LEASE_DURATION:g}s",
            "--leader-elect-renew-deadline", "4s", "--leader-elect-retry-period", "1s"]
    replicas = []
    for i, ready in ((0, True), (1, False)):  # the first becomes the leader, the second waits
        name = f"extender-{scenario.name}-{i}"
        replicas.append(sandbox.start_extender(policy=policy, args=args, name=name,
                                               wait_ready=ready))
        scenario.components.append(name)
    leader, standby = replicas
    proxy = ReadyProxy([Backend(e.port, e.health_url) for e in replicas])
    proxy.start()
    try:
        wait_until(lambda: proxy.ready == [proxy.backends[0]], timeout=10,
                   what="the proxy to see the leader alone ready")
        service = ExtenderEndpoint(proxy.url, leader.health_url, "service")
        options = SchedulerOptions(scheduler_names=(scenario.scheduler,))
        name = f"kube-scheduler-{scenario.name}"
        sandbox.start_scheduler(service, options, policy=policy, name=name)
        scenario.components.append(name)
        kube.create({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                     "metadata": {"name": "train", "namespace": ns}, "spec": {"minMember": 4}})
        watch = Watch(kube, f"/api/v1/namespaces/{ns}/pods")
        members = {f"train-{i}" for i in range(4)}
        try:
            for member in sorted(members):
                kube.create(pod(member, ns, scenario.scheduler, cpu="1500m",
                                labels={GROUP_LABEL: "train"}))
            wait_until(lambda: _held(scenario, leader) >= 3, timeout=60,
                       what="three binds held at the leader")

            # The leader dies with three binds held: kube-scheduler's calls fail.
            killed = time.monotonic()
            sandbox.stop(leader.name, kill=True)
            kube.create(pod("probe", ns, scenario.scheduler, cpu="100m"))
            wait_until(lambda: proxy.ready == [proxy.backends[1]], timeout=30, interval=0.05,
                       what="the standby ready as the new leader")
            resumed = time.monotonic() - killed
            # The standby takes over once the leader's record has stood still for the lease
            # duration on its own clock (checked every retry period, with up to 20 % jitter;
            # the last renewal up to a retry period before the kill), and the proxy sees it
            # ready within its 0.2 s poll; 2 s for the API calls on the way (the Lease read
            # that saw the last renewal, then the read and the update that take it over),
            # which the whole suite's load on two cores has made take 10.4 s in all once.
            assert resumed < LEASE_DURATION + 2 * 1.2 + 2.0, f"took over after {resumed:.1f}s"
            # The pod that met the dead leader is tried again after kube-scheduler's error
            # backoff (1, 2, 4, 8 s: up to ~15 s after the kill), and binds through the new one.
            wait_until(lambda: "probe" in bound(kube.pods(ns)), timeout=60, interval=0.1,
                       what="a pod bound through the new leader")
            probe_bound = time.monotonic() - killed
            assert not members & set(bound(kube.pods(ns))), "a member bound without its group"

            # Room for the fourth: the group binds whole, through the new leader.
            scenario.add_nodes(node(f"{scenario.name}-3", cpu="2", memory="8Gi"))
            wait_until(lambda: members <= set(bound(kube.pods(ns))), timeout=120,
                       what="the whole group bound")
            watch.catch_up(members)  # the bindings below are read from the watch
        finally:
            watch.stop()
    finally:
        proxy.stop()
    first_bind = watch.first_bound()
    nodes_of: dict[str, set[str]] = {}
    for _, _, obj in watch.snapshot():
        if node_name := obj["spec"].get("nodeName"):
            nodes_of.setdefault(obj["metadata"]["name"], set()).add(node_name)
    assert members <= set(first_bind)
    assert all(len(nodes_of[m]) == 1 for m in members)  # bound once
    spread = max(first_bind[m] for m in members) - min(first_bind[m] for m in members)
    assert spread < 5.0, spread  # together: a partial group would wait out the 30 s permit
    assert _held(scenario, standby) >= 3  # the new leader held them again
    print(f"\nthe standby took over {resumed:.1f}s after the leader was killed, and the pod "
          f"that met the dead leader bound {probe_bound:.1f}s after it "
          f"(lease duration {LEASE_DURATION:g}s); the gang bound whole through the new leader")
