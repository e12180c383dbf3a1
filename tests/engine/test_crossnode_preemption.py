"""CrossNodePreemption (scheduler-plugins `pkg/crossnodepreemption`, the working version of
commit 1b685f0dd079ff8b919c0dd95d8ce0caa8474007; later versions comment the file out).

Its `TestFindCandidates` rows (`cross_node_preemption_test.go`), then what single-node
preemption cannot do and this plugin can: evict pods on several nodes to satisfy a spread or
anti-affinity constraint, with the exact (last found, never a superset) victim set; the search
order, the statuses it keeps out, the documented cap, and the preempt verb's fallback.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from extender.engine.framework import Code, Status, unresolvable
from extender.engine.policy import PolicyError, parse_policy
from extender.engine.preemption import preempt, process_preemption
from extender.engine.preemption.crossnode import (
    DEFAULT_MAX_CANDIDATE_PODS,
    NAME,
    CrossNodePreemption,
    candidate_pods,
    candidates_to_victims_map,
    find_candidates,
    subsets,
)
from extender.engine.preemption.evaluator import dry_run_filters
from extender.engine.preemption.victims import lower_priority
from extender.engine.profile import Profile, build_profile
from extender.engine.runner import prepare_filters, run_filters
from extender.model.pod import PodView
from tests.engine.test_preemption_helpers import T0, cluster, view
from tests.engine.upstream import builders as b

LOW, HIGH = 0, 100  # the upstream test's lowPriority and highPriority

FOO = b.selector(None, b.exists("foo"))


def profile(filters: list[str], post_filter: str = NAME, args: dict | None = None) -> Profile:
    return build_profile(parse_policy(b.policy(
        filters=filters, post_filters=[post_filter],
        args={post_filter: args} if args is not None else None)))


def node(name: str, zone: str, pods: str = "32") -> dict[str, Any]:
    """`st.MakeNode().Name(name).Label("zone", zone).Label("node", name)`; MakeNode's default
    capacity is 32 pods, `Capacity(onePodRes)` makes it 1."""
    return b.node(name, {"zone": zone, "node": name}, allocatable={"pods": pods})


def bound(name: str, node_name: str, priority: int | None = None,
          labels: dict[str, str] | None = None) -> dict[str, Any]:
    return b.pod(name, uid=name, node=node_name, labels=labels, priority=priority)


def anti_affinity(key: str, topology_key: str, *values: str) -> dict[str, Any]:
    """`PodAntiAffinityExists(key, topologyKey, PodAntiAffinityWithRequiredReq)`, or `key In
    values` when values are given."""
    expression = b.in_(key, *values) if values else b.exists(key)
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": b.selector(None, expression), "topologyKey": topology_key}]}}


SPREAD_PREEMPTOR = b.pod("p", uid="p", labels={"foo": ""}, priority=HIGH,
                         spread=[b.spread(1, "zone", "DoNotSchedule", FOO)])
ANTI_AFFINITY_PREEMPTOR = b.pod("p", uid="p", labels={"foo": ""}, priority=HIGH,
                                affinity=anti_affinity("foo", "zone"))
UPSTREAM_OBJECTS = [
    bound("pod-a", "node-a", labels={"foo": ""}),
    bound("pod-b", "node-b", labels={"foo": ""}),
    bound("pod-x", "node-x", priority=HIGH),
    node("node-a", "zone1"),
    node("node-b", "zone1"),
    node("node-x", "zone2", pods="1"),
]

# cross_node_preemption_test.go, TestFindCandidates: (case, preemptor, filter plugins, want)
FIND_CANDIDATES = [
    ("resolve PodTopologySpread constraint", SPREAD_PREEMPTOR,
     ["NodeResourcesFit", "PodTopologySpread"],
     [("node-a", ["pod-a", "pod-b"]), ("node-b", ["pod-a", "pod-b"])]),
    ("resolve PodAntiAffinity constraint", ANTI_AFFINITY_PREEMPTOR,
     ["NodeResourcesFit", "InterPodAffinity"],
     [("node-a", ["pod-a", "pod-b"]), ("node-b", ["pod-a", "pod-b"])]),
]


def _setup(objects: list[dict], preemptor: dict, prof: Profile) -> tuple[Any, PodView, dict]:
    state = cluster(*objects)
    me = view(preemptor)
    statuses = run_filters(prof, me, list(state.nodes.values()), state).statuses
    return state, me, statuses


def _names(pods: Any) -> list[str]:
    return [p.name for p in pods]


@pytest.mark.parametrize(("name", "preemptor", "filters", "want"), FIND_CANDIDATES,
                         ids=[r[0] for r in FIND_CANDIDATES])
def test_find_candidates(name, preemptor, filters, want):
    """TestFindCandidates: every node upstream's nodesStatuses marks Unschedulable; got and
    want sorted by node name, victims by pod name, as the upstream test sorts them."""
    prof = profile(filters)
    state = cluster(*UPSTREAM_OBJECTS)
    me = view(preemptor)
    nodes = list(state.nodes.values())
    filters_pass = dry_run_filters(prepare_filters(prof, me, state), prof.post_filter, me, state)
    pods = candidate_pods(nodes, lower_priority(me))
    got = find_candidates(filters_pass, me, pods, state, T0)
    assert sorted((n, sorted(_names(v.pods))) for n, v in got) == want
    assert all(v.num_pdb_violations == 0 for _, v in got)  # upstream's candidate reports 0


@pytest.mark.parametrize(("name", "preemptor", "filters", "want"), FIND_CANDIDATES,
                         ids=[r[0] for r in FIND_CANDIDATES])
def test_single_node_preemption_cannot_help_where_cross_node_does(name, preemptor, filters, want):
    """The same clusters through the whole PostFilter: DefaultPreemption finds no candidate
    (evicting pod-a alone leaves pod-b in zone1, and the other way round); CrossNodePreemption
    nominates node-a (the first of two equal candidates) and evicts both pods, on two nodes."""
    state, me, statuses = _setup(UPSTREAM_OBJECTS, preemptor, profile(filters))
    assert {s.code for s in statuses.values()} == {Code.UNSCHEDULABLE}

    default = profile(filters, "DefaultPreemption")
    result = preempt(default, me, statuses, state, T0, random.Random(0))
    assert result.status.code == Code.UNSCHEDULABLE and not result.candidates

    prof = profile(filters)
    result = prof.post_filter.post_filter(prof, me, statuses, state, T0, random.Random(0))
    assert result.status == Status(Code.SUCCESS, (), NAME)
    assert result.node_name == "node-a"
    assert sorted(_names(result.victims.pods)) == ["pod-a", "pod-b"]
    assert {v.node_name for v in result.victims.pods} == {"node-a", "node-b"}
    assert not result.clear_nomination


# ---- the exact victim set -----------------------------------------------------------------

DB = {"app": "db"}


def test_the_victims_are_the_last_subset_found_never_a_superset():
    """Required anti-affinity to app=db per zone; zone1 holds db-1 (node-a) and db-2 with an
    unrelated web pod (node-b); zone2's only node is full with a pod of higher priority.
    Freeing zone1 of db pods takes exactly {db-1, db-2}; {db-1, db-2, web-b} works too and is
    found first, but the later (smaller) set replaces it for both nodes: web-b is spared."""
    preemptor = b.pod("p", uid="p", priority=HIGH, affinity=anti_affinity("app", "zone", "db"))
    objects = [
        bound("db-1", "node-a", LOW, DB), bound("db-2", "node-b", LOW, DB),
        bound("web-b", "node-b", LOW, {"app": "web"}), bound("pod-x", "node-x", HIGH),
        node("node-a", "zone1"), node("node-b", "zone1"), node("node-x", "zone2", pods="1"),
    ]
    filters = ["NodeResourcesFit", "InterPodAffinity"]
    prof = profile(filters)
    state, me, statuses = _setup(objects, preemptor, prof)
    filters_pass = dry_run_filters(prepare_filters(prof, me, state), prof.post_filter, me, state)
    pods = candidate_pods(list(state.nodes.values()), lower_priority(me))
    assert _names(pods) == ["db-1", "db-2", "web-b"]
    found = find_candidates(filters_pass, me, pods, state, T0)
    assert [(n, sorted(_names(v.pods))) for n, v in found] == [
        ("node-a", ["db-1", "db-2", "web-b"]), ("node-b", ["db-1", "db-2", "web-b"]),
        ("node-a", ["db-1", "db-2"]), ("node-b", ["db-1", "db-2"])]
    final = candidates_to_victims_map(found)
    assert {n: sorted(_names(v.pods)) for n, v in final.items()} == {
        "node-a": ["db-1", "db-2"], "node-b": ["db-1", "db-2"]}

    result = prof.post_filter.post_filter(prof, me, statuses, state, T0, random.Random(0))
    assert result.node_name == "node-a"
    assert sorted(_names(result.victims.pods)) == ["db-1", "db-2"]
    assert preempt(profile(filters, "DefaultPreemption"), me, statuses, state, T0,
                   random.Random(0)).status.code == Code.UNSCHEDULABLE


def test_pick_one_node_prefers_the_cheaper_victims():
    """Spread over zones with a third zone: zone1 {a1, a2} on node-a, zone2 {b1} on node-b,
    zone3 empty and full. The pod needs zone1 or zone2 within skew 1 of zone3 (0): evicting b1
    makes node-b fit; evicting a1 and a2 makes node-a fit. Both are candidates; the fewer, lower
    priority victims win (b1, priority 1, against a1 + a2 at priority 1 and 2)."""
    objects = [
        bound("a1", "node-a", 1, {"foo": ""}), bound("a2", "node-a", 2, {"foo": ""}),
        bound("b1", "node-b", 1, {"foo": ""}), bound("x", "node-x", HIGH),
        node("node-a", "zone1"), node("node-b", "zone2"), node("node-x", "zone3", pods="1"),
    ]
    prof = profile(["NodeResourcesFit", "PodTopologySpread"])
    state, me, statuses = _setup(objects, SPREAD_PREEMPTOR, prof)
    result = prof.post_filter.post_filter(prof, me, statuses, state, T0, random.Random(0))
    assert result.status.code == Code.SUCCESS
    assert (result.node_name, _names(result.victims.pods)) == ("node-b", ["b1"])
    assert sorted(result.candidates) == ["node-a", "node-b"]


# ---- the search and its limits ------------------------------------------------------------

def _dfs(pods: list[str]) -> list[list[str]]:
    """Upstream's `dfs`, transcribed: pick pods[i], recurse; skip it, recurse."""
    out: list[list[str]] = []

    def go(i: int, path: list[str]) -> None:
        if i >= len(pods):
            out.append(list(path))
            return
        go(i + 1, [*path, pods[i]])
        go(i + 1, path)

    go(0, [])
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5])
def test_subsets_come_in_upstream_s_dfs_order(n):
    names = [f"p{i}" for i in range(n)]
    assert list(subsets(names)) == _dfs(names)  # type: ignore[arg-type]


