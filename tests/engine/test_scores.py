"""Score plugins against the vectors of reference/algorithms.md §B (B.2–B.9) and upstream's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from extender.engine import registry
from extender.engine.args import (
    NEWEST_VERSION,
    InterPodAffinityArgs,
    NoArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
)
from extender.engine.framework import CycleState
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.engine.registry import SCORES as REGISTRY
from extender.engine.runner import extender_scores, run_scores, score_totals
from extender.engine.scores.balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_score,
    effect_score,
)
from extender.engine.scores.image_locality import ImageLocality
from extender.engine.scores.node_affinity import NodeAffinity
from extender.engine.scores.node_resources_fit import (
    NodeResourcesFit,
    broken_linear,
    requested_to_capacity_ratio,
)
from extender.engine.scores.normalize import default_normalize_score, go_div, min_max_normalize
from extender.engine.scores.pod_state import PodState
from extender.engine.scores.taint_toleration import TaintToleration
from extender.model import k8s
from extender.model.disruption import PdbView, PriorityClassView
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

MIB = 1024 * 1024
GPU = "example.com/gpu"


# ---- builders ----------------------------------------------------------------------------

def make_pod(name: str = "p", requests: Sequence[dict[str, str] | None] = ({},), *,
             images: Sequence[str] | None = None, init: Sequence[dict[str, Any]] = (),
             tolerations: Sequence[dict[str, str]] = (),
             preferred: Sequence[tuple[int, dict[str, str]]] = (),
             terminating: bool = False, nominated: str = "") -> PodView:
    """A pod with one container per entry of `requests` (None: no resources at all)."""
    images = images or ["app:1"] * len(requests)
    containers = []
    for i, (req, image) in enumerate(zip(requests, images, strict=True)):
        container: dict[str, Any] = {"name": f"c{i}", "image": image}
        if req is not None:
            container["resources"] = {"requests": dict(req)}
        containers.append(container)
    spec: dict[str, Any] = {"containers": containers, "initContainers": list(init),
                            "tolerations": list(tolerations)}
    if preferred:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": {"matchExpressions": [
                {"key": k, "operator": "In", "values": [v]} for k, v in labels.items()]}}
            for w, labels in preferred]}}
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return PodView.from_k8s(k8s.convert(
        {"metadata": meta, "spec": spec, "status": {"nominatedNodeName": nominated}}, k8s.Pod))


def make_node(name: str = "n", cpu: str = "4", memory: str = "8Gi", *,
              extra: dict[str, str] | None = None, labels: dict[str, str] | None = None,
              taints: Sequence[tuple[str, str, str]] = (),
              images: dict[str, int] | None = None, pods: Sequence[PodView] = ()) -> NodeInfo:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", **(extra or {})}
    node = {
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels or {}},
        "spec": {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]},
        "status": {"allocatable": allocatable,
                   "images": [{"names": [n], "sizeBytes": s} for n, s in (images or {}).items()]},
    }
    return NodeInfo(NodeView.from_k8s(k8s.convert(node, k8s.Node)), list(pods))


class Ctx:
    """A ClusterContext over given nodes, plus nodes the candidates do not show."""

    def __init__(self, nodes: Sequence[NodeInfo] = (), total: int | None = None,
                 image_nodes: dict[str, int] | None = None,
                 nominated: dict[str, Sequence[PodView]] | None = None) -> None:
        self.total = len(nodes) if total is None else total
        self.images = Counter(name for n in nodes for name in n.node.images)
        self.images.update(image_nodes or {})
        self.nominated = nominated or {}

    def node_count(self) -> int:
        return self.total

    def image_node_count(self, image: str) -> int:
        return self.images.get(image, 0)

    def nominated_pods(self, node_name: str) -> Sequence[PodView]:
        return self.nominated.get(node_name, ())

    def pdb_list(self) -> Sequence[PdbView]:
        return ()

    def priority_class(self, name: str) -> PriorityClassView | None:
        return None


def fit(kind: str, resources: Sequence[tuple[str, int]] = (("cpu", 1), ("memory", 1)),
        shape: Sequence[tuple[int, int]] = ()) -> NodeResourcesFit:
    strategy: dict[str, Any] = {"type": kind,
                                "resources": [{"name": n, "weight": w} for n, w in resources]}
    if shape:
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": s} for u, s in shape]}
    return NodeResourcesFit(NodeResourcesFitArgs.model_validate({"scoringStrategy": strategy}))


def balanced(*names: str, version: tuple[int, int] = (1, 35)) -> NodeResourcesBalancedAllocation:
    """The plugin as of `version`: up to v1.35 it scores the balance with the pod, which the
    vectors below compute; from v1.36 the pod's effect on it (`test_balanced_effect_*`)."""
    args = NodeResourcesBalancedAllocationArgs.model_validate(
        {"resources": [{"name": n} for n in names]} if names else {})
    return NodeResourcesBalancedAllocation(args, version)


