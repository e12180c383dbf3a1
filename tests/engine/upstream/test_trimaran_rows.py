"""scheduler-plugins' Trimaran test tables (data in `trimaran_data.py`), every row.

Per-node scores run through `extender.engine.evaluate(..., metrics=...)`, the watcher response
as the metrics snapshot; tests of helpers (analysis, computeRisk, the Beta distribution,
resourcestats, the assigned-pods cache, the collector, the argument defaults) call the
plugins' own functions. Cited as upstream file, test function, case name.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from extender.engine import evaluate
from extender.engine.args import (
    LoadVariationRiskBalancingArgs,
    LowRiskOverCommitmentArgs,
    TargetLoadPackingArgs,
    TrimaranSpec,
)
from extender.engine.cluster import ClusterState
from extender.engine.evaluate import read_metrics
from extender.engine.plugins.trimaran.common import (
    ResourceStats,
    create_resource_stats,
    get_mu_sigma,
    go_round,
    node_metrics,
)
from extender.engine.plugins.trimaran.loadvariationriskbalancing import compute_score
from extender.engine.plugins.trimaran.lowriskovercommitment import (
    Amounts,
    BetaDistribution,
    NodeRequestsAndLimits,
    compute_risk,
    get_max_variance,
    node_requests_and_limits,
    pod_requests_and_limits,
)
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.model import k8s
from extender.model.loadmetrics import watcher_metrics
from extender.model.node import NodeView
from extender.model.pod import PodView
from tests.engine.upstream import trimaran_data as data
from tests.engine.upstream.builders import policy

TOLERANCE = 1e-6  # beta_test.go's WithinTolerance


def node_view(obj: dict[str, Any]) -> NodeView:
    return NodeView.from_k8s(k8s.convert(obj, k8s.Node))


def pod_view(obj: dict[str, Any], name: str = "p") -> PodView:
    obj = {**obj, "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}}
    return PodView.from_k8s(k8s.convert(obj, k8s.Pod))


def scores_only(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
    return policy(filters=[], scores=[(plugin, 1)], args={plugin: args})


def named(pod: dict[str, Any]) -> dict[str, Any]:
    """The pending pod with a name and namespace (upstream's helpers leave them empty)."""
    return {**pod, "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}}


def nrl(row: tuple) -> NodeRequestsAndLimits:
    return NodeRequestsAndLimits(*(Amounts(cpu, memory) for cpu, memory in row))


# ---- per-node scores through evaluate ---------------------------------------------------------
@pytest.mark.parametrize(("case", "pod", "response", "expected"), data.TLP_SCORING,
                         ids=[row[0] for row in data.TLP_SCORING])
def test_targetloadpacking_scoring(case, pod, response, expected) -> None:
    """targetloadpacking_test.go TestTargetLoadPackingScoring. The test's args are the
    unversioned ones, not defaulted: TargetUtilization 40, multiplier "1.5", no
    DefaultRequests (0 millicores)."""
    args = {"targetUtilization": 40, "defaultRequestsMultiplier": "1.5", "defaultRequests": {}}
    ev = evaluate([data.capacity_node("node-1", data.NODE_1G)], named(pod),
                  scores_only("TargetLoadPacking", args), metrics=response)
    assert ev.scores["TargetLoadPacking"] == {"node-1": expected}


@pytest.mark.parametrize(("case", "pod", "response", "expected"), data.LVRB_SCORE,
                         ids=[row[0] for row in data.LVRB_SCORE])
def test_loadvariationriskbalancing_score(case, pod, response, expected) -> None:
    """loadvariationriskbalancing_test.go TestScore (margin 1, sensitivity 1)."""
    args = {"safeVarianceMargin": 1, "safeVarianceSensitivity": 1}
    ev = evaluate([data.capacity_node("node-1", data.NODE_1G)], named(pod),
                  scores_only("LoadVariationRiskBalancing", args), metrics=response)
    assert ev.scores["LoadVariationRiskBalancing"] == {"node-1": expected}


@pytest.mark.parametrize(("case", "pod", "response", "expected"), data.LROC_SCORE,
                         ids=[row[0] for row in data.LROC_SCORE])
def test_lowriskovercommitment_score(case, pod, response, expected) -> None:
    """lowriskovercommitment_test.go TestLowRiskOverCommitment_Score."""
    args = {"smoothingWindowSize": 5, "riskLimitWeights": {"cpu": 0.5, "memory": 0.5}}
    ev = evaluate([data.capacity_node("node-1", data.NODE_1G)], named(pod),
                  scores_only("LowRiskOverCommitment", args), metrics=response)
    assert ev.scores["LowRiskOverCommitment"] == {"node-1": expected}


# ---- helpers ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("case", "margin", "sensitivity", "rs", "expected"),
                         data.LVRB_COMPUTE_SCORE, ids=[row[0] for row in data.LVRB_COMPUTE_SCORE])
def test_analysis_compute_score(case, margin, sensitivity, rs, expected) -> None:
    """loadvariationriskbalancing/analysis_test.go TestComputeScore."""
    capacity, req, used_avg, used_stdev = rs
    stats = ResourceStats(used_avg=used_avg, used_stdev=used_stdev, req=req, capacity=capacity)
    assert go_round(compute_score(stats, margin, sensitivity)) == expected


@pytest.mark.parametrize(("case", "resource", "watcher_type", "row", "expected"),
                         data.LROC_COMPUTE_RISK, ids=[row[0] for row in data.LROC_COMPUTE_RISK])
def test_lowriskovercommitment_compute_risk(case, resource, watcher_type, row, expected) -> None:
    """lowriskovercommitment_test.go TestLowRiskOverCommitment_computeRisk (node_A,
    watcherData_A, window 5, weights 0.5): compared exactly, as upstream."""
    metrics = watcher_metrics({"data": {"NodeMetricsMap": {
        "node-A": {"metrics": data.LROC_METRICS_A}}}}).data.NodeMetricsMap["node-A"].metrics
    got = compute_risk(metrics, resource, watcher_type, node_view(data.LROC_NODE_A), nrl(row),
                       5, {"cpu": 0.5, "memory": 0.5})
    assert got == expected


@pytest.mark.parametrize(("case", "alpha", "beta", "moments"), data.BETA_NEW,
                         ids=[row[0] for row in data.BETA_NEW])
def test_new_beta_distribution(case, alpha, beta, moments) -> None:
    """lowriskovercommitment/beta_test.go TestNewBetaDistribution: nil for invalid
    parameters, else the first two moments (E[X], E[X^2])."""
    dist = BetaDistribution.new(alpha, beta)
    if moments is None:
        assert dist is None
        return
    assert dist is not None
    first, second = moments
    assert math.isclose(dist.mean(), first, abs_tol=1e-12)
    assert math.isclose(dist.variance() + dist.mean() ** 2, second, abs_tol=1e-12)


@pytest.mark.parametrize(("case", "params", "m1", "m2", "want"), data.BETA_MATCH_MOMENTS,
                         ids=[row[0] for row in data.BETA_MATCH_MOMENTS])
def test_beta_match_moments(case, params, m1, m2, want) -> None:
    """lowriskovercommitment/beta_test.go TestBetaDistribution_MatchMoments."""
    assert BetaDistribution(*params).match_moments(m1, m2) is want


@pytest.mark.parametrize(("case", "alpha", "beta", "x", "want"), data.BETA_DENSITY,
                         ids=[row[0] for row in data.BETA_DENSITY])
def test_beta_density_function(case, alpha, beta, x, want) -> None:
    """lowriskovercommitment/beta_test.go TestBetaDistribution_DensityFunction."""
    assert abs(BetaDistribution(alpha, beta).density_function(x) - want) < TOLERANCE


@pytest.mark.parametrize(("case", "alpha", "beta", "x", "want"), data.BETA_DISTRIBUTION,
                         ids=[row[0] for row in data.BETA_DISTRIBUTION])
def test_beta_distribution_function(case, alpha, beta, x, want) -> None:
    """lowriskovercommitment/beta_test.go TestBetaDistribution_DistributionFunction."""
    assert abs(BetaDistribution(alpha, beta).distribution_function(x) - want) < TOLERANCE


@pytest.mark.parametrize(("case", "m1", "want"), data.BETA_MAX_VARIANCE,
                         ids=[row[0] for row in data.BETA_MAX_VARIANCE])
def test_get_max_variance(case, m1, want) -> None:
    """lowriskovercommitment/beta_test.go TestGetMaxVariance."""
    assert abs(get_max_variance(m1) - want) < TOLERANCE


@pytest.mark.parametrize(("case", "metrics", "resource", "watcher_type", "want"), data.RS_CREATE,
                         ids=[row[0] for row in data.RS_CREATE])
def test_create_resource_stats(case, metrics, resource, watcher_type, want) -> None:
    """resourcestats_test.go TestCreateResourceStats (pod request 100m, 1Mi): exact floats."""
    decoded = watcher_metrics({"data": {"NodeMetricsMap": {"n": {"metrics": metrics}}}})
    got = create_resource_stats(decoded.data.NodeMetricsMap["n"].metrics, node_view(data.RS_NODE0),
                                100, 1024 * 1024, resource, watcher_type)
    if want is None:
        assert got is None
        return
    capacity, req, used_avg, used_stdev = want
    assert got == ResourceStats(used_avg=used_avg, used_stdev=used_stdev, req=req,
                                capacity=capacity)


@pytest.mark.parametrize(("case", "make_pod", "want"), data.RS_REQUESTED,
                         ids=[row[0] for row in data.RS_REQUESTED])
def test_get_resource_requested(case, make_pod, want) -> None:
    """resourcestats_test.go TestGetResourceRequested (its three assertions)."""
    load = pod_view(make_pod()).load
    assert (load.request_cpu, load.request_memory) == want


@pytest.mark.parametrize(("case", "make_pod", "want"), data.RS_LIMITS,
                         ids=[row[0] for row in data.RS_LIMITS])
def test_get_resource_limits(case, make_pod, want) -> None:
    """resourcestats_test.go TestGetResourceLimits (its four assertions)."""
    load = pod_view(make_pod()).load
    assert (load.limit_cpu, load.limit_memory) == want


@pytest.mark.parametrize(("case", "rs", "mu", "sigma"), data.RS_MU_SIGMA,
                         ids=[row[0] for row in data.RS_MU_SIGMA])
def test_get_mu_sigma(case, rs, mu, sigma) -> None:
    """resourcestats_test.go TestGetMuSigma: exact floats."""
    capacity, req, used_avg, used_stdev = rs
    got = get_mu_sigma(ResourceStats(used_avg=used_avg, used_stdev=used_stdev, req=req,
                                     capacity=capacity))
    assert got == (mu, sigma)


@pytest.mark.parametrize(("case", "node", "on_node", "pod", "want"),
                         data.RS_NODE_REQUESTS_AND_LIMITS,
                         ids=[row[0] for row in data.RS_NODE_REQUESTS_AND_LIMITS])
def test_get_node_requests_and_limits(case, node, on_node, pod, want) -> None:
    """resourcestats_test.go TestGetNodeRequestsAndLimits (the pod's limits raised to its
    requests first, as the test's SetMaxLimits call does); requests never above limits."""
    pods = [pod_view(p, f"p{i}") for i, p in enumerate(on_node)]
    requests, limits = pod_requests_and_limits(pod_view(pod))
    got = node_requests_and_limits(pods, node_view(node), requests, limits)
    assert got == nrl(want)
    assert got.node_request.cpu <= got.node_limit.cpu
    assert got.node_request.memory <= got.node_limit.memory


GO_ZERO_TIME = -62135596800.0  # time.Time{}.Unix()


@pytest.mark.parametrize(("case", "records", "updated", "left"), data.HANDLER_CLEANUP,
                         ids=[row[0] for row in data.HANDLER_CLEANUP])
def test_handler_cache_cleanup(case, records, updated, left) -> None:
    """handler_test.go TestHandlerCacheCleanup, on `ClusterState`'s record of when pods became
    assigned: the test's `cleanupCache()` is the 5-minute cleanup that runs at time C (the
    state started 300 s before), `OnUpdate` a pod seen pending, then bound to node-1."""
    cleanup = 1_700_000_000.0
    now = [cleanup - 300]
    state = ClusterState(wall_clock=lambda: now[0])
    state.apply_node(k8s.convert(data.capacity_node("node-1", data.NODE_1G), k8s.Node))

    def becomes_assigned(name: str, at: float) -> None:
        pod = {"metadata": {"name": name, "namespace": "default", "uid": name},
               "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending"}}
        state.apply_pod(k8s.convert(pod, k8s.Pod))
        now[0] = at
        pod["spec"]["nodeName"] = "node-1"
        state.apply_pod(k8s.convert(pod, k8s.Pod))

    for name, ago in records:
        becomes_assigned(name, GO_ZERO_TIME if ago is None else cleanup - ago)
    if updated is not None:
        becomes_assigned(updated, cleanup)
    now[0] = cleanup
    assert [pod.name for _, pod in state.store(TrimaranStore).recent("node-1")] == left


