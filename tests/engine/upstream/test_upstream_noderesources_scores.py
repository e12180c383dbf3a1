"""kube-scheduler's NodeResourcesFit Score tables, transcribed (data only) and run through `evaluate`.

Sources, kubernetes/kubernetes `pkg/scheduler/framework/plugins/noderesources/`, the newest stored
version of each file:

* `fit_test.go` TestFitScore (9 of 11 rows), the `fwk` era (v1.35) version;
* `least_allocated_test.go` TestLeastAllocatedScoringStrategy (14 of 16 rows), commit 8519d3399f10;
* `most_allocated_test.go` TestMostAllocatedScoringStrategy (12 of 14 rows), commit 072825f9a367;
* `requested_to_capacity_ratio_test.go` TestRequestedToCapacityRatioScoringStrategy (3 rows),
  TestResourceBinPackingSingleExtended (4 rows), TestResourceBinPackingMultipleExtended (4 rows),
  commit 8519d3399f10.

Every row cites its test function and case `name` (the pytest id is the case name; the one name
most_allocated_test.go uses twice gets a ` #2` suffix on its second row).

Mapping. Upstream builds a snapshot of `nodes` + `existingPods`, creates NewFit with
`NodeResourcesFitArgs{ScoringStrategy{Type, Resources, RequestedToCapacityRatio}}`, runs PreScore
and Score on every node (Fit has no NormalizeScore). Here `nodes=` are those nodes,
`policy(filters=[], scores=[("NodeResourcesFit", 1)], args={"NodeResourcesFit": {"scoringStrategy":
...}})` with kube-scheduler's v1 argument names, and the row asserts
`ev.scores["NodeResourcesFit"] == {node: score}`. Rows whose `wantErrs` expects NewFit to reject the
arguments assert that `evaluate` raises `PolicyError`.

Builders after kube-scheduler's `st` wrappers: `st.MakePod()` has no containers; each `.Req(map)`
appends one container with those requests, `.SidecarReq(map)` one restartable init container,
`.Container(name)` one container without requests. `st.MakeNode().Capacity(map)` sets capacity =
allocatable = the map plus `pods: 32`. noderesources' `makeNode(name, milliCPU, memory, extended)`
sets cpu in millicores, memory in bytes, and the extended resources. Upstream's `.Node("node1")` on
an incoming pod (some least/most-allocated rows) is not read by Score and is left out; existing pods
that upstream leaves unbound (`pods: []*v1.Pod{st.MakePod().Obj()}` in the bin-packing tables) are
not on any node and so are left out too.

Not transcribed:
* TestLeastAllocatedScoringStrategy / TestMostAllocatedScoringStrategy "Resources not set, pods
  scheduled with error": `Resources: nil` reaches the plugin only without the v1 defaulting,
  which fills in cpu and memory; a policy cannot express it.
* TestLeastAllocatedScoringStrategy / TestMostAllocatedScoringStrategy "resource with zero weight":
  upstream validates the internal (un-defaulted) args; the v1 API defaults a weight of 0 to 1
  (SetDefaults_NodeResourcesFitArgs), which is what a policy gets.
* TestFitScore "test case for ScoringStrategy LeastAllocated with Extended resources" (and its
  "if PreScore is not called" twin): they need a DeviceClass and ResourceSlices
  (DRAExtendedResource); the engine has no DRA.
* TestBrokenLinearFunction: the internal shape-function helper, with utilisations outside
  0..100 that no score reaches.
* BenchmarkTestFitScore: a benchmark.
"""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine import evaluate
from extender.engine.policy import PolicyError
from tests.engine.upstream.builders import node, pod, policy

Obj = dict[str, Any]

PLUGIN = "NodeResourcesFit"
EXTENDED_RES = "abc.com/xyz"  # extendedRes

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_RESOURCE_SET = [*DEFAULT_RESOURCES, {"name": EXTENDED_RES, "weight": 1}]


