"""The scheduling loop end to end, against placements and times computed by hand.

Times: pods arrive at their creationTimestamp (the earliest is t=0); a cycle costs 1 ms; the
backoff flusher ticks at 0, 1, 2 … s and the leftover flusher at 0, 30, 60 … s.
"""

from __future__ import annotations

import pytest

from extender.engine.framework import Code, Status
from extender.engine.preemption.evaluator import ABSENT
from extender.engine.preemption.evaluator import fit_error_message as engine_fit_error
from extender.simulator.clock import SECOND
from extender.simulator.loop import fit_error
from extender.simulator.schedule import num_feasible_nodes_to_find

from .helpers import DEFAULTS, LEAST_ALLOCATED_ONLY, at, by_name, node, pod, report_bytes, simulate

INFRA_TAINT = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]


def test_hand_computed_placements(tmp_path):
    # LeastAllocated, cpu and memory weight 1: score = ((a−r)·100/a for cpu + same for memory)/2.
    cluster = [
        node("n1", "4", "8Gi", labels={"zone": "a"}),
        node("n2", "8", "8Gi", labels={"zone": "b"}),
        node("n3", "8", "16Gi", labels={"zone": "b"}, taints=INFRA_TAINT),
        node("n4", "2", "4Gi", labels={"zone": "a"}, unschedulable=True),
    ]
    workload = [
        # n1: (75 + 87)/2 = 81; n2: (87 + 87)/2 = 87 → n2. (n3 tainted, n4 cordoned.)
        pod("p1", "1", "1Gi", created=at(0)),
        # tolerates n3. n1: (50 + 75)/2 = 62; n2: (62 + 62)/2 = 62; n3: (75 + 87)/2 = 81 → n3.
        pod("p2", "2", "2Gi", created=at(1),
            tolerations=[{"key": "dedicated", "operator": "Exists"}]),
        # zone a: only n1 (n4 is cordoned) → n1 without scoring.
        pod("p3", "3", "1Gi", created=at(2), nodeSelector={"zone": "a"}),
        # 6 cpu: n1 has 1 left, n2 has 7 → n2.
        pod("p4", "6", "1Gi", created=at(3)),
        # 2 cpu: n1 1 left, n2 1 left, n3 tainted, n4 cordoned; nobody has a lower priority.
        pod("p5", "2", "1Gi", created=at(4)),
    ]
    _, report = simulate(tmp_path, cluster, workload)
    pods = by_name(report)
    assert {n: pods[n]["node"] for n in pods} == {
        "p1": "n2", "p2": "n3", "p3": "n1", "p4": "n2", "p5": None}
    assert [pods[n]["scheduledAtSeconds"] for n in ("p1", "p2", "p3", "p4")] == [
        0.001, 1.001, 2.001, 3.001]
    assert pods["p5"]["status"] == "Pending"
    assert pods["p5"]["attempts"] == 1
    assert pods["p5"]["message"] == (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), "
        "1 node(s) were unschedulable, 2 Insufficient cpu. preemption: 0/4 nodes are "
        "available: 2 No preemption victims found for incoming pod, 2 Preemption is not "
        "helpful for scheduling.")
    assert report["totals"] == {
        "pods": 5, "arrived": 5, "scheduled": 4, "pending": 1, "preempted": 0, "deleted": 0,
        "succeeded": 0, "failed": 0, "rejected": 0,
        "preemptions": 0, "attempts": 5, "cycles": 5, "virtualTimeSeconds": 4.001,
        "lastBindSeconds": 3.001, "truncated": False, "endReason": "settled"}
    nodes = {n["name"]: n for n in report["nodes"]}
    assert nodes["n2"]["before"]["cpuMilli"] == 0
    assert nodes["n2"]["after"] == {"cpuMilli": 7000, "memoryBytes": 2 * 1024**3, "pods": 2,
                                    "cpuFraction": 0.875, "memoryFraction": 0.25,
                                    "podsFraction": round(2 / 110, 6)}


