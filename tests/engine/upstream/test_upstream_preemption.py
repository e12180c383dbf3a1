"""kube-scheduler's preemption dry-run and candidate-selection tables, transcribed (data only).

Sources (kubernetes/kubernetes, newest stored versions):

* `pkg/scheduler/framework/preemption/preemption.go` at a4b89fa3c56134385aaaac70d060130d639cbd49
  (`DryRunPreemption`, `pickOneNodeForPreemption`) with `candidate.go` at
  898b9f800267a757615ecfb71fc377d04d996c6b (`candidateList`): the semantics checked here.
* `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go` at
  c762303bc61cf200fdfe2d3837e27b46c9416029, the newest stored version of that file:
  TestDryRunPreemption and TestSelectBestCandidate. Every row cites its test function and case
  `name` (the pytest id is the case name).

Mapping. Upstream builds nodes with `st.MakeNode().Capacity(veryLargeRes)` (cpu 500m, memory 500,
pods 32 by the wrapper's default), labelled `hostname`/`zone`/`region` from the '/'-separated
node name; registers the row's plugins plus a FakeFilter that passes (no `fakeFilterRC`); runs
PreFilter for the preemptor and `DryRunPreemption` over every node sorted by name with the
plugin's `GetOffsetAndNumCandidates`. Here: the same objects as dicts in
`cluster_from_objects`, a policy whose filters are exactly the row's plugins and whose PostFilter
is DefaultPreemption with the row's args, `prepare_filters` for the preemptor, and
`dry_run_preemption` over the nodes sorted by name with `wanted = num_candidates(...)`.

Upstream's offset comes from Go's `math/rand` seeded with 4. Rows run with parallelism 1
(`disableParallelism`) state it in a comment (cycle 0: 4, cycle 1: 1, cycle 2: 3 for 5 nodes)
and use it here. The other rows examine every node whatever the offset (the default args want
every node as a candidate), and upstream sorts candidates and victims by name before comparing,
so they run here at every offset and compare the same way.

`epochTimeN` (N nanoseconds after the epoch) is written as N seconds after the epoch:
`status.startTime` has second precision on the wire; only the order matters.

Not asserted: `expectedNumFilterCalled` (a count kept by upstream's FakeFilter plugin).

Not transcribed:
* TestDryRunPreemption "a pod that does not fit on any node" (FalseFilter), "a pod that fits with
  no preemption" (TrueFilter + FakeFilter returning Unschedulable), "a pod that fits on one node
  with no preemption" (MatchFilter + FakeFilter), "get Unschedulable in the preemption phase when
  the filter plugins filtering the nodes" (FakeFilter returning Unschedulable): test-only fake
  filter plugins the engine does not have.
* TestDryRunPreemption "gang of 2 pods fits by preempting victims on two different nodes", "gang
  of 2 pods fails because one member is blocked by non-preemptible pod", "gang of 2 pods fits on
  a SINGLE node by preempting multiple victims there", "gang of 2 pods requires preempting a
  Medium priority victim because Low alone is insufficient", "single pod preemptor triggers
  atomic preemption of a distributed workload victim": workload-aware (PodGroup) preemption with
  a mocked `CanPlacePods`; the engine has no workloads.
* TestSelectBestCandidate "gang preemptor prefers node with lower priority victim (Workload vs
  Workload)", "gang preemptor prefers node with FEWER victims (when priorities equal)", "gang
  preemptor prefers node with NEWER victims (break tie with StartTime)", "distributed gang
  victim: selection accounts for TOTAL victims across cluster (Side-Effect Check)": the same.
* `pkg/scheduler/framework/preemption/preemption_test.go` TestDryRunPreemption ("no pdb
  violation", "pdb violation on each node") and TestSelectCandidate: a fake preemption plugin
  whose SelectVictimsOnNode / OrderedScoreFuncs are test code (internal-only).
* TestPickOneNodeForPreemption: only in old stored versions (the generic_scheduler era); the
  newest has its rows as TestSelectBestCandidate.
"""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine.evaluate import cluster_from_objects
from extender.engine.policy import parse_policy
from extender.engine.preemption import (
    DryRun,
    dry_run_preemption,
    num_candidates,
    pick_one_node_for_preemption,
)
from extender.engine.profile import build_profile
from extender.engine.runner import prepare_filters
from extender.model import k8s
from extender.model.pod import PodView
from tests.engine.upstream.builders import Obj, exists, node, pod, policy, selector