def strategy(kind: str, resources: list[Obj], shape: list[tuple[int, int]] | None = None) -> Obj:
    out: Obj = {"type": kind, "resources": resources}
    if shape is not None:
        out["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    return {"scoringStrategy": out}


def run_scores(nodes: list[Obj], incoming: Obj, existing: list[Obj], args: Obj) -> dict[str, int] | None:
    ev = evaluate([*nodes, *named(existing)], incoming,
                  policy=policy(filters=[], scores=[(PLUGIN, 1)], args={PLUGIN: args}),
                  nodes=[n["metadata"]["name"] for n in nodes])
    return ev.scores.get(PLUGIN)


def named(pods: list[Obj]) -> list[Obj]:
    """Give upstream's unnamed existing pods distinct names (no scorer reads them)."""
    for i, p in enumerate(pods):
        p["metadata"]["name"] = f"existing-{i}"
        p["metadata"]["uid"] = f"uid-existing-{i}"
    return pods


def st_pod(*reqs: dict[str, str] | None, node_name: str = "",
           sidecars: tuple[dict[str, str], ...] = ()) -> Obj:
    """st.MakePod()[.Node(n)].Req(r1).Req(r2)...[.SidecarReq(s)]: one container per request map
    (None: `.Container(name)`, a container without requests)."""
    containers = []
    for i, r in enumerate(reqs):
        c: Obj = {"name": f"con{i}", "image": "img"}
        if r is not None:
            c["resources"] = {"requests": dict(r)}
        containers.append(c)
    out = pod("p", node=node_name, containers=containers)
    if sidecars:
        out["spec"]["initContainers"] = [
            {"name": f"sidecar{i}", "image": "img", "restartPolicy": "Always",
             "resources": {"requests": dict(s)}} for i, s in enumerate(sidecars)]
    return out


def cap_node(name: str, capacity: dict[str, str] | None = None) -> Obj:
    """st.MakeNode().Name(name)[.Capacity(capacity)]."""
    if capacity is None:
        return node(name)
    return node(name, allocatable={"pods": "32", **capacity})


def cm(cpu: str, memory: str, **extra: str) -> dict[str, str]:
    """A `{"cpu": .., "memory": ..}` request/capacity map (extra keys: scalar resources)."""
    return {"cpu": cpu, "memory": memory, **extra}


def xyz(cpu: str, memory: str, amount: str) -> dict[str, str]:
    """cm() plus the extended resource abc.com/xyz."""
    return {"cpu": cpu, "memory": memory, EXTENDED_RES: amount}


# =============================================================================================
# fit_test.go, TestFitScore
# =============================================================================================
def fit_score_nodes(cpu2: str = "6000") -> list[Obj]:
    return [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm(cpu2, "10000"))]


def fit_score_existing() -> list[Obj]:
    return [st_pod(cm("2000", "4000"), node_name="node1"), st_pod(cm("1000", "2000"), node_name="node2")]


def sidecar_existing() -> list[Obj]:
    return [st_pod(cm("1000", "2000"), node_name="node1", sidecars=(cm("1000", "2000"),)),
            st_pod(cm("1000", "2000"), node_name="node2")]


RTCR_DOWN = [(0, 10), (100, 0)]
RTCR_UP = [(0, 0), (100, 10)]

FIT_SCORE_ROWS = [
    # (name, incoming, nodes, existing, args, want)
    ("test case for ScoringStrategy RequestedToCapacityRatio case1",
     st_pod(cm("3000", "5000")), fit_score_nodes(), fit_score_existing(),
     strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, RTCR_DOWN), {"node1": 10, "node2": 32}),
    ("test case for ScoringStrategy RequestedToCapacityRatio case2",
     st_pod(cm("3000", "5000")), fit_score_nodes(), fit_score_existing(),
     strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, RTCR_UP), {"node1": 95, "node2": 68}),
    ("test case for ScoringStrategy MostAllocated",
     st_pod(cm("1000", "2000")), fit_score_nodes(), fit_score_existing(),
     strategy("MostAllocated", DEFAULT_RESOURCES), {"node1": 67, "node2": 36}),
    ("test case for ScoringStrategy LeastAllocated",
     st_pod(cm("1000", "2000")), fit_score_nodes(), fit_score_existing(),
     strategy("LeastAllocated", DEFAULT_RESOURCES), {"node1": 32, "node2": 63}),
    # runPreScore: false upstream; the pipeline always runs PreScore, with the same scores.
    ("test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
     st_pod(cm("3000", "5000")), fit_score_nodes(), fit_score_existing(),
     strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, RTCR_DOWN), {"node1": 10, "node2": 32}),
    ("test case for ScoringStrategy MostAllocated if PreScore is not called",
     st_pod(cm("1000", "2000")), fit_score_nodes(), fit_score_existing(),
     strategy("MostAllocated", DEFAULT_RESOURCES), {"node1": 67, "node2": 36}),
    ("test case for ScoringStrategy LeastAllocated if PreScore is not called",
     st_pod(cm("1000", "2000")), fit_score_nodes(), fit_score_existing(),
     strategy("LeastAllocated", DEFAULT_RESOURCES), {"node1": 32, "node2": 63}),
    ("test case for ScoringStrategy MostAllocated with sidecar container",
     st_pod(cm("1000", "2000")), fit_score_nodes("4000"), sidecar_existing(),
     strategy("MostAllocated", DEFAULT_RESOURCES), {"node1": 67, "node2": 45}),
    ("test case for ScoringStrategy LeastAllocated with sidecar container",
     st_pod(cm("1000", "2000")), fit_score_nodes("4000"), sidecar_existing(),
     strategy("LeastAllocated", DEFAULT_RESOURCES), {"node1": 32, "node2": 55}),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "args", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in FIT_SCORE_ROWS])