def scores(plugin: Any, pod: PodView, nodes: Sequence[NodeInfo], ctx: Ctx | None = None) -> Any:
    return plugin.score(CycleState(), pod, nodes, ctx or Ctx(nodes))


# The B.9 setting: allocatable 4000m / 8Gi, 1000m / 2Gi already requested, pod 500m / 1Gi.
B9_POD = make_pod("b9", [{"cpu": "500m", "memory": "1Gi"}])


def b9_node() -> NodeInfo:
    return make_node(pods=[make_pod("existing", [{"cpu": "1", "memory": "2Gi"}])])


# ---- normalisation and Go arithmetic ------------------------------------------------------

def test_go_div_truncates_toward_zero():
    assert go_div(-100, 3) == -33 and -100 // 3 == -34
    assert go_div(100, 3) == 33 and go_div(-99, 3) == -33 and go_div(7, -2) == -3


@pytest.mark.parametrize(("raw", "reverse", "expected"), [
    ([0, 1, 2], True, [100, 50, 0]),
    ([0, 1, 3], True, [100, 67, 0]),
    ([0, 0, 0], True, [100, 100, 100]),
    ([0, 0, 0], False, [0, 0, 0]),
    ([100, 80, 20], False, [100, 80, 20]),
    ([3, 1, 0], False, [100, 33, 0]),
    ([], True, []),
])
def test_default_normalize_score(raw, reverse, expected):
    assert default_normalize_score(100, reverse, list(raw)) == expected


def test_min_max_normalize():
    assert min_max_normalize([5, 2, 1, -1]) == [100, 50, 33, 0]
    assert min_max_normalize([4, 4]) == [0, 0]
    assert min_max_normalize([]) == []


# ---- NodeResourcesFit (B.2, B.9) ----------------------------------------------------------

@pytest.mark.parametrize(("kind", "shape", "expected"), [
    ("LeastAllocated", (), 62),
    ("MostAllocated", (), 37),
    ("RequestedToCapacityRatio", ((0, 0), (100, 10)), 37),
    ("RequestedToCapacityRatio", ((0, 10), (100, 0)), 63),
])
def test_fit_strategies_b9(kind, shape, expected):
    assert scores(fit(kind, shape=shape), B9_POD, [b9_node()]) == [expected]


def test_broken_linear_b9_vector():
    shape = [(0, 0), (50, 100), (100, 20)]  # [(0,0),(50,10),(100,2)] scaled ×10
    assert [broken_linear(shape, p) for p in (0, 25, 37, 50, 75, 100)] == [0, 50, 74, 100, 60, 20]
    assert broken_linear(shape, 101) == 20 and broken_linear(shape, -5) == 0


def test_broken_linear_truncates_on_downward_slopes():
    # (10 − 0)×10 over 3 points: at 1, 100 + (−100 × 1) / 3 = 100 − 33 in Go (not − 34).
    assert broken_linear([(0, 100), (3, 0)], 1) == 67
    assert broken_linear([(0, 100), (3, 0)], 2) == 34


def test_rtcr_vector_through_the_plugin():
    # Utilisation 0, 25, 37, 50, 75, 100 of cpu alone gives the B.9 row.
    plugin = fit("RequestedToCapacityRatio", [("cpu", 1)], ((0, 0), (50, 10), (100, 2)))
    nodes = [make_node(f"n{p}", cpu="1000m") for p in (25, 37, 50, 75, 100)]
    got = [scores(plugin, make_pod(requests=[{"cpu": f"{p * 10}m"}]), [node])[0]
           for p, node in zip((25, 37, 50, 75, 100), nodes, strict=True)]
    assert got == [50, 74, 100, 60, 20]
    # Utilisation 0 scores 0, and a resource scoring 0 is not counted: no resource → 0.
    assert scores(plugin, make_pod(requests=[{"cpu": "0"}]), [make_node()]) == [0]


