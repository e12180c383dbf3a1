"""Coscheduling in the simulator: QueueSort, PreFilter, Permit (waiting pods on virtual time),
PostFilter and Unreserve, as scheduler-plugins registers them (multiPoint).

Upstream rows come from tests/engine/upstream/gang_quota_data.py (transcribed from
kubernetes-sigs/scheduler-plugins pkg/coscheduling/coscheduling_test.go and core/core_test.go);
each test names the table and case. Times: a cycle costs 1 ms, the backoff flusher ticks at
whole seconds, backoff is 1 s × 2^(attempts−1).
"""

from __future__ import annotations

import json

import pytest

from extender.engine.plugins.coscheduling.store import PodGroupStore
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.model.pod import PodView
from extender.simulator.clock import SECOND, seconds
from extender.simulator.eventlog import EventLog
from extender.simulator.gang import GANG_RETRY_ROUNDS
from extender.simulator.loop import Simulation
from extender.simulator.permit import go_duration
from extender.simulator.workload import Workload, load_workload
from extender.state.snapshot import load_snapshot
from tests.engine.upstream import gang_quota_data as data

from .helpers import EPOCH, at, by_name, node, pod, simulate, write
from .scheduler_plugins import POD_GROUP_LABEL, gang_policy, member, pod_group

GANGS = ("g1", "g2", "g3")


def three_gangs() -> tuple[list[dict], list[dict]]:
    """3 nodes with 11 cpu in all; 3 PodGroups (created 0 s, 1 s, 2 s) of 4 one-cpu pods,
    minMember 4, every pod created at 3 s: room for two groups and three more pods."""
    cluster = [node("n1", "4", "32Gi"), node("n2", "4", "32Gi"), node("n3", "3", "32Gi")]
    workload = [pod_group(g, 4, created=at(i)) for i, g in enumerate(GANGS)]
    workload += [member(f"{g}-{i}", g, "1", created=at(3)) for g in GANGS for i in range(4)]
    return cluster, workload


def legacy_gang_policy(**args: object) -> dict:
    """kube-scheduler 1.32: a rejected group waits out its backoff (no popping of backoffQ)."""
    return {**gang_policy(**args), "kubernetesVersion": "1.32"}


def test_three_gangs_all_or_nothing(tmp_path):
    cluster, workload = three_gangs()
    result, report = simulate(tmp_path, cluster, workload, legacy_gang_policy(),
                              max_time=20 * SECOND)
    pods = by_name(report)
    # QueueSort keeps each group together, oldest group first. g1-0..2 wait at Permit (assumed:
    # their room is taken) and g1-3 completes the quorum at the end of its cycle (3.004 s): the
    # waiting pods are allowed and the four bind together. Same for g2 at 3.008 s.
    for g, bound_at in (("g1", 3.004), ("g2", 3.008)):
        assert [pods[f"{g}-{i}"]["status"] for i in range(4)] == ["Scheduled"] * 4
        assert {pods[f"{g}-{i}"]["scheduledAtSeconds"] for i in range(4)} == {bound_at}
    # g3-0..2 wait (3 cpu taken), g3-3 finds no room: DefaultPreemption cannot help (equal
    # priorities), then Coscheduling's PostFilter: 1 of 4 missing (25 % > 10 %) → the group's
    # waiting pods are rejected and give their room back. No g3 pod is ever bound.
    for i in range(4):
        assert pods[f"g3-{i}"]["status"] == "Pending"
        assert pods[f"g3-{i}"]["scheduledAtSeconds"] is None
    # Each round, the pod that finds no room fails in PostFilter; the rejected waiting pods
    # fail their binding cycle (a FitError over their one node). Retried as a group: the
    # failing pod saw its siblings' rejections (AssignedPodDelete, which NodeResourcesFit
    # registered) while in flight, so it backs off (1 s, 2 s, 4 s; ticks at whole seconds)
    # and comes back at 5 s, 8 s and 13 s; the rejected ones saw nothing Coscheduling
    # registered and wait in the pool until it, waiting at Permit, activates them. So the pod
    # that fails rotates: in the last round (13 s) it is g3-2.
    assert pods["g3-2"]["message"] == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod., PodGroup default/g3 gets rejected "
        "due to Pod g3-2 is unschedulable even after PostFilter.")  # 1.32's closing period
    for i in (0, 1, 3):
        assert pods[f"g3-{i}"]["message"] == (
            "0/1 nodes are available: 1 optimistic rejection in PostFilter.")
    assert [pods[f"g3-{i}"]["attempts"] for i in range(4)] == [4, 4, 4, 4]
    assert sum(n["after"]["cpuMilli"] for n in report["nodes"]) == 8000  # g1 and g2 only
    assert report["totals"]["scheduled"] == 8
    assert report["totals"]["truncated"]
    assert not result.warnings  # nothing left waiting at Permit at 20 s (they wait 1 ms a round)


