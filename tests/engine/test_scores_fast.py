"""The scorers' fast paths against straightforward reference implementations.

Per-node-view memos (NodeAffinity, TaintToleration, ImageLocality), the fused cpu-and-memory
passes with their load-checked memos (NodeResourcesFit, NodeResourcesBalancedAllocation), the
runner's combination and the prioritize reply must give exactly what the plain computations
give (the column path, for the resource scorers): on cold and warm memos, with several pods
sharing the node views, and after a node's load changes under a memoised score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extender import wire
from extender.api.candidates import Candidates
from extender.api.prioritize import host_priorities
from extender.engine.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from extender.engine.framework import CycleState, unschedulable
from extender.engine.runner import PluginScores, extender_scores, score_totals
from extender.engine.scores.balanced_allocation import NodeResourcesBalancedAllocation
from extender.engine.scores.image_locality import (
    ImageLocality,
    calculate_priorities,
    spread,
)
from extender.engine.scores.node_affinity import NodeAffinity
from extender.engine.scores.node_resources_fit import NodeResourcesFit
from extender.engine.scores.taint_toleration import TaintToleration
from extender.model.node import normalized_image_name
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.model.taints import PREFER_NO_SCHEDULE
from tests.engine.test_scores import make_node, make_pod
from tests.engine.test_scores_properties import Ctx, clusters, pods

# ---- reference implementations: one node at a time, no caches ---------------------------


def normalized(raw: list[int], reverse: bool) -> list[int]:
    highest = max(raw, default=0)
    if highest <= 0:
        return [100 if reverse else 0 for _ in raw]
    return [100 - 100 * s // highest if reverse else 100 * s // highest for s in raw]


def reference_node_affinity(pod: PodView, nodes: Sequence[NodeInfo]) -> list[int] | None:
    if not pod.preferred_affinity:
        return None
    raw = [sum(weight for weight, term in pod.preferred_affinity
               if term.matches(n.node.labels, n.node.name)) for n in nodes]
    return normalized(raw, reverse=False)


def reference_taint_toleration(pod: PodView, nodes: Sequence[NodeInfo]) -> list[int]:
    tolerations = [t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE)]
    raw = [sum(1 for taint in n.node.taints if taint.effect == PREFER_NO_SCHEDULE
               and not any(t.tolerates(taint) for t in tolerations)) for n in nodes]
    return normalized(raw, reverse=True)


def reference_image_locality(pod: PodView, nodes: Sequence[NodeInfo], ctx: Ctx) -> list[int]:
    total = max(ctx.node_count(), 1)
    counts = Counter(normalized_image_name(i) for i in pod.images)
    sums = []
    for node in nodes:
        s = 0
        for name, count in counts.items():
            size = node.node.images.get(name)
            if size is not None:
                share = spread(min(max(ctx.image_node_count(name), 1), total), total)
                s += int(size * share) * count
        sums.append(s)
    return calculate_priorities(sums, pod.num_containers)


def column_path(plugin: Any) -> Any:
    """The same plugin with its fused cpu-and-memory pass turned off."""
    if isinstance(plugin, NodeResourcesFit):
        plugin.score_pair = None
    else:
        plugin.cpu_memory = False
    return plugin


# ---- memoised scorers ------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(clusters(), st.lists(pods("other"), max_size=3), st.data())
def test_memoised_scorers_match_the_reference_cold_and_warm(cluster, others, data):
    pod, infos, ctx = cluster
    incoming = [pod, *others]
    # Score the pods in a random order, twice: later rounds read memos other pods left.
    order = data.draw(st.lists(st.sampled_from(incoming), min_size=1, max_size=8))
    for p in [*incoming, *order]:
        assert NodeAffinity().score(CycleState(), p, infos, ctx) == reference_node_affinity(p, infos)
        assert TaintToleration().score(CycleState(), p, infos, ctx) == reference_taint_toleration(p, infos)
        assert ImageLocality().score(CycleState(), p, infos, ctx) == reference_image_locality(p, infos, ctx)


@settings(max_examples=60, deadline=None)
@given(clusters(), st.integers(0, 20))
def test_image_locality_follows_the_cluster_wide_counts_with_a_warm_memo(cluster, extra):
    pod, infos, ctx = cluster
    ImageLocality().score(CycleState(), pod, infos, ctx)  # warm the memos
    ctx.total += extra  # the cluster grows: the shares change, the memoised sizes do not
    for name in ctx.images:
        ctx.images[name] += extra // 2
    assert ImageLocality().score(CycleState(), pod, infos, ctx) == reference_image_locality(pod, infos, ctx)


# ---- fused resource passes ----------------------------------------------------------------

cpu_memory_weights = st.tuples(st.integers(0, 100), st.integers(0, 100))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(clusters(), cpu_memory_weights,
       st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
def test_fused_fit_matches_the_column_path(cluster, weights, kind):
    pod, infos, ctx = cluster
    strategy: dict[str, Any] = {"type": kind, "resources": [
        {"name": "cpu", "weight": weights[0]}, {"name": "memory", "weight": weights[1]}]}
    if kind == "RequestedToCapacityRatio":
        strategy["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 10},
                                                          {"utilization": 100, "score": 0}]}
    args = NodeResourcesFitArgs.model_validate({"scoringStrategy": strategy})
    fused = NodeResourcesFit(args)
    assert fused.score(CycleState(), pod, infos, ctx) == column_path(NodeResourcesFit(args)).score(CycleState(), pod, infos, ctx)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(clusters())
def test_fused_balanced_allocation_matches_the_column_path(cluster):
    pod, infos, ctx = cluster
    args = NodeResourcesBalancedAllocationArgs()  # cpu and memory
    fused = NodeResourcesBalancedAllocation(args)
    reference = column_path(NodeResourcesBalancedAllocation(args))
    assert fused.score(CycleState(), pod, infos, ctx) == reference.score(CycleState(), pod, infos, ctx)


# Small quantities, so that requests often equal or exceed what a node has (the edges of
# every formula); "0" makes a node lack the resource, which the column path handles.
cpus = st.sampled_from(["0", "100m", "250m", "500m", "1", "2", "3700m"])
memories = st.sampled_from(["0", "100Mi", "200Mi", "1Gi", "2Gi", "3Gi", "7Gi"])
requests = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"cpu": cpus,
                                                                    "memory": memories}))


@st.composite
def cpu_memory_clusters(draw: st.DrawFn) -> tuple[PodView, list[NodeInfo], Ctx]:
    """Nodes that (mostly) have cpu and memory, so the fused passes run to the end."""
    nodes = []
    for i in range(draw(st.integers(0, 6))):
        lacking = draw(st.sampled_from(["cpu", "memory"] + [""] * 30))
        placed = [make_pod(f"q{i}-{j}", [draw(requests)])
                  for j in range(draw(st.integers(0, 3)))]
        cpu, memory = draw(cpus.filter(lambda q: q != "0")), draw(memories.filter(lambda q: q != "0"))
        nodes.append(make_node(f"n{i}", cpu="0" if lacking == "cpu" else cpu,
                               memory="0" if lacking == "memory" else memory, pods=placed))
    pod = make_pod("p", draw(st.lists(requests, min_size=1, max_size=2)))
    return pod, nodes, Ctx(nodes, 0, {})


@settings(max_examples=300, deadline=None)
@given(cpu_memory_clusters(), cpu_memory_weights, st.sampled_from(["LeastAllocated", "MostAllocated"]))
def test_fused_fit_matches_the_column_path_on_nodes_with_cpu_and_memory(cluster, weights, kind):
    pod, infos, ctx = cluster
    strategy = {"type": kind, "resources": [
        {"name": "cpu", "weight": weights[0]}, {"name": "memory", "weight": weights[1]}]}
    args = NodeResourcesFitArgs.model_validate({"scoringStrategy": strategy})
    fused = NodeResourcesFit(args)
    assert fused.score_pair is not None  # weights are 1..100 (0 means 1)
    reference = column_path(NodeResourcesFit(args))
    assert fused.score(CycleState(), pod, infos, ctx) == reference.score(CycleState(), pod, infos, ctx)
    assert fused.score(CycleState(), pod, infos, ctx) == reference.score(CycleState(), pod, infos, ctx)  # warm memos


@settings(max_examples=300, deadline=None)
@given(cpu_memory_clusters())
def test_fused_balanced_allocation_matches_the_column_path_on_nodes_with_cpu_and_memory(cluster):
    pod, infos, ctx = cluster
    for version in ((1, 35), (1, 37)):  # the balance with the pod, then the pod's effect on it
        fused = NodeResourcesBalancedAllocation(None, version)
        assert fused.cpu_memory
        reference = column_path(NodeResourcesBalancedAllocation(None, version))
        assert fused.score(CycleState(), pod, infos, ctx) == reference.score(CycleState(), pod, infos, ctx)
        assert fused.score(CycleState(), pod, infos, ctx) == reference.score(CycleState(), pod, infos, ctx)  # warm memos


@settings(max_examples=150, deadline=None)
@given(cpu_memory_clusters(), st.lists(requests, min_size=1, max_size=2), st.data())
def test_fused_passes_follow_the_load_of_nodes_with_memoised_scores(cluster, added, data):
    """A memoised score counts only while the node's load is the one it was computed for: pods
    bound or removed (and clones with other pods, as preemption makes) get fresh scores."""
    pod, infos, ctx = cluster
    fits = [NodeResourcesFitArgs.model_validate({"scoringStrategy": {"type": kind}})
            for kind in ("LeastAllocated", "MostAllocated")]
    plugins = [(NodeResourcesFit(args), column_path(NodeResourcesFit(args))) for args in fits]
    plugins.append((NodeResourcesBalancedAllocation(),
                    column_path(NodeResourcesBalancedAllocation())))
    for plugin, _ in plugins:
        plugin.score(CycleState(), pod, infos, ctx)  # warm the memos
    changed = list(infos)
    if changed:
        i = data.draw(st.integers(0, len(changed) - 1))
        clone = changed[i].clone()
        extra = make_pod("extra", added)
        if data.draw(st.booleans()) and clone.pods:
            clone.remove_pod(next(iter(clone.pods.values())))
        else:
            clone.add_pod(extra)
        changed[i] = clone
    for plugin, reference in plugins:
        for nodes in (changed, infos, changed):
            assert plugin.score(CycleState(), pod, nodes, ctx) == reference.score(CycleState(), pod, nodes, ctx)


@settings(max_examples=100, deadline=None)
@given(cpu_memory_clusters(), st.lists(st.lists(requests, min_size=1, max_size=2), max_size=4),
       st.data())
def test_fused_passes_keep_pods_with_other_requests_apart(cluster, others, data):
    pod, infos, ctx = cluster
    incoming = [pod, *(make_pod(f"o{i}", r) for i, r in enumerate(others))]
    order = data.draw(st.lists(st.sampled_from(incoming), min_size=1, max_size=8))
    fit_args = NodeResourcesFitArgs.model_validate({"scoringStrategy": {"type": "MostAllocated"}})
    plugins = [(NodeResourcesFit(), column_path(NodeResourcesFit())),
               (NodeResourcesFit(fit_args), column_path(NodeResourcesFit(fit_args))),
               (NodeResourcesBalancedAllocation(), column_path(NodeResourcesBalancedAllocation())),
               (NodeResourcesBalancedAllocation(None, (1, 35)),
                column_path(NodeResourcesBalancedAllocation(None, (1, 35))))]
    for p in [*incoming, *order]:
        for plugin, reference in plugins:
            assert plugin.score(CycleState(), p, infos, ctx) == reference.score(CycleState(), p, infos, ctx)


@pytest.mark.parametrize("extra", [{"cpu": "0", "memory": "1Gi"}, {"cpu": "1", "memory": "0"}])
def test_a_memoised_resource_score_counts_only_at_the_same_load(extra):
    pod = make_pod("p", [{"cpu": "500m", "memory": "512Mi"}])
    node = make_node("n", cpu="2", memory="2Gi", pods=[make_pod("q", [{"cpu": "500m",
                                                                       "memory": "512Mi"}])])
    ctx = Ctx([node], 0, {})
    most = NodeResourcesFitArgs.model_validate({"scoringStrategy": {"type": "MostAllocated"}})
    # Up to v1.35 BalancedAllocation scores the balance with the pod; from v1.36 the pod's
    # effect on it, which an even pod like this one leaves at 75 whatever the load.
    old = (1, 35)
    plugins = [(NodeResourcesFit(), column_path(NodeResourcesFit())),
               (NodeResourcesFit(most), column_path(NodeResourcesFit(most))),
               (NodeResourcesBalancedAllocation(None, old),
                column_path(NodeResourcesBalancedAllocation(None, old)))]
    for plugin, _ in plugins:
        plugin.score(CycleState(), pod, [node], ctx)  # warm the memos
    loaded = node.clone()
    loaded.add_pod(make_pod("extra", [extra]))  # one of cpu and memory changes, not the other
    for plugin, reference in plugins:
        expected = reference.score(CycleState(), pod, [loaded], ctx)
        assert expected != reference.score(CycleState(), pod, [node], ctx)
        assert plugin.score(CycleState(), pod, [loaded], ctx) == expected


def test_memoised_resource_scores_of_pods_with_other_requests_stay_apart():
    node = make_node("n", cpu="2", memory="2Gi")
    ctx = Ctx([node], 0, {})
    shapes = [("500m", "512Mi"), ("500m", "1Gi"), ("1", "1Gi"), ("500m", "512Mi")]
    most = NodeResourcesFitArgs.model_validate({"scoringStrategy": {"type": "MostAllocated"}})
    plugins = [(NodeResourcesFit(), column_path(NodeResourcesFit())),
               (NodeResourcesFit(most), column_path(NodeResourcesFit(most))),
               (NodeResourcesBalancedAllocation(), column_path(NodeResourcesBalancedAllocation()))]
    for plugin, reference in plugins:
        expected = [reference.score(CycleState(), make_pod("p", [{"cpu": c, "memory": m}]), [node], ctx)
                    for c, m in shapes]
        assert expected[0] != expected[1] != expected[2]  # memory, then cpu differs
        assert [plugin.score(CycleState(), make_pod("p", [{"cpu": c, "memory": m}]), [node], ctx)
                for c, m in shapes] == expected


# ---- combination and reply ------------------------------------------------------------------

def reference_totals(results: Sequence[PluginScores], count: int) -> list[int]:
    totals = [0] * count
    for result in results:
        totals = [t + s * result.weight for t, s in zip(totals, result.scores, strict=True)]
    return totals


@given(st.integers(0, 6).flatmap(lambda count: st.lists(
    st.tuples(st.integers(1, 50), st.lists(st.integers(0, 100), min_size=count, max_size=count)),
    max_size=5).map(lambda parts: (count, parts))))
def test_combination_matches_the_running_totals(case):
    count, parts = case
    results = [PluginScores(f"p{i}", w, scores) for i, (w, scores) in enumerate(parts)]
    totals = reference_totals(results, count)
    assert score_totals(results, count) == totals
    weight_sum = sum(w for w, _ in parts)
    expected = ([(t + 5 * weight_sum) // (10 * weight_sum) for t in totals] if weight_sum
                else [0] * count)
    assert extender_scores(results, count) == expected


def reference_reply(candidates: Candidates, scores: list[int]) -> bytes:
    by_name = dict(zip((i.node.name for i in candidates.infos), scores, strict=True))
    return wire.encode([wire.HostPriority(n, by_name.get(n, 0)) for n in candidates.names])


_nodes: dict[str, NodeInfo] = {}


def node_named(name: str) -> NodeInfo:
    if name not in _nodes:
        _nodes[name] = make_node(name)
    return _nodes[name]


@given(st.lists(st.sampled_from(["a", "b", "c", "node-1.example", "x/\"y"]), max_size=8),
       st.sets(st.sampled_from(["a", "b", "c"])), st.booleans(), st.data())
def test_reply_matches_the_by_name_lookup(names, unknown, nodes_form, data):
    infos = [node_named(n) for n in names if n not in unknown]
    rejected = {n: unschedulable("", "unknown") for n in names if n in unknown}
    raw = {n: None for n in names} if nodes_form else None
    candidates = Candidates(names, infos, raw, rejected)  # type: ignore[arg-type]
    if nodes_form:  # each object sent is its own view: repeated names may score apart
        scores = data.draw(st.lists(st.integers(0, 10), min_size=len(infos), max_size=len(infos)))
    else:  # a repeated name is the same node, so it scores the same
        by_name = data.draw(st.fixed_dictionaries({n: st.integers(0, 10) for n in names}))
        scores = [by_name[i.node.name] for i in infos]
    assert wire.encode(host_priorities(candidates, scores)) == reference_reply(candidates, scores)