def test_nodes_with_an_unresolvable_status_are_left_out():
    """Upstream's potential nodes exclude UnschedulableAndUnresolvable ones, and with them their
    pods: with node-b's status unresolvable, pod-b cannot be evicted and pod-a alone does not
    free zone1, so there is no candidate: FitError{Pod} without diagnosis, nomination kept."""
    prof = profile(["NodeResourcesFit", "PodTopologySpread"])
    state, me, statuses = _setup(UPSTREAM_OBJECTS, SPREAD_PREEMPTOR, prof)
    statuses = {**statuses, "node-b": unresolvable("TaintToleration", "untolerated taint")}
    result = prof.post_filter.post_filter(prof, me, statuses, state, T0, random.Random(0))
    assert result.status == Status(Code.UNSCHEDULABLE, ("0/0 nodes are available:",), NAME)
    assert not result.clear_nomination and result.victims is None


def test_a_pod_that_never_preempts_is_not_eligible():
    prof = profile(["NodeResourcesFit", "PodTopologySpread"])
    never = {**SPREAD_PREEMPTOR, "spec": {**SPREAD_PREEMPTOR["spec"], "preemptionPolicy": "Never"}}
    state, me, statuses = _setup(UPSTREAM_OBJECTS, never, prof)
    result = prof.post_filter.post_filter(prof, me, statuses, state, T0, random.Random(0))
    assert result.status == Status(Code.UNSCHEDULABLE, (), NAME)  # upstream: no message