def test_gang_completes_when_room_frees(tmp_path):
    cluster, workload = three_gangs()
    # g1 finishes at 30 s: its pods are deleted; the AssignedPodDelete events move g3's pods.
    workload += [{"kind": "SimulationEvent", "at": "30s", "deletePod": f"default/g1-{i}"}
                 for i in range(4)]
    _, report = simulate(tmp_path, cluster, workload, legacy_gang_policy(), max_time=60 * SECOND)
    pods = by_name(report)
    bound = {pods[f"g3-{i}"]["scheduledAtSeconds"] for i in range(4)}
    assert [pods[f"g3-{i}"]["status"] for i in range(4)] == ["Scheduled"] * 4
    assert len(bound) == 1 and bound.pop() > 30  # all four at once, after the room freed
    assert not report["totals"]["truncated"]


def _simulate_logged(tmp_path, cluster, workload, policy, max_time) -> tuple[dict, list[dict]]:
    """The report and the event log's lines of a run."""
    events = tmp_path / "events.jsonl"
    with events.open("w") as stream:
        _, report = simulate(tmp_path, cluster, workload, policy, max_time=max_time,
                             events=EventLog(stream))
    return report, [json.loads(line) for line in events.read_text().splitlines()]


def _late_unreserve_rejections(lines: list[dict]) -> list[dict]:
    """The race's rejections: they end a scheduling cycle (an attempt), where a waiting pod's
    timeout rejects the others "in Unreserve" in their binding cycles."""
    return [e for e in lines if e.get("action") == "attempt"
            and "rejection in Unreserve" in e.get("message", "")]


def test_a_rejected_gang_is_retried_at_once_until_the_race_ends_it(tmp_path):
    # 1.33+: every round's rejections free the room (AssignedPodDelete) while activeQ is
    # empty, so the pod that found no room is popped from backoffQ at once and the round
    # starts again, 4 cycles (4 ms) a round. After GANG_RETRY_ROUNDS rounds the first pod to
    # wait is rejected by a late Unreserve ("rejection in Unreserve"), as kube-scheduler's
    # race ends it: every g3 pod is then in the pool, rejected by Coscheduling, which g1's
    # deletions at 30 s do not concern; the leftover flush brings them back after 5 minutes
    # (the 30 s tick after 3.105 + 300 s) and they bind together, in g1's room.
    cluster, workload = three_gangs()
    workload += [{"kind": "SimulationEvent", "at": "30s", "deletePod": f"default/g1-{i}"}
                 for i in range(4)]
    report, lines = _simulate_logged(tmp_path, cluster, workload, gang_policy(), 400 * SECOND)
    pods = by_name(report)
    assert GANG_RETRY_ROUNDS == 24
    pops = [e for e in lines if e.get("event") == "PopFromBackoffQ"]
    late = _late_unreserve_rejections(lines)
    assert len(pops) == GANG_RETRY_ROUNDS and len(late) == 1
    assert late[0]["t"] == 3.105 and pops[-1]["t"] < late[0]["t"]
    assert [pods[f"g3-{i}"]["status"] for i in range(4)] == ["Scheduled"] * 4
    assert {pods[f"g3-{i}"]["scheduledAtSeconds"] for i in range(4)} == {330.004}
    assert not report["totals"]["truncated"]