def test_real_world_failed_scheduling_message(tmp_path):
    # The FailedScheduling text of kube-scheduler 1.37 (the preemption part ends the
    # sentence); checked against the real one in tests/e2e.
    cp_taint = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    cluster = [node("cp", "4", "8Gi", taints=cp_taint), node("w1", "2", "4Gi"),
               node("w2", "2", "4Gi"),
               pod("a", "2", node_name="w1"), pod("b", "2", node_name="w2")]
    _, report = simulate(tmp_path, cluster, [pod("new", "1")])
    assert by_name(report)["new"]["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod.")
    # 1.34 to 1.36: DynamicResources' PostFilter speaks first, for any pod (the real
    # kube-scheduler 1.34.4, 1.35.4, 1.36.3).
    _, report = simulate(tmp_path, cluster, [pod("new", "1")],
                         {**LEAST_ALLOCATED_ONLY, "kubernetesVersion": "1.35"})
    assert by_name(report)["new"]["message"] == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 1 Preemption is "
        "not helpful for scheduling, 2 No preemption victims found for incoming pod.")
    # Clusters before 1.34 name the taint, and end with two periods (as their events did).
    _, report = simulate(tmp_path, cluster, [pod("new", "1")],
                         {**LEAST_ALLOCATED_ONLY, "kubernetesVersion": "1.33"})
    message = by_name(report)["new"]["message"]
    assert message.startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu.")
    assert message.endswith("incoming pod..")


@pytest.mark.parametrize(("version", "high_at", "mid_at"), [
    ("1.37", 0.002, 0.502), ("1.32", 2.001, 2.002)])
def test_preemption_end_to_end(tmp_path, version, high_at, mid_at):
    # high (prio 1000) fits nowhere at t=0. Both nodes would need one prio-0 victim; the tie is
    # broken by the latest start among the victims: low-b (started a day later) → node-b.
    # high goes to the pool (no event during its cycle); low-b's deletion (AssignedPodDelete,
    # which NodeResourcesFit listens to) moves it to backoffQ. From 1.33 activeQ is empty, so
    # it is popped from there at once and binds at 0.002; mid (prio 500, 1.5 cpu) arrives at
    # 0.5 s, finds node-b taken by high, preempts low-a on node-a, fails at 0.501 and is
    # popped again as low-a goes: 0.502. In 1.32 high backs off until 0.001 + 1 s and the 2 s
    # flush activates it; meanwhile mid finds node-b free, but high's nomination reserves 1
    # of its 2 cpu, so mid preempts low-a on node-a, fails at 0.501, backs off until 1.501
    # and is also activated at 2 s, behind high.
    # (The victims' terminationGracePeriodSeconds is 0: they go at once.)
    cluster = [
        node("node-a", "2", "8Gi"), node("node-b", "2", "8Gi"),
        pod("low-a", "1500m", node_name="node-a", started="2024-01-01T00:00:00Z",
            terminationGracePeriodSeconds=0),
        pod("low-b", "1500m", node_name="node-b", started="2024-01-02T00:00:00Z",
            terminationGracePeriodSeconds=0),
    ]
    workload = [pod("high", "1", created=at(0), priority=1000),
                pod("mid", "1500m", created=at(0.5), priority=500)]
    _, report = simulate(tmp_path, cluster, workload,
                         {**LEAST_ALLOCATED_ONLY, "kubernetesVersion": version})
    pods = by_name(report)
    assert (pods["high"]["node"], pods["high"]["scheduledAtSeconds"], pods["high"]["attempts"]) == (
        "node-b", high_at, 2)
    assert (pods["mid"]["node"], pods["mid"]["scheduledAtSeconds"], pods["mid"]["attempts"]) == (
        "node-a", mid_at, 2)
    assert pods["high"]["preempted"] == ["default/low-b"]
    assert pods["mid"]["preempted"] == ["default/low-a"]
    assert (pods["low-b"]["status"], pods["low-b"]["preemptedBy"]) == ("Preempted", "default/high")
    assert (pods["low-a"]["status"], pods["low-a"]["preemptedBy"]) == ("Preempted", "default/mid")
    assert report["totals"]["preempted"] == 2
    assert report["totals"]["cycles"] == 4


def _terminating_cluster():
    # high (1.5 cpu) fits nowhere; only low-b on node-b can be preempted. Deleting `small`
    # frees node-a to 1 cpu, still too little for high.
    return [node("node-a", "1", "8Gi"), node("node-b", "2", "8Gi"),
            pod("small", "500m", node_name="node-a", priority=2000),
            pod("low-b", "1500m", node_name="node-b")]


