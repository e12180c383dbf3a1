"""Divergences the real kube-scheduler showed (`extender simulate --on-sandbox`, then
`--agreement`), each fixed in the simulator and held here by a scripted scenario that needs
no sandbox. Each test names what the real run did."""

from __future__ import annotations

from extender.simulator.clock import SECOND
from tests.simulator.helpers import at, by_name, node, pod, simulate


def _without_uid(obj: dict) -> dict:
    obj["metadata"].pop("uid")
    return obj


def test_a_snapshot_pod_without_uid_is_preempted_and_goes(tmp_path):
    """Real: `urgent` preempts `filler` (a hand-written snapshot pod, no metadata.uid) and binds
    once its 1 s grace period is over. The simulator kept the terminating victim on its node
    for ever (pods are keyed by uid: every uid-less pod shared the key ""), so `urgent` stayed
    Pending. Now a missing uid is derived from namespace/name, as for workload pods."""
    cluster = [node("n1", "4", "8Gi"),
               _without_uid(pod("filler", "3", priority=10, node_name="n1",
                                terminationGracePeriodSeconds=1)),
               _without_uid(pod("other", "500m", priority=10, node_name="n1"))]
    workload = [pod("urgent", "2", priority=1000, created=at(4))]
    _, report = simulate(tmp_path, cluster, workload, seed=0,
                         policy={"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"})
    pods = by_name(report)
    assert pods["filler"]["status"] == "Preempted"
    assert pods["urgent"]["status"] == "Scheduled" and pods["urgent"]["node"] == "n1"
    # Its attempt at 0.001 s (time 0: its arrival), the victim's 1 s, then the retry.
    assert pods["urgent"]["scheduledAtSeconds"] == 1.002
    # Both uid-less pods kept their room: 3.5 cpu before, then 0.5 + 2 after.
    (n1,) = report["nodes"]
    assert (n1["before"]["cpuMilli"], n1["after"]["cpuMilli"]) == (3500, 2500)


def test_dynamic_resources_post_filter_errs_when_prefilter_stopped_before_it(tmp_path):
    """Real (kube-scheduler 1.34.4 with scheduler-plugins): a gang member Coscheduling's
    PreFilter rejects (UnschedulableAndUnresolvable: too few siblings) ends its FailedScheduling
    `… minMember of group: 3. not found`. RunPreFilterPlugins stopped there, so
    DynamicResources' PreFilter never wrote its cycle state; its PostFilter, first in 1.34 to
    1.36, errs reading it (`ErrNotFound`), and no PostFilter after it runs. The simulator
    worded the usual DynamicResources and Coscheduling PostFilter messages."""
    from tests.simulator.scheduler_plugins import gang_policy, member, pod_group

    cluster = [node("n1", "4", "8Gi")]
    workload = [pod_group("g", 3, created=at(0)), member("g-0", "g", "1", created=at(0))]
    stem = ("0/1 nodes are available: pre-filter pod g-0 cannot find enough sibling pods, "
            "current pods number: 1, minMember of group: 3.")
    for version, tail in (("1.34", " not found"), ("1.36", " not found"), ("1.37", "")):
        policy = {**gang_policy(), "kubernetesVersion": version}
        (tmp_path / version).mkdir()
        _, report = simulate(tmp_path / version, cluster, workload, policy=policy,
                             max_time=5 * SECOND)
        message = by_name(report)["g-0"]["message"]
        assert message.startswith(stem) and message[len(stem):].startswith(tail), (version,
                                                                                 message)
        if tail:
            assert message == stem + tail


def test_a_borrowing_namespace_keeps_its_min_on_the_preemption_node(tmp_path):
    """Real (scheduler-plugins' kube-scheduler 1.34.4, the quota example at 90 s): api-0 of
    team-b (within its min) found no candidate where team-a's three terminating pods stood
    ("Insufficient cpu"), because CapacityScheduling's SelectVictimsOnNode asks, pod by pod
    (least important first), whether the pod's quota is still over its min with the pods
    before it removed: team-a (used 3, min 1) gives up two and keeps its min. The simulator
    took all three as candidates, preempted them again and nominated the node.

    Here: n1 has 4 cpu, 0.5 taken, team-a's a0-a2 (1 cpu each, priority 1000) on it; b0 of
    team-b asks for 3 cpu. Evicting all of team-a's pods would make room, but only two may
    go: b0 stays Pending, no one is preempted."""
    from tests.simulator.scheduler_plugins import elastic_quota, quota_policy

    cluster = [node("n1", "4", "16Gi"), pod("other", "500m", node_name="n1"),
               elastic_quota("team-a", {"cpu": "1", "memory": "4Gi"}, {"cpu": "4", "memory": "16Gi"}),
               elastic_quota("team-b", {"cpu": "3", "memory": "12Gi"}, {"cpu": "4", "memory": "16Gi"})]
    cluster += [pod(f"a{i}", "1", namespace="team-a", priority=1000, node_name="n1")
                for i in range(3)]
    workload = [pod("b0", "3", namespace="team-b", created=at(0))]
    _, report = simulate(tmp_path, cluster, workload, quota_policy(), max_time=5 * SECOND)
    pods = by_name(report)
    assert pods["b0"]["status"] == "Pending" and pods["b0"]["preempted"] == []
    assert pods["b0"]["message"] == (
        "0/1 nodes are available: Pod team-b/b0 is rejected in PreFilter because total "
        "ElasticQuota used is more than min. 0/1 nodes are available: 1 Insufficient cpu.")
    assert report["totals"]["preempted"] == 0
    # With 2 cpu asked, the two team-a may give up are enough: the least important goes.
    workload = [pod("b0", "2", namespace="team-b", created=at(0))]
    (tmp_path / "two").mkdir()
    _, report = simulate(tmp_path / "two", cluster, workload, quota_policy(), max_time=5 * SECOND)
    assert len(by_name(report)["b0"]["preempted"]) == 2
