"""DefaultPreemption's flow for the simulator: eligibility, potential nodes, the dry run's
window and the FitError message (reference §C.1–C.4), and `preempt` end to end."""

from __future__ import annotations

import random

import pytest

from extender.engine.args import DefaultPreemptionArgs
from extender.engine.framework import Code, Status, unresolvable, unschedulable
from extender.engine.preemption import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    Victims,
    dry_run_preemption,
    fit_error_message,
    nodes_where_preemption_might_help,
    num_candidates,
    pod_eligible_to_preempt_others,
    preempt,
)
from extender.engine.preemption.victims import lower_priority
from extender.engine.runner import prepare_filters, run_filters
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.timeparse import parse_time
from extender.state.snapshot import load_snapshot
from tests.engine.test_preemption_helpers import (
    FIXTURES,
    T0,
    cluster,
    fixture,
    node,
    pdb,
    pod,
    profile,
    view,
)

NOW = T0
CPU = unschedulable("NodeResourcesFit", "Insufficient cpu")
TAINT = unresolvable("TaintToleration", "node(s) had untolerated taint(s)")


# ---- PodEligibleToPreemptOthers -----------------------------------------------------------

def nominated_node(*pods):
    return cluster(node("n"), *pods).nodes["n"]


def test_preemption_policy_never_is_not_eligible():
    me = view(pod("me", priority=100, preemption_policy="Never"))
    assert pod_eligible_to_preempt_others(me, None, None) == (False, NOT_ELIGIBLE_NEVER)


def test_pod_without_nomination_is_eligible():
    assert pod_eligible_to_preempt_others(view(pod("me", priority=100)), None, None) == (True, "")


def test_victim_still_terminating_on_the_nominated_node_blocks():
    me = view(pod("me", priority=100, nominated="n"))
    info = nominated_node(pod("gone", "n", priority=1, terminating=True, preempted=True))
    assert pod_eligible_to_preempt_others(me, CPU, info) == (False, NOT_ELIGIBLE_TERMINATING)


def test_unresolvable_nominated_node_means_try_elsewhere():
    me = view(pod("me", priority=100, nominated="n"))
    info = nominated_node(pod("gone", "n", priority=1, terminating=True, preempted=True))
    assert pod_eligible_to_preempt_others(me, TAINT, info) == (True, "")
    assert pod_eligible_to_preempt_others(me, None, info) == (True, "")


@pytest.mark.parametrize("other, modern, legacy", [
    (dict(priority=1, terminating=True, preempted=False), True, False),  # deleted by someone else
    (dict(priority=1, terminating=False, preempted=True), True, True),
    (dict(priority=100, terminating=True, preempted=True), True, True),  # not a lower priority
])
def test_which_terminating_pods_block(other, modern, legacy):
    me = view(pod("me", priority=100, nominated="n"))
    info = nominated_node(pod("other", "n", **other))
    assert pod_eligible_to_preempt_others(me, CPU, info)[0] is modern
    assert pod_eligible_to_preempt_others(me, CPU, info, legacy_terminating=True)[0] is legacy


# ---- potential nodes, candidate count, message --------------------------------------------------

def test_only_unschedulable_nodes_might_help_in_the_given_order():
    statuses = {"c": CPU, "a": TAINT, "b": CPU, "d": Status(Code.ERROR, ("boom",))}
    assert nodes_where_preemption_might_help(["a", "b", "c", "d", "e"], statuses) == ["b", "c"]
    absent = Status(Code.UNSCHEDULABLE, ())
    assert nodes_where_preemption_might_help(["a", "b", "e"], statuses, absent) == ["b", "e"]


@pytest.mark.parametrize("nodes, pct, absolute, expected", [
    (50, 10, 100, 50), (1000, 10, 100, 100), (5000, 10, 100, 500), (200, 50, 10, 100),
    (3, 0, 1, 1), (7, 100, 0, 7),
])
def test_num_candidates(nodes, pct, absolute, expected):
    args = DefaultPreemptionArgs(minCandidateNodesPercentage=pct, minCandidateNodesAbsolute=absolute)
    assert num_candidates(nodes, args) == expected


