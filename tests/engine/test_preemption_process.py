"""The extender's preempt verb (`process_preemption`): the fixtures, and each way a proposed
node is kept, completed or dropped."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from extender.engine.preemption import (
    NOT_ELIGIBLE_NEVER,
    DropReason,
    PreemptionOutcome,
    by_importance,
    count_pdb_violations,
    fits_with_nominated,
    process_preemption,
)
from extender.engine.preemption.ordering import importance_key
from extender.engine.runner import prepare_filters
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

FIXTURE_NOW = parse_time("2026-11-20T10:00:00Z")
NOW = T0
PROFILE = profile()


def reply(outcome: PreemptionOutcome) -> dict:
    """The wire reply the route builds from the outcome."""
    return {"NodeNameToMetaVictims": {
        node_name: {"Pods": [{"UID": p.uid} for p in victims.pods],
                    "NumPDBViolations": victims.num_pdb_violations}
        for node_name, victims in outcome.victims.items()}}


def fixture_request(name: str) -> tuple[PodView, dict[str, list[str]]]:
    request = fixture(name)
    me = PodView.from_k8s(k8s.convert(request["Pod"], k8s.Pod))
    if request["NodeNameToMetaVictims"] is not None:
        proposals = {n: [p["UID"] for p in v["Pods"]]
                     for n, v in request["NodeNameToMetaVictims"].items()}
    else:
        proposals = {n: [p["metadata"]["uid"] for p in v["Pods"]]
                     for n, v in request["NodeNameToVictims"].items()}
    return me, proposals


def fixture_state():
    return load_snapshot(FIXTURES / "cluster.json")


# ---- the fixtures ------------------------------------------------------------------------------

def test_meta_fixture_gives_the_expected_reply():
    me, proposals = fixture_request("preempt-meta.request.json")
    outcome = process_preemption(PROFILE, me, proposals, fixture_state(), FIXTURE_NOW)
    assert reply(outcome) == fixture("preempt.expected.json")
    assert outcome.dropped == {} and outcome.ignored == {}


def test_full_fixture_gives_the_same_reply():
    me, proposals = fixture_request("preempt-full.request.json")
    assert proposals == {"worker-b2": ["uid-default-batch-2"]}
    outcome = process_preemption(PROFILE, me, proposals, fixture_state(), FIXTURE_NOW)
    assert reply(outcome) == fixture("preempt.expected.json")


def test_insufficient_proposal_gets_the_extra_victim_it_needs():
    # batch-3 alone frees 100m; batch-2 must go too. Most important (batch-3, started first) first.
    me, _ = fixture_request("preempt-meta.request.json")
    outcome = process_preemption(PROFILE, me, {"worker-b2": ["uid-default-batch-3"]},
                                 fixture_state(), FIXTURE_NOW)
    assert reply(outcome) == {"NodeNameToMetaVictims": {"worker-b2": {
        "Pods": [{"UID": "uid-default-batch-3"}, {"UID": "uid-default-batch-2"}],
        "NumPDBViolations": 1}}}


def test_empty_proposal_is_completed_like_the_dry_run():
    me, _ = fixture_request("preempt-meta.request.json")
    outcome = process_preemption(PROFILE, me, {"worker-b2": []}, fixture_state(), FIXTURE_NOW)
    assert reply(outcome) == fixture("preempt.expected.json")


def test_nodes_preemption_cannot_fix_are_dropped():
    me, _ = fixture_request("preempt-meta.request.json")
    proposals = {"gpu-b1": ["uid-default-train-1"],       # taint (and train-1 is not lower)
                 "worker-a1": ["uid-default-batch-1"],    # zone selector: node affinity
                 "cordoned-c1": [],                       # unschedulable
                 "worker-b2": ["uid-default-batch-2"]}
    outcome = process_preemption(PROFILE, me, proposals, fixture_state(), FIXTURE_NOW)
    assert list(outcome.victims) == ["worker-b2"]
    assert outcome.dropped == dict.fromkeys(["gpu-b1", "worker-a1", "cordoned-c1"],
                                            DropReason.UNRESOLVABLE)
    assert outcome.drop_details["cordoned-c1"] == "NodeUnschedulable: node(s) were unschedulable"
    assert outcome.drop_details["worker-a1"].startswith("NodeAffinity: ")
    assert outcome.drop_details["gpu-b1"].startswith("TaintToleration: ")
    assert outcome.ignored == {"gpu-b1": ("uid-default-train-1",)}


def test_unknown_nodes_and_foreign_or_unknown_uids():
    me, _ = fixture_request("preempt-meta.request.json")
    proposals = {"ghost": ["uid-default-batch-2"],
                 "worker-b2": ["uid-default-web-1", "nope", "uid-default-batch-2", "nope"]}
    outcome = process_preemption(PROFILE, me, proposals, fixture_state(), FIXTURE_NOW)
    assert reply(outcome) == fixture("preempt.expected.json")
    assert outcome.dropped == {"ghost": DropReason.NODE_NOT_FOUND}
    assert outcome.ignored == {"worker-b2": ("uid-default-web-1", "nope")}


def test_preemptor_that_may_not_evict_the_proposal_drops_the_node():
    # At priority 100 the batch pods are peers, not victims; nothing else can make room.
    request = fixture("preempt-meta.request.json")
    request["Pod"]["spec"]["priority"] = 100
    me = PodView.from_k8s(k8s.convert(request["Pod"], k8s.Pod))
    outcome = process_preemption(PROFILE, me, {"worker-b2": ["uid-default-batch-2"]},
                                 fixture_state(), FIXTURE_NOW)
    assert outcome.victims == {}
    assert outcome.dropped == {"worker-b2": DropReason.NOT_ENOUGH_VICTIMS}
    assert outcome.drop_details["worker-b2"].endswith("No preemption victims found for incoming pod")


def test_never_preemptor_drops_every_node():
    me = view(pod("me", priority=1000, preemption_policy="Never"))
    outcome = process_preemption(PROFILE, me, {"a": ["x"], "b": []}, fixture_state(), NOW)
    assert outcome.victims == {}
    assert outcome.dropped == dict.fromkeys("ab", DropReason.PREEMPTOR_NOT_ELIGIBLE)
    assert outcome.drop_details["a"] == NOT_ELIGIBLE_NEVER


# ---- keeping, ordering, completing -------------------------------------------------------------

def three_pods():
    """n (3 cpu) runs a (prio 30), b (prio 20), c (prio 10), 1 cpu each."""
    return cluster(node("n", cpu="3"), pod("a", "n", priority=30), pod("b", "n", priority=20),
                   pod("c", "n", priority=10))


def names(outcome, node_name="n"):
    return [p.name for p in outcome.victims[node_name].pods]


def test_a_sufficient_proposal_is_kept_as_is_highest_priority_first():
    # One victim would do, but the scheduler's own (fuller) filters chose two: keep them.
    me = view(pod("me", priority=100))
    outcome = process_preemption(PROFILE, me, {"n": ["uid-c", "uid-a"]}, three_pods(), NOW)
    assert names(outcome) == ["a", "c"]


def test_completion_keeps_the_proposal_and_adds_the_least_important():
    me = view(pod("me", priority=100, cpu="2"))
    outcome = process_preemption(PROFILE, me, {"n": ["uid-a"]}, three_pods(), NOW)
    assert names(outcome) == ["a", "c"]


def test_pod_that_fits_without_eviction_drops_the_node():
    me = view(pod("me", priority=100))
    state = cluster(node("n", cpu="4"), pod("a", "n", priority=1))
    outcome = process_preemption(PROFILE, me, {"n": ["nope"]}, state, NOW)
    assert outcome.dropped == {"n": DropReason.NO_VICTIMS_NEEDED}


def test_room_reserved_for_nominated_pods_needs_more_victims():
    state = cluster(node("n", cpu="3"), pod("a", "n", priority=30), pod("b", "n", priority=20),
                    pod("c", "n", priority=10),
                    pod("waiting", priority=500, nominated="n"))
    me = view(pod("me", priority=100))
    outcome = process_preemption(PROFILE, me, {"n": ["uid-c"]}, state, NOW)
    assert names(outcome) == ["b", "c"]


def test_pdb_violations_are_recomputed_from_the_state():
    state = cluster(node("n", cpu="2"),
                    pod("w1", "n", priority=1, labels={"app": "w"}, start=T0 - 900),
                    pod("w2", "n", priority=1, labels={"app": "w"}, start=T0 - 100),
                    pdb("w", {"app": "w"}, 1))
    me = view(pod("me", priority=100))
    for proposal, violations in ((["uid-w2"], 1), (["uid-w1"], 0), (["uid-w1", "uid-w2"], 1)):
        outcome = process_preemption(PROFILE, me, {"n": proposal}, state, NOW)
        assert outcome.victims["n"].num_pdb_violations == violations


# ---- invariants ------------------------------------------------------------------------------

pods_strategy = st.lists(st.tuples(st.integers(0, 3),            # node index
                                   st.integers(-5, 20),          # priority
                                   st.sampled_from(["250m", "500m", "1", "2"])),
                         max_size=10)


@settings(max_examples=150, deadline=None)
@given(pods_strategy, st.lists(st.tuples(st.integers(0, 4), st.integers(0, 12)), max_size=12),
       st.sampled_from(["500m", "1", "2", "3"]), st.integers(0, 15))
def test_reply_invariants(pods, proposal_pairs, request, priority):
    objects = [node(f"n{i}", cpu="3") for i in range(4)]
    objects += [pod(f"p{j}", f"n{i}", priority=prio, cpu=cpu) for j, (i, prio, cpu) in enumerate(pods)]
    state = cluster(*objects)
    proposals: dict[str, list[str]] = {}
    for node_index, pod_index in proposal_pairs:  # node 4 does not exist; uids may be foreign
        proposals.setdefault(f"n{node_index}", []).append(f"uid-p{pod_index}")
    me = view(pod("me", priority=priority, cpu=request))
    outcome = process_preemption(PROFILE, me, proposals, state, NOW)

    assert set(outcome.victims) | set(outcome.dropped) == set(proposals)
    assert not set(outcome.victims) & set(outcome.dropped)
    checks = prepare_filters(PROFILE, me)
    for node_name, victims in outcome.victims.items():
        info = state.nodes[node_name]
        assert victims.pods, "never a node with zero victims"
        assert all(info.pods.get(p.uid) is p for p in victims.pods), "only pods on that node"
        assert all(p.priority < me.priority for p in victims.pods)
        keys = [importance_key(p, NOW) for p in victims.pods]
        assert keys == sorted(keys), "most important first"
        assert {p.uid for p in victims.pods} >= {
            u for u in proposals[node_name] if u in info.pods and info.pods[u].priority < me.priority}
        freed = info.clone()
        for p in victims.pods:
            freed.remove_pod(p)
        assert fits_with_nominated(checks, me, freed, ()) is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 12), st.sampled_from(["w", "x", ""]),
                          st.integers(0, 9)),
                max_size=10),
       st.lists(st.tuples(st.sampled_from(["w", "x"]), st.integers(-1, 2)), max_size=3),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 9)), max_size=8),
       st.sampled_from(["500m", "1", "2"]))
def test_pdb_violations_match_counting_over_every_preemptable_pod(pods, budgets, pairs, request):
    # The verb looks only at the PDB-guarded pods, and at none when no victim is guarded; the
    # count must be the dry run's: victims in the violating group of all preemptable pods.
    objects = [node(f"n{i}", cpu="3") for i in range(3)]
    objects += [pod(f"p{j}", f"n{i}", priority=prio, cpu="1", labels={"app": app} if app else None,
                    start=T0 - 60 * minutes)
                for j, (i, prio, app, minutes) in enumerate(pods)]
    objects += [pdb(f"pdb{k}", {"app": app}, allowed) for k, (app, allowed) in enumerate(budgets)]
    state = cluster(*objects)
    proposals: dict[str, list[str]] = {}
    for node_index, pod_index in pairs:
        proposals.setdefault(f"n{node_index}", []).append(f"uid-p{pod_index}")
    me = view(pod("me", priority=10, cpu=request))
    outcome = process_preemption(PROFILE, me, proposals, state, NOW)
    for node_name, victims in outcome.victims.items():
        potential = by_importance(
            [p for p in state.nodes[node_name].pods.values() if p.priority < me.priority], NOW)
        assert victims.num_pdb_violations == count_pdb_violations(
            victims.pods, potential, state.pdb_list())