def test_victims_keep_their_room_during_the_grace_period(tmp_path):
    # With a 30 s grace period low-b terminates at 30.001. At 10 s a bound pod is deleted
    # (AssignedPodDelete): high is retried, its nominated node is still full and a victim there
    # is terminating because of the scheduler → not eligible to preempt again.
    workload = [pod("high", "1500m", created=at(0), priority=1000),
                {"kind": "SimulationEvent", "at": "10s", "deletePod": "default/small"}]
    _, report = simulate(tmp_path, _terminating_cluster(), workload,
                         victim_grace_period=30 * SECOND, max_time=20 * SECOND)
    high = by_name(report)["high"]
    assert (high["status"], high["attempts"], high["nominatedNode"]) == ("Pending", 2, "node-b")
    assert high["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a "
        "terminating pod on the nominated node.")
    assert report["totals"]["truncated"] is True
    assert report["totals"]["virtualTimeSeconds"] == 20.0


def test_pod_lands_once_the_victim_is_gone(tmp_path):
    workload = [pod("high", "1500m", created=at(0), priority=1000),
                {"kind": "SimulationEvent", "at": "10s", "deletePod": "default/small"}]
    _, report = simulate(tmp_path, _terminating_cluster(), workload,
                         victim_grace_period=30 * SECOND)
    high = by_name(report)["high"]
    # Deleted at 30.001, the pod's backoff (2 s from 10.001) is over: straight to activeQ.
    assert (high["node"], high["scheduledAtSeconds"], high["attempts"]) == ("node-b", 30.002, 3)


def test_node_added_later_takes_the_pending_pod(tmp_path):
    # big fails at 0 → pool. At 30 s a node that admits it is added (NodeAdd, pre-check passes):
    # its 1 s backoff ended long ago → activeQ → bound at 30.001.
    workload = [pod("big", "8", created=at(0)),
                {"kind": "SimulationEvent", "at": 30,
                 "addNode": node("big-node", "16", "64Gi")}]
    _, report = simulate(tmp_path, [node("small", "2", "4Gi")], workload)
    big = by_name(report)["big"]
    assert (big["node"], big["scheduledAtSeconds"], big["attempts"]) == ("big-node", 30.001, 2)


def test_pool_pod_retried_once_by_the_leftover_flush_then_the_run_stops(tmp_path):
    # A node too small for the pod is added at 30 s: the pre-check keeps the pod in the pool,
    # but the cluster changed since it failed, so the run goes on until the leftover flush
    # retries it — the first 30 s tick with now − 0.001 > 300 s is 330 s — then stops.
    workload = [pod("big", "8", created=at(0)),
                {"kind": "SimulationEvent", "at": "30s", "addNode": node("tiny", "1", "1Gi")}]
    _, report = simulate(tmp_path, [node("small", "2", "4Gi")], workload)
    big = by_name(report)["big"]
    assert (big["status"], big["attempts"]) == ("Pending", 2)
    assert report["totals"]["virtualTimeSeconds"] == 330.001
    # With the pre-1.24 limit of 60 s the retry comes at the 90 s tick.
    _, report = simulate(tmp_path, [node("small", "2", "4Gi")], workload,
                         pod_max_in_unschedulable_pods=60 * SECOND)
    assert report["totals"]["virtualTimeSeconds"] == 90.001


def test_deleting_a_bound_pod_frees_room(tmp_path):
    cluster = [node("n", "2", "4Gi"), pod("old", "2", node_name="n")]
    workload = [pod("new", "2", created=at(0)),
                {"kind": "SimulationEvent", "at": "5s", "deletePod": {"name": "old"}}]
    _, report = simulate(tmp_path, cluster, workload)
    assert (by_name(report)["new"]["node"], by_name(report)["new"]["scheduledAtSeconds"]) == (
        "n", 5.001)


