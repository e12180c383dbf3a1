"""What a real kube-scheduler did, read from its `-v=2` log and the API server's watch, and
written as the simulator writes a run (`extender.sandbox.observed`)."""

from __future__ import annotations

import datetime

from extender.sandbox.observed import (
    Observations,
    event_lines,
    histogram,
    parse_scheduler_log,
    records,
)
from extender.simulator.records import PENDING, PREEMPTED, REJECTED, SCHEDULED

LOG = r'''I1129 03:10:00.250000   4242 schedule_one.go:1055] "Unable to schedule pod; no fit; waiting" pod="default/urgent" err="0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
I1129 03:10:00.300000   4242 round_trippers.go:1] "Response" verb="GET" url="/api"
I1129 03:10:01.500000   4242 schedule_one.go:314] "Successfully bound pod to node" pod="default/urgent" node="n2" evaluatedNodes=3 feasibleNodes=1
E1129 03:10:02.000000   4242 schedule_one.go:1080] "Error scheduling pod; retrying" err="binding rejected: \"quoted\" reason" pod="team/x"
I1129 03:10:03.000000   4242 schedule_one.go:1055] "Unable to schedule pod, possibly due to node not found; waiting" pod="team/x" err="node \"n9\" not found"
'''


def _wall(second: float) -> float:
    year = datetime.date.today().year
    return datetime.datetime(year, 11, 29, 3, 10, 0).timestamp() + second


def test_attempts_come_from_the_scheduler_log():
    year = datetime.date.today().year
    got = list(parse_scheduler_log(LOG.splitlines(), year))
    assert [(pod, a.result, a.node) for pod, a in got] == [
        ("default/urgent", "unschedulable", ""), ("default/urgent", "scheduled", "n2"),
        ("team/x", "error", ""), ("team/x", "error", "")]
    assert got[0][1].message.startswith("0/3 nodes are available: 1 Insufficient cpu, 2 node(s)")
    assert got[0][1].wall == _wall(0.25)
    assert got[2][1].message == 'binding rejected: "quoted" reason'
    assert histogram(got[0][1].message) == {
        "Insufficient cpu": 1, "node(s) didn't match pod anti-affinity rules": 2}


def _pod(name: str, uid: str, *, node: str = "", phase: str = "Pending", **meta) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": uid, **meta},
            "spec": {"nodeName": node, "priority": 5} if node else {"priority": 5},
            "status": {"phase": phase}}


def test_what_the_watch_saw_becomes_the_simulators_records(tmp_path):
    obs = Observations(start=_wall(0), scale=2.0)
    # A bound pod of the cluster, untouched: not listed. One that was preempted: listed.
    obs.track(_pod("old", "u-old", node="n1"), "cluster", _wall(0)).node = "n1"
    obs.pod_event("ADDED", _pod("old", "u-old", node="n1", phase="Running"), _wall(0), "cluster")
    obs.track(_pod("victim", "u-v", node="n2"), "cluster", _wall(0)).node = "n2"
    obs.pod_event("ADDED", _pod("victim", "u-v", node="n2", phase="Running"), _wall(0), "cluster")
    obs.pod_event("ADDED", _pod("urgent", "u-urgent"), _wall(0.1), "workload")
    obs.pod_event("MODIFIED", {**_pod("victim", "u-v", node="n2", phase="Running",
                                      deletionTimestamp="x", deletionGracePeriodSeconds=2),
                               "status": {"phase": "Running", "conditions": [{
                                   "type": "DisruptionTarget",
                                   "reason": "PreemptionByScheduler"}]}}, _wall(0.3), "cluster")
    obs.preempted_event({"reason": "Preempted", "involvedObject": {"uid": "u-v"},
                         "message": "Preempted by pod u-urgent on node n2"})
    # Chosen again while terminating, by another preemptor: it counts once, by the first.
    obs.preempted_event({"reason": "Preempted", "involvedObject": {"uid": "u-v"},
                         "message": "Preempted by pod u-other on node n2"})
    obs.pod_event("DELETED", _pod("victim", "u-v", node="n2"), _wall(2.3), "cluster")
    obs.pod_event("MODIFIED", _pod("urgent", "u-urgent", node="n2"), _wall(2.5), "workload")
    obs.pod_event("ADDED", _pod("waiting", "u-w"), _wall(1.0), "workload")
    log = tmp_path / "kube-scheduler.log"
    log.write_text(LOG.replace("team/x", "default/waiting"))
    obs.read_log(log, datetime.date.today().year)
    recs = {r.name: r for r in records(obs).values()}
    assert set(recs) == {"victim", "urgent", "waiting"}
    urgent = recs["urgent"]
    assert (urgent.status, urgent.node, urgent.attempts) == (SCHEDULED, "n2", 2)
    assert urgent.scheduled_at == 5_000_000_000  # 2.5 s at twice the speed: 5 s of workload
    assert urgent.arrived_at == 200_000_000 and urgent.preemptions_caused == ["default/victim"]
    victim = recs["victim"]
    assert (victim.status, victim.preempted_by, victim.origin) == (
        PREEMPTED, "default/urgent", "cluster")
    waiting = recs["waiting"]
    assert (waiting.status, waiting.attempts) == (PENDING, 2)
    assert waiting.message == 'node "n9" not found'