def test_rtcr_only_positive_resources_count():
    plugin = fit("RequestedToCapacityRatio", shape=((0, 0), (100, 10)))
    pod = make_pod(requests=[{"cpu": "0", "memory": "500"}])  # explicit 0 stays 0 (B.1)
    node = make_node(cpu="1", memory="1000")
    assert scores(plugin, pod, [node]) == [50]  # cpu scores 0 and is ignored, not averaged


def test_rtcr_rounds_half_away_from_zero():
    plugin = fit("RequestedToCapacityRatio", shape=((0, 0), (100, 10)))
    pod = make_pod(requests=[{"cpu": "620m", "memory": "630"}])
    node = make_node(cpu="1", memory="1000")
    assert scores(plugin, pod, [node]) == [63]  # (62 + 63) / 2 = 62.5; Python's round → 62


def test_rtcr_overcommitted_resource_scores_the_shape_at_100():
    plugin = fit("RequestedToCapacityRatio", [("cpu", 1)], ((0, 10), (100, 2)))
    assert scores(plugin, make_pod(requests=[{"cpu": "5"}]), [make_node(cpu="4")]) == [20]


def test_requested_to_capacity_ratio_column_scorer():
    score = requested_to_capacity_ratio([(0, 0), (100, 100)])
    assert score([4000, 4000, 0, 100], [1500, 5000, 10, -10]) == [37, 100, 0, 0]


