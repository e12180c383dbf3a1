"""kube-scheduler's node-local Score tables, transcribed (data only) and run through `evaluate`.

Plugins: TaintToleration, NodeAffinity, ImageLocality, NodeResourcesBalancedAllocation.
(NodeResourcesFit's scoring strategies are in `test_upstream_noderesources_scores.py`.) Sources,
all in kubernetes/kubernetes `pkg/scheduler/framework/plugins/`, the newest stored version of each:

* `tainttoleration/taint_toleration_test.go` TestTaintTolerationScore (5 rows), commit cb6ff2d8ce35;
* `nodeaffinity/node_affinity_test.go` TestNodeAffinityPriority (8 of 9 rows), commit 17bae91f207a;
* `imagelocality/image_locality_test.go` TestImageLocalityPriority (7 rows), the v1.30+ version
  that counts init containers;
* `noderesources/balanced_allocation_test.go` TestNodeResourcesBalancedAllocation (8 of 10 rows),
  the `fwk` era (v1.35) version: PreScore Skip for best-effort pods, the std-dev formula of
  releases before v1.36. No stored version has v1.36's formula (PR #135573: the score of the
  change of balance), so these rows run with `kubernetesVersion: "1.35"`, the release they state.

Every row cites its test function and case `name` (the pytest id is the case name).

Mapping. Upstream builds a snapshot of `nodes` + existing `pods`, runs PreScore (when the row says
so), Score on every node and NormalizeScore (for the plugins that have one). Here `nodes=` are the
nodes upstream scores, `policy(filters=[], scores=[(<Plugin>, 1)], args=...)`, and the row asserts
`ev.scores[<Plugin>] == {node: score}` (after normalisation); a PreScore Skip is the plugin's
absence from `ev.scores`. A PreScore Error fails kube-scheduler's scheduling cycle: `evaluate` is
expected to raise, its message carrying upstream's expected fragment (the convention of
`test_inter_pod_affinity_score.py`; the README does not define scoring errors). Existing pods are bound via `spec.nodeName`; unnamed ones are
`existing-<i>`.

Not transcribed:
* TestNodeAffinityPriority "all nodes are same priority as NodeAffinity is nil": it calls Score
  without PreScore (runPreScore false) and expects 0 everywhere; the pipeline always runs PreScore,
  which skips for this pod — the row "Skip is returned in PreScore when NodeAffinity is nil" checks
  that.
* TestNodeResourcesBalancedAllocation "include DRA resource on a node for balanced resource
  allocation" (and its "if PreScore not called" twin): they need a DeviceClass and ResourceSlices
  (DRAExtendedResource); the engine has no DRA.
* TestBalancedAllocationSignPod, TestNormalizedImageName, Test_isSchedulableAfter*, TestIsSchedulable*:
  pod signatures, internal helpers and queueing hints, not scores.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from extender.engine import EvaluationError, evaluate
from tests.engine.upstream.builders import node, pod, policy, taint

Obj = dict[str, Any]

def run_scores(plugin: str, nodes: list[Obj], incoming: Obj, existing: list[Obj] = (),  # type: ignore[assignment]
               args: Obj | None = None, version: str | None = None) -> dict[str, int] | None:
    """`ev.scores[plugin]` over `nodes` (None when the plugin skipped)."""
    ev = evaluate([*nodes, *existing], incoming,
                  policy=policy(filters=[], scores=[(plugin, 1)], args={plugin: args} if args else None,
                                kubernetes_version=version),
                  nodes=[n["metadata"]["name"] for n in nodes])
    return ev.scores.get(plugin)


def bare_pod(name: str = "p", node_name: str = "", **spec: Any) -> Obj:
    """`&v1.Pod{Spec: ...}`: no containers unless given, plus the spec fields."""
    out = pod(name, node=node_name, containers=spec.pop("containers", []))
    for key, value in spec.items():
        if value is not None:
            out["spec"][key] = value
    return out


def named(pods: list[Obj]) -> list[Obj]:
    """Give upstream's unnamed existing pods distinct names (no plugin here reads them)."""
    for i, p in enumerate(pods):
        p["metadata"]["name"] = f"existing-{i}"
        p["metadata"]["uid"] = f"uid-existing-{i}"
    return pods


# =============================================================================================
# TaintToleration — taint_toleration_test.go, TestTaintTolerationScore
# =============================================================================================
TAINTS = "TaintToleration"


