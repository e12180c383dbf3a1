"""scheduler-plugins' NodeResourceTopologyMatch unit-test rows, run through the engine.

The rows are data in `nrt_data.py` (provenance in its docstring); every test is parametrised
with one row per pytest param, id = the upstream case name. Upstream files:

* FT = pkg/noderesourcetopology/filter_test.go
* ST = pkg/noderesourcetopology/score_test.go

How upstream's wiring maps onto the engine
------------------------------------------
* Upstream calls `TopologyMatch.Filter` / `.Score` directly over a passthrough cache (the NRT
  objects as created). Here the objects (Node + NodeResourceTopology) go through
  `extender.engine.evaluate` with a policy whose only plugin is NodeResourceTopologyMatch: the
  filter rows enable it as the only filter (no scorer), the score rows as the only scorer (no
  filter: upstream's score tests call Score without Filter, on every node).
* Upstream's score tables assert `findMaxScoreNode` (the best node and its score); the rows do
  the same, and the LeastNUMA table every node's score, as upstream.
* A Status is compared on code and reason: every upstream status here is Unschedulable.

Not run
-------
* FT TestFilterPreemptionContext / TestFilterPreemptionPodScope rows with victims removed
  (`preemptionMode`, the NUMA affinity query of victims' containers): not implemented.
  Their rows without a preemption context are run (a plain Filter over one NRT).
* The `wantOverRes` (NodeMaybeOverReserved) checks: the extender's cache does not resync on
  discarded nodes (it takes every new report instead).
"""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine import evaluate
from extender.engine.policy import PolicyError, parse_policy
from tests.engine.nrt_builders import (
    PLUGIN,
    Obj,
    container,
    guaranteed,
    node_for,
    nrt,
    nrt_policy,
    pod,
)
from tests.engine.upstream import nrt_data as data

FILTER_ONLY = nrt_policy(filters=True, scores=False)


def _objects(desc: data.Desc) -> list[Obj]:
    name, policies, zones, extra = desc
    return [node_for(name, zones, extra), nrt(name, zones, policies)]


def _pod(spec: data.Pod) -> Obj:
    kind = spec[0]
    if kind == "none":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {}}
    if kind == "gu":
        return pod("p", [container("container1", spec[1], spec[1])])
    if kind == "rl":
        return pod("p", [container("container1", spec[1], spec[2])])
    if kind == "req":
        return pod("p", [container("container1", spec[1])])
    assert kind == "many"
    return pod("p", [container(f"c{i}", spec[1], spec[1]) for i in range(spec[2])])


def _verdict(objects: list[Obj], pending: Obj, node: str) -> dict[str, Any] | None:
    ev = evaluate(objects, pending, FILTER_ONLY, nodes=[node])
    return ev.filter[node]


def _expect(status: dict[str, Any] | None, reason: str | None) -> None:
    if reason is None:
        assert status is None
    else:
        assert status == {"plugin": PLUGIN, "code": "Unschedulable", "reasons": [reason]}


# FT TestNodeResourceTopology
@pytest.mark.parametrize(("pending", "index", "reason"),
                         [pytest.param(p, i, r, id=f"{n}#{k}")
                          for k, (n, p, i, r) in enumerate(data.FT_TEST_NODE_RESOURCE_TOPOLOGY)])
def test_node_resource_topology(pending: data.Pod, index: int, reason: str | None) -> None:
    objects = [obj for desc in data.FT_NODES for obj in _objects(desc)]
    _expect(_verdict(objects, _pod(pending), data.FT_NODES[index][0]), reason)


# FT TestNodeResourceTopologyMultiContainerPodScope
@pytest.mark.parametrize(("containers", "reason"),
                         [pytest.param(c, r, id=n) for n, c, r in data.FT_MULTI_CONTAINER_POD_SCOPE])
def test_multi_container_pod_scope(containers: list[dict[str, str]], reason: str | None) -> None:
    pending = pod("testpod", [container(f"cnt-{i + 1}", r, r) for i, r in enumerate(containers)])
    _expect(_verdict(_objects(data.FT_HOST0_POD_SCOPE), pending, "host0"), reason)


# FT TestNodeResourceTopologyMultiContainerContainerScope (parseTestUserEntry)
@pytest.mark.parametrize(("index", "init", "app", "reason"),
                         [pytest.param(k, i, a, r, id=n) for k, (n, i, a, r)
                          in enumerate(data.FT_MULTI_CONTAINER_CONTAINER_SCOPE)])
def test_multi_container_container_scope(index: int, init: list[dict[str, str]],
                                         app: list[dict[str, str]], reason: str | None) -> None:
    pending = pod(f"testpod{index}", [container(f"cnt-{i + 1}", r, r) for i, r in enumerate(app)],
                  [container(f"cnt-{i + 1}", r, r) for i, r in enumerate(init)])
    _expect(_verdict(_objects(data.FT_HOST0_CONTAINER_SCOPE), pending, "host0"), reason)