def test_a_pod_refused_at_admission_is_rejected():
    obs = Observations(start=_wall(0))
    track = obs.track({"metadata": {"name": "p", "namespace": "default", "uid": "rejected:p"}},
                      "workload", _wall(1))
    track.arrived, track.rejected = _wall(1), "no PriorityClass with name nope was found"
    (rec,) = records(obs).values()
    assert (rec.status, rec.message) == (REJECTED, "no PriorityClass with name nope was found")


def test_cycle_durations_are_the_gaps_between_failed_attempts_while_busy():
    from extender.sandbox.observed import Attempt, cycle_seconds

    obs = Observations(start=_wall(0))
    failed = [0.0, 0.010, 0.018, 0.029, 0.037, 0.046,  # failures: gaps 10, 8, 11, 8, 9 ms
              1.000, 1.040, 1.082, 1.121, 1.165, 1.205]  # preemptions: 40, 42, 39, 44, 40 ms
    for i, second in enumerate(failed):
        obs.attempts[f"default/p{i}"] = [Attempt(_wall(second), "unschedulable")]
        if second > 1.0:  # the watch sees each preemptor nominated a few ms after its log line
            obs.nominations.append((_wall(second + 0.004), f"default/p{i}", "n1"))
    # Not cycles: the gap after a placed pod (logged when its binding ends) and idle time.
    obs.attempts["default/placed"] = [Attempt(_wall(2.0), "scheduled", node="n1")]
    obs.attempts["default/after-placed"] = [Attempt(_wall(2.001), "unschedulable")]
    obs.attempts["default/after-idle"] = [Attempt(_wall(5.0), "unschedulable")]
    assert cycle_seconds(obs) == {"failure": 0.009, "preemption": 0.04}
    # Fewer than five gaps of a kind measure nothing.
    del obs.attempts["default/p11"], obs.attempts["default/p10"]
    assert cycle_seconds(obs) == {"failure": 0.009}


def _preempted(obs: Observations, name: str, node: str, began: float, gone: float) -> None:
    """`name`, bound to `node`, preempted by u-urgent: its deletion began at `began` s."""
    obs.pod_event("ADDED", _pod(name, f"u-{name}", node=node, phase="Running"), _wall(0),
                  "cluster")
    obs.pods[f"u-{name}"].node = node
    obs.pod_event("MODIFIED", {**_pod(name, f"u-{name}", node=node, deletionTimestamp="x",
                                      deletionGracePeriodSeconds=2),
                               "status": {"phase": "Running", "conditions": [{
                                   "type": "DisruptionTarget",
                                   "reason": "PreemptionByScheduler"}]}}, _wall(began), "cluster")
    obs.preempted_event({"reason": "Preempted", "involvedObject": {"uid": f"u-{name}"},
                         "message": f"Preempted by pod u-urgent on node {node}"})
    obs.pod_event("DELETED", _pod(name, f"u-{name}", node=node), _wall(gone), "cluster")


def test_a_pod_that_preempts_again_is_logged_preemption_by_preemption():
    # Its node taken before its victims left, a preemptor preempts again, elsewhere or on the
    # same node later: each preemption is an event at its own time, each victim's eviction
    # when its deletion began (they were logged as one preemption, at the first one's time).
    obs = Observations(start=_wall(0))
    obs.pod_event("ADDED", _pod("urgent", "u-urgent"), _wall(0.1), "workload")
    _preempted(obs, "a", "n1", 1.0, 3.0)
    _preempted(obs, "b", "n1", 1.08, 3.1)  # the same preemption: its last victim, 80 ms on
    _preempted(obs, "c", "n2", 20.0, 22.0)
    _preempted(obs, "d", "n1", 30.0, 32.0)
    lines = event_lines(obs, _wall(40), truncated=False)
    assert [(e["t"], e["node"], e["victims"]) for e in lines if e["action"] == "preempt"] == [
        (1.0, "n1", ["default/a", "default/b"]), (20.0, "n2", ["default/c"]),
        (30.0, "n1", ["default/d"])]
    evictions = [(e["t"], e["pod"], e.get("terminated", False)) for e in lines
                 if e["action"] == "evict"]
    assert evictions == [(1.0, "default/a", False), (1.08, "default/b", False),
                         (3.0, "default/a", True), (3.1, "default/b", True),
                         (20.0, "default/c", False), (22.0, "default/c", True),
                         (30.0, "default/d", False), (32.0, "default/d", True)]
    assert all(e["by"] == "default/urgent" for e in lines if e["action"] == "evict")