def tol(key: str, value: str, effect: str) -> Obj:
    return {"key": key, "operator": "Equal", "value": value, "effect": effect}


PNS = "PreferNoSchedule"

TAINT_SCORE_ROWS = [
    # (name, pod tolerations, {node: taints}, want)
    ("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
     [tol("foo", "bar", PNS)],
     {"nodeA": [taint("foo", "bar", PNS)], "nodeB": [taint("foo", "blah", PNS)]},
     {"nodeA": 100, "nodeB": 0}),
    ("the nodes that all of their taints are tolerated by the pod, get the same score, no matter how "
     "many tolerable taints a node has",
     [tol("cpu-type", "arm64", PNS), tol("disk-type", "ssd", PNS)],
     {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", PNS)],
      "nodeC": [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)]},
     {"nodeA": 100, "nodeB": 100, "nodeC": 100}),
    ("the more intolerable taints a node has, the lower score it gets.",
     [tol("foo", "bar", PNS)],
     {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", PNS)],
      "nodeC": [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)]},
     {"nodeA": 100, "nodeB": 50, "nodeC": 0}),
    ("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations "
     "priority function",
     [tol("cpu-type", "arm64", "NoSchedule"), tol("disk-type", "ssd", "NoSchedule")],
     {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", "NoSchedule")],
      "nodeC": [taint("cpu-type", "arm64", PNS), taint("disk-type", "ssd", PNS)]},
     {"nodeA": 100, "nodeB": 100, "nodeC": 0}),
    ("Default behaviour No taints and tolerations, lands on node with no taints",
     [], {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", PNS)]},
     {"nodeA": 100, "nodeB": 0}),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in TAINT_SCORE_ROWS])
def test_taint_toleration_score(tolerations: list[Obj], taints: dict[str, list[Obj]],
                                want: dict[str, int]):
    # taint_toleration_test.go TestTaintTolerationScore, case `name` = the test id; pod "pod1".
    nodes = [node(name, taints=t) for name, t in taints.items()]
    assert run_scores(TAINTS, nodes, bare_pod("pod1", tolerations=tolerations or None)) == want


# =============================================================================================
# NodeAffinity — node_affinity_test.go, TestNodeAffinityPriority
# =============================================================================================
AFFINITY = "NodeAffinity"

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def pref(weight: int, *exprs: tuple[str, str]) -> Obj:
    """A PreferredSchedulingTerm whose preference ANDs `key In [value]` expressions."""
    return {"weight": weight, "preference": {"matchExpressions": [
        {"key": k, "operator": "In", "values": [v]} for k, v in exprs]}}


AFFINITY1_PREFERRED = [pref(2, ("foo", "bar"))]
AFFINITY2_PREFERRED = [pref(2, ("foo", "bar")), pref(4, ("key", "value")),
                       pref(5, ("foo", "bar"), ("key", "value"), ("az", "az1"))]


def preferred(terms: list[Obj]) -> Obj:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}


AFFINITY_PRIORITY_ROWS = [
    # (name, pod affinity, [(node, labels)], args, want, marks)
    ("Skip is returned in PreScore when NodeAffinity is nil",
     None, [("node1", LABEL1)], None, None, []),
    ("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority "
     "is zero",
     preferred(AFFINITY1_PREFERRED), [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)], None,
     {"node1": 0, "node2": 0, "node3": 0}, []),
    ("only node1 matches the preferred scheduling requirements of pod",
     preferred(AFFINITY1_PREFERRED), [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)], None,
     {"node1": 100, "node2": 0, "node3": 0}, []),
    ("all nodes matches the preferred scheduling requirements of pod but with different priorities ",
     preferred(AFFINITY2_PREFERRED), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], None,
     {"node1": 18, "node5": 100, "node2": 36}, []),
    ("added affinity",
     None, [("node1", LABEL1), ("node2", LABEL2)],
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": AFFINITY1_PREFERRED}},
     {"node1": 100, "node2": 0}, []),
    ("added affinity and pod has default affinity",
     preferred(AFFINITY1_PREFERRED), [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [pref(3, ("key", "value"))]}},
     {"node1": 40, "node2": 60, "node3": 100}, []),
    ("calculate the priorities correctly even if PreScore is not called",  # runPreScore: true upstream
     preferred(AFFINITY2_PREFERRED), [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)], None,
     {"node1": 18, "node5": 100, "node2": 36}, []),
]