# FT TestFilterPreemptionContext and TestFilterPreemptionPodScope, rows without victims
@pytest.mark.parametrize(("desc", "requests", "reason"), [
    *[pytest.param(data.FT_WORKER_CONTAINER_SCOPE, r, w, id=n)
      for n, r, w in data.FT_PREEMPTION_CONTEXT_PLAIN],
    *[pytest.param(data.FT_WORKER_POD_SCOPE, r, w, id=n)
      for n, r, w in data.FT_PREEMPTION_POD_SCOPE_PLAIN],
])
def test_filter_without_preemption_context(desc: data.Desc, requests: dict[str, str],
                                           reason: str | None) -> None:
    pending = pod("p", [container("app", requests, requests)])
    _expect(_verdict(_objects(desc), pending, "worker-1"), reason)


# ---- Score ---------------------------------------------------------------------------------
def _score_objects(nodes: list[tuple[str, list[data.Zone]]], policies: list[str],
                   keep: str = "all") -> list[Obj]:
    objects = []
    for name, zones in nodes:
        objects.append(node_for(name, zones))
        if keep == "all" or keep == name:
            objects.append(nrt(name, zones, policies))
    return objects


def _scores(objects: list[Obj], pending: Obj, args: Obj) -> dict[str, int]:
    ev = evaluate(objects, pending, nrt_policy(filters=False, scores=True, args=args))
    return ev.scores[PLUGIN]


def _max_node(scores: dict[str, int]) -> tuple[str, int]:
    """`findMaxScoreNode` (a tie would be ambiguous upstream; the rows have none)."""
    best = max(scores.values())
    (node,) = [n for n, s in scores.items() if s == best]
    return node, best


# ST TestNodeResourceScorePlugin
@pytest.mark.parametrize(("strategy", "wanted"),
                         [pytest.param(s, w, id=n)
                          for n, s, w in data.ST_TEST_NODE_RESOURCE_SCORE_PLUGIN])
def test_node_resource_score_plugin(strategy: str, wanted: dict[str, int]) -> None:
    objects = _score_objects(data.ST_DEFAULT_NUMA_NODES, ["SingleNUMANodeContainerLevel"])
    scores = _scores(objects, guaranteed("pod1", data.ST_POD1),
                     {"scoringStrategy": {"type": strategy}})
    assert dict([_max_node(scores)]) == wanted


# ST TestNodeResourcePartialDataScorePlugin
@pytest.mark.parametrize(("strategy", "keep", "wanted"),
                         [pytest.param(s, k, w, id=n) for n, s, k, w in data.ST_PARTIAL_DATA])
def test_partial_data_score_plugin(strategy: str, keep: str, wanted: dict[str, int]) -> None:
    objects = _score_objects(data.ST_DEFAULT_NUMA_NODES, ["SingleNUMANodeContainerLevel"], keep)
    scores = _scores(objects, guaranteed("pod1", data.ST_POD1),
                     {"scoringStrategy": {"type": strategy}})
    if wanted:
        assert dict([_max_node(scores)]) == wanted
    # A node without NRT data always scores 0 (the table's premise, asserted here too).
    assert all(s == 0 for n, s in scores.items() if keep != n)


# ST TestNodeResourceScorePluginLeastNUMA
@pytest.mark.parametrize(("containers", "nodes", "wanted"),
                         [pytest.param(c, n, w, id=name)
                          for name, c, n, w in data.ST_LEAST_NUMA])
def test_least_numa(containers: list[dict[str, str]], nodes: str,
                    wanted: dict[str, int]) -> None:
    if nodes == "four":
        objects = _score_objects(data.ST_FOUR_NUMA_NODES, ["BestEffortContainerLevel"])
    else:
        objects = _score_objects(data.ST_DEFAULT_NUMA_NODES, [nodes.split(":")[1]])
    scores = _scores(objects, guaranteed("pod", *containers),
                     {"scoringStrategy": {"type": "LeastNUMANodes"}})
    assert scores == wanted


# test/integration/noderesourcetopology_test.go TestTopologyMatchPluginValidation: an unknown
# strategy is refused when the plugin is built ("scoringStrategy.type: Invalid value:").
def test_invalid_scoring_strategy_is_refused() -> None:
    with pytest.raises(PolicyError) as exc:
        parse_policy(nrt_policy(args={"scoringStrategy": {"type": "incorrect"}}))
    assert ("pluginConfig[0].args.scoringStrategy.type: Invalid value: \"incorrect\": "
            "invalid ScoringStrategyType") in str(exc.value)