def test_fit_score(incoming: Obj, nodes: list[Obj], existing: list[Obj], args: Obj, want: dict[str, int]):
    # fit_test.go TestFitScore, case `name` = the test id.
    assert run_scores(nodes, incoming, existing, args) == want


# =============================================================================================
# least_allocated_test.go, TestLeastAllocatedScoringStrategy
# most_allocated_test.go, TestMostAllocatedScoringStrategy
# (rows: name, incoming, nodes, existing, resources, want; want None: NewFit rejects the args)
# =============================================================================================
TWO_CONTAINERS = (cm("1000", "2000"), cm("2000", "3000"))

LEAST_ROWS = [
    ("nothing scheduled, nothing requested",
     st_pod(), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("4000", "10000"))], [],
     DEFAULT_RESOURCES, {"node1": 100, "node2": 100}),
    ("nothing scheduled, resources requested, differently sized nodes",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("6000", "10000"))],
     [], DEFAULT_RESOURCES, {"node1": 37, "node2": 50}),
    ("no resources requested, pods scheduled",
     st_pod(), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("4000", "10000"))],
     [st_pod(node_name="node1"), st_pod(node_name="node1"), st_pod(node_name="node2"),
      st_pod(node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 100, "node2": 100}),
    ("no resources requested, pods scheduled with resources",
     st_pod(), [cap_node("node1", cm("10000", "20000")), cap_node("node2", cm("10000", "20000"))],
     [st_pod(cm("3000", "0"), node_name="node1"), st_pod(cm("3000", "0"), node_name="node1"),
      st_pod(cm("3000", "0"), node_name="node2"), st_pod(cm("3000", "5000"), node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 70, "node2": 57}),
    ("resources requested, pods scheduled with resources",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("10000", "20000")), cap_node("node2", cm("10000", "20000"))],
     [st_pod(cm("3000", "0"), node_name="node1"), st_pod(cm("3000", "5000"), node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 57, "node2": 45}),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("10000", "20000")), cap_node("node2", cm("10000", "50000"))],
     [st_pod(cm("3000", "0"), node_name="node1"), st_pod(cm("3000", "5000"), node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 57, "node2": 60}),
    ("requested resources exceed node capacity",
     st_pod(cm("3000", "0")), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("4000", "10000"))],
     [st_pod(cm("3000", "0"), node_name="node1"), st_pod(cm("3000", "5000"), node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 50, "node2": 25}),
    ("zero node resources, pods scheduled with resources",
     st_pod(), [cap_node("node1"), cap_node("node2")],
     [st_pod(cm("3000", "0"), node_name="node1"), st_pod(cm("3000", "5000"), node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 0, "node2": 0}),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently "
     "sized nodes",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("6000", "10000"))],
     [], [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], {"node1": 41, "node2": 50}),
    ("resource with negative weight",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("4000", "10000"))], [],
     [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}], None),
    ("resource weight larger than MaxNodeScore",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("4000", "10000"))], [],
     [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}], None),
    ("bypass extended resource if the pod does not request",
     st_pod(*TWO_CONTAINERS),
     [cap_node("node1", cm("6000", "10000")), cap_node("node2", xyz("6000", "10000", "4"))], [],
     EXTENDED_RESOURCE_SET, {"node1": 50, "node2": 50}),
    ("honor extended resource if the pod requests",
     st_pod(xyz("3000", "5000", "2")),
     [cap_node("node1", xyz("6000", "10000", "4")), cap_node("node2", xyz("6000", "10000", "10"))], [],
     EXTENDED_RESOURCE_SET, {"node1": 50, "node2": 60}),
    ("if the node doesn't have a resource",
     st_pod(cm("3000", "4000")),
     [cap_node("node1", cm("6000", "10000")), cap_node("node2", xyz("6000", "10000", "4"))], [],
     [{"name": EXTENDED_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
     {"node1": 55, "node2": 55}),
]

MOST_ROWS = [
    ("nothing scheduled, nothing requested",
     st_pod(), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("4000", "10000"))], [],
     DEFAULT_RESOURCES, {"node1": 0, "node2": 0}),
    ("nothing scheduled, resources requested, differently sized nodes",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("6000", "10000"))],
     [], DEFAULT_RESOURCES, {"node1": 62, "node2": 50}),
    ("no resources requested, pods scheduled with resources",
     st_pod(), [cap_node("node1", cm("10000", "20000")), cap_node("node2", cm("10000", "20000"))],
     [st_pod(cm("3000", "0"), node_name="node1"), st_pod(cm("3000", "0"), node_name="node1"),
      st_pod(cm("3000", "0"), node_name="node2"), st_pod(cm("3000", "5000"), node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 30, "node2": 42}),
    ("resources requested, pods scheduled with resources",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("10000", "20000")), cap_node("node2", cm("10000", "20000"))],
     [st_pod(cm("3000", "0"), node_name="node1"), st_pod(cm("3000", "5000"), node_name="node2")],
     DEFAULT_RESOURCES, {"node1": 42, "node2": 55}),
    ("resources requested equal node capacity",
     st_pod(cm("2000", "4000"), cm("3000", "5000")),
     [cap_node("node1", cm("5000", "10000")), cap_node("node2", cm("10000", "9000"))], [],
     DEFAULT_RESOURCES, {"node1": 95, "node2": 75}),
    ("nothing scheduled, resources requested, differently sized nodes #2",  # the name repeats upstream
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("6000", "10000"))],
     [], [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], {"node1": 58, "node2": 50}),
    ("no resources requested, pods scheduled, nonzero request for resource",
     st_pod(None), [cap_node("node1", cm("250m", "1000Mi")), cap_node("node2", cm("250m", "1000Mi"))],
     [st_pod(None, node_name="node1"), st_pod(None, node_name="node1")],
     DEFAULT_RESOURCES, {"node1": 80, "node2": 30}),
    ("resource with negative weight",
     st_pod(*TWO_CONTAINERS), [cap_node("node2", cm("4000", "10000"))], [],
     [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}], None),
    ("resource weight larger than MaxNodeScore",
     st_pod(*TWO_CONTAINERS), [cap_node("node2", cm("4000", "10000"))], [],
     [{"name": "memory", "weight": 101}], None),
    ("bypass extended resource if the pod does not request",
     st_pod(*TWO_CONTAINERS),
     [cap_node("node1", cm("6000", "10000")), cap_node("node2", xyz("6000", "10000", "4"))], [],
     EXTENDED_RESOURCE_SET, {"node1": 50, "node2": 50}),
    ("honor extended resource if the pod request",
     st_pod(xyz("3000", "5000", "2")),
     [cap_node("node1", xyz("6000", "10000", "4")), cap_node("node2", xyz("6000", "10000", "10"))], [],
     EXTENDED_RESOURCE_SET, {"node1": 50, "node2": 40}),
    ("if the node doesn't have a resource",
     st_pod(cm("3000", "4000")),
     [cap_node("node1", cm("6000", "10000")), cap_node("node2", xyz("6000", "10000", "4"))], [],
     [{"name": EXTENDED_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
     {"node1": 45, "node2": 45}),
]


def check_strategy(kind: str, incoming: Obj, nodes: list[Obj], existing: list[Obj],
                   resources: list[Obj], want: dict[str, int] | None) -> None:
    args = strategy(kind, resources)
    if want is None:  # wantErrs: NewFit's validation rejects a weight outside 1..100
        with pytest.raises(PolicyError):
            run_scores(nodes, incoming, existing, args)
        return
    assert run_scores(nodes, incoming, existing, args) == want


@pytest.mark.parametrize(("incoming", "nodes", "existing", "resources", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in LEAST_ROWS])
def test_least_allocated_scoring_strategy(incoming: Obj, nodes: list[Obj], existing: list[Obj],
                                          resources: list[Obj], want: dict[str, int] | None):
    # least_allocated_test.go TestLeastAllocatedScoringStrategy, case `name` = the test id.
    check_strategy("LeastAllocated", incoming, nodes, existing, resources, want)


@pytest.mark.parametrize(("incoming", "nodes", "existing", "resources", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in MOST_ROWS])
def test_most_allocated_scoring_strategy(incoming: Obj, nodes: list[Obj], existing: list[Obj],
                                         resources: list[Obj], want: dict[str, int] | None):
    # most_allocated_test.go TestMostAllocatedScoringStrategy, case `name` = the test id.
    check_strategy("MostAllocated", incoming, nodes, existing, resources, want)


# =============================================================================================
# requested_to_capacity_ratio_test.go
# =============================================================================================
RTCR_ROWS = [
    # TestRequestedToCapacityRatioScoringStrategy: shape (0,10),(100,0), default resources.
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)",
     st_pod(), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("4000", "10000"))],
     [st_pod(node_name="node1"), st_pod(node_name="node1")], {"node1": 100, "node2": 100}),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested "
     "nodes have priority)",
     st_pod(*TWO_CONTAINERS), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("6000", "10000"))],
     [st_pod(node_name="node1"), st_pod(node_name="node1")], {"node1": 38, "node2": 50}),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have "
     "priority)",
     st_pod(), [cap_node("node1", cm("4000", "10000")), cap_node("node2", cm("6000", "10000"))],
     [st_pod(cm("3000", "5000"), node_name="node1"), st_pod(cm("3000", "5000"), node_name="node2")],
     {"node1": 38, "node2": 50}),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in RTCR_ROWS])