UPSTREAM = "kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go"

NOW = 1_800_000_000.0

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}

FIT = "NodeResourcesFit"
IPA = "InterPodAffinity"
PTS = "PodTopologySpread"


# ---- builders -------------------------------------------------------------------------------

def mk_node(spec: str) -> Obj:
    """`st.MakeNode().Capacity(veryLargeRes)` named and labelled from "host/zone/region"."""
    values = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), values, strict=False))
    return node(values[0], labels, allocatable={**VERY_LARGE, "pods": "32"})


def mk_pod(name: str, node_name: str = "", *, priority: int, req: dict[str, str] | None = None,
           start: int | None = None, labels: dict[str, str] | None = None, **extra: Any) -> Obj:
    """`st.MakePod().Name(n).UID(n).Node(..).Priority(..).Req(..).StartTime(epochTimeN)`."""
    obj = pod(name, node=node_name, uid=name, priority=priority, requests=req, labels=labels,
              **extra)
    if start is not None:
        obj["status"]["startTime"] = f"1970-01-01T00:00:{start:02d}Z"
    return obj


def mk_pdb(match_labels: dict[str, str], allowed: int, disrupted: tuple[str, ...] = ()) -> Obj:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "pdb", "namespace": "default"},
            "spec": {"selector": selector(match_labels)},
            "status": {"disruptionsAllowed": allowed,
                       "disruptedPods": {p: "1970-01-01T00:00:00Z" for p in disrupted}}}


def spread(max_skew: int, key: str) -> Obj:
    """`SpreadConstraint(maxSkew, key, DoNotSchedule, Exists("foo"), nil, nil, nil, nil)`."""
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": selector(None, exists("foo"))}


def anti_affinity_exists(key: str, topology_key: str) -> Obj:
    """`PodAntiAffinityExists(key, topologyKey, PodAntiAffinityWithRequiredReq)`."""
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": selector(None, exists(key)), "topologyKey": topology_key}]}}


def view(obj: Obj) -> PodView:
    return PodView.from_k8s(k8s.convert(obj, k8s.Pod))


def run_dry(filters: list[str], node_names: list[str], preemptor: Obj, init_pods: list[Obj],
            offset: int, *, pdbs: list[Obj] = (), args: dict[str, int] | None = None) -> DryRun:
    """One cycle of upstream's TestDryRunPreemption loop, through the engine."""
    prof = build_profile(parse_policy(policy(
        filters=filters, scores=[], post_filters=["DefaultPreemption"],
        args={"DefaultPreemption": args} if args else None)))
    nodes = [mk_node(n) for n in node_names]
    state = cluster_from_objects([*nodes, *init_pods, *pdbs])
    me = view(preemptor)
    potential = [state.nodes[name] for name in sorted(state.nodes)]
    wanted = num_candidates(len(potential), prof.post_filter.args)
    return dry_run_preemption(prepare_filters(prof, me, state), me, potential, state, offset,
                              wanted, NOW, prof.post_filter.can_preempt(me, state, NOW))


def as_upstream(dry: DryRun) -> list[tuple[str, list[str], int]]:
    """The candidates as upstream compares them: sorted by node name, victims sorted by name."""
    return sorted((name, sorted(p.name for p in v.pods), v.num_pdb_violations)
                  for name, v in dry.candidates.items())


# ---- TestDryRunPreemption: rows examining every node (any offset) ----------------------------