def test_waiting_pods_time_out_at_permit_and_are_retried(tmp_path):
    # podGroupRejectPercentage 30: one missing pod of four (25 %) does not reject the group in
    # PostFilter, so g3's three waiting pods wait out g3's scheduleTimeoutSeconds (10 s).
    cluster, workload = three_gangs()
    workload[2] = pod_group("g3", 4, created=at(2), timeout=10)
    policy = gang_policy(podGroupRejectPercentage=30)

    # g3-0 started waiting at the end of its cycle, 3.009 s: its deadline is 13.009 s.
    result, report = simulate(tmp_path, cluster, workload, policy, max_time=seconds(13.0089))
    assert result.warnings == ["3 pod(s) still waiting at Permit when the run stopped: "
                               "default/g3-0, default/g3-1, default/g3-2"]
    assert by_name(report)["g3-3"]["message"] == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.")  # no group rejection

    result, report = simulate(tmp_path, cluster, workload, policy, max_time=seconds(13.009))
    pods = by_name(report)
    assert not result.warnings
    assert pods["g3-0"]["message"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin "
        "Coscheduling.")
    # g3-0's Unreserve rejects the rest of the group.
    assert pods["g3-1"]["message"] == pods["g3-2"]["message"] == (
        "0/1 nodes are available: 1 rejection in Unreserve.")
    assert {pods[f"g3-{i}"]["scheduledAtSeconds"] for i in range(4)} == {None}

    # Retried: the freed room lets g3-3 in at once (13.009 s), it waits and activates its
    # siblings; one of them finds no room, and the round ends 10 s later, again and again.
    result, report = simulate(tmp_path, cluster, workload, policy, max_time=40 * SECOND)
    pods = by_name(report)
    assert [pods[f"g3-{i}"]["attempts"] for i in range(4)] == [4, 4, 4, 4]
    assert {pods[f"g3-{i}"]["scheduledAtSeconds"] for i in range(4)} == {None}
    assert result.warnings == ["3 pod(s) still waiting at Permit when the run stopped: "
                               "default/g3-0, default/g3-1, default/g3-3"]


def test_default_permit_wait_is_permit_waiting_time_seconds(tmp_path):
    # No scheduleTimeoutSeconds: the plugin's permitWaitingTimeSeconds (default 60 s), printed
    # as Go prints a Duration.
    cluster = [node("n1", "4", "32Gi")]
    workload = [pod_group("g", 3, created=EPOCH)]
    workload += [member(f"g-{i}", "g", "2", created=EPOCH) for i in range(3)]
    _, report = simulate(tmp_path, cluster, workload, gang_policy(podGroupRejectPercentage=100),
                         max_time=seconds(60.001))
    pods = by_name(report)
    assert pods["g-0"]["message"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 1m0s at plugin "
        "Coscheduling.")
    assert pods["g-1"]["message"] == "0/1 nodes are available: 1 rejection in Unreserve."


@pytest.mark.parametrize(("ns", "expected"), [
    (0, "0s"), (10 * SECOND, "10s"), (60 * SECOND, "1m0s"), (900 * SECOND, "15m0s"),
    (3600 * SECOND, "1h0m0s"), (1_500_000_000, "1.5s"), (250_000_000, "250ms"),
])
def test_go_duration(ns, expected):
    assert go_duration(ns) == expected


def test_deleting_a_waiting_pod_rejects_its_group(tmp_path):
    cluster = [node("n1", "4", "32Gi")]
    workload = [pod_group("g", 3, created=EPOCH)]
    workload += [member(f"g-{i}", "g", "2", created=EPOCH) for i in range(3)]
    workload.append({"kind": "SimulationEvent", "at": "5s", "deletePod": "default/g-0"})
    _, report = simulate(tmp_path, cluster, workload, gang_policy(podGroupRejectPercentage=100),
                         max_time=seconds(5.5))
    pods = by_name(report)
    assert pods["g-0"]["status"] == "Deleted"
    # g-0's binding cycle fails (RejectWaitingPod); its Unreserve rejects g-1.
    assert pods["g-1"]["message"] == "0/1 nodes are available: 1 rejection in Unreserve."
    after = {n["name"]: n["after"]["cpuMilli"] for n in report["nodes"]}
    assert after == {"n1": 0}


def test_pod_group_created_later(tmp_path):
    # The pods exist before their PodGroup: PreFilter lets them through (no group to check),
    # Permit rejects them ("PodGroup not found"), and the PodGroup's creation at 5 s (an event
    # Coscheduling registered) brings them back; they then bind together.
    cluster = [node("n1", "4", "32Gi")]
    workload = [member(f"g-{i}", "g", "1", created=EPOCH) for i in range(2)]
    workload.append(pod_group("g", 2, created=at(5)))
    _, report = simulate(tmp_path, cluster, workload, gang_policy(), max_time=60 * SECOND)
    pods = by_name(report)
    assert {pods[f"g-{i}"]["status"] for i in range(2)} == {"Scheduled"}
    assert len({pods[f"g-{i}"]["scheduledAtSeconds"] for i in range(2)}) == 1
    assert pods["g-0"]["scheduledAtSeconds"] > 5
    assert pods["g-0"]["attempts"] > 1


