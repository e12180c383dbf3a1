"""CapacityScheduling in the simulator: ElasticQuota PreFilter, quota use that follows
assume/forget, and its own preemption (victims by quota, any priority across namespaces,
every potential node from the first, its own terminating-pod rule).

Upstream rows come from tests/engine/upstream/gang_quota_data.py (transcribed from
kubernetes-sigs/scheduler-plugins pkg/capacityscheduling/capacity_scheduling_test.go); each test
names the table and case.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from extender.engine.framework import Code, Status
from extender.engine.policy import parse_policy
from extender.engine.preemption.evaluator import dry_run_preemption, preempt
from extender.engine.preemption.victims import Victims
from extender.engine.profile import build_profile
from extender.engine.runner import prepare_filters, run_filters
from extender.model import k8s
from extender.model.pod import PodView
from extender.simulator.clock import SECOND, seconds
from extender.state.snapshot import load_snapshot
from tests.engine.upstream import gang_quota_data as data

from .helpers import EPOCH, at, by_name, node, pod, simulate, write
from .scheduler_plugins import elastic_quota, quota_policy

TEAM_A_MIN, TEAM_A_MAX = {"cpu": "2", "memory": "8Gi"}, {"cpu": "6", "memory": "24Gi"}
TEAM_B_MIN, TEAM_B_MAX = {"cpu": "6", "memory": "24Gi"}, {"cpu": "8", "memory": "32Gi"}


def borrow_and_reclaim() -> tuple[list[dict], list[dict]]:
    """Two 4-cpu nodes; team-a min 2 max 6 cpu, team-b min 6 max 8 (Σ min = the cluster).
    team-a (priority 1000) asks for 8 one-cpu pods from t=0, team-b (priority 0) for 6 from
    t=10 s, one every 100 ms."""
    cluster = [node("n1", "4", "16Gi"), node("n2", "4", "16Gi"),
               elastic_quota("team-a", TEAM_A_MIN, TEAM_A_MAX),
               elastic_quota("team-b", TEAM_B_MIN, TEAM_B_MAX)]
    # Victims go at once (terminationGracePeriodSeconds 0): these tests are about the quotas.
    workload = [pod(f"a{i}", "1", "1Gi", namespace="team-a", priority=1000, created=at(i / 10),
                    terminationGracePeriodSeconds=0)
                for i in range(8)]
    workload += [pod(f"b{i}", "1", "1Gi", namespace="team-b", priority=0, created=at(10 + i / 10))
                 for i in range(6)]
    return cluster, workload


def test_team_a_borrows_up_to_its_max(tmp_path):
    cluster, workload = borrow_and_reclaim()
    _, report = simulate(tmp_path, cluster, workload, quota_policy(), max_time=seconds(0.601))
    pods = by_name(report)
    # team-b is idle: team-a borrows its min beyond its own (2) up to its max (6).
    assert [pods[f"a{i}"]["status"] for i in range(6)] == ["Scheduled"] * 6
    # a6 would take team-a over its max; CapacityScheduling's preemption finds nothing: team-a
    # is over its min, so only its own lower-priority pods could go (none).
    assert pods["a6"]["message"] == (
        "0/2 nodes are available: Pod team-a/a6 is rejected in PreFilter because ElasticQuota "
        "team-a is more than Max. 0/2 nodes are available: 1 No victims found on node n1 for "
        "preemptor pod a6, 1 No victims found on node n2 for preemptor pod a6.")


def test_team_b_reclaims_its_min_by_preempting_borrowed_pods(tmp_path):
    cluster, workload = borrow_and_reclaim()
    # b0 and b1 take the last 2 free cpu (Σ used 8 = Σ min). b2 (10.2 s) is over Σ min in
    # PreFilter; team-b is within its own min (2 + 1 ≤ 6), so its preemption may evict pods of
    # namespaces over their min — team-a's, though of higher priority. On each node the pods
    # are offered back most important first (equal priority: earlier start first) while the
    # pod still fits and the quotas allow: n1 keeps a0, a2 and gives a5; n2 keeps a1, a3 and
    # gives a4; a5 started last, so n1 is chosen.
    _, report = simulate(tmp_path, cluster, workload, quota_policy(), max_time=seconds(10.201))
    pods = by_name(report)
    assert pods["b2"]["message"] == (
        "0/2 nodes are available: Pod team-b/b2 is rejected in PreFilter because total "
        "ElasticQuota used is more than min.")
    assert pods["b2"]["nominatedNode"] == "n1"
    assert pods["b2"]["preempted"] == ["team-a/a5"]
    assert pods["a5"]["status"] == "Preempted" and pods["a5"]["preemptedBy"] == "team-b/b2"

    _, report = simulate(tmp_path, cluster, workload, quota_policy())
    pods = by_name(report)
    assert {p: pods[p]["preempted"] for p in ("b2", "b3", "b4", "b5")} == {
        "b2": ["team-a/a5"], "b3": ["team-a/a4"], "b4": ["team-a/a3"], "b5": ["team-a/a2"]}
    # team-b got its min back; team-a is down to its own min, the rest preempted or pending.
    assert [pods[f"b{i}"]["status"] for i in range(6)] == ["Scheduled"] * 6
    assert [pods[f"a{i}"]["status"] for i in range(8)] == (
        ["Scheduled"] * 2 + ["Preempted"] * 4 + ["Pending"] * 2)
    assert pods["a7"]["message"] == (
        "0/2 nodes are available: Pod team-a/a7 is rejected in PreFilter because total "
        "ElasticQuota used is more than min. 0/2 nodes are available: 1 No victims found on "
        "node n1 for preemptor pod a7, 1 No victims found on node n2 for preemptor pod a7.")
    assert report["totals"]["preempted"] == 4
    assert not report["totals"]["truncated"]


# -- upstream rows ----------------------------------------------------------------------------


def _cs_pod(spec: dict[str, Any], *, bound: bool = True) -> dict[str, Any]:
    """A pod of the upstream tables as an object (makePod(...) or st.MakePod())."""
    containers = [{"name": "c", "image": "pause",
                   "resources": {"requests": dict(c["requests"])}} for c in spec["containers"]]
    obj: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": spec["name"], "namespace": spec["namespace"] or "default",
                     "uid": spec["uid"] or spec["name"]},
        "spec": {"containers": containers, "priority": spec["priority"] or 0}}
    if spec["preemption_policy"]:
        obj["spec"]["preemptionPolicy"] = spec["preemption_policy"]
    if bound and spec["node_name"]:
        obj["spec"]["nodeName"] = spec["node_name"]
        obj["status"] = {"phase": "Running", "startTime": EPOCH}
    if spec["terminating"]:
        obj["metadata"]["deletionTimestamp"] = EPOCH
    if spec["nominated_node_name"]:
        obj.setdefault("status", {})["nominatedNodeName"] = spec["nominated_node_name"]
    return obj


def _node(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": spec["name"], "labels": {"kubernetes.io/hostname": spec["name"]}},
            "status": {"allocatable": spec["allocatable"], "capacity": spec["allocatable"]}}


def _quota(spec: dict[str, Any]) -> dict[str, Any]:
    as_list = {name: str(amount) for name, amount in spec["min"].items()}
    return elastic_quota(spec["namespace"], as_list,
                         {name: str(amount) for name, amount in spec["max"].items()})


def _view(obj: dict[str, Any]) -> PodView:
    return PodView.from_k8s(k8s.convert(obj, k8s.Pod))


DRY_RUN = {r["case"]: r for r in data.CAPACITY_DRY_RUN_PREEMPTION}


@pytest.mark.parametrize("case", list(DRY_RUN))
def test_dry_run_preemption_rows(tmp_path, case):
    # capacity_scheduling_test.go TestDryRunPreemption (gang_quota_data
    # CAPACITY_DRY_RUN_PREEMPTION). The quotas' Used is the sum of each namespace's pods on
    # node-a, which is exactly what the rows inject (ns1 50, ns2 100).
    row = DRY_RUN[case]
    cluster = [_node(n) for n in row["nodes"]] + [_quota(q) for q in row["elastic_quotas"]]
    cluster += [_cs_pod(p) for p in row["existing_pods"]]
    state = load_snapshot(write(tmp_path / "cluster.json", cluster))
    profile = build_profile(parse_policy(quota_policy()))
    preemptor = _view(_cs_pod(row["pod"]))
    now = state.clock()
    statuses = run_filters(profile, preemptor, list(state.nodes.values()), state).statuses
    assert statuses["node-a"].code == Code.UNSCHEDULABLE  # Insufficient memory
    plugin = profile.post_filter
    assert plugin is not None

    # The dry run as CapacityScheduling runs it: offset 0, every potential node, its guard.
    offset, wanted = plugin.offset_and_num_candidates(len(state.nodes), random.Random(0))
    assert (offset, wanted) == (0, 1) == (row["dry_run"]["offset"], len(row["nodes"]))
    dry = dry_run_preemption(prepare_filters(profile, preemptor, state), preemptor,
                             list(state.nodes.values()), state, offset, wanted, now,
                             plugin.can_preempt(preemptor, state, now), plugin.victim_guard)
    expected = {c["node"]: ([v for v in c["victims"]], c["num_pdb_violations"])
                for c in row["expected"]["candidates"]}
    assert {n: ([p.name for p in v.pods], v.num_pdb_violations)
            for n, v in dry.candidates.items()} == expected

    # The whole PostFilter: same candidate, and no random draw.
    rng = random.Random(7)
    before = rng.getstate()
    result = preempt(profile, preemptor, statuses, state, now, rng)
    assert result.status.code == Code.SUCCESS
    assert rng.getstate() == before
    assert isinstance(result.victims, Victims)
    assert (result.node_name, [p.name for p in result.victims.pods]) == (
        row["expected"]["candidates"][0]["node"], row["expected"]["candidates"][0]["victims"])

    # And in the simulator: the preemptor evicts the row's victims and binds.
    workload = [_cs_pod(row["pod"], bound=False)]
    _, report = simulate(tmp_path, cluster, workload, quota_policy())
    pods = by_name(report)
    name = row["pod"]["name"]
    assert pods[name]["status"] == "Scheduled" and pods[name]["node"] == "node-a"
    assert pods[name]["preempted"] == [f"{v_ns}/{v}" for v, v_ns in (
        (v, next(p["namespace"] for p in row["existing_pods"] if p["name"] == v))
        for v in row["expected"]["candidates"][0]["victims"])]


POST_FILTER = {r["case"]: r for r in data.CAPACITY_POSTFILTER}


@pytest.mark.parametrize("case", list(POST_FILTER))
def test_post_filter_rows(tmp_path, case):
    # capacity_scheduling_test.go TestPostFilter (gang_quota_data CAPACITY_POSTFILTER): Success,
    # nominated node-a, no message ("preemption: " is DefaultPreemption's prefix only).
    row = POST_FILTER[case]
    cluster = [_node(n) for n in row["nodes"]] + [_quota(q) for q in row["elastic_quotas"]]
    cluster += [_cs_pod(p) for p in row["existing_pods"]]
    workload = [_cs_pod(row["pod"], bound=False)]
    _, report = simulate(tmp_path, cluster, workload, quota_policy(), max_time=seconds(0.0005))
    pods = by_name(report)
    name = row["pod"]["name"]
    assert pods[name]["nominatedNode"] == row["expected"]["nominated_node_name"]
    assert pods[name]["message"] == "0/1 nodes are available: 1 Insufficient memory."
    victims = [v.split("/")[1] for v in pods[name]["preempted"]]
    allowed = row.get("derived_victims_one_of") or [row["derived_victims"]]
    assert victims in allowed


ELIGIBLE = {r["case"]: r for r in data.CAPACITY_POD_ELIGIBLE_TO_PREEMPT_OTHERS}
_CODES = {"UnschedulableAndUnresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE}


@pytest.mark.parametrize("case", list(ELIGIBLE))
def test_pod_eligible_to_preempt_others_rows(tmp_path, case):
    # capacity_scheduling_test.go TestPodEligibleToPreemptOthers (gang_quota_data
    # CAPACITY_POD_ELIGIBLE_TO_PREEMPT_OTHERS). Upstream passes a nil status for the rows
    # without one, whose Code() is Success. The quotas' injected Used becomes a pod of that
    # size on node-a where the row's pods do not add up to it.
    row = ELIGIBLE[case]
    cluster = [_node(n) for n in row["nodes"]] + [_quota(q) for q in row["elastic_quotas"]]
    cluster += [_cs_pod(p) for p in row["existing_pods"]]
    for quota in row["elastic_quotas"]:
        used = quota["used"].get("memory", 0)
        have = sum(int(c["requests"].get("memory", 0)) for p in row["existing_pods"]
                   if p["namespace"] == quota["namespace"] for c in p["containers"])
        if used > have:
            cluster.append(pod(f"used-{quota['namespace']}", "0", str(used - have),
                               namespace=quota["namespace"], node_name="node-a"))
    state = load_snapshot(write(tmp_path / "cluster.json", cluster))
    plugin = build_profile(parse_policy(quota_policy())).post_filter
    assert plugin is not None
    preemptor = _view(_cs_pod(row["pod"], bound=False))
    given = row["nominated_node_status"]
    status = (Status(Code.SUCCESS, ()) if given is None
              else Status(_CODES[given["code"]], tuple(given["reasons"])))
    now = state.clock()
    eligible, why = plugin.pod_eligible_to_preempt_others(
        preemptor, status, state.nodes["node-a"], plugin.can_preempt(preemptor, state, now), state)
    assert (eligible, why) == (row["expected"]["eligible"], row["expected"]["reason"])


def test_terminating_victim_blocks_a_second_preemption(tmp_path):
    # With a grace period the victims stay (terminating, still counted in team-a's use) on the
    # nominated node. A retry meanwhile (an unrelated pod's deletion at 5 s moves the preemptor)
    # is not eligible to preempt again: team-b is within its min and a terminating pod there
    # belongs to team-a, which is over its own. The preemptor binds once they are gone.
    cluster = [node("n1", "2", "8Gi"), node("n2", "1", "8Gi"),
               elastic_quota("team-a", {"cpu": "0", "memory": "0"}, {"cpu": "2", "memory": "8Gi"}),
               elastic_quota("team-b", {"cpu": "2", "memory": "8Gi"}, {"cpu": "2", "memory": "8Gi"}),
               pod("a0", "1", "1Gi", namespace="team-a", priority=100, node_name="n1"),
               pod("a1", "1", "1Gi", namespace="team-a", priority=100, node_name="n1"),
               pod("x", "1", "1Gi", namespace="other", node_name="n2")]
    workload = [pod("b0", "2", "1Gi", namespace="team-b", created=EPOCH),
                {"kind": "SimulationEvent", "at": "5s", "deletePod": "other/x"}]
    _, report = simulate(tmp_path, cluster, workload, quota_policy(),
                         victim_grace_period=30 * SECOND, max_time=20 * SECOND)
    b0 = by_name(report)["b0"]
    assert b0["preempted"] == ["team-a/a0", "team-a/a1"]
    assert b0["nominatedNode"] == "n1"
    assert b0["attempts"] == 2
    assert b0["message"] == (
        "0/2 nodes are available: Pod team-b/b0 is rejected in PreFilter because total "
        "ElasticQuota used is more than min. not eligible due to a terminating pod on the "
        "nominated node.")
    _, report = simulate(tmp_path, cluster, workload, quota_policy(),
                         victim_grace_period=30 * SECOND)
    b0 = by_name(report)["b0"]
    assert (b0["status"], b0["node"]) == ("Scheduled", "n1")
    assert b0["scheduledAtSeconds"] > 30
