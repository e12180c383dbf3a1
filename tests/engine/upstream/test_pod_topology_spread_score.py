"""kube-scheduler's PodTopologySpread Score tables, transcribed (data only) and run through `evaluate`.

Source: kubernetes/kubernetes `pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go`
at commit 008b3652959ca58af8be3fb5b6ecfe9ae7638282 (the `fwk` era, v1.34+). Every row cites its
test function and case `name`.

Mapping (TestPodTopologySpreadScore): upstream snapshots `nodes + failedNodes` with
`existingPods`, runs PreScore on `nodes` (the filtered nodes), Score on each, NormalizeScore,
with `PodTopologySpreadArgs{DefaultingType: System}`. Here: the cluster holds all nodes and pods,
the candidates are `nodes`, `policy(filters=[], scores=[("PodTopologySpread", 1)])` with
`defaultingType: System`, and `ev.scores["PodTopologySpread"]` must equal upstream's normalised
0..100 list. TestPreScoreSkip: PreScore returns Skip, so the plugin is absent from `ev.scores`.

Pods built with `st.MakePod()` without `.Namespace(...)` (and the namespace-less Service of
"system defaulting, ...") have the empty namespace upstream; here they are all in "default"
(only equality between namespaces matters).

Rows leaving `enableNodeInclusionPolicy` false upstream use no inclusion-policy field, no taints
and no node affinity, so gate-off and the GA defaults (Honor / Ignore) give the same counts; they
are transcribed.

Not transcribed:
* TestPodTopologySpreadScore "matchLabelKeys ignored when feature gate disabled": tests
  MatchLabelKeysInPodTopologySpread turned off, which `evaluate` does not model.
* `TestPreScoreStateEmptyNodes`: asserts the internal preScoreState (constraints, ignored nodes,
  per-domain counts, normalising weights), never a score; not observable.
* `BenchmarkTestPodTopologySpreadScore`: a benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from extender.engine import evaluate
from tests.engine.upstream.builders import (
    exists,
    in_,
    node,
    owner,
    pod,
    policy,
    replica_set,
    required_affinity,
    selector,
    service,
    spread,
    taint,
)

Obj = dict[str, Any]

PLUGIN = "PodTopologySpread"

HOST = "kubernetes.io/hostname"  # v1.LabelHostname
SA = "ScheduleAnyway"

FOO = selector(None, exists("foo"))  # fooSelector
BAR = selector(None, exists("bar"))  # barSelector
EMPTY = selector()  # st.MakeLabelSelector().Obj(): a non-nil, empty selector
TAINTS = [taint("node.kubernetes.io/unschedulable", "", "NoSchedule")]  # `taints` (filtering_test.go)

SYSTEM_ARGS = {"defaultingType": "System"}




def incoming(*label_keys: str, spreads: list[Obj] | None = None, affinity: Obj | None = None,
             node_selector: dict[str, str] | None = None) -> Obj:
    """The pod to schedule: `st.MakePod().Name("p").Label(k, "")...`."""
    return pod("p", labels={k: "" for k in label_keys}, spread=spreads, affinity=affinity,
               node_selector=node_selector)


def on(name: str, node_name: str, *label_keys: str, ns: str = "default",
       terminating: bool = False) -> Obj:
    """An existing pod: `st.MakePod().Name(name).Node(node).Label(k, "")...`."""
    return pod(name, ns, labels={k: "" for k in label_keys}, node=node_name, terminating=terminating)


def hn(name: str, **extra: str) -> Obj:
    """`st.MakeNode().Name(name).Label(v1.LabelHostname, name)` (+ extra labels, e.g. zone)."""
    return node(name, {**extra, HOST: name})


def zhn(name: str, zone: str) -> Obj:
    """`st.MakeNode().Name(name).Label("zone", zone).Label(v1.LabelHostname, name)`."""
    return node(name, {"zone": zone, HOST: name})


def nn(name: str, **extra: str) -> Obj:
    """`st.MakeNode().Name(name).Label("node", name)` (+ extra labels)."""
    return node(name, {"node": name, **extra})


def pods_2_1_0_3() -> list[Obj]:
    """Matching pods spread as 2/1/0/3 over node-a..node-d."""
    return [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
            on("p-d1", "node-d", "foo"), on("p-d2", "node-d", "foo"), on("p-d3", "node-d", "foo")]


def pods_4_3_2_1() -> list[Obj]:
    """Matching pods spread as 4/3/2/1 over node-a..node-d."""
    return [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-a3", "node-a", "foo"),
            on("p-a4", "node-a", "foo"), on("p-b1", "node-b", "foo"), on("p-b2", "node-b", "foo"),
            on("p-b3", "node-b", "foo"), on("p-c1", "node-c", "foo"), on("p-c2", "node-c", "foo"),
            on("p-d1", "node-d", "foo")]


def pods_4_2_1_3() -> list[Obj]:
    """Matching pods spread as 4/2/1/3 over node-a, node-b, node-x, node-y."""
    return [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-a3", "node-a", "foo"),
            on("p-a4", "node-a", "foo"), on("p-b1", "node-b", "foo"), on("p-b2", "node-b", "foo"),
            on("p-x1", "node-x", "foo"), on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"),
            on("p-y3", "node-y", "foo")]


def pods_2_1_1() -> list[Obj]:
    """`existingPods` of the NodeAffinityPolicy / NodeTaintsPolicy rows: 2/1/1 on node-a..c."""
    return [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
            on("p-c1", "node-c", "foo")]


@dataclass(frozen=True)
class Case:
    test: str
    name: str
    pod: Obj
    nodes: list[Obj]  # candidates (upstream `nodes`)
    existing: list[Obj] = field(default_factory=list)
    failed: list[Obj] = field(default_factory=list)  # upstream `failedNodes`: in the cluster, not candidates
    objs: list[Obj] = field(default_factory=list)  # Services / ReplicaSets / ...
    args: Obj = field(default_factory=lambda: dict(SYSTEM_ARGS))
    want: dict[str, int] | None = None  # None: PreScore Skip (plugin absent)

    @property
    def id(self) -> str:
        return f"{self.test}: {self.name}"


# =============================================================================================
# TestPodTopologySpreadScore (DefaultingType: System)
# =============================================================================================
T = "TestPodTopologySpreadScore"
SCORE: list[Case] = [
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on node, no existing pods"
    Case(T, "one constraint on node, no existing pods",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b")],
         want={"node-a": 100, "node-b": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on node, only one node is candidate"
    Case(T, "one constraint on node, only one node is candidate",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a")],
         existing=[on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo")],
         failed=[hn("node-b")],
         want={"node-a": 100}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "one constraint on node, all nodes have the same number of matching pods"
    Case(T, "one constraint on node, all nodes have the same number of matching pods",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b")],
         existing=[on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo")],
         want={"node-a": 100, "node-b": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on node, all 4 nodes are candidates"
    Case(T, "one constraint on node, all 4 nodes are candidates",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
         existing=pods_2_1_0_3(),
         want={"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0}),
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on node, null selector"
    Case(T, "one constraint on node, null selector",
         incoming("foo", spreads=[spread(1, HOST, SA, None)]),
         [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
         existing=pods_2_1_0_3(),
         want={"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on node, all 4 nodes are candidates, maxSkew=2"
    Case(T, "one constraint on node, all 4 nodes are candidates, maxSkew=2",
         incoming("foo", spreads=[spread(2, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
         existing=pods_2_1_0_3(),
         want={"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16}),
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on node, all 4 nodes are candidates, maxSkew=3"
    Case(T, "one constraint on node, all 4 nodes are candidates, maxSkew=3",
         incoming("foo", spreads=[spread(3, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
         existing=pods_4_3_2_1(),
         want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "system defaulting, nodes don't have zone, pods match service"
    Case(T, "system defaulting, nodes don't have zone, pods match service",
         incoming("foo"),
         [hn("node-a"), hn("node-b"), hn("node-c"), hn("node-d")],
         existing=pods_4_3_2_1(),
         objs=[service("svc", selector={"foo": ""})],
         want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on node, 3 out of 4 nodes are candidates"
    Case(T, "one constraint on node, 3 out of 4 nodes are candidates",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b"), hn("node-x")],
         existing=pods_4_2_1_3(),
         failed=[hn("node-y")],
         want={"node-a": 33, "node-b": 83, "node-x": 100}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key"
    Case(T, "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a"), node("node-b", {"n": "node-b"}), hn("node-x")],
         existing=pods_4_2_1_3(),
         failed=[hn("node-y")],
         want={"node-a": 16, "node-b": 0, "node-x": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "one constraint on zone, 3 out of 4 nodes are candidates"
    Case(T, "one constraint on zone, 3 out of 4 nodes are candidates",
         incoming("foo", spreads=[spread(1, "zone", SA, FOO)]),
         [zhn("node-a", "zone1"), zhn("node-b", "zone1"), zhn("node-x", "zone2")],
         existing=pods_4_2_1_3(),
         failed=[zhn("node-y", "zone2")],
         want={"node-a": 75, "node-b": 75, "node-x": 100}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "two Constraints on zone and node, 2 out of 4 nodes are candidates"
    Case(T, "two Constraints on zone and node, 2 out of 4 nodes are candidates",
         incoming("foo", spreads=[spread(1, "zone", SA, FOO), spread(1, HOST, SA, FOO)]),
         [zhn("node-a", "zone1"), zhn("node-x", "zone2")],
         existing=[on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
                   on("p-x1", "node-x", "foo"), on("p-x2", "node-x", "foo"), on("p-y1", "node-y", "foo"),
                   on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo"), on("p-y4", "node-y", "foo")],
         failed=[zhn("node-b", "zone1"), zhn("node-y", "zone2")],
         want={"node-a": 100, "node-x": 63}),
    # scoring_test.go TestPodTopologySpreadScore: "two Constraints on zone, 2 out of 4 nodes are candidates"
    Case(T, "two Constraints on zone, 2 out of 4 nodes are candidates",
         incoming("foo", "bar", spreads=[spread(1, "zone", SA, FOO), spread(1, "zone", SA, BAR)]),
         [node("node-a", {"zone": "zone1"}), node("node-x", {"zone": "zone2"})],
         existing=[on("p-a1", "node-a", "foo", "bar"), on("p-a2", "node-a", "foo"),
                   on("p-b1", "node-b", "foo", "bar"), on("p-y1", "node-y", "foo"),
                   on("p-y2", "node-y", "foo", "bar"), on("p-y3", "node-y", "foo")],
         failed=[node("node-b", {"zone": "zone1"}), node("node-y", {"zone": "zone2"})],
         want={"node-a": 85, "node-x": 100}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "two Constraints on zone and node, with different labelSelectors"
    Case(T, "two Constraints on zone and node, with different labelSelectors",
         incoming("foo", "bar", spreads=[spread(1, "zone", SA, FOO), spread(1, HOST, SA, BAR)]),
         [zhn("node-a", "zone1"), zhn("node-b", "zone1"), zhn("node-x", "zone2"), zhn("node-y", "zone2")],
         existing=[on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo", "bar"),
                   on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "bar")],
         want={"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods"
    Case(T, "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
         incoming("foo", "bar", spreads=[spread(1, "zone", SA, FOO), spread(1, HOST, SA, BAR)]),
         [zhn("node-a", "zone1"), zhn("node-b", "zone1"), zhn("node-x", "zone2"), zhn("node-y", "zone2")],
         existing=[on("p-b1", "node-b", "bar"), on("p-x1", "node-x", "foo"),
                   on("p-y1", "node-y", "foo", "bar")],
         want={"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0}),
    # scoring_test.go TestPodTopologySpreadScore: "two Constraints on zone and node, with different
    #   labelSelectors, 3 out of 4 nodes are candidates"
    Case(T, "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
         incoming("foo", "bar", spreads=[spread(1, "zone", SA, FOO), spread(1, HOST, SA, BAR)]),
         [zhn("node-a", "zone1"), zhn("node-b", "zone1"), zhn("node-x", "zone2")],
         existing=[on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo", "bar"),
                   on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "bar")],
         failed=[zhn("node-y", "zone2")],
         want={"node-a": 50, "node-b": 25, "node-x": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "existing pods in a different namespace do not count"
    Case(T, "existing pods in a different namespace do not count",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b")],
         existing=[on("p-a1", "node-a", "foo", ns="ns1"), on("p-a2", "node-a", "foo"),
                   on("p-b1", "node-b", "foo"), on("p-b2", "node-b", "foo")],
         want={"node-a": 100, "node-b": 33}),
    # scoring_test.go TestPodTopologySpreadScore: "terminating Pods should be excluded"
    Case(T, "terminating Pods should be excluded",
         incoming("foo", spreads=[spread(1, HOST, SA, FOO)]),
         [hn("node-a"), hn("node-b")],
         existing=[on("p-a", "node-a", "foo", terminating=True), on("p-b", "node-b", "foo")],
         want={"node-a": 100, "node-b": 0}),
    # scoring_test.go TestPodTopologySpreadScore: "minDomains has no effect when ScheduleAnyway"
    Case(T, "minDomains has no effect when ScheduleAnyway",
         incoming("foo", spreads=[spread(2, "node", SA, FOO, min_domains=10)]),
         [nn("node-a"), nn("node-b"), nn("node-c")],
         existing=[on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
                   on("p-b2", "node-b", "foo"), on("p-c1", "node-c", "foo")],
         want={"node-a": 75, "node-b": 75, "node-c": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "NodeAffinityPolicy honoed with labelSelectors" (sic)
    Case(T, "NodeAffinityPolicy honoed with labelSelectors",
         incoming("foo", spreads=[spread(1, "node", SA, FOO)], node_selector={"foo": ""}),
         [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c")],
         existing=pods_2_1_1(),
         want={"node-a": 0, "node-b": 33, "node-c": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "NodeAffinityPolicy ignored with labelSelectors"
    Case(T, "NodeAffinityPolicy ignored with labelSelectors",
         incoming("foo", spreads=[spread(1, "node", SA, FOO, affinity_policy="Ignore")],
                  node_selector={"foo": ""}),
         [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c")],
         existing=pods_2_1_1(),
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "NodeAffinityPolicy honoed with nodeAffinity" (sic)
    Case(T, "NodeAffinityPolicy honoed with nodeAffinity",
         incoming("foo", spreads=[spread(1, "node", SA, FOO)], affinity=required_affinity(in_("foo", ""))),
         [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c")],
         existing=pods_2_1_1(),
         want={"node-a": 0, "node-b": 33, "node-c": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "NodeAffinityPolicy ignored with nodeAffinity"
    Case(T, "NodeAffinityPolicy ignored with nodeAffinity",
         incoming("foo", spreads=[spread(1, "node", SA, FOO, affinity_policy="Ignore")],
                  affinity=required_affinity(in_("foo", ""))),
         [nn("node-a", foo=""), nn("node-b", foo=""), nn("node-c")],
         existing=pods_2_1_1(),
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "NodeTaintsPolicy honored"
    Case(T, "NodeTaintsPolicy honored",
         incoming("foo", spreads=[spread(1, "node", SA, FOO, taints_policy="Honor")]),
         [nn("node-a"), nn("node-b"), node("node-c", {"node": "node-c"}, taints=TAINTS)],
         existing=pods_2_1_1(),
         want={"node-a": 0, "node-b": 33, "node-c": 100}),
    # scoring_test.go TestPodTopologySpreadScore: "NodeTaintsPolicy ignored"
    Case(T, "NodeTaintsPolicy ignored",
         incoming("foo", spreads=[spread(1, "node", SA, FOO)]),
         [nn("node-a"), nn("node-b"), node("node-c", {"node": "node-c"}, taints=TAINTS)],
         existing=pods_2_1_1(),
         want={"node-a": 66, "node-b": 100, "node-c": 100}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"
    Case(T, "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
         incoming("foo", "bar", spreads=[spread(1, "zone", SA, EMPTY, match_label_keys=["foo"]),
                                         spread(1, HOST, SA, EMPTY, match_label_keys=["bar"])]),
         [zhn("node-a", "zone1"), zhn("node-b", "zone1"), zhn("node-c", "zone2"), zhn("node-d", "zone2")],
         existing=[on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo", "bar"),
                   on("p-y1", "node-c", "foo"), on("p-y2", "node-c", "bar")],
         want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
    # scoring_test.go TestPodTopologySpreadScore:
    #   "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"
    Case(T, "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
         incoming("foo", "bar", "baz", spreads=[spread(1, "zone", SA, FOO),
                                                spread(1, HOST, SA, BAR, match_label_keys=["baz"])]),
         [zhn("node-a", "zone1"), zhn("node-b", "zone1"), zhn("node-c", "zone2"), zhn("node-d", "zone2")],
         existing=[on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo", "bar", "baz"),
                   on("p-c1", "node-c", "foo"), on("p-c2", "node-c", "bar"),
                   on("p-d3", "node-c", "bar", "baz")],
         want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100}),
]


# =============================================================================================
# TestPreScoreSkip (PreScore returns Skip: no score from this plugin)
# =============================================================================================
T_SKIP = "TestPreScoreSkip"
SKIP: list[Case] = [
    # scoring_test.go TestPreScoreSkip: "the pod doesn't have soft topology spread Constraints"
    Case(T_SKIP, "the pod doesn't have soft topology spread Constraints",
         pod("p", "default"),
         [hn("node-a"), hn("node-b")],
         args={"defaultingType": "List"},
         want=None),
    # scoring_test.go TestPreScoreSkip: "default constraints and a replicaset that doesn't match"
    # (the pod's controller is ReplicaSet rs2, which does not exist; rs1 selects Exists(tar))
    Case(T_SKIP, "default constraints and a replicaset that doesn't match",
         pod("p", "default", labels={"foo": "bar", "baz": "sup"}, owner=owner("ReplicaSet", "rs2")),
         [node("node-a", {"planet": "mars"})],
         objs=[replica_set("rs1", "default", selector=selector(None, exists("tar")))],
         args={"defaultConstraints": [{"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SA}],
               "defaultingType": "List"},
         want=None),
]

CASES = SCORE + SKIP


# ---- running a row ------------------------------------------------------------------------
def run(case: Case) -> Any:
    pol = policy(filters=[], scores=[(PLUGIN, 1)], args={PLUGIN: case.args})
    objects = case.nodes + case.failed + case.existing + case.objs
    candidates = [n["metadata"]["name"] for n in case.nodes]
    return evaluate(objects, case.pod, policy=pol, nodes=candidates)


def test_row_count() -> None:
    assert (len(SCORE), len(SKIP)) == (27, 2)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_score(case: Case) -> None:
    ev = run(case)
    if case.want is None:
        assert PLUGIN not in ev.scores
    else:
        assert ev.scores[PLUGIN] == case.want