def test_pod_group_not_found_message(tmp_path):
    # core_test.go TestPermit "pod specifies a non-existent pg" (COSCHEDULING_CORE_PERMIT):
    # PodGroup not found. In a cycle: Unschedulable at Permit, a one-node FitError.
    row = next(r for r in data.COSCHEDULING_CORE_PERMIT
               if r["case"] == "pod specifies a non-existent pg")
    assert row["expected"]["status"] == "PodGroup not found"
    cluster = [node("node", "4", "32Gi")]
    workload = [pod_group("pg1", 2, namespace="ns", created=EPOCH),
                member("p", "pg-non-existent", "1", namespace="ns", created=EPOCH)]
    _, report = simulate(tmp_path, cluster, workload, gang_policy(), max_time=2 * SECOND)
    assert by_name(report)["p"]["message"] == "0/1 nodes are available: 1 PodGroup not found."
    assert by_name(report)["p"]["status"] == "Pending"


# -- upstream rows ---------------------------------------------------------------------------


def _queue_order(tmp_path, row) -> list[str]:
    """The activeQ order of the row's two pods under Coscheduling's QueueSort: PodGroups
    created at now + creation_offset_s, each pod first queued at now + initial_attempt_offset_s
    (the virtual clock only moves forward, so they are queued in that order)."""
    now = 1_704_067_200  # EPOCH in epoch seconds: a whole second, as metav1.Time keeps them
    cluster = []
    for pg in row["pod_groups"]:
        obj = pod_group(pg["name"], pg["min_member"], namespace=pg["namespace"])
        if pg["creation_offset_s"] is not None:
            obj["metadata"]["creationTimestamp"] = at(pg["creation_offset_s"])
        cluster.append(obj)
    state = load_snapshot(write(tmp_path / "cluster.json", cluster))
    sim = Simulation(state, build_profile(parse_policy(gang_policy())),
                     Workload(epoch_ns=now * SECOND))
    for spec in sorted((row["p1"], row["p2"]), key=lambda s: s["initial_attempt_offset_s"] or 0):
        raw = pod(spec["name"], "1", namespace=spec["namespace"], priority=spec["priority"])
        raw["metadata"]["labels"] = spec["labels"]
        sim.clock.advance_to(seconds(spec["initial_attempt_offset_s"] or 0))
        sim.queue.add(PodView.from_k8s(k8s.convert(raw, k8s.Pod)))
    return [p.name for p in sim.queue.active_pods()]


@pytest.mark.parametrize("row", data.COSCHEDULING_LESS, ids=lambda r: r["case"])
def test_less_rows(tmp_path, row):
    # coscheduling_test.go TestLess (gang_quota_data COSCHEDULING_LESS): Less(p1, p2) is
    # whether p1 pops before p2 from activeQ.
    order = _queue_order(tmp_path, row)
    assert order == (["p1", "p2"] if row["expected"] else ["p2", "p1"]), row["notes"]


@pytest.mark.parametrize("row", data.COSCHEDULING_POSTFILTER_THRESHOLD_UNVERIFIED,
                         ids=lambda r: r["case"])
def test_postfilter_threshold_rows(tmp_path, row):
    # gang_quota_data COSCHEDULING_POSTFILTER_THRESHOLD_UNVERIFIED (plugins-next.md §5.4 item 3;
    # no stored upstream table): minMember 10, `assigned` of them waiting at Permit when the
    # next one finds no room. The group is rejected iff (10 − assigned)/10 > percentage/100.
    assigned, min_member = row["assigned"], row["min_member"]
    cluster = [node("n1", str(assigned) if assigned else "100m", "32Gi")]
    workload = [pod_group("pg", min_member, namespace="ns", created=EPOCH)]
    workload += [member(f"p{i}", "pg", "1", namespace="ns", created=EPOCH)
                 for i in range(min_member)]
    _, report = simulate(tmp_path, cluster, workload,
                         gang_policy(podGroupRejectPercentage=row["reject_percentage"]),
                         max_time=seconds(0.001 * (assigned + 1)))
    pods = by_name(report)
    failing = pods[f"p{assigned}"]["message"]
    rejection = (f"PodGroup ns/pg gets rejected due to Pod p{assigned} is unschedulable even "
                 "after PostFilter")
    assert failing.endswith(rejection) == row["expected"]["reject_group"]
    waiting_rejected = [pods[f"p{i}"]["message"] for i in range(assigned)]
    if row["expected"]["reject_group"]:
        assert waiting_rejected == [
            "0/1 nodes are available: 1 optimistic rejection in PostFilter."] * assigned
    else:
        assert waiting_rejected == [None] * assigned  # still waiting, never failed


