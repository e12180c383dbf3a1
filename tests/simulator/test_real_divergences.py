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
