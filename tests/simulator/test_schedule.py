"""The placement algorithm: node sampling, nextStartNodeIndex, nominations, selectHost."""

from __future__ import annotations

import random

from extender.engine.cluster import ClusterState
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.model import k8s
from extender.model.node import NodeView
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.nominator import Nominator
from extender.simulator.schedule import Algorithm

from .helpers import DEFAULTS, LEAST_ALLOCATED_ONLY, node, pod

NO_SCORES = {**DEFAULTS, "plugins": {"score": {"disabled": [{"name": "*"}]}}}


def node_info(name: str, cpu: str = "4", memory: str = "8Gi", **kw) -> NodeInfo:
    return NodeInfo(NodeView.from_k8s(k8s.convert(node(name, cpu, memory, **kw), k8s.Node)))


def pod_view(name: str, cpu: str = "100m", **kw) -> PodView:
    return PodView.from_k8s(k8s.convert(pod(name, cpu, "128Mi", **kw), k8s.Pod))


def algorithm(policy=DEFAULTS, **kw) -> Algorithm:
    return Algorithm(build_profile(parse_policy(policy)), **kw)


def names(nodes) -> list[str]:
    return [n.name for n in nodes]


def test_all_nodes_mode_examines_everything():
    nodes = [node_info(f"n{i}") for i in range(150)]
    algo = algorithm()
    feasible, _ = algo.find_nodes_that_fit(pod_view("p"), nodes, Nominator(), ctx=ClusterState())
    assert len(feasible) == 150
    assert algo.next_start_node_index == 0


def test_adaptive_sampling_walks_round_robin():
    # 200 nodes: numFeasibleNodesToFind = max(200 × 48 // 100, 100) = 100.
    nodes = [node_info(f"n{i:03d}") for i in range(200)]
    algo = algorithm(percentage_of_nodes_to_score=0)
    first, _ = algo.find_nodes_that_fit(pod_view("a"), nodes, Nominator(), ctx=ClusterState())
    assert names(first) == [f"n{i:03d}" for i in range(100)]
    assert algo.next_start_node_index == 100
    second, _ = algo.find_nodes_that_fit(pod_view("b"), nodes, Nominator(), ctx=ClusterState())
    assert names(second) == [f"n{i:03d}" for i in range(100, 200)]
    assert algo.next_start_node_index == 0


def test_sampling_counts_rejected_nodes_as_processed():
    # Nodes 0..49 are cordoned: the search processes 50 rejected + 100 feasible = 150 nodes and
    # only the processed nodes get a status.
    nodes = [node_info(f"n{i:03d}", unschedulable=i < 50) for i in range(200)]
    algo = algorithm(percentage_of_nodes_to_score=0)
    feasible, diagnosis = algo.find_nodes_that_fit(pod_view("a"), nodes, Nominator(), ctx=ClusterState())
    assert names(feasible) == [f"n{i:03d}" for i in range(50, 150)]
    assert len(diagnosis.statuses) == 50
    assert diagnosis.unschedulable_plugins == {"NodeUnschedulable"}
    assert algo.next_start_node_index == 150
    # Next search starts at n150: 50 feasible to the end, wraps over 50 cordoned, then 50 more.
    feasible, _ = algo.find_nodes_that_fit(pod_view("b"), nodes, Nominator(), ctx=ClusterState())
    assert names(feasible) == [f"n{i:03d}" for i in (*range(150, 200), *range(50, 100))]
    assert algo.next_start_node_index == 100  # (150 + 150 processed) % 200


def test_without_scoring_the_first_feasible_node_is_enough():
    nodes = [node_info(f"n{i}", unschedulable=i == 0) for i in range(5)]
    algo = algorithm(NO_SCORES)
    placement = algo.schedule(pod_view("p"), nodes, Nominator(), ctx=ClusterState())
    assert placement.node.name == "n1"
    assert algo.next_start_node_index == 2


def test_nominated_node_is_tried_first():
    nodes = [node_info("a"), node_info("b"), node_info("c")]
    algo = algorithm()
    nominated = pod_view("p")
    nominated = PodView.from_k8s(k8s.convert(
        {**pod("p", "100m", "128Mi"), "status": {"nominatedNodeName": "c"}}, k8s.Pod))
    feasible, diagnosis = algo.find_nodes_that_fit(nominated, nodes, Nominator(), ctx=ClusterState())
    assert names(feasible) == ["c"]
    assert not diagnosis.statuses


def test_nominated_pods_reserve_room_for_equal_or_higher_priority():
    nodes = [node_info("a", "2"), node_info("b", "2")]
    nominator = Nominator()
    nominator.add(pod_view("reserved", "1500m", priority=10), "a")
    algo = algorithm()
    low, _ = algo.find_nodes_that_fit(pod_view("low", "1", priority=5), nodes, nominator, ctx=ClusterState())
    assert names(low) == ["b"]
    # A higher-priority pod ignores the reservation of a lower one.
    high, _ = algo.find_nodes_that_fit(pod_view("high", "1", priority=20), nodes, nominator, ctx=ClusterState())
    assert names(high) == ["a", "b"]


def test_select_host_is_uniform_among_the_best_and_seeded():
    nodes = [node_info(f"n{i}") for i in range(4)]
    algo = algorithm(LEAST_ALLOCATED_ONLY, rng=random.Random(3))
    # A unique best node is taken without drawing a random number.
    state = algo.rng.getstate()
    assert algo.select_host(nodes, [5, 9, 1, 2]).name == "n1"
    assert algo.rng.getstate() == state
    picks = [algo.select_host(nodes, [7, 7, 1, 7]).name for _ in range(300)]
    assert set(picks) == {"n0", "n1", "n3"}
    assert all(70 < picks.count(n) < 130 for n in ("n0", "n1", "n3"))
    again = algorithm(LEAST_ALLOCATED_ONLY, rng=random.Random(3))
    assert [again.select_host(nodes, [7, 7, 1, 7]).name for _ in range(300)] == picks