PERMIT_ROWS = {r["case"]: r for r in data.COSCHEDULING_PERMIT}


def test_permit_rows_success(tmp_path):
    # coscheduling_test.go TestPermit "pods do not belong to any podGroup" and "pods belong to a
    # podGroup, and quorum satisfied" (pg1 minMember 1): Success, bound in their first cycle.
    assert PERMIT_ROWS["pods do not belong to any podGroup"]["expected"]["code"] == "Success"
    assert PERMIT_ROWS["pods belong to a podGroup, and quorum satisfied"]["expected"]["code"] == "Success"
    cluster = [node("node", "4", "32Gi")]
    workload = [pod_group("pg1", 1, namespace="ns", created=EPOCH),
                pod_group("pg2", 2, namespace="ns", created=EPOCH),
                pod("plain", "1", namespace="ns", created=EPOCH),
                member("p", "pg1", "1", namespace="ns", created=at(1))]
    _, report = simulate(tmp_path, cluster, workload, gang_policy(permitWaitingTimeSeconds=10))
    pods = by_name(report)
    assert pods["plain"]["scheduledAtSeconds"] == 0.001
    assert pods["p"]["scheduledAtSeconds"] == 1.001


def test_permit_row_wait(tmp_path):
    # coscheduling_test.go TestPermit "pods belong to a pg1, but quorum not satisfied": the pod is
    # in pg2 (minMember 2) → Wait, for the plugin's 10 s (pg2 sets no scheduleTimeoutSeconds).
    # In a cycle PreFilter needs the sibling to exist: it cannot be placed (no such node), and
    # podGroupRejectPercentage 100 keeps PostFilter from rejecting the waiting pod early.
    row = PERMIT_ROWS["pods belong to a pg1, but quorum not satisfied"]
    assert row["expected"] == {"code": "Wait", "wait_seconds": 10}
    cluster = [node("node", "4", "32Gi")]
    workload = [pod_group("pg1", 1, namespace="ns", created=EPOCH),
                pod_group("pg2", 2, namespace="ns", created=EPOCH),
                member("p", "pg2", "1", namespace="ns", created=EPOCH),
                member("p2", "pg2", "1", namespace="ns", created=EPOCH,
                       nodeSelector={"kubernetes.io/hostname": "elsewhere"})]
    policy = gang_policy(permitWaitingTimeSeconds=10, podGroupRejectPercentage=100)
    result, _ = simulate(tmp_path, cluster, workload, policy, max_time=seconds(10.0009))
    assert result.warnings == ["1 pod(s) still waiting at Permit when the run stopped: ns/p"]
    _, report = simulate(tmp_path, cluster, workload, policy, max_time=seconds(10.001))
    assert by_name(report)["p"]["message"] == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin "
        "Coscheduling.")


def test_core_permit_row_quorum_with_a_bound_sibling(tmp_path):
    # core_test.go TestPermit "pod belongs to a pg that have quorum satisfied": p1b is bound, so
    # p1a completes pg1 (minMember 2) at once.
    row = next(r for r in data.COSCHEDULING_CORE_PERMIT
               if r["case"] == "pod belongs to a pg that have quorum satisfied")
    assert row["expected"]["status"] == "Success"
    bound = pod("p1b", "1", namespace="ns", node_name="node")
    bound["metadata"]["labels"] = {POD_GROUP_LABEL: "pg1"}
    cluster = [node("node", "4", "32Gi"), bound, pod_group("pg1", 2, namespace="ns")]
    _, report = simulate(tmp_path, cluster, [member("p1a", "pg1", "1", namespace="ns")],
                         gang_policy())
    assert by_name(report)["p1a"]["scheduledAtSeconds"] == 0.001


POSTFILTER_ROWS = {r["case"]: r for r in data.COSCHEDULING_POSTFILTER}


