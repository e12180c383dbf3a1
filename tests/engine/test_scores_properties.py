"""Score bounds as properties: every scorer gives one int in [0, 100] per node, or skips."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.engine.args import (
    NEWEST_VERSION,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
)
from extender.engine.cluster import ClusterState
from extender.engine.framework import CycleState
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.registry import SCORES, factory
from extender.engine.scores.balanced_allocation import NodeResourcesBalancedAllocation
from extender.engine.scores.node_resources_fit import NodeResourcesFit, broken_linear
from extender.model import k8s
from extender.model.disruption import PdbView, PriorityClassView
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from tests.seeded import Draws, seeded

GPU = "example.com/gpu"
IMAGES = ["nginx", "nginx:1.27", "repo/app:2", "registry:5000/tool", "busybox:latest"]
LABELS = {"zone": ["a", "b"], "disk": ["ssd", "hdd"]}
EFFECTS = ["PreferNoSchedule", "NoSchedule", "NoExecute"]
RESOURCE_NAMES = ["cpu", "memory", "ephemeral-storage", GPU, "pods"]

#: The amounts' ranges (cpu in millicores), as a node's allocatable or a container's request.
QUANTITIES = {"cpu": (64_000, "{}m"), "memory": (2**40, "{}"), "ephemeral-storage": (2**41, "{}"),
              GPU: (8, "{}")}


def quantity(d: Draws, name: str) -> str:
    high, form = QUANTITIES[name]
    return form.format(d.integer(0, high))


def requests(d: Draws) -> dict[str, str] | None:
    names = d.some(sorted(QUANTITIES), 4, unique=True)
    if not names and d.boolean():
        return None
    return {name: quantity(d, name) for name in names}


def container(req: dict[str, str] | None, image: str, i: int) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f"c{i}", "image": image}
    if req is not None:
        out["resources"] = {"requests": req}
    return out


def toleration(d: Draws) -> dict[str, str]:
    return {"key": d.choice(["", "a", "b"]), "operator": d.choice(["Exists", "Equal"]),
            "value": d.choice(["", "1"]), "effect": d.choice(["", *EFFECTS])}


def pod_view(d: Draws, name: str, node_name: str = "") -> PodView:
    regular = [(requests(d), d.choice(IMAGES)) for _ in range(d.integer(0, 3))]
    init = [(requests(d), d.choice(IMAGES)) for _ in range(d.integer(0, 2))]
    spec: dict[str, Any] = {
        "nodeName": node_name,
        "containers": [container(r, img, i) for i, (r, img) in enumerate(regular)],
        "initContainers": [container(r, img, i) for i, (r, img) in enumerate(init)],
        "tolerations": [toleration(d) for _ in range(d.integer(0, 3))],
    }
    prefs = [(d.integer(1, 100), d.choice(sorted(LABELS)), d.choice(["a", "b", "ssd", "hdd"]))
             for _ in range(d.integer(0, 3))]
    if prefs:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": {"matchExpressions": [
                {"key": k, "operator": "In", "values": [v]}]}} for w, k, v in prefs]}}
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    if d.boolean():
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return PodView.from_k8s(k8s.convert({"metadata": meta, "spec": spec}, k8s.Pod))


@st.composite
def pods(draw: st.DrawFn, name: str, node_name: str = "") -> PodView:
    return pod_view(seeded(draw), name, node_name)


def node_info(d: Draws, name: str) -> NodeInfo:
    allocatable = {res: quantity(d, res) for res in QUANTITIES if d.boolean()}
    taints = [(d.choice(["a", "b", "c"]), d.choice(["", "1"]), d.choice(EFFECTS))
              for _ in range(d.integer(0, 3))]
    images = {d.choice(IMAGES): d.integer(0, 4 * 2**30) for _ in range(d.integer(0, 3))}
    labels = {key: d.choice(values) for key, values in LABELS.items() if d.boolean()}
    node = {
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": [{"key": k, "value": v, "effect": e} for k, v, e in taints]},
        "status": {"allocatable": allocatable,
                   "images": [{"names": [n], "sizeBytes": s} for n, s in images.items()]},
    }
    view = NodeView.from_k8s(k8s.convert(node, k8s.Node))
    placed = [pod_view(d, f"{name}-p{i}", name) for i in range(d.integer(0, 2))]
    return NodeInfo(view, placed)


class Ctx:
    """The part of `ClusterContext` the node-local scorers read; no load metrics (the
    Trimaran scorers find an empty store)."""

    def __init__(self, infos: Sequence[NodeInfo], extra_nodes: int, nominated: dict[str, int]):
        self.trimaran = TrimaranStore(ClusterState())
        self.total = len(infos) + extra_nodes
        self.images = Counter(n for info in infos for n in info.node.images)
        self.nominated = nominated

    def node_count(self) -> int:
        return self.total

    def store(self, cls: type) -> object:
        assert cls is TrimaranStore, cls
        return self.trimaran

    def image_node_count(self, image: str) -> int:
        return self.images.get(image, 0)

    def nominated_pods(self, node_name: str) -> Sequence[PodView]:
        return [None] * self.nominated.get(node_name, 0)  # type: ignore[list-item]

    def pdb_list(self) -> Sequence[PdbView]:
        return ()

    def priority_class(self, name: str) -> PriorityClassView | None:
        return None


@st.composite
def clusters(draw: st.DrawFn) -> tuple[PodView, list[NodeInfo], Ctx]:
    """The incoming pod, 0–5 nodes (Hypothesis's draw: it shrinks) with their pods, and the
    context; the objects' fields from `tests.seeded`."""
    count = draw(st.integers(0, 5))
    d = seeded(draw)
    infos = [node_info(d, f"n{i}") for i in range(count)]
    nominated = {info.name: d.integer(0, 3) for info in infos}
    ctx = Ctx(infos, d.integer(0, 5), nominated)
    return pod_view(d, "incoming"), infos, ctx


shapes = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 10)), min_size=1, max_size=5,
                  unique_by=lambda p: p[0]).map(sorted)