def test_collector_get_node_metrics() -> None:
    """collector_test.go TestGetNodeMetrics and TestGetNodeMetricsNilForNode."""
    snapshot = read_metrics(data.COLLECTOR_RESPONSE)
    assert node_metrics(snapshot, "node-1") == snapshot.data.NodeMetricsMap["node-1"].metrics
    assert node_metrics(read_metrics(data.COLLECTOR_NO_NODE), "node-1") is None


@pytest.mark.parametrize(("test", "spec", "error"), data.COLLECTOR_SPECS,
                         ids=[row[0] for row in data.COLLECTOR_SPECS])
def test_collector_specs(test, spec, error) -> None:
    """collector_test.go TestNewCollector / TestNewCollectorSpecs / TestNewCollectorLoadWatcher:
    `checkSpecs` as argument validation."""
    if error is None:
        TrimaranSpec.model_validate(spec)
        return
    with pytest.raises(ValueError, match=error):
        TrimaranSpec.model_validate(spec)


ARGS = {"TargetLoadPacking": TargetLoadPackingArgs,
        "LoadVariationRiskBalancing": LoadVariationRiskBalancingArgs,
        "LowRiskOverCommitment": LowRiskOverCommitmentArgs}


def _field(args: Any, path: str) -> Any:
    for part in path.split("."):
        args = getattr(args, part)
    return args


@pytest.mark.parametrize(("case", "plugin", "given", "expected"),
                         data.DEFAULTS + data.NEW_BAD_ARGS,
                         ids=[row[0] for row in data.DEFAULTS + data.NEW_BAD_ARGS])
def test_argument_defaults(case, plugin, given, expected) -> None:
    """apis/config/v1/defaults_test.go TestSchedulingDefaults (the Trimaran rows), and the
    plugins' TestNew arguments that v1 defaulting replaces."""
    args = ARGS[plugin].model_validate(given)
    assert {path: _field(args, path) for path in expected} == expected