@pytest.mark.parametrize(("affinity", "nodes", "args", "want"),
                         [pytest.param(*r[1:5], id=r[0], marks=r[5]) for r in AFFINITY_PRIORITY_ROWS])
def test_node_affinity_priority(affinity: Obj | None, nodes: list[tuple[str, dict[str, str]]],
                                args: Obj | None, want: dict[str, int] | None):
    # node_affinity_test.go TestNodeAffinityPriority, case `name` = the test id.
    node_objs = [node(name, labels) for name, labels in nodes]
    assert run_scores(AFFINITY, node_objs, bare_pod(affinity=affinity), args=args) == want


def test_node_affinity_priority_prescore_error():
    # node_affinity_test.go TestNodeAffinityPriority "PreScore returns error when an incoming Pod has
    # a broken affinity": wantPreScoreStatus AsStatus(`[0].matchExpressions[0].key: Invalid value:
    # "invalid key": name part must consist of alphanumeric characters, ...`).
    broken = preferred([{"weight": 2, "preference": {"matchExpressions": [
        {"key": "invalid key", "operator": "In", "values": ["bar"]}]}}])
    with pytest.raises(EvaluationError, match=re.escape(
            '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist')):
        run_scores(AFFINITY, [node("node1", LABEL1)], bare_pod(affinity=broken))


# =============================================================================================
# ImageLocality — image_locality_test.go, TestImageLocalityPriority
# =============================================================================================
IMAGES = "ImageLocality"
MB = 1024 * 1024


def image(size_mb: int, *names: str) -> Obj:
    return {"names": list(names), "sizeBytes": size_mb * MB}


NODE_40_300_2000 = [image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
                    image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
                    image(2000, "gcr.io/2000:latest")]
NODE_250_10 = [image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1")]
NODE_600_40_900 = [image(600, "gcr.io/600:latest"), image(40, "gcr.io/40:latest"),
                   image(900, "gcr.io/900:latest")]
NODE_300_600_900 = [image(300, "gcr.io/300:latest"), image(600, "gcr.io/600:latest"),
                    image(900, "gcr.io/900:latest")]
NODE_4000_30 = [image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest")]
NODE_20_30_40 = [image(20, "gcr.io/20:latest"), image(30, "gcr.io/30:latest"),
                 image(40, "gcr.io/40:latest")]
NO_IMAGES: list[Obj] = []


def image_pod(*images: str, init: tuple[str, ...] = ()) -> Obj:
    out = bare_pod(containers=[{"name": f"c{i}", "image": img} for i, img in enumerate(images)])
    if init:
        out["spec"]["initContainers"] = [{"name": f"init{i}", "image": img} for i, img in enumerate(init)]
    return out


IMAGE_ROWS = [
    # (name, pod, [(node, images)], want)
    ("two images spread on two nodes, prefer the larger image one",
     image_pod("gcr.io/40", "gcr.io/250"), [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
     {"node1": 0, "node2": 5}),
    ("two images on one node, prefer this node",
     image_pod("gcr.io/40", "gcr.io/300"), [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
     {"node1": 7, "node2": 0}),
    ("if exceed limit, use limit",
     image_pod("gcr.io/10", "gcr.io/4000"), [("node1", NODE_4000_30), ("node2", NODE_250_10)],
     {"node1": 100, "node2": 0}),
    ("if exceed limit, use limit (with node which has no images present)",
     image_pod("gcr.io/10", "gcr.io/4000"),
     [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NO_IMAGES)],
     {"node1": 66, "node2": 0, "node3": 0}),
    ("pod with multiple large images, node2 is preferred",
     image_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NO_IMAGES)],
     {"node1": 32, "node2": 36, "node3": 0}),
    ("pod with multiple small images",
     image_pod("gcr.io/30", "gcr.io/40"), [("node1", NODE_20_30_40), ("node2", NODE_4000_30)],
     {"node1": 1, "node2": 0}),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     image_pod("gcr.io/30", init=("gcr.io/300",)), [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)],
     {"node1": 6, "node2": 0}),
]


@pytest.mark.parametrize(("incoming", "nodes", "want"), [pytest.param(*r[1:], id=r[0]) for r in IMAGE_ROWS])
def test_image_locality_priority(incoming: Obj, nodes: list[tuple[str, list[Obj]]], want: dict[str, int]):
    # image_locality_test.go TestImageLocalityPriority, case `name` = the test id (makeImageNode).
    node_objs = [node(name, images=images or None) for name, images in nodes]
    assert run_scores(IMAGES, node_objs, incoming) == want