def test_overcommit_least_zero_most_clamped():
    pod = make_pod(requests=[{"cpu": "5", "memory": "4Gi"}])
    node = make_node(cpu="4", memory="8Gi")
    assert scores(fit("LeastAllocated"), pod, [node]) == [(0 + 50) // 2]
    assert scores(fit("MostAllocated"), pod, [node]) == [(100 + 50) // 2]


def test_fit_uses_non_zero_defaults_for_cpu_and_memory():
    # No requests: 100m and 200Mi per container, for the pod and for pods already there.
    node = make_node(cpu="1", memory="2000Mi", pods=[make_pod("old", [None])])
    pod = make_pod(requests=[None, None])
    # cpu (1000 − 300) × 100 / 1000 = 70, memory (2000 − 600) / 2000 → 70.
    assert scores(fit("LeastAllocated"), pod, [node]) == [70]
    assert scores(fit("MostAllocated"), pod, [node]) == [30]
    # An explicit 0 is kept: cpu 0 + 100 (old pod) → 90, memory 0 + 200 → 90.
    explicit = make_pod(requests=[{"cpu": "0", "memory": "0"}])
    assert scores(fit("LeastAllocated"), explicit, [node]) == [90]


def test_fit_weights():
    plugin = fit("LeastAllocated", [("cpu", 3), ("memory", 1)])
    pod = make_pod(requests=[{"cpu": "1", "memory": "6Gi"}])
    assert scores(plugin, pod, [make_node()]) == [(75 * 3 + 25 * 1) // 4]


def test_fit_scalar_resources():
    resources = [("cpu", 1), ("memory", 1), (GPU, 2)]
    plugin = fit("LeastAllocated", resources)
    with_gpu = make_node("gpu", extra={GPU: "4"},
                         pods=[make_pod("user", [{"cpu": "1", "memory": "2Gi", GPU: "1"}])])
    without_gpu = make_node("plain", pods=[make_pod("user2", [{"cpu": "1", "memory": "2Gi"}])])
    # A pod that does not request the gpu skips it everywhere: cpu 62, memory 62.
    assert scores(plugin, B9_POD, [with_gpu, without_gpu]) == [62, 62]
    # Requested: gpu (4 − 2) × 100 / 4 = 50 on the gpu node, skipped where allocatable is 0.
    pod = make_pod(requests=[{"cpu": "500m", "memory": "1Gi", GPU: "1"}])
    assert scores(plugin, pod, [with_gpu, without_gpu]) == [(62 + 62 + 50 * 2) // 4, 62]


def test_fit_ephemeral_storage_uses_real_requests_and_unknown_names_are_skipped():
    plugin = fit("MostAllocated", [("ephemeral-storage", 1), ("pods", 5), ("bogus", 1)])
    node = make_node(extra={"ephemeral-storage": "100Gi"},
                     pods=[make_pod("old", [{"ephemeral-storage": "10Gi"}])])
    pod = make_pod(requests=[{"ephemeral-storage": "15Gi"}])
    assert scores(plugin, pod, [node]) == [25]
    assert scores(plugin, pod, [make_node()]) == [0]  # allocatable 0: nothing counted


# ---- NodeResourcesBalancedAllocation (B.3, B.9) -------------------------------------------

def test_balanced_b9():
    assert scores(balanced(), B9_POD, [b9_node()]) == [100]


@pytest.mark.parametrize(("fractions", "expected"), [
    ((0.375, 0.375), 100),
    ((0.5, 0.25), 87),
    ((0.9, 0.1), 60),
    ((0.2, 0.5, 0.8), 75),
    ((0.3,), 100),
    ((), 100),
])
def test_balanced_score_vectors(fractions, expected):
    assert balanced_score(fractions) == expected


def test_balanced_through_the_plugin():
    plugin = balanced("cpu", "memory", GPU)
    node = make_node(memory="4Gi", extra={GPU: "10"})
    two = make_pod(requests=[{"cpu": "2", "memory": "1Gi"}])  # .5 / .25, gpu not requested
    three = make_pod(requests=[{"cpu": "800m", "memory": "2Gi", GPU: "8"}])  # .2 / .5 / .8
    assert scores(plugin, two, [node]) == [87]
    assert scores(plugin, three, [node, make_node("nogpu", memory="4Gi")]) == [75, 85]


def test_balanced_caps_fractions_and_uses_real_requests():
    node = make_node(cpu="1", memory="1Gi", pods=[make_pod("old", [None])])  # no real requests
    pod = make_pod(requests=[{"cpu": "2", "memory": "512Mi"}])  # cpu 2.0 → 1.0, memory .5
    assert scores(balanced(), pod, [node]) == [75]


def test_balanced_skips_pods_requesting_none_of_the_resources():
    assert scores(balanced(), make_pod(requests=[None]), [make_node()]) is None
    assert scores(balanced(GPU), B9_POD, [make_node()]) is None
    assert scores(balanced(), make_pod(requests=[{"cpu": "1"}]), [make_node()]) == [int((1 - 0.125) * 100)]


@pytest.mark.parametrize(("with_pod", "without_pod", "expected"), [
    (100, 100, 75),  # no change: the middle of 50..100
    (100, 50, 100),  # the pod evens the node out completely
    (50, 100, 50),  # the pod tilts a balanced node all the way
    (87, 100, 68),  # 50 + (50 + 87 - 100) / 2 = 50 + 37 / 2, truncated
    (88, 75, 81),
])
def test_balanced_effect_vectors(with_pod, without_pod, expected):
    assert effect_score(with_pod, without_pod) == expected


def test_balanced_effect_through_the_plugin_from_v1_36():
    node = make_node(memory="4Gi", extra={GPU: "10"})
    two = make_pod(requests=[{"cpu": "2", "memory": "1Gi"}])  # .5 / .25 after, 0 / 0 before
    for version in ((1, 36), (1, 37)):
        assert scores(balanced("cpu", "memory", GPU, version=version), two, [node]) == [68]
        assert scores(balanced(version=version), two, [node]) == [68]
    assert scores(balanced("cpu", "memory", GPU), two, [node]) == [87]  # v1.35
    # A node already tilted towards cpu: a memory-heavy pod evens it out.
    tilted = make_node(cpu="4", memory="4Gi", pods=[make_pod("cpu-heavy", [{"cpu": "2"}])])
    memory_heavy = make_pod(requests=[{"memory": "2Gi"}])  # .5 / 0 before, .5 / .5 after
    assert scores(balanced(version=(1, 37)), memory_heavy, [tilted]) == [50 + (50 + 100 - 75) // 2]


# ---- ImageLocality (B.4) ------------------------------------------------------------------

def test_image_locality_vectors():
    nodes = [make_node("has", images={"repo/big:1": 500 * MIB}), make_node("none")]
    ctx = Ctx(nodes, total=10, image_nodes={"repo/big:1": 2})  # 3 of 10 nodes hold it
    assert scores(ImageLocality(), make_pod(images=["repo/big:1"]), nodes, ctx) == [12, 0]
    two = make_pod(requests=[{}, {}], images=["repo/big:1", "repo/big:1"])
    assert scores(ImageLocality(), two, nodes, ctx) == [14, 0]


def test_image_locality_counts_init_containers_and_normalises_names():
    node = make_node(images={"nginx:latest": 800 * MIB, "busybox:1.36": 300 * MIB})
    pod = make_pod(images=["nginx"], init=[{"name": "i", "image": "busybox:1.36"}])
    # Both held by the only node: 1100 MiB over [23, 2000] MiB → 100 × 1077 / 1977 = 54.
    assert scores(ImageLocality(), pod, [node]) == [54]
    # Exact match after normalisation only: a registry-qualified name is another image.
    other = make_pod(images=["docker.io/library/nginx"])
    assert scores(ImageLocality(), other, [node]) == [0]


def test_image_locality_thresholds():
    small = make_node(images={"tiny:1": 23 * MIB})
    huge = make_node("huge", images={"tiny:1": 5000 * MIB})
    ctx = Ctx([small, huge], total=2, image_nodes={"tiny:1": 0})  # 2 of 2 nodes
    assert scores(ImageLocality(), make_pod(images=["tiny:1"]), [small, huge], ctx) == [0, 100]


# ---- TaintToleration (B.5) ----------------------------------------------------------------

def test_taint_toleration_vectors():
    soft = "PreferNoSchedule"
    nodes = [make_node("zero"), make_node("one", taints=[("a", "1", soft)]),
             make_node("two", taints=[("a", "1", soft), ("b", "", soft), ("c", "", "NoSchedule")])]
    pod = make_pod()
    assert scores(TaintToleration(), pod, nodes) == [100, 50, 0]
    nodes.append(make_node("three", taints=[("a", "1", soft), ("b", "", soft), ("d", "", soft)]))
    assert scores(TaintToleration(), pod, nodes) == [100, 67, 34, 0]
    assert scores(TaintToleration(), pod, [make_node("x"), make_node("y")]) == [100, 100]


def test_taint_toleration_counts_only_matching_effects():
    soft = "PreferNoSchedule"
    nodes = [make_node("soft", taints=[("a", "1", soft)]), make_node("clean")]
    hard_only = make_pod(tolerations=[{"key": "a", "operator": "Exists", "effect": "NoSchedule"}])
    any_effect = make_pod(tolerations=[{"key": "a", "operator": "Equal", "value": "1"}])
    assert scores(TaintToleration(), hard_only, nodes) == [0, 100]
    assert scores(TaintToleration(), any_effect, nodes) == [100, 100]


# ---- NodeAffinity (B.6) -------------------------------------------------------------------

def test_node_affinity_vector():
    pod = make_pod(preferred=[(80, {"zone": "a"}), (20, {"disk": "ssd"})])
    nodes = [make_node("both", labels={"zone": "a", "disk": "ssd"}),
             make_node("zone", labels={"zone": "a"}), make_node("disk", labels={"disk": "ssd"}),
             make_node("neither")]
    assert scores(NodeAffinity(), pod, nodes) == [100, 80, 20, 0]
    assert scores(NodeAffinity(), pod, nodes[1:]) == [100, 25, 0]  # normalised to the best
    assert scores(NodeAffinity(), pod, nodes[3:]) == [0]


def test_node_affinity_skips_pods_without_preferences():
    assert scores(NodeAffinity(), make_pod(), [make_node()]) is None


# ---- PodState (scheduler-plugins pkg/podstate, its test vectors) ---------------------------

def pod_state_case(counts: Sequence[tuple[int, int]]) -> list[int]:
    nodes, nominated = [], {}
    for i, (terminating, nominations) in enumerate(counts):
        name = f"node{i}"
        pods = [make_pod(f"t{i}-{j}", terminating=True) for j in range(terminating)]
        pods += [make_pod(f"r{i}-{j}") for j in range(3)]
        nodes.append(make_node(name, pods=pods))
        nominated[name] = [make_pod(f"n{i}-{j}", nominated=name) for j in range(nominations)]
    return scores(PodState(), make_pod(), nodes, Ctx(nodes, nominated=nominated))


@pytest.mark.parametrize(("counts", "expected"), [
    ([(6, 0), (3, 0), (0, 0)], [100, 50, 0]),
    ([(0, 2), (0, 1), (0, 0)], [0, 50, 100]),
    ([(5, 2), (3, 1)], [100, 0]),
    ([(5, 4), (3, 1)], [0, 100]),
    ([(5, 0), (3, 1), (2, 1), (0, 1)], [100, 50, 33, 0]),
    ([(1, 1), (0, 0)], [0, 0]),
])
def test_pod_state_vectors(counts, expected):
    assert pod_state_case(counts) == expected


# ---- registry and the mixed policy --------------------------------------------------------

def test_registry_entries_and_args():
    from extender.engine.plugins.network_aware import NetworkOverheadArgs
    from extender.engine.plugins.node_resources_allocatable import NodeResourcesAllocatableArgs

    # Every scorer named here has these arguments (scheduler-plugins' others are checked in
    # their own tests).
    expected = {
        "NodeResourcesFit": NodeResourcesFitArgs,
        "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
        "ImageLocality": NoArgs, "TaintToleration": NoArgs, "NodeAffinity": NodeAffinityArgs,
        "PodState": NoArgs, "PodTopologySpread": PodTopologySpreadArgs,
        "InterPodAffinity": InterPodAffinityArgs,
        "NodeResourcesAllocatable": NodeResourcesAllocatableArgs,
        "NetworkOverhead": NetworkOverheadArgs,
    }
    assert {name: REGISTRY[name].args_model for name in expected} == expected
    for name, spec in REGISTRY.items():
        plugin = registry.factory("score", name)(spec.args_model.model_validate({}),
                                                 NEWEST_VERSION)
        assert plugin.name == name
        assert registry.PLUGINS[name] is spec


def test_rtcr_needs_a_shape():
    with pytest.raises(ValueError, match="shape is required"):
        fit("RequestedToCapacityRatio")


MIXED_POLICY = {
    "apiVersion": "scheduler-extender/v1",
    "kind": "ExtenderPolicy",
    "plugins": {"score": {
        "enabled": [{"name": "TaintToleration", "weight": 3}, {"name": "NodeAffinity", "weight": 2},
                    {"name": "NodeResourcesFit", "weight": 1}, {"name": "PodState", "weight": 1}],
    }},
    "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                {"name": "memory", "weight": 1}]}}}],
}


def mixed_setting() -> tuple[PodView, list[NodeInfo]]:
    pod = make_pod(requests=[{"cpu": "1", "memory": "1Gi"}], preferred=[(10, {"zone": "a"})])
    tainted = make_node("a", labels={"zone": "a"}, taints=[("spot", "", "PreferNoSchedule")])
    busy = make_node("b", labels={"zone": "b"},
                     pods=[make_pod("old", [{"cpu": "2", "memory": "4Gi"}])])
    return pod, [tainted, busy]


def test_policy_mixing_scorers_gives_the_weighted_combination():
    pod, nodes = mixed_setting()
    profile = build_profile(parse_policy(MIXED_POLICY))
    results = run_scores(profile, pod, nodes, Ctx(nodes))
    # TaintToleration: 1 and 0 untolerated soft taints → 0, 100. NodeAffinity: 10, 0 → 100, 0.
    # Fit: a: cpu 75, memory 87 → 81; b: cpu 25, memory 37 → 31. PodState: all equal → 0, 0.
    assert [(r.name, r.weight, r.scores) for r in results] == [
        ("TaintToleration", 3, [0, 100]), ("NodeAffinity", 2, [100, 0]),
        ("NodeResourcesFit", 1, [81, 31]), ("PodState", 1, [0, 0])]
    assert score_totals(results, 2) == [0 * 3 + 100 * 2 + 81 + 0, 100 * 3 + 0 + 31 + 0]
    # Wire: Σ wᵢsᵢ / Σ wᵢ over 3 + 2 + 1 + 1 = 7, half up to a tenth: 40.1 → 4, 47.3 → 5.
    assert extender_scores(results, 2) == [4, 5]


def test_a_skipping_scorer_is_left_out_of_the_combination():
    _, nodes = mixed_setting()
    no_preference = make_pod(requests=[{"cpu": "1", "memory": "1Gi"}])
    profile = build_profile(parse_policy(MIXED_POLICY))
    results = run_scores(profile, no_preference, nodes, Ctx(nodes))
    assert [r.name for r in results] == ["TaintToleration", "NodeResourcesFit", "PodState"]
    # Weights 3 + 1 + 1: (0·3 + 81 + 0) / 5 = 16.2 → 2; (100·3 + 31 + 0) / 5 = 66.2 → 7.
    assert extender_scores(results, 2) == [2, 7]