def test_more_pods_than_the_cap_stop_the_search_with_a_message():
    """Three lower-priority pods on the potential nodes, maxCandidatePods 2: no dry run (2^3
    subsets would be tried), an Unschedulable status saying why and what to do."""
    objects = [*UPSTREAM_OBJECTS, bound("pod-c", "node-a", LOW)]
    prof = profile(["NodeResourcesFit", "PodTopologySpread"], args={"maxCandidatePods": 2})
    state, me, statuses = _setup(objects, SPREAD_PREEMPTOR, prof)
    result = prof.post_filter.post_filter(prof, me, statuses, state, T0, random.Random(0))
    assert result.status == Status(Code.UNSCHEDULABLE, (
        "3 lower-priority pods run on the 3 node(s) where preemption might help: trying every "
        "subset of them (2^3) exceeds maxCandidatePods 2; raise maxCandidatePods (at most 24) "
        "or use DefaultPreemption",), NAME)
    assert not result.clear_nomination
    # At the cap the search runs (and here finds pod-a + pod-b, leaving pod-c).
    prof = profile(["NodeResourcesFit", "PodTopologySpread"], args={"maxCandidatePods": 3})
    result = prof.post_filter.post_filter(prof, me, statuses, state, T0, random.Random(0))
    assert sorted(_names(result.victims.pods)) == ["pod-a", "pod-b"]