# =============================================================================================
# NodeResourcesBalancedAllocation — balanced_allocation_test.go, TestNodeResourcesBalancedAllocation
# =============================================================================================
BALANCED = "NodeResourcesBalancedAllocation"
GPU = "nvidia.com/gpu"


def make_node(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> Obj:
    """noderesources makeNode(node, milliCPU, memory, extendedResource): allocatable = capacity."""
    alloc = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    alloc.update({k: str(v) for k, v in (extended or {}).items()})
    return node(name, allocatable=alloc)


def spec_pod(node_name: str, *requests: dict[str, str]) -> Obj:
    """A `v1.PodSpec{NodeName, Containers: [{Resources.Requests}...]}` literal."""
    return bare_pod(node_name=node_name, containers=[
        {"name": f"c{i}", "image": "img", "resources": {"requests": dict(r)}}
        for i, r in enumerate(requests)])


def cpu_only(node_name: str = "node1") -> Obj:  # cpuOnly (NodeName node1) / cpuOnly2 (node2)
    return spec_pod(node_name, {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})


def cpu_and_memory() -> Obj:  # cpuAndMemory (NodeName node2)
    return spec_pod("node2", {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


def cpu_and_memory_and_gpu() -> Obj:  # cpuAndMemoryAndGPU (NodeName node1)
    return spec_pod("node1", {"cpu": "1000m", "memory": "2000"},
                    {"cpu": "2000m", "memory": "3000", GPU: "3"})


def incoming_of(p: Obj) -> Obj:
    """The incoming pod `&v1.Pod{Spec: <spec>}`: the spec's NodeName is not read by the scorer, so
    the incoming pod is left unbound."""
    p = dict(p, spec=dict(p["spec"]))
    p["spec"].pop("nodeName", None)
    p["status"] = {"phase": "Pending"}
    return p


#: The release of the stored table. v1.36 (PR #135573) scores the change of balance instead,
#: `50 + (50 + scoreWithPod - scoreWithoutPod) / 2`, so these expectations hold up to v1.35;
#: BALANCED_ROWS_V137 below is the same test at v1.37.2.
BALANCED_VERSION = "1.35"

DEFAULT_SET = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
GPU_SET = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                         {"name": GPU, "weight": 1}]}

BALANCED_ROWS = [
    # (name, incoming pod, nodes, existing pods, args, want)
    ("nothing scheduled, nothing requested, skip in PreScore",  # st.MakePod().Obj(): PreScore Skip
     bare_pod(), [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)], [], DEFAULT_SET,
     None),
    ("nothing scheduled, resources requested, differently sized nodes",
     incoming_of(cpu_and_memory()), [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)],
     [], DEFAULT_SET, {"node1": 87, "node2": 100}),
    ("resources requested, pods scheduled with resources",
     incoming_of(cpu_and_memory()), [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
     [cpu_only(), cpu_and_memory()], DEFAULT_SET, {"node1": 82, "node2": 95}),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     incoming_of(cpu_and_memory()), [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
     [cpu_only(), cpu_and_memory()], DEFAULT_SET, {"node1": 82, "node2": 80}),
    ("requested resources at node capacity",
     incoming_of(cpu_only()), [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
     [cpu_only(), cpu_and_memory()], DEFAULT_SET, {"node1": 50, "node2": 75}),
    ("include scalar resource on a node for balanced resource allocation",
     spec_pod("", {"memory": "0", GPU: "1"}),  # st.MakePod().Req({memory: 0, nvidia.com/gpu: 1})
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000, {GPU: 8})],
     [cpu_and_memory(), cpu_and_memory_and_gpu()], GPU_SET, {"node1": 70, "node2": 65}),
    ("node without the scalar resource should skip the scalar resource",
     incoming_of(cpu_and_memory()),
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000)],
     [], GPU_SET, {"node1": 63, "node2": 63}),
    ("resources requested, pods scheduled with resources if PreScore not called",
     incoming_of(cpu_and_memory()), [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
     [cpu_only(), cpu_and_memory()], DEFAULT_SET, {"node1": 82, "node2": 95}),
]


def cm(cpu: str, memory: str, gpu: str | None = None) -> dict[str, str]:
    """cpuAndMemory / cpuAndMemoryAndGpu of the v1.37 table."""
    return {"cpu": cpu, "memory": memory, **({GPU: gpu} if gpu is not None else {})}