@pytest.mark.parametrize("case", list(POSTFILTER_ROWS))
def test_postfilter_rows(tmp_path, case):
    # coscheduling_test.go TestPostFilter: the pod finds no room on "node" (its 4 cpu are
    # taken by a pod of another namespace of higher priority, so preemption cannot help); the
    # PostFilter message follows DefaultPreemption's in the FitError, joined with ", ".
    row = POSTFILTER_ROWS[case]
    blocker = pod("blocker", "4", namespace="other", priority=1000, node_name="node")
    cluster = [node("node", "5", "32Gi"), blocker]
    cluster += [pod_group(pg["name"], pg["min_member"], namespace=pg["namespace"])
                for pg in row["pod_groups"]]
    for existing in row["existing_pods"]:
        obj = pod(existing["name"], "1", namespace=existing["namespace"],
                  node_name=existing["node_name"])
        obj["metadata"]["labels"] = existing["labels"]
        cluster.append(obj)
    spec = row["pod"]
    workload = [pod(spec["name"], "2", namespace=spec["namespace"])]
    workload[0]["metadata"]["labels"] = spec["labels"]
    if spec["labels"]:  # PreFilter must find minMember pods (the row's group counts)
        group = spec["labels"][POD_GROUP_LABEL]
        missing = (next(pg["min_member"] for pg in row["pod_groups"] if pg["name"] == group)
                   - 1 - sum(1 for p in row["existing_pods"] if p["labels"] == spec["labels"]))
        workload += [member(f"sibling-{i}", group, "1", namespace="ns",
                            nodeSelector={"kubernetes.io/hostname": "elsewhere"})
                     for i in range(max(missing, 0))]
    _, report = simulate(tmp_path, cluster, workload, gang_policy(), max_time=seconds(0.0005))
    message = by_name(report)[spec["name"]]["message"]
    preemption = ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                  "available: 1 No preemption victims found for incoming pod.")
    expected = row["expected"]["message"]
    # The PostFilter messages end the sentence as they are (kube-scheduler 1.34 on).
    assert message == preemption + (f", {expected}" if expected else "")


def test_preempting_a_waiting_pod(tmp_path):
    # A waiting pod is assumed on its node, so preemption may pick it. Its deletion rejects it
    # at Permit, its Unreserve rejects the rest of the group; the victims are gone for good.
    cluster = [node("n1", "4", "32Gi")]
    workload = [pod_group("g", 3, created=EPOCH)]
    workload += [member(f"g-{i}", "g", "2", created=EPOCH) for i in range(3)]
    workload.append(pod("vip", "4", priority=1000, created=at(2)))
    _, report = simulate(tmp_path, cluster, workload, gang_policy(podGroupRejectPercentage=100),
                         max_time=30 * SECOND)
    pods = by_name(report)
    assert pods["vip"]["preempted"] == ["default/g-0", "default/g-1"]
    assert pods["vip"]["status"] == "Scheduled"
    assert [pods[f"g-{i}"]["status"] for i in range(3)] == ["Preempted", "Preempted", "Pending"]
    assert pods["g-1"]["message"] == "0/1 nodes are available: 1 rejection in Unreserve."
    assert pods["g-1"]["attempts"] == 1  # gone: not retried
    # g-2 is left alone in its group: PreFilter no longer finds minMember pods.
    assert pods["g-2"]["message"].startswith(
        "0/1 nodes are available: pre-filter pod g-2 cannot find enough sibling pods, current "
        "pods number: 1, minMember of group: 3.")


def test_workload_pod_group_without_creation_time_is_stamped(tmp_path):
    # Created at its arrival (time 0 here), whole seconds, as the API server stamps it.
    workload = [pod("first", "1", created="2024-01-01T00:00:00.700Z"),
                pod_group("late", 2)]
    state = load_snapshot(write(tmp_path / "cluster.json", [node("n1", "4", "32Gi")]))
    sim = Simulation(state, build_profile(parse_policy(gang_policy())),
                     load_workload(write(tmp_path / "workload.json", workload)))
    sim.run()
    group = sim.state.store(PodGroupStore).group("default", "late")
    assert group is not None and group.creation_time == 1_704_067_200.0


def test_rounds_a_permit_wait_apart_are_not_a_storm(tmp_path):
    # podGroupRejectPercentage 30: g3's missing pod (25 %) does not reject the group, so its
    # waiting pods are rejected only when their 1 s wait runs out: a round every second or
    # so for a minute, each retried at once. Rounds a wait apart are not the retry storm the
    # race ends: no pod is ever rejected "in Unreserve".
    cluster, workload = three_gangs()
    workload[2] = pod_group("g3", 4, created=at(2), timeout=1)
    _, lines = _simulate_logged(tmp_path, cluster, workload,
                                gang_policy(podGroupRejectPercentage=30), 60 * SECOND)
    timeouts = [e for e in lines if e.get("action") == "permit"
                and e.get("message", "").startswith("rejected due to timeout")]
    assert len({e["t"] for e in timeouts}) > GANG_RETRY_ROUNDS
    assert not _late_unreserve_rejections(lines)
