"""scheduler-plugins' Trimaran test tables, transcribed as data (kubernetes-sigs/scheduler-plugins
`pkg/trimaran/**/*_test.go`, `apis/config/v1/defaults_test.go`). Each row keeps its upstream
case name; the objects are built as the upstream helpers build them (`st.MakeNode().Capacity`
sets capacity and allocatable alike; `getPodWithContainersAndOverhead` gives each container
equal requests and limits), and watcher responses are what Go's `json.Marshal` sends for them.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
MEGA = 1024 * 1024


# ---- objects, as the upstream test helpers build them -----------------------------------------
def capacity_node(name: str, resources: dict[str, str]) -> Obj:
    """`st.MakeNode().Name(name).Capacity(resources)`: status.capacity = status.allocatable."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"uid-{name}"},
            "status": {"capacity": dict(resources), "allocatable": dict(resources)}}


def bare_pod(name: str = "p") -> Obj:
    """`st.MakePod().Name(name).Obj()`: no containers."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {}, "status": {"phase": "Pending"}}


def milli(m: int) -> str:
    """`resource.NewMilliQuantity(m, DecimalSI)`."""
    return f"{m}m" if m % 1000 else str(m // 1000)


def tlp_pod(overhead: int, *requests: int) -> Obj:
    """targetloadpacking_test.go `getPodWithContainersAndOverhead(overhead, requests...)`: a cpu
    request and an equal limit per container, the cpu overhead."""
    pod = bare_pod("")
    pod["spec"] = {"overhead": {"cpu": milli(overhead)}, "containers": [
        {"name": f"test-container-{i}", "resources": {"requests": {"cpu": milli(r)},
                                                       "limits": {"cpu": milli(r)}}}
        for i, r in enumerate(requests)]}
    return pod


def stats_pod(overhead: int, init_cpu: int, init_memory: int, cpu: list[int],
              memory: list[int]) -> Obj:
    """loadvariationriskbalancing_test.go / resourcestats_test.go
    `getPodWithContainersAndOverhead(overhead, initCPUReq, initMemReq, contCPUReq, contMemReq)`:
    one init container with cpu and memory requests; containers with equal requests and
    limits."""
    pod = bare_pod("")
    pod["spec"] = {
        "overhead": {"cpu": milli(overhead)},
        "initContainers": [{"name": "test-init", "resources": {"requests": {
            "cpu": milli(init_cpu), "memory": str(init_memory)}}}],
        "containers": [{"name": f"test-container-{i}", "resources": {
            "requests": {"cpu": milli(c), "memory": str(m)},
            "limits": {"cpu": milli(c), "memory": str(m)}}}
            for i, (c, m) in enumerate(zip(cpu, memory, strict=True))]}
    return pod


def with_limits(pod: Obj, init_cpu: int, init_memory: int, cpu: list[int],
                memory: list[int]) -> Obj:
    """resourcestats_test.go `getPodWithLimits`: the pod unchanged unless there is one limit
    per container."""
    containers = pod["spec"]["containers"]
    if len(cpu) != len(memory) or len(cpu) != len(containers):
        return pod
    pod["spec"]["initContainers"][0]["resources"]["limits"] = {
        "cpu": milli(init_cpu), "memory": str(init_memory)}
    for container, c, m in zip(containers, cpu, memory, strict=True):
        container["resources"]["limits"] = {"cpu": milli(c), "memory": str(m)}
    return pod


def metric(type_: str, operator: str, value: float, name: str = "") -> Obj:
    """A load-watcher `Metric` as Go marshals it."""
    return {"name": name, "type": type_, "operator": operator, "rollup": "", "value": value}


def watcher(nodes: dict[str, list[Obj]] | None) -> Obj:
    """A `watcher.WatcherMetrics` with a zero window, as Go marshals it (`null` for a nil map)."""
    return {"timestamp": 0, "window": {"duration": "", "start": 0, "end": 0}, "source": "",
            "data": {"NodeMetricsMap": None if nodes is None else
                     {n: {"metrics": m} for n, m in nodes.items()}}}


NODE_1G = {"cpu": "1000m", "memory": "1Gi"}

# ---- targetloadpacking_test.go TestTargetLoadPackingScoring ------------------------------------
# (case, pod, watcher response, node-1's expected score); TargetUtilization 40, multiplier "1.5".
TLP_SCORING = [
    ("new node", bare_pod(), watcher({"node-1": [metric("CPU", "Latest", 0)]}), 40),
    ("hot node", bare_pod(), watcher({"node-1": [metric("CPU", "Latest", 40 + 10)]}), 33),
    ("excess utilization returns min score", tlp_pod(0, 1000),
     watcher({"node-1": [metric("CPU", "Latest", 30)]}), 0),
    ("404 resp from watcher", bare_pod(), watcher(None), 0),
]

# ---- loadvariationriskbalancing_test.go TestScore -----------------------------------------------
# (case, pod, watcher response, node-1's expected score); margin 1, sensitivity 1.
LVRB_SCORE = [
    ("new node", bare_pod(), watcher({"node-1": [metric("CPU", "AVG", 50)]}), 75),
    ("hot node", bare_pod(), watcher({"node-1": [metric("CPU", "AVG", 100)]}), 50),
    ("average and stDev metrics", stats_pod(0, 0, 0, [200], [256 * MEGA]),
     watcher({"node-1": [metric("CPU", "AVG", 30), metric("CPU", "STD", 16)]}), 67),
    ("CPU and Memory metrics", stats_pod(0, 0, 0, [100], [512 * MEGA]),
     watcher({"node-1": [metric("CPU", "AVG", 40), metric("CPU", "STD", 16),
                         metric("Memory", "AVG", 50), metric("Memory", "STD", 10)]}), 45),
    ("pick worst case: CPU or Memory", stats_pod(0, 0, 0, [100], [512 * MEGA]),
     watcher({"node-1": [metric("CPU", "AVG", 80), metric("CPU", "STD", 20),
                         metric("Memory", "AVG", 25), metric("Memory", "STD", 15)]}), 45),
    ("404 resp from watcher", bare_pod(), watcher(None), 0),
]

# ---- loadvariationriskbalancing/analysis_test.go TestComputeScore -------------------------------
# (case, margin, sensitivity, (capacity, req, usedAvg, usedStdev), expected rounded score).
# Two upstream cases share the name "large usedAvg": both are kept, numbered by position.
LVRB_COMPUTE_SCORE = [
    ("valid data", 1, 1, (100, 10, 40, 36), 57),
    ("zero capacity", 1, 2, (0, 10, 40, 36), 0),
    ("negative usedAvg", 1, 2, (100, 10, -40, 36), 65),
    ("large usedAvg", 1, 2, (100, 10, 200, 36), 20),
    ("negative usedStdev", 1, 2, (100, 10, 40, -36), 75),
    ("large usedStdev", 1, 2, (100, 10, 40, 120), 25),
    ("large usedAvg (second)", 1, 2, (100, 10, 200, 36), 20),
    ("negative margin", -1, 1, (100, 10, 40, 36), 75),
    ("negative sensitivity", 1, -1, (100, 10, 40, 36), 57),
    ("zero sensitivity", 1, 0, (100, 10, 40, 36), 75),
]

# ---- lowriskovercommitment_test.go --------------------------------------------------------------
# TestLowRiskOverCommitment_Score: (case, pod, watcher response, node-1's expected score);
# smoothingWindowSize 5, riskLimitWeights cpu 0.5, memory 0.5.
LROC_SCORE = [
    ("new node", bare_pod(), watcher({"node-1": [metric("CPU", "AVG", 20)]}), 0),
]
# TestLowRiskOverCommitment_computeRisk: node_A (cpu 4000m, memory 4Ki), watcherData_A.
LROC_NODE_A = capacity_node("node-A", {"cpu": "4000m", "memory": "4Ki"})
LROC_METRICS_A = [metric("CPU", "AVG", 80), metric("CPU", "STD", 0),
                  metric("Memory", "AVG", 25), metric("Memory", "STD", 0)]
# NodeRequestsAndLimits as ((request), (limit), (requestMinusPod), (limitMinusPod), (capacity)),
# each (milliCPU, memory).
NRLA_A1 = ((2000, 2048), (3000, 6144), (1000, 0), (2000, 0), (4000, 4096))
NRLA_A2 = ((4000, 1024), (5000, 7168), (3000, 512), (4000, 6144), (4000, 4096))
# (case, resource, watcher type, NodeRequestsAndLimits, expected risk)
LROC_COMPUTE_RISK = [
    ("test-cpu-1", "cpu", "CPU", NRLA_A1, 0.5),
    ("test-mem-1", "memory", "Memory", NRLA_A1, 0.25),
    ("test-cpu-2", "cpu", "CPU", NRLA_A2, 1.0),
    ("test-mem-2", "memory", "Memory", NRLA_A2, 0.75),
]

# ---- lowriskovercommitment/beta_test.go ---------------------------------------------------------
# TestNewBetaDistribution: (case, alpha, beta, (firstMoment, secondMoment) or None for nil).
BETA_NEW = [
    ("beta(1,1)", 1, 1, (0.5, 1.0 / 3.0)),
    ("beta(1,2)", 1, 2, (1.0 / 3.0, 1.0 / 6.0)),
    ("beta(3,1)", 3, 1, (0.75, 0.6)),
    ("beta(-1,1)", -1, 1, None),
    ("beta(1,-1)", 1, -1, None),
]
# TestBetaDistribution_MatchMoments: (case, (alpha, beta) of the distribution, m1, m2, want).
BETA_MATCH_MOMENTS = [
    ("beta(1,1)", (1, 1), 0.5, 1.0 / 3.0, True),
    ("beta(0,0)", (0, 0), 0, 0, False),
]
# TestBetaDistribution_DensityFunction / _DistributionFunction: (case, alpha, beta, x, want),
# compared within 1e-6 as upstream's WithinTolerance.
BETA_DENSITY = [
    ("beta(2,2) pdf(0.5)", 2, 2, 0.5, 1.5),
    ("beta(-1,1) pdf(0.5)", -1, 1, 0.5, 0),
]
BETA_DISTRIBUTION = [
    ("beta(2,2) PDF(0.5)", 2, 2, 0.5, 0.5),
    ("beta(2,2) PDF(0.0)", 2, 2, 0.0, 0.0),
    ("beta(2,2) PDF(1.0)", 2, 2, 1.0, 1.0),
    ("beta(-1,1) PDF(0.5)", -1, 1, 0.5, 0),
]
# TestGetMaxVariance: (case, m1, want).
BETA_MAX_VARIANCE = [("m1=0", 0, 0), ("m1=1", 1, 0), ("m1=0.5", 0.5, 0.25), ("m1=-1", -1, 0)]

# ---- pkg/trimaran/resourcestats_test.go ---------------------------------------------------------
RS_METRICS = [
    metric("CPU", "", 40, "no_name"),
    metric("CPU", "AVG", 40, "cpu_running_avg"),
    metric("CPU", "STD", 36, "cpu_running_std"),
    metric("Memory", "AVG", 20, "mem_running_avg"),
    metric("Memory", "STD", 10, "mem_running_std"),
]
RS_NODE0 = capacity_node("node0", NODE_1G)
# TestCreateResourceStats: pod request MilliCPU 100, Memory 1Mi.
# (case, metrics, resource, watcher type, (capacity, req, usedAvg, usedStdev) or None)
RS_CREATE = [
    ("test-cpu", RS_METRICS, "cpu", "CPU", (1000, 100, 400, 360)),
    ("test-missing", [RS_METRICS[3], RS_METRICS[4]], "cpu", "CPU", None),
    ("test-memory", RS_METRICS, "memory", "Memory", (1024, 1, 204.8, 102.4)),
]
# TestGetResourceRequested: (assertion, pod, (MilliCPU, Memory)).
RS_REQUESTED = [
    ("first", lambda: stats_pod(10, 100, 512, [1000, 500], [2048, 1024]), (1510, 3072)),
    ("init container larger", lambda: stats_pod(10, 2000, 4096, [1000, 500], [2048, 1024]),
     (2010, 4096)),
    ("zero requests", lambda: stats_pod(0, 0, 0, [0, 0, 1000], [0, 200 * MEGA, 400 * MEGA]),
     (1000, 600 * MEGA)),
]
# TestGetResourceLimits: (assertion, pod, (MilliCPU, Memory)).
RS_LIMITS = [
    ("first", lambda: with_limits(stats_pod(10, 100, 512, [1000, 500], [2048, 1024]),
                                  2000, 4096, [1000, 500], [2048, 1024]), (2010, 4096)),
    ("limits not one per container", lambda: with_limits(with_limits(
        stats_pod(10, 100, 512, [1000, 500], [2048, 1024]), 2000, 4096, [1000, 500], [2048, 1024]),
        2000, 4096, [4000], [2048, 1024]), (2010, 4096)),
    ("containers larger", lambda: with_limits(
        stats_pod(10, 100, 512, [1000, 500], [2048, 1024]), 2000, 4096, [1000, 2500],
        [4096, 2048]), (3510, 6144)),
    ("zero limits", lambda: with_limits(stats_pod(0, 100, 512, [1000, 500, 0], [2048, 1024, 0]),
                                        2000, 4096, [0, 0, 1000], [0, 2048, 0]), (2000, 4096)),
]
# TestGetMuSigma: (case, (capacity, req, usedAvg, usedStdev), mu, sigma).
RS_MU_SIGMA = [
    ("proper arguments", (1000, 100, 400, 360), 0.5, 0.36),
    ("zero arguments", (0, 0, 0, 0), 0, 0),
    ("large used", (1000, 100, 1400, 300), 1.0, 0.3),
    ("large deviation", (1000, 100, 400, 1600), 0.5, 1.0),
    ("large arguments", (1000, 0, 1400, 1600), 1.0, 1.0),
    ("negative used", (1000, 0, -100, 200), 0.0, 0.2),
    ("negative deviation", (1000, 400, 0, -200), 0.4, 0.0),
]


# TestGetNodeRequestsAndLimits: the pods and nodes of the test, then
# (case, node, pods on the node, the pod, NodeRequestsAndLimits as in NRLA_*).
def _nrl_pod(cpu_limits: list[int], memory_limits: list[int]) -> Obj:
    return with_limits(stats_pod(0, 100, 2048, [1000, 500], [512, 1024]), 500, 2048,
                       cpu_limits, memory_limits)


RS_NODE = capacity_node("test-node", {"cpu": "8000m", "memory": "6Ki"})
RS_NODE_LOW = capacity_node("test-node", {"cpu": "1600m", "memory": "6Ki"})
RS_NODE_REQUESTS_AND_LIMITS = [
    ("test-0", RS_NODE, [_nrl_pod([1500, 500], [1024, 1024]), _nrl_pod([1500, 500], [1024, 1024])],
     _nrl_pod([1500, 500], [1024, 1024]),
     ((3 * 1500, 3 * 2048), (3 * 2000, 3 * 2048), (2 * 1500, 2 * 2048), (2 * 2000, 2 * 2048),
      (8000, 6 * 1024))),
    ("test-1", RS_NODE, [_nrl_pod([1000, 1000], [1024, 2048])], _nrl_pod([1500, 500], [1024, 1024]),
     ((2 * 1500, 2 * 2048), (2 * 2000, 2 * 2048 + 1024), (1500, 2048), (2000, 2048 + 1024),
      (8000, 6 * 1024))),
    # a node with less capacity than the pod's limits: min(request, capacity), max(request, limit)
    ("test-2", RS_NODE_LOW, [], _nrl_pod([1500, 500], [1024, 1024]),
     ((1500, 2048), (2000, 2048), (0, 0), (0, 0), (1600, 6 * 1024))),
    # a pod requesting more than its limits: limits raised to the requests
    ("test-3", RS_NODE_LOW, [], _nrl_pod([1000, 400], [1024, 1024]),
     ((1500, 2048), (1500, 2048), (0, 0), (0, 0), (1600, 6 * 1024))),
]

# ---- pkg/trimaran/handler_test.go TestHandlerCacheCleanup ---------------------------------------
# (case, [(pod, seconds before the cleanup it was recorded; None: Go's zero time)],
#  pod updated from unassigned to node-1 just before the cleanup or None, pods left in order).
HANDLER_CLEANUP = [
    ("OnUpdate doesn't add unassigned pods", [("Pod-1", None), ("Pod-2", None), ("Pod-3", None)],
     "Pod-4", ["Pod-4"]),
    ("cleanupCache doesn't delete newly added pods",
     [("Pod-1", None), ("Pod-2", None), ("Pod-3", None), ("Pod-4", 0)], "Pod-5",
     ["Pod-4", "Pod-5"]),
    ("cleanupCache deletes old pods", [("Pod-1", 5 * 60), ("Pod-2", 10), ("Pod-3", 5)], None,
     ["Pod-2", "Pod-3"]),
]

# ---- pkg/trimaran/collector_test.go -------------------------------------------------------------
COLLECTOR_RESPONSE = {"timestamp": 0, "window": {"duration": "", "start": 0, "end": 0},
                      "source": "", "data": {"NodeMetricsMap": {"node-1": {"metrics": [
                          metric("CPU", "AVG", 80), metric("CPU", "STD", 16),
                          metric("Memory", "AVG", 25), metric("Memory", "STD", 6.25)]}}}}
COLLECTOR_NO_NODE = {"timestamp": 0, "window": {"duration": "", "start": 0, "end": 0},
                     "source": "", "data": {"NodeMetricsMap": {}}}
# (test, TrimaranSpec args, error or None)
COLLECTOR_SPECS = [
    ("TestNewCollector", {"watcherAddress": "http://deadbeef:2020"}, None),
    ("TestNewCollectorSpecs", {"watcherAddress": "", "metricProvider": {"type": ""}},
     "invalid MetricProvider.Type, got "),
    ("TestNewCollectorLoadWatcher", {"watcherAddress": "", "metricProvider": {
        "type": "SignalFx", "address": "http://127.0.0.1:1", "token": "PWNED"}}, None),
]

# ---- apis/config/v1/defaults_test.go TestSchedulingDefaults (the Trimaran rows) ------------------
# (case, plugin, args given, expected fields after defaulting)
DEFAULTS = [
    ("empty config TargetLoadPackingArgs", "TargetLoadPacking", {},
     {"metric_provider.type": "KubernetesMetricsServer", "default_requests": {"cpu": "1000m"},
      "default_requests_multiplier": "1.5", "target_utilization": 40}),
    ("set non default TargetLoadPackingArgs", "TargetLoadPacking",
     {"watcherAddress": "http://localhost:2020", "defaultRequests": {"cpu": "100m"},
      "defaultRequestsMultiplier": "2.5", "targetUtilization": 50},
     {"watcher_address": "http://localhost:2020", "default_requests": {"cpu": "100m"},
      "default_requests_multiplier": "2.5", "target_utilization": 50}),
    ("empty config LoadVariationRiskBalancingArgs", "LoadVariationRiskBalancing", {},
     {"metric_provider.type": "KubernetesMetricsServer", "safe_variance_margin": 1.0,
      "safe_variance_sensitivity": 1.0}),
    ("set non default LoadVariationRiskBalancingArgs", "LoadVariationRiskBalancing",
     {"safeVarianceMargin": 2.0, "safeVarianceSensitivity": 2.0},
     {"metric_provider.type": "KubernetesMetricsServer", "safe_variance_margin": 2.0,
      "safe_variance_sensitivity": 2.0}),
    ("empty config LowRiskOverCommitmentArgs", "LowRiskOverCommitment", {},
     {"metric_provider.type": "KubernetesMetricsServer", "smoothing_window_size": 5,
      "risk_limit_weights": {"cpu": 0.5, "memory": 0.5}}),
    ("set non default LowRiskOverCommitmentArgs", "LowRiskOverCommitment",
     {"smoothingWindowSize": 10, "riskLimitWeights": {"cpu": 0.2, "memory": 0.8}},
     {"smoothing_window_size": 10, "risk_limit_weights": {"cpu": 0.2, "memory": 0.8}}),
    ("set out of range LowRiskOverCommitmentArgs", "LowRiskOverCommitment",
     {"smoothingWindowSize": 10, "riskLimitWeights": {"cpu": -1, "memory": 2}},
     {"smoothing_window_size": 10, "risk_limit_weights": {"cpu": 0.5, "memory": 0.5}}),
]
# The plugins' TestNew: arguments upstream's New accepts, which v1 defaulting replaces.
# (test, plugin, args given, expected fields)
NEW_BAD_ARGS = [
    ("loadvariationriskbalancing_test.go TestNew badArgs margin", "LoadVariationRiskBalancing",
     {"safeVarianceMargin": -5}, {"safe_variance_margin": 1.0}),
    ("loadvariationriskbalancing_test.go TestNew badArgs sensitivity", "LoadVariationRiskBalancing",
     {"safeVarianceMargin": -5, "safeVarianceSensitivity": -1},
     {"safe_variance_margin": 1.0, "safe_variance_sensitivity": 1.0}),
    ("lowriskovercommitment_test.go TestLowRiskOverCommitment_New badArgs window",
     "LowRiskOverCommitment", {"smoothingWindowSize": -5}, {"smoothing_window_size": 5}),
    ("lowriskovercommitment_test.go TestLowRiskOverCommitment_New badArgs weights nil",
     "LowRiskOverCommitment", {"smoothingWindowSize": -5, "riskLimitWeights": None},
     {"risk_limit_weights": {"cpu": 0.5, "memory": 0.5}}),
]
