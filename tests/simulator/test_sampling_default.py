"""kube-scheduler samples nodes by default (`percentageOfNodesToScore` 0: adaptive, 42 % at 1000
nodes) and so does the simulator now; it used to filter every node, so its placements differed
from kube-scheduler's on any cluster of 100 nodes or more."""

from __future__ import annotations

from .helpers import at, by_name, node, pod, simulate


def _placements(tmp_path, **config) -> list[int]:  # type: ignore[no-untyped-def]
    cluster = [node(f"n{i:04d}", "8", "16Gi") for i in range(1000)]
    workload = [pod(f"p{i}", "100m", "128Mi", created=at(i)) for i in range(3)]
    _, report = simulate(tmp_path, cluster, workload, **config)
    pods = by_name(report)
    return [int(pods[f"p{i}"]["node"][1:]) for i in range(3)]


def test_by_default_each_cycle_searches_the_adaptive_share_round_robin(tmp_path) -> None:
    # numFeasibleNodesToFind(1000) = 1000 × (50 − 1000/125) / 100 = 420 feasible nodes, the
    # search starting where the previous one stopped (nextStartNodeIndex).
    first, second, third = _placements(tmp_path)
    assert 0 <= first < 420
    assert 420 <= second < 840
    assert third >= 840 or third < 260