def test_a_cluster_pod_deleted_by_an_event_is_reported_deleted(tmp_path):
    # It was in no list of the report and not counted, while the event log said `delete`;
    # the HTML report then drew it from its events alone, with a priority of "None".
    from extender.simulator.cli import summary_line
    from extender.simulator.eventlog import EventLog
    from extender.simulator.htmlreport import read_events, render_html

    from .htmltree import parse

    cluster = [node("n", "2", "4Gi"), pod("old", "2", node_name="n", priority=7)]
    workload = [pod("new", "2", created=at(0)),
                {"kind": "SimulationEvent", "at": "5s", "deletePod": {"name": "old"}}]
    with (tmp_path / "events.jsonl").open("w") as stream:
        _, report = simulate(tmp_path, cluster, workload, events=EventLog(stream))
    old = by_name(report)["old"]
    assert {k: old[k] for k in ("origin", "status", "node", "priority", "arrivedAtSeconds",
                                "scheduledAtSeconds", "finishedAtSeconds", "attempts")} == {
        "origin": "cluster", "status": "Deleted", "node": "n", "priority": 7,
        "arrivedAtSeconds": None, "scheduledAtSeconds": None, "finishedAtSeconds": 5.0,
        "attempts": 0}
    totals = report["totals"]
    assert (totals["pods"], totals["arrived"], totals["scheduled"], totals["deleted"]) == (
        2, 1, 1, 1)
    assert summary_line(totals, {}).startswith("1 scheduled, 0 pending, 0 preempted, 1 deleted;")
    page = render_html(report, read_events(tmp_path / "events.jsonl"))
    row = parse(page).find("details", cls="pod", data_pod="default/old").find("summary")
    assert [c.text() for c in row.children] == [
        "default/old", "7", "Deleted", "n", "0", "–", "–", ""]
    assert "None" not in page


def test_a_victim_deleted_while_it_terminates_stays_preempted(tmp_path):
    workload = [pod("high", "1500m", created=at(0), priority=1000),
                {"kind": "SimulationEvent", "at": "10s", "deletePod": "default/low-b"}]
    _, report = simulate(tmp_path, _terminating_cluster(), workload,
                         victim_grace_period=30 * SECOND)
    low = by_name(report)["low-b"]
    assert (low["status"], low["preemptedBy"], low["finishedAtSeconds"]) == (
        "Preempted", "default/high", 10.0)
    assert report["totals"]["deleted"] == 0


def test_same_seed_same_bytes_and_seed_matters(tmp_path):
    # Ten identical nodes and identical pods: every placement is a tie broken by the RNG.
    cluster = [node(f"n{i}", "4", "8Gi") for i in range(10)]
    workload = [pod(f"p{i:02d}", "100m", "128Mi", created=at(i / 100)) for i in range(30)]
    runs = [report_bytes(*simulate(tmp_path, cluster, workload, DEFAULTS, seed=s))
            for s in (1, 1, 2)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


@pytest.mark.parametrize(("n", "expected"), [(50, 50), (100, 100), (1000, 420), (5000, 500),
                                             (6000, 300), (10000, 500)])
def test_num_feasible_nodes_to_find_vectors(n, expected):
    assert num_feasible_nodes_to_find(0, n) == expected
    assert num_feasible_nodes_to_find(None, n) == n


def test_fit_error_matches_the_engine_histogram():
    statuses = {
        "a": Status(Code.UNSCHEDULABLE, ("Insufficient cpu", "Insufficient memory"), "NodeResourcesFit"),
        "b": Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit"),
        "c": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",), "NodeUnschedulable"),
    }
    assert fit_error(3, statuses) == engine_fit_error(3, statuses, ABSENT) == (
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, "
        "2 Insufficient cpu.")


def test_zone_spread_and_anti_affinity_place_pods_as_kube_scheduler_would(tmp_path):
    # Three zones of two nodes; six web pods spread DoNotSchedule over zones (maxSkew 1) and
    # refuse to share a node: two per zone, one per node, whatever the scores prefer.
    zone = "topology.kubernetes.io/zone"
    cluster = [node(f"{z}{i}", "8", "16Gi", labels={zone: z}) for z in "abc" for i in (1, 2)]
    constraint = [{"maxSkew": 1, "topologyKey": zone, "whenUnsatisfiable": "DoNotSchedule",
                   "labelSelector": {"matchLabels": {"app": "web"}}}]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}}
    workload = []
    for i in range(7):
        web = pod(f"web-{i}", "1", topologySpreadConstraints=constraint, affinity=anti)
        web["metadata"]["labels"] = {"app": "web"}
        workload.append(web)
    _, report = simulate(tmp_path, cluster, workload, DEFAULTS)
    placed = {p["name"]: p["node"] for p in report["pods"] if p["status"] == "Scheduled"}
    assert len(placed) == 6
    assert sorted(placed.values()) == ["a1", "a2", "b1", "b2", "c1", "c2"]
    # The seventh has no node left without a web pod.
    assert by_name(report)["web-6"]["message"] == (
        "0/6 nodes are available: 6 node(s) didn't match pod anti-affinity rules. preemption: "
        "0/6 nodes are available: 6 No preemption victims found for incoming pod.")