#: The same test at v1.37.2, which scores the pod's effect on the balance (see BALANCED_VERSION).
BALANCED_ROWS_V137 = [
    ("nothing scheduled, nothing requested, skip in PreScore",
     bare_pod(), [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)], [],
     DEFAULT_SET, None),
    ("nothing scheduled, resources requested, differently sized nodes",
     spec_pod("", cm("1000m", "2000"), cm("2000m", "3000")),
     [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)], [], DEFAULT_SET,
     {"node1": 68, "node2": 75}),
    ("resources requested, pods scheduled with resources",
     spec_pod("", cm("1000m", "2000"), cm("2000m", "3000")),
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
     [spec_pod("node1", {"cpu": "1000m"}, {"cpu": "2000m"}),
      spec_pod("node2", cm("1000m", "2000"), cm("2000m", "3000"))], DEFAULT_SET,
     {"node1": 73, "node2": 74}),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     spec_pod("", cm("1000m", "2000"), cm("2000m", "3000")),
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)],
     [spec_pod("node1", {"cpu": "1000m"}, {"cpu": "2000m"}),
      spec_pod("node2", cm("1000m", "2000"), cm("2000m", "3000"))], DEFAULT_SET,
     {"node1": 73, "node2": 70}),
    ("resources requested, pods scheduled with resources, nodes to reach min/max score",
     spec_pod("", {"memory": "2000"}, {"memory": "3000"}),
     [make_node("node1", 3000, 5000), make_node("node2", 3000, 5000)],
     [spec_pod("node1", {"cpu": "1000m"}, {"cpu": "2000m"})], DEFAULT_SET,
     {"node1": 100, "node2": 50}),
    ("requested resources at node capacity",
     spec_pod("", {"cpu": "1000m"}, {"cpu": "2000m"}),
     [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)],
     [spec_pod("node1", {"cpu": "1000m"}, {"cpu": "2000m"}),
      spec_pod("node2", cm("1000m", "2000"), cm("2000m", "3000"))], DEFAULT_SET,
     {"node1": 62, "node2": 62}),
    ("scalar resource is included in the score computation if pod requests the scalar resource",
     spec_pod("", cm("0", "0", "1")),
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000, {GPU: 8})],
     [spec_pod("node1", cm("1000m", "2000"), cm("2000m", "3000", "3")),
      spec_pod("node2", cm("1000m", "2000"), cm("2000m", "3000"))], GPU_SET,
     {"node1": 75, "node2": 76}),
    ("scalar resource is not included in the score computation if pod doesn't request the "
     "scalar resource",
     spec_pod("", cm("1000m", "2000"), cm("2000m", "3000")),
     [make_node("node1", 3500, 40000, {GPU: 8}), make_node("node2", 3500, 40000)], [], GPU_SET,
     {"node1": 56, "node2": 56}),
    ("resources requested, pods scheduled with resources if PreScore not called",
     spec_pod("", cm("1000m", "2000"), cm("2000m", "3000")),
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)],
     [spec_pod("node1", {"cpu": "1000m"}, {"cpu": "2000m"}),
      spec_pod("node2", cm("1000m", "2000"), cm("2000m", "3000"))], DEFAULT_SET,
     {"node1": 73, "node2": 74}),
]


@pytest.mark.parametrize(("incoming", "nodes", "existing", "args", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in BALANCED_ROWS_V137])
def test_node_resources_balanced_allocation_v1_37(incoming: Obj, nodes: list[Obj],
                                                  existing: list[Obj], args: Obj,
                                                  want: dict[str, int] | None):
    # v1.37.2 balanced_allocation_test.go TestNodeResourcesBalancedAllocation, case `name` = the
    # test id (the DRA rows are out of scope, as above); the engine at kubernetesVersion 1.37.
    assert run_scores(BALANCED, nodes, incoming, named(existing), args=args,
                      version="1.37") == want


@pytest.mark.parametrize(("incoming", "nodes", "existing", "args", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in BALANCED_ROWS])
def test_node_resources_balanced_allocation(incoming: Obj, nodes: list[Obj], existing: list[Obj],
                                            args: Obj, want: dict[str, int] | None):
    # balanced_allocation_test.go TestNodeResourcesBalancedAllocation, case `name` = the test id;
    # the table is v1.35's (see BALANCED_VERSION).
    assert run_scores(BALANCED, nodes, incoming, named(existing), args=args,
                      version=BALANCED_VERSION) == want