def test_the_default_cap_and_its_bounds():
    assert CrossNodePreemption().cross_args.max_candidate_pods == DEFAULT_MAX_CANDIDATE_PODS == 12
    for bad in (-1, 25):
        with pytest.raises(PolicyError, match="maxCandidatePods"):
            profile(["NodeResourcesFit"], args={"maxCandidatePods": bad})
    with pytest.raises(PolicyError, match="at most one of"):
        parse_policy({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                      "plugins": {"postFilter": {"enabled": [{"name": "DefaultPreemption"},
                                                             {"name": NAME}]}}})


# ---- the extender's preempt verb ----------------------------------------------------------

def test_the_preempt_verb_vets_a_cross_node_policy_as_default_preemption():
    """kube-scheduler proposes victims one node at a time: a CrossNodePreemption policy is
    vetted exactly as a DefaultPreemption one (same filters, same victim rule)."""
    objects = [
        bound("low", "node-a", LOW), bound("low-2", "node-b", LOW),
        b.node("node-a", {"zone": "zone1"}, allocatable={"pods": "1"}),
        b.node("node-b", {"zone": "zone1"}, allocatable={"pods": "1"}),
    ]
    state = cluster(*objects)
    me = view(b.pod("p", uid="p", priority=HIGH))
    proposals = {"node-a": ["low"], "node-b": ["low-2", "low"]}
    filters = ["NodeResourcesFit", "PodTopologySpread"]
    cross = process_preemption(profile(filters), me, proposals, state, T0)
    default = process_preemption(profile(filters, "DefaultPreemption"), me, proposals, state, T0)
    assert {n: _names(v.pods) for n, v in cross.victims.items()} == {
        n: _names(v.pods) for n, v in default.victims.items()} == {
        "node-a": ["low"], "node-b": ["low-2"]}
    assert cross.ignored == default.ignored == {"node-b": ("low",)}


def test_check_config_says_where_the_plugin_runs():
    """In a KubeSchedulerConfiguration for a stock kube-scheduler the plugin is refused with
    the reason and the place it does run."""
    from extender.ops import kubeversions

    assert kubeversions.plugin_problem(NAME, (1, 37), "kubescheduler.config.k8s.io/v1") == (
        "plugin CrossNodePreemption is a scheduler-plugins PostFilter, not in kube-scheduler "
        "1.37: the extender's preempt verb cannot carry victims on other nodes; the extender's "
        "simulator runs it (plugins.postFilter in an ExtenderPolicy)")