DRY_RUN_ROWS = [
    pytest.param(
        # TestDryRunPreemption "a pod that fits on both nodes when lower priority pods are preempted"
        dict(filters=[FIT], nodes=["node1", "node2"],
             preemptor=mk_pod("p", priority=HIGH, req=LARGE),
             init=[mk_pod("p1", "node1", priority=MID, req=LARGE),
                   mk_pod("p2", "node2", priority=MID, req=LARGE)]),
        [("node1", ["p1"], 0), ("node2", ["p2"], 0)],
        id="a pod that fits on both nodes when lower priority pods are preempted"),
    pytest.param(
        # TestDryRunPreemption "a pod that would fit on the nodes, but other pods running are
        # higher priority, no preemption would happen"
        dict(filters=[FIT], nodes=["node1", "node2"],
             preemptor=mk_pod("p", priority=LOW, req=LARGE),
             init=[mk_pod("p1", "node1", priority=MID, req=LARGE),
                   mk_pod("p2", "node2", priority=MID, req=LARGE)]),
        [],
        id="a pod that would fit on the nodes, but other pods running are higher priority, "
           "no preemption would happen"),
    pytest.param(
        # TestDryRunPreemption "medium priority pod is preempted, but lower priority one stays as it is small"
        dict(filters=[FIT], nodes=["node1", "node2"],
             preemptor=mk_pod("p", priority=HIGH, req=LARGE),
             init=[mk_pod("p1.1", "node1", priority=LOW, req=SMALL),
                   mk_pod("p1.2", "node1", priority=MID, req=LARGE),
                   mk_pod("p2", "node2", priority=MID, req=LARGE)]),
        [("node1", ["p1.2"], 0), ("node2", ["p2"], 0)],
        id="medium priority pod is preempted, but lower priority one stays as it is small"),
    pytest.param(
        # TestDryRunPreemption "mixed priority pods are preempted"
        dict(filters=[FIT], nodes=["node1", "node2"],
             preemptor=mk_pod("p", priority=HIGH, req=LARGE),
             init=[mk_pod("p1.1", "node1", priority=MID, req=SMALL),
                   mk_pod("p1.2", "node1", priority=LOW, req=SMALL),
                   mk_pod("p1.3", "node1", priority=MID, req=MEDIUM),
                   mk_pod("p1.4", "node1", priority=HIGH, req=SMALL),
                   mk_pod("p2", "node2", priority=HIGH, req=LARGE)]),
        [("node1", ["p1.2", "p1.3"], 0)],
        id="mixed priority pods are preempted"),
    pytest.param(
        # TestDryRunPreemption "mixed priority pods are preempted, pick later StartTime one when
        # priorities are equal"
        dict(filters=[FIT], nodes=["node1", "node2"],
             preemptor=mk_pod("p", priority=HIGH, req=LARGE),
             init=[mk_pod("p1.1", "node1", priority=LOW, req=SMALL, start=5),
                   mk_pod("p1.2", "node1", priority=LOW, req=SMALL, start=4),
                   mk_pod("p1.3", "node1", priority=MID, req=MEDIUM, start=3),
                   mk_pod("p1.4", "node1", priority=HIGH, req=SMALL, start=2),
                   mk_pod("p2", "node2", priority=HIGH, req=LARGE, start=1)]),
        [("node1", ["p1.1", "p1.3"], 0)],
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal"),
    pytest.param(
        # TestDryRunPreemption "pod with anti-affinity is preempted"
        dict(filters=[FIT, IPA], nodes=["node1", "node2"],
             preemptor=mk_pod("p", priority=HIGH, req=SMALL, labels={"foo": ""}),
             init=[mk_pod("p1.1", "node1", priority=LOW, req=SMALL, labels={"foo": ""},
                          affinity=anti_affinity_exists("foo", "hostname")),
                   mk_pod("p1.2", "node1", priority=MID, req=SMALL),
                   mk_pod("p1.3", "node1", priority=HIGH, req=SMALL),
                   mk_pod("p2", "node2", priority=HIGH, req=SMALL)]),
        [("node1", ["p1.1"], 0)],
        id="pod with anti-affinity is preempted"),
    pytest.param(
        # TestDryRunPreemption "preemption to resolve pod topology spread filter failure"
        dict(filters=[PTS], nodes=["node-a/zone1", "node-b/zone1", "node-x/zone2"],
             preemptor=mk_pod("p", priority=HIGH, labels={"foo": ""},
                              spread=[spread(1, "zone"), spread(1, "hostname")]),
             init=[mk_pod("pod-a1", "node-a", priority=MID, labels={"foo": ""}),
                   mk_pod("pod-a2", "node-a", priority=LOW, labels={"foo": ""}),
                   mk_pod("pod-b1", "node-b", priority=LOW, labels={"foo": ""}),
                   mk_pod("pod-x1", "node-x", priority=HIGH, labels={"foo": ""}),
                   mk_pod("pod-x2", "node-x", priority=HIGH, labels={"foo": ""})]),
        [("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)],
        id="preemption to resolve pod topology spread filter failure"),
    pytest.param(
        # TestDryRunPreemption "preemption with violation of same pdb"
        dict(filters=[FIT], nodes=["node1"],
             preemptor=mk_pod("p", priority=HIGH, req=VERY_LARGE),
             init=[mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
                   mk_pod("p1.2", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
             pdbs=[mk_pdb({"app": "foo"}, 1)]),
        [("node1", ["p1.1", "p1.2"], 1)],
        id="preemption with violation of same pdb"),
    pytest.param(
        # TestDryRunPreemption "preemption with violation of the pdb with pod whose eviction was
        # processed, the victim doesn't belong to DisruptedPods"
        dict(filters=[FIT], nodes=["node1"],
             preemptor=mk_pod("p", priority=HIGH, req=VERY_LARGE),
             init=[mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
                   mk_pod("p1.2", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
             pdbs=[mk_pdb({"app": "foo"}, 1, disrupted=("p2",))]),
        [("node1", ["p1.1", "p1.2"], 1)],
        id="preemption with violation of the pdb with pod whose eviction was processed, "
           "the victim doesn't belong to DisruptedPods"),
    pytest.param(
        # TestDryRunPreemption "preemption with violation of the pdb with pod whose eviction was
        # processed, the victim belongs to DisruptedPods"
        dict(filters=[FIT], nodes=["node1"],
             preemptor=mk_pod("p", priority=HIGH, req=VERY_LARGE),
             init=[mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
                   mk_pod("p1.2", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
             pdbs=[mk_pdb({"app": "foo"}, 1, disrupted=("p1.2",))]),
        [("node1", ["p1.1", "p1.2"], 0)],
        id="preemption with violation of the pdb with pod whose eviction was processed, "
           "the victim belongs to DisruptedPods"),
    pytest.param(
        # TestDryRunPreemption "preemption with violation of the pdb with pod whose eviction was
        # processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'"
        dict(filters=[FIT], nodes=["node1"],
             preemptor=mk_pod("p", priority=HIGH, req=VERY_LARGE),
             init=[mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
                   mk_pod("p1.2", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
                   mk_pod("p1.3", "node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
             pdbs=[mk_pdb({"app": "foo"}, 1, disrupted=("p1.3",))]),
        [("node1", ["p1.1", "p1.2", "p1.3"], 1)],
        id="preemption with violation of the pdb with pod whose eviction was processed, "
           "the victim which belongs to DisruptedPods is treated as 'nonViolating'"),
]


@pytest.mark.parametrize("row, expected", DRY_RUN_ROWS)
def test_dry_run_preemption(row: dict[str, Any], expected: list[tuple[str, list[str], int]]):
    for offset in range(len(row["nodes"])):
        dry = run_dry(row["filters"], row["nodes"], row["preemptor"], row["init"], offset,
                      pdbs=row.get("pdbs", []))
        assert as_upstream(dry) == expected, f"offset {offset}"


# ---- TestDryRunPreemption: rows with parallelism 1 and custom args -----------------------------

FIVE = ["node1", "node2", "node3", "node4", "node5"]
ARGS_40_1 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}
ARGS_40_2 = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2}


def five_mid_pods(**priorities: int) -> list[Obj]:
    return [mk_pod(f"p{i}", f"node{i}", priority=priorities.get(f"p{i}", MID), req=LARGE)
            for i in range(1, 6)]


def pdb_row_pods() -> list[Obj]:
    foo = {"app": "foo"}
    return [mk_pod("p1", "node1", priority=MID, req=LARGE, labels=foo),
            mk_pod("p2", "node2", priority=MID, req=LARGE, labels=foo),
            mk_pod("p3", "node3", priority=MID, req=LARGE),
            mk_pod("p4", "node4", priority=MID, req=LARGE),
            mk_pod("p5", "node5", priority=MID, req=LARGE, labels=foo)]


# Each row: preemptors (one per scheduling cycle), the upstream comment's offset per cycle,
# and upstream's expected candidates per cycle (sorted by name, as upstream compares them).
SEQUENTIAL_ROWS = [
    pytest.param(
        # TestDryRunPreemption "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2"
        # "cycle=0 => offset=4 => node5 (yes), node1 (yes)"
        dict(args=ARGS_40_1, preemptors=[mk_pod("p", priority=HIGH, req=LARGE)], offsets=[4],
             init=five_mid_pods(), pdbs=[]),
        [[("node1", ["p1"], 0), ("node5", ["p5"], 0)]],
        id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2"),
    pytest.param(
        # TestDryRunPreemption "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2"
        # "cycle=0 => offset=4 => node5 (no), node1 (yes), node2 (no), node3 (yes)"
        dict(args=ARGS_40_1, preemptors=[mk_pod("p", priority=HIGH, req=LARGE)], offsets=[4],
             init=five_mid_pods(p2=VERY_HIGH, p5=VERY_HIGH), pdbs=[]),
        [[("node1", ["p1"], 0), ("node3", ["p3"], 0)]],
        id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2"),
    pytest.param(
        # TestDryRunPreemption "preemption offset across multiple scheduling cycles and wrap around"
        # "cycle=0 => offset=4 => node5 (yes), node1 (yes)", "cycle=1 => offset=1 => node2 (yes),
        # node3 (yes)", "cycle=2 => offset=3 => node4 (yes), node5 (yes)"
        dict(args=ARGS_40_1, offsets=[4, 1, 3], init=five_mid_pods(), pdbs=[],
             preemptors=[mk_pod(f"tp{i}", priority=HIGH, req=LARGE) for i in (1, 2, 3)]),
        [[("node1", ["p1"], 0), ("node5", ["p5"], 0)],
         [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
         [("node4", ["p4"], 0), ("node5", ["p5"], 0)]],
        id="preemption offset across multiple scheduling cycles and wrap around"),
    pytest.param(
        # TestDryRunPreemption "preemption looks past numCandidates until a non-PDB violating node
        # is found": "cycle=0 => offset=4 => node5 (yes, pdb), node1 (yes, pdb), node2 (no, pdb),
        # node3 (yes)" — node2 is a PDB-violating candidate too, but the violating list already
        # holds numCandidates (2) of them, so it is dropped.
        dict(args=ARGS_40_2, preemptors=[mk_pod("p", priority=HIGH, req=LARGE)], offsets=[4],
             init=pdb_row_pods(), pdbs=[mk_pdb({"app": "foo"}, 0)]),
        [[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]],
        id="preemption looks past numCandidates until a non-PDB violating node is found"),
]


@pytest.mark.parametrize("row, expected", SEQUENTIAL_ROWS)
def test_dry_run_preemption_sequential(row: dict[str, Any],
                                       expected: list[list[tuple[str, list[str], int]]]):
    for cycle, (preemptor, offset) in enumerate(zip(row["preemptors"], row["offsets"], strict=True)):
        dry = run_dry([FIT], FIVE, preemptor, row["init"], offset, pdbs=row["pdbs"],
                      args=row["args"])
        assert as_upstream(dry) == expected[cycle], f"cycle {cycle}"


# Not upstream table data: the order `DryRunPreemption` returns with parallelism 1 (upstream's
# test sorts before comparing) and the nodes it examines, derived from preemption.go and
# candidate.go: PDB-respecting candidates, then PDB-violating ones, each in search order from the
# offset; each list holds numCandidates, a candidate found once its list is full is dropped (no
# candidate entry, no status); the search stops once a respecting candidate is kept and
# numCandidates are kept in all.
@pytest.mark.parametrize("row, order, examined, dropped", [
    pytest.param(SEQUENTIAL_ROWS[0].values[0], ["node5", "node1"], {"node5", "node1"}, set(),
                 id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2"),
    pytest.param(SEQUENTIAL_ROWS[1].values[0], ["node1", "node3"],
                 {"node5", "node1", "node2", "node3"}, set(),
                 id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2"),
    pytest.param(SEQUENTIAL_ROWS[3].values[0], ["node3", "node5", "node1"],
                 {"node5", "node1", "node2", "node3"}, {"node2"},
                 id="preemption looks past numCandidates until a non-PDB violating node is found"),
])
def test_dry_run_order_and_window(row: dict[str, Any], order: list[str], examined: set[str],
                                  dropped: set[str]):
    dry = run_dry([FIT], FIVE, row["preemptors"][0], row["init"], row["offsets"][0],
                  pdbs=row["pdbs"], args=row["args"])
    assert list(dry.candidates) == order
    assert set(dry.statuses) == examined - set(order) - dropped


# ---- TestSelectBestCandidate ----------------------------------------------------------------

SELECT_ROWS = [
    pytest.param(
        # TestSelectBestCandidate "node with min highest priority pod is picked"
        ["node1", "node2", "node3"], mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, start=0),
         mk_pod("p1.2", "node1", priority=MID, req=LARGE, start=0),
         mk_pod("p2.1", "node2", priority=MID, req=MEDIUM, start=0),
         mk_pod("p2.2", "node2", priority=LOW, req=MEDIUM, start=0),
         mk_pod("p3.1", "node3", priority=LOW, req=MEDIUM, start=0),
         mk_pod("p3.2", "node3", priority=LOW, req=MEDIUM, start=0)],
        ["node3"],
        id="node with min highest priority pod is picked"),
    pytest.param(
        # TestSelectBestCandidate "when highest priorities are the same, minimum sum of priorities is picked"
        ["node1", "node2", "node3"], mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, start=0),
         mk_pod("p1.2", "node1", priority=MID, req=LARGE, start=0),
         mk_pod("p2.1", "node2", priority=MID, req=LARGE, start=0),
         mk_pod("p2.2", "node2", priority=LOW, req=MEDIUM, start=0),
         mk_pod("p3.1", "node3", priority=MID, req=MEDIUM, start=0),
         mk_pod("p3.2", "node3", priority=MID, req=MEDIUM, start=0)],
        ["node2"],
        id="when highest priorities are the same, minimum sum of priorities is picked"),
    pytest.param(
        # TestSelectBestCandidate "when highest priority and sum are the same, minimum number of pods is picked"
        ["node1", "node2", "node3"], mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=MID, req=SMALL, start=0),
         mk_pod("p1.2", "node1", priority=NEG, req=SMALL, start=0),
         mk_pod("p1.3", "node1", priority=MID, req=SMALL, start=0),
         mk_pod("p1.4", "node1", priority=NEG, req=SMALL, start=0),
         mk_pod("p2.1", "node2", priority=MID, req=LARGE, start=0),
         mk_pod("p2.2", "node2", priority=NEG, req=MEDIUM, start=0),
         mk_pod("p3.1", "node3", priority=MID, req=MEDIUM, start=0),
         mk_pod("p3.2", "node3", priority=NEG, req=SMALL, start=0),
         mk_pod("p3.3", "node3", priority=LOW, req=SMALL, start=0)],
        ["node2"],
        id="when highest priority and sum are the same, minimum number of pods is picked"),
    pytest.param(
        # TestSelectBestCandidate "sum of adjusted priorities is considered"
        ["node1", "node2", "node3"], mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=MID, req=SMALL, start=0),
         mk_pod("p1.2", "node1", priority=NEG, req=SMALL, start=0),
         mk_pod("p1.3", "node1", priority=NEG, req=SMALL, start=0),
         mk_pod("p2.1", "node2", priority=MID, req=LARGE, start=0),
         mk_pod("p2.2", "node2", priority=NEG, req=MEDIUM, start=0),
         mk_pod("p3.1", "node3", priority=MID, req=MEDIUM, start=0),
         mk_pod("p3.2", "node3", priority=NEG, req=SMALL, start=0),
         mk_pod("p3.3", "node3", priority=LOW, req=SMALL, start=0)],
        ["node2"],
        id="sum of adjusted priorities is considered"),
    pytest.param(
        # TestSelectBestCandidate "non-overlapping lowest high priority, sum priorities, and number of pods"
        ["node1", "node2", "node3", "node4"], mk_pod("p", priority=VERY_HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=MID, req=SMALL, start=0),
         mk_pod("p1.2", "node1", priority=LOW, req=SMALL, start=0),
         mk_pod("p1.3", "node1", priority=LOW, req=SMALL, start=0),
         mk_pod("p2.1", "node2", priority=HIGH, req=LARGE, start=0),
         mk_pod("p3.1", "node3", priority=MID, req=MEDIUM, start=0),
         mk_pod("p3.2", "node3", priority=LOW, req=SMALL, start=0),
         mk_pod("p3.3", "node3", priority=LOW, req=SMALL, start=0),
         mk_pod("p3.4", "node3", priority=LOW, req=MEDIUM, start=0),
         mk_pod("p4.1", "node4", priority=MID, req=MEDIUM, start=0),
         mk_pod("p4.2", "node4", priority=MID, req=SMALL, start=0),
         mk_pod("p4.3", "node4", priority=MID, req=SMALL, start=0),
         mk_pod("p4.4", "node4", priority=NEG, req=SMALL, start=0)],
        ["node1"],
        id="non-overlapping lowest high priority, sum priorities, and number of pods"),
    pytest.param(
        # TestSelectBestCandidate "same priority, same number of victims, different start time for each node's pod"
        ["node1", "node2", "node3"], mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, start=2),
         mk_pod("p1.2", "node1", priority=MID, req=MEDIUM, start=2),
         mk_pod("p2.1", "node2", priority=MID, req=MEDIUM, start=3),
         mk_pod("p2.2", "node2", priority=MID, req=MEDIUM, start=3),
         mk_pod("p3.1", "node3", priority=MID, req=MEDIUM, start=1),
         mk_pod("p3.2", "node3", priority=MID, req=MEDIUM, start=1)],
        ["node2"],
        id="same priority, same number of victims, different start time for each node's pod"),
    pytest.param(
        # TestSelectBestCandidate "same priority, same number of victims, different start time for all pods"
        ["node1", "node2", "node3"], mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=MID, req=MEDIUM, start=4),
         mk_pod("p1.2", "node1", priority=MID, req=MEDIUM, start=2),
         mk_pod("p2.1", "node2", priority=MID, req=MEDIUM, start=5),
         mk_pod("p2.2", "node2", priority=MID, req=MEDIUM, start=1),
         mk_pod("p3.1", "node3", priority=MID, req=MEDIUM, start=3),
         mk_pod("p3.2", "node3", priority=MID, req=MEDIUM, start=6)],
        ["node3"],
        id="same priority, same number of victims, different start time for all pods"),
    pytest.param(
        # TestSelectBestCandidate "different priority, same number of victims, different start time for all pods"
        ["node1", "node2", "node3"], mk_pod("p", priority=HIGH, req=VERY_LARGE),
        [mk_pod("p1.1", "node1", priority=LOW, req=MEDIUM, start=4),
         mk_pod("p1.2", "node1", priority=MID, req=MEDIUM, start=2),
         mk_pod("p2.1", "node2", priority=MID, req=MEDIUM, start=6),
         mk_pod("p2.2", "node2", priority=LOW, req=MEDIUM, start=1),
         mk_pod("p3.1", "node3", priority=LOW, req=MEDIUM, start=3),
         mk_pod("p3.2", "node3", priority=MID, req=MEDIUM, start=5)],
        ["node2"],
        id="different priority, same number of victims, different start time for all pods"),
]


@pytest.mark.parametrize("node_names, preemptor, pods, expected", SELECT_ROWS)
def test_select_best_candidate(node_names: list[str], preemptor: Obj, pods: list[Obj],
                               expected: list[str]):
    # Upstream: DryRunPreemption (default args, no PDBs) then SelectCandidate over its output.
    for offset in range(len(node_names)):
        dry = run_dry([FIT], node_names, preemptor, pods, offset)
        assert len(dry.candidates) > 1  # SelectCandidate picks among several
        assert pick_one_node_for_preemption(dry.candidates, NOW) in expected, f"offset {offset}"


# Not upstream table data: numCandidates can be 0 (minCandidateNodesAbsolute 0 and a percentage
# rounding down), and then upstream's candidate lists have no room at all: every node is
# examined, no candidate is kept and the found ones get no status either.
def test_dry_run_with_no_room_for_candidates():
    args = {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 0}
    dry = run_dry([FIT], FIVE, mk_pod("p", priority=HIGH, req=LARGE),
                  five_mid_pods(p2=VERY_HIGH), 0, args=args)
    assert dry.candidates == {}
    assert set(dry.statuses) == {"node2"}