def test_requested_to_capacity_ratio_scoring_strategy(incoming: Obj, nodes: list[Obj],
                                                      existing: list[Obj], want: dict[str, int]):
    # requested_to_capacity_ratio_test.go TestRequestedToCapacityRatioScoringStrategy, case `name`.
    args = strategy("RequestedToCapacityRatio", DEFAULT_RESOURCES, RTCR_DOWN)
    assert run_scores(nodes, incoming, existing, args) == want


FOO = "intel.com/foo"
BAR = "intel.com/bar"


def make_node(name: str, milli_cpu: int, memory: int, extended: dict[str, int]) -> Obj:
    """noderesources makeNode(node, milliCPU, memory, extendedResource)."""
    alloc = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    alloc.update({k: str(v) for k, v in extended.items()})
    return node(name, allocatable=alloc)


def single_nodes() -> list[Obj]:
    # makeNode("node1", 4000, 10000*1024*1024, extendedResource2), makeNode("node2", ..., extendedResource1)
    return [make_node("node1", 4000, 10000 * 1024 * 1024, {FOO: 8}),
            make_node("node2", 4000, 10000 * 1024 * 1024, {FOO: 4})]


def multiple_nodes() -> list[Obj]:
    # makeNode("node1", ..., extendedResources2), makeNode("node2", ..., extendedResources1)
    return [make_node("node1", 4000, 10000 * 1024 * 1024, {FOO: 8, BAR: 4}),
            make_node("node2", 4000, 10000 * 1024 * 1024, {FOO: 4, BAR: 8})]