def test_fit_error_message_vectors():
    none_found = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("No preemption victims found for incoming pod",))
    absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Preemption is not helpful for scheduling",))
    assert fit_error_message(3, dict.fromkeys("abc", none_found), absent) == (
        "0/3 nodes are available: 3 No preemption victims found for incoming pod.")
    # Sorted as whole strings: "1 Insufficient cpu" < "2 No …" < "3 Preemption …".
    assert fit_error_message(6, {"a": CPU, "b": none_found, "c": none_found}, absent) == (
        "0/6 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for "
        "incoming pod, 3 Preemption is not helpful for scheduling.")


# ---- the dry run's window ---------------------------------------------------------------

def four_nodes():
    """n0..n3 (2 cpu) each run one 2-cpu pod of priority 1; n1's is guarded by a PDB."""
    objects = [pdb("guard", {"app": "guarded"}, 0)]
    for i in range(4):
        objects += [node(f"n{i}", cpu="2"),
                    pod(f"p{i}", f"n{i}", priority=1, cpu="2",
                        labels={"app": "guarded" if i == 1 else "free"})]
    return cluster(*objects)


def dry(state, offset, wanted):
    me = view(pod("me", priority=100, cpu="2"))
    nodes = [state.nodes[f"n{i}"] for i in range(4)]
    return dry_run_preemption(prepare_filters(profile(), me), me, nodes, state, offset, wanted,
                              NOW, lower_priority(me))


def test_dry_run_starts_at_the_offset_and_stops_when_enough_candidates_are_found():
    result = dry(four_nodes(), offset=2, wanted=2)
    assert list(result.candidates) == ["n2", "n3"]


def test_dry_run_keeps_searching_until_a_pdb_respecting_candidate_is_found():
    result = dry(four_nodes(), offset=1, wanted=1)
    # n1 violates its PDB, so the search goes on to n2; clean candidates are listed first.
    assert list(result.candidates) == ["n2", "n1"]
    assert result.candidates["n1"].num_pdb_violations == 1


def test_dry_run_reports_a_node_needing_no_victims_as_an_error():
    state = cluster(node("n", cpu="4"), pod("low", "n", priority=1, cpu="1"))
    me = view(pod("me", priority=100, cpu="1"))
    result = dry_run_preemption(prepare_filters(profile(), me), me, [state.nodes["n"]], state,
                                0, 1, NOW, lower_priority(me))
    assert result.candidates == {}
    assert result.errors == ['expected at least one victim pod on node "n"']
    assert result.statuses["n"].code == Code.ERROR


# ---- preempt, end to end ------------------------------------------------------------------

FIXTURE_NOW = parse_time("2026-11-20T10:00:00Z")


def fixture_pod() -> PodView:
    return PodView.from_k8s(k8s.convert(fixture("preempt-meta.request.json")["Pod"], k8s.Pod))


def statuses_for(prof, me, state):
    return run_filters(prof, me, list(state.nodes.values())).statuses


def test_fixture_cluster_preempts_batch_2_on_worker_b2():
    state = load_snapshot(FIXTURES / "cluster.json")
    prof, me = profile(), fixture_pod()
    statuses = statuses_for(prof, me, state)
    assert [n for n, s in statuses.items() if s.code == Code.UNSCHEDULABLE] == ["worker-b2"]
    result = preempt(prof, me, statuses, state, FIXTURE_NOW, random.Random(0))
    assert result.status.code == Code.SUCCESS
    assert result.node_name == "worker-b2"
    assert [p.uid for p in result.victims.pods] == ["uid-default-batch-2"]
    assert result.victims.num_pdb_violations == 1
    assert not result.clear_nomination


def test_no_node_where_preemption_might_help_clears_the_nomination():
    state = load_snapshot(FIXTURES / "cluster.json")
    statuses = {name: TAINT for name in state.nodes}
    result = preempt(profile(), fixture_pod(), statuses, state, FIXTURE_NOW, random.Random(0))
    assert result.status.code == Code.UNSCHEDULABLE
    assert result.status.message == (
        "preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.")
    assert result.clear_nomination