def test_a_preemption_cycle_grows_with_the_pods_nominated_when_it_began():
    from extender.sandbox.observed import Attempt, PodTrack, cycle_seconds

    # 30 preemptors back to back, each nominated 4 ms after its log line and never bound:
    # when the k-th cycle begins, k - 2 of those before it are nominated (the one just logged
    # is not yet), and it takes 20 ms + 0.4 ms for each. A pod nominated and bound before
    # them all, and one deleted, count for none.
    obs = Observations(start=_wall(0))
    for name, bound, deleted in (("done", 0.6, None), ("gone", None, 0.7)):
        track = obs.pods[name] = PodTrack("default", name, name, "workload")
        track.bound, track.deleted = bound, deleted
        obs.nominations.append((_wall(0.5), f"default/{name}", "n0"))
    second = 1.0
    for k in range(31):
        if k:
            second += 0.020 + 0.0004 * max(k - 2, 0)
            obs.nominations.append((_wall(second + 0.004), f"default/p{k}", f"n{k}"))
        obs.attempts[f"default/p{k}"] = [Attempt(_wall(second), "unschedulable")]
    measured = cycle_seconds(obs)
    assert (measured["preemptionBase"], measured["preemptionPerNominated"]) == (0.02, 0.0004)
    assert measured["preemption"] == 0.0254  # the median, as before: 20 + 0.4 × 13.5 ms
    # A cycle that does not grow draws no line: its median stands alone.
    obs.attempts.clear()
    for k in range(31):
        obs.attempts[f"default/p{k}"] = [Attempt(_wall(1.0 + 0.02 * k), "unschedulable")]
    obs.nominations[2:] = [(_wall(1.0 + 0.02 * k + 0.004), f"default/p{k}", f"n{k}")
                           for k in range(1, 31)]
    assert cycle_seconds(obs) == {"preemption": 0.02}


def test_a_failed_cycle_grows_with_the_pods_nominated_too():
    from extender.sandbox.observed import Attempt, PodTrack, cycle_seconds

    # 30 pods nominated at 0.5 s, bound one by one, each just after a failed attempt's log
    # line; 25 failed cycles back to back from 2 s, the k-th beginning with 31 - k of them
    # still nominated and taking 5 ms + 0.2 ms for each.
    obs = Observations(start=_wall(0))
    walls = [2.0]
    for k in range(1, 26):
        walls.append(walls[-1] + 0.005 + 0.0002 * (31 - k))
    for k, second in enumerate(walls):
        obs.attempts[f"default/f{k}"] = [Attempt(_wall(second), "unschedulable")]
    for j in range(30):
        track = obs.pods[f"b{j}"] = PodTrack("default", f"b{j}", f"b{j}", "workload")
        track.bound = _wall(walls[j] + 0.001) if j < len(walls) else None
        obs.nominations.append((_wall(0.5), f"default/b{j}", f"n{j}"))
    measured = cycle_seconds(obs)
    assert (measured["failureBase"], measured["failurePerNominated"]) == (0.005, 0.0002)
    assert "preemption" not in measured


def test_usage_counts_every_bound_pod_of_the_replays_objects_without_uids():
    # The replay's plan strips what the API server assigns (uid among it) from the snapshot's
    # pods; keyed by an empty uid, each one replaced the last and "before" showed one pod a
    # node at most (two pods of 1 and 1.5 cpu read as 1.5).
    from extender.sandbox.observed import usage

    node = {"metadata": {"name": "n1"}, "status": {"allocatable": {
        "cpu": "4", "memory": "8Gi", "pods": "110"}}}

    def bound(name: str, cpu: str) -> dict:
        return {"metadata": {"name": name, "namespace": "default"},
                "spec": {"nodeName": "n1", "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}

    before = usage([node], [bound("a", "1"), bound("b", "1500m")])
    assert (before["n1"].pods, before["n1"].milli_cpu) == (2, 2500)