BIN_PACKING_SHAPE = [(0, 0), (100, 1)]

SINGLE_EXTENDED_ROWS = [
    ("nothing scheduled, nothing requested", st_pod(), [], {"node1": 0, "node2": 0}),
    ("resources requested, pods scheduled with less resources",
     st_pod({FOO: "2"}), [], {"node1": 2, "node2": 5}),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     st_pod({FOO: "2"}), [st_pod({FOO: "2"}, node_name="node2")], {"node1": 2, "node2": 10}),
    ("resources requested, pods scheduled with more resources",
     st_pod({FOO: "4"}), [], {"node1": 5, "node2": 10}),
]


@pytest.mark.parametrize(("incoming", "existing", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in SINGLE_EXTENDED_ROWS])
def test_resource_bin_packing_single_extended(incoming: Obj, existing: list[Obj], want: dict[str, int]):
    # requested_to_capacity_ratio_test.go TestResourceBinPackingSingleExtended, case `name`.
    args = strategy("RequestedToCapacityRatio", [{"name": FOO, "weight": 1}], BIN_PACKING_SHAPE)
    assert run_scores(single_nodes(), incoming, existing, args) == want


MULTIPLE_EXTENDED_ROWS = [
    ("nothing scheduled, nothing requested", st_pod(), [], {"node1": 0, "node2": 0}),
    ("resources requested, pods scheduled with less resources",
     st_pod({FOO: "2", BAR: "2"}), [], {"node1": 4, "node2": 3}),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     st_pod({FOO: "2", BAR: "2"}), [st_pod({FOO: "4", BAR: "2"}, node_name="node2")],
     {"node1": 4, "node2": 7}),
    ("resources requested, pods scheduled with more resources",
     st_pod({FOO: "4", BAR: "2"}), [], {"node1": 5, "node2": 5}),
]


@pytest.mark.parametrize(("incoming", "existing", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in MULTIPLE_EXTENDED_ROWS])
def test_resource_bin_packing_multiple_extended(incoming: Obj, existing: list[Obj], want: dict[str, int]):
    # requested_to_capacity_ratio_test.go TestResourceBinPackingMultipleExtended, case `name`.
    args = strategy("RequestedToCapacityRatio",
                    [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}], BIN_PACKING_SHAPE)
    assert run_scores(multiple_nodes(), incoming, existing, args) == want