def test_no_victims_anywhere_reports_the_dry_run():
    state = load_snapshot(FIXTURES / "cluster.json")
    low = PodView.from_k8s(k8s.convert(
        {**fixture("preempt-meta.request.json")["Pod"],
         "spec": {**fixture("preempt-meta.request.json")["Pod"]["spec"], "priority": 50}}, k8s.Pod))
    statuses = statuses_for(profile(), low, state)
    result = preempt(profile(), low, statuses, state, FIXTURE_NOW, random.Random(0))
    assert result.status.message == (
        "preemption: 0/6 nodes are available: 1 No preemption victims found for incoming pod, "
        "5 Preemption is not helpful for scheduling.")
    assert result.clear_nomination


def test_ineligible_pod_keeps_its_nomination():
    state = four_nodes()
    me = view(pod("me", priority=100, cpu="2", preemption_policy="Never"))
    result = preempt(profile(), me, dict.fromkeys(state.nodes, CPU), state, NOW, random.Random(0))
    assert result.status.code == Code.UNSCHEDULABLE
    assert result.status.message == "preemption: " + NOT_ELIGIBLE_NEVER
    assert not result.clear_nomination


def test_best_candidate_is_picked_and_the_random_offset_only_breaks_ties():
    state = four_nodes()
    me = view(pod("me", priority=100, cpu="2"))
    statuses = dict.fromkeys(state.nodes, CPU)
    chosen = set()
    for seed in range(20):
        result = preempt(profile(), me, statuses, state, NOW, random.Random(seed))
        assert result.status.code == Code.SUCCESS
        assert result.victims.num_pdb_violations == 0
        # All 4 nodes are examined (numCandidates = max(10%, 100) capped at 4); the clean
        # ones tie on every criterion, so the first found — after the offset — wins.
        offset = random.Random(seed).randrange(4)
        order = [f"n{(offset + i) % 4}" for i in range(4)]
        assert result.node_name == next(n for n in order if n != "n1")
        chosen.add(result.node_name)
    assert chosen == {"n0", "n2", "n3"}


def test_min_candidate_args_narrow_the_search():
    state = four_nodes()
    me = view(pod("me", priority=100, cpu="2"))
    prof = profile(minCandidateNodesPercentage=0, minCandidateNodesAbsolute=1)
    result = preempt(prof, me, dict.fromkeys(state.nodes, CPU), state, NOW, random.Random(3))
    offset = random.Random(3).randrange(4)
    first_clean = next(f"n{(offset + i) % 4}" for i in range(4) if (offset + i) % 4 != 1)
    assert list(result.candidates)[0] == first_clean
    assert len([n for n, v in result.candidates.items() if not v.num_pdb_violations]) == 1


def test_extenders_can_replace_or_veto_candidates():
    state = four_nodes()
    me = view(pod("me", priority=100, cpu="2"))
    statuses = dict.fromkeys(state.nodes, CPU)

    def only_n1(candidates):
        return {"n1": candidates["n1"]}

    result = preempt(profile(), me, statuses, state, NOW, random.Random(0), call_extenders=only_n1)
    assert (result.node_name, result.victims.num_pdb_violations) == ("n1", 1)
    result = preempt(profile(), me, statuses, state, NOW, random.Random(0),
                     call_extenders=lambda c: {})
    assert result.status.message == "preemption: no candidate node for preemption"
    failure = Status(Code.ERROR, ("extender down",))
    result = preempt(profile(), me, statuses, state, NOW, random.Random(0),
                     call_extenders=lambda c: failure)
    assert (result.status.code, result.status.message) == (Code.ERROR, "preemption: extender down")


def test_without_a_post_filter_plugin_nothing_happens():
    state = four_nodes()
    me = view(pod("me", priority=100, cpu="2"))
    result = preempt(profile(None), me, dict.fromkeys(state.nodes, CPU), state, NOW, random.Random(0))
    assert result.status.code == Code.UNSCHEDULABLE
    assert result.status.message == ""
    assert result.victims is None


def test_victims_are_a_candidate_entry():
    state = four_nodes()
    me = view(pod("me", priority=100, cpu="2"))
    result = preempt(profile(), me, dict.fromkeys(state.nodes, CPU), state, NOW, random.Random(0))
    assert isinstance(result.victims, Victims)
    assert result.candidates[result.node_name] is result.victims