weighted_resources = st.lists(st.tuples(st.sampled_from(RESOURCE_NAMES), st.integers(0, 100)),
                              min_size=1, max_size=5, unique_by=lambda r: r[0])


@st.composite
def fit_plugins(draw: st.DrawFn) -> NodeResourcesFit:
    kind = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    strategy: dict[str, Any] = {"type": kind, "resources": [
        {"name": n, "weight": w} for n, w in draw(weighted_resources)]}
    if kind == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {"shape": [
            {"utilization": u, "score": s} for u, s in draw(shapes)]}
    return NodeResourcesFit(NodeResourcesFitArgs.model_validate({"scoringStrategy": strategy}))


# The node-local scorers, which this module's light cluster context serves; the cross-node
# ones (PodTopologySpread, InterPodAffinity) count pods over a real ClusterState in their own tests.
REGISTRY = {name: record for name, record in SCORES.items()
            if name not in ("PodTopologySpread", "InterPodAffinity")}


@st.composite
def plugins(draw: st.DrawFn) -> Any:
    choice = draw(st.sampled_from([*REGISTRY, "fit", "balanced"]))
    if choice == "fit":
        return draw(fit_plugins())
    if choice == "balanced":
        names = draw(weighted_resources)
        return NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs.model_validate(
            {"resources": [{"name": n, "weight": w} for n, w in names]}))
    spec = REGISTRY[choice]
    return factory("score", choice)(spec.args_model.model_validate({}), NEWEST_VERSION)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(plugins(), clusters())
def test_every_scorer_returns_ints_in_0_100_per_node(plugin, cluster):
    pod, infos, ctx = cluster
    result = plugin.score(CycleState(), pod, infos, ctx)
    if result is None:  # PreScore Skip
        assert plugin.name in ("NodeResourcesBalancedAllocation", "NodeAffinity")
        return
    assert len(result) == len(infos)
    assert all(type(s) is int and 0 <= s <= 100 for s in result), result


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(plugins(), clusters())
def test_scoring_is_per_request_and_independent_of_node_order(plugin, cluster):
    pod, infos, ctx = cluster
    forward = plugin.score(CycleState(), pod, infos, ctx)
    backward = plugin.score(CycleState(), pod, infos[::-1], ctx)
    again = plugin.score(CycleState(), pod, infos, ctx)
    assert forward == again  # no state carried between requests
    if forward is not None:
        assert backward == forward[::-1]


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(plugins(), clusters(), st.booleans())
def test_score_is_normalize_of_raw_scores(plugin, cluster, raw_first):
    """`score` is `normalize(raw_scores(...))`: the Score/NormalizeScore split `explain` shows
    gives the verbs' answer, with the node-view memos cold or warm."""
    pod, infos, ctx = cluster
    if not raw_first:
        expected = plugin.score(CycleState(), pod, infos, ctx)
    state = CycleState()
    raw = plugin.raw_scores(state, pod, infos, ctx)
    if raw_first:
        expected = plugin.score(CycleState(), pod, infos, ctx)
    if expected is None:
        assert raw is None
        return
    assert raw is not None and len(raw) == len(infos)
    assert all(type(s) is int for s in raw), raw
    assert plugin.normalize(list(raw), state) == expected


@given(shapes, st.integers(-50, 200))
def test_broken_linear_stays_within_the_shape(shape, p):
    scaled = [(u, s * 10) for u, s in shape]
    value = broken_linear(scaled, p)
    assert min(s for _, s in scaled) <= value <= max(s for _, s in scaled)
