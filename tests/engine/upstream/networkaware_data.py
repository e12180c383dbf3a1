"""Upstream test-table data for scheduler-plugins' NetworkAware plugins (NetworkOverhead,
TopologicalSort).

Transcribed (data only: inputs and expected values, no Go logic) from
https://github.com/kubernetes-sigs/scheduler-plugins, read through the stored-source index:

* pkg/networkaware/networkoverhead/networkoverhead_test.go @ 0744b26e4920cd870631afedd044aa664d17f99c
  (fixtures ``GetNetworkTopologyCR``, ``GetNetworkTopologyCRBasic``, ``GetAppGroupCROnlineBoutique``,
  ``GetAppGroupCRBasic``; tables of ``TestNetworkOverheadScore``, ``TestNetworkOverheadFilter``,
  ``BenchmarkNetworkOverheadPreFilter``);
* pkg/networkaware/topologicalsort/topologicalsort_test.go @ 321447b493baa85b2c4d202eb085ae0231795d1f
  (``TestTopologicalSortLess``);
* plugin sources for the semantics: networkoverhead.go @ 321447b493baa85b2c4d202eb085ae0231795d1f,
  topologicalsort.go @ 2d20310880323ae307312d4d4fdfa78c2267073c, pkg/networkaware/util/util.go
  @ ca5d17bac5478065bae1de411f5a00e1ec36e5c2; label keys from diktyo-io/appgroup-api
  (``AppGroupLabel`` = the API group ``appgroup.diktyo.x-k8s.io``, ``AppGroupSelectorLabel`` =
  that + ``.workload``).

Conventions
-----------
* Pods are the tests' ``makePod(selector, podName, priority, appGroup, requests, limits)`` and
  ``makePodAllocated(selector, podName, hostname, ...)``: name = podName, labels
  {AppGroupLabel: appGroup, AppGroupSelectorLabel: selector}, priority 0, created in namespace
  "default". Kept here as ``(selector, pod name, node, app group)``.
* Nodes are ``st.MakeNode().Name(n).Label(region).Label(zone).Capacity(cpu 8000m, memory 16Gi)``:
  kept as ``(name, region, zone)``.
* ``maxNetworkCost`` is unset (0) in every dependency of these fixtures.
* TopologicalSort's test sorts ``status.topologyOrder`` by selector before creating the AppGroup
  (``sort.Sort(util.ByWorkloadSelector(...))``), as the AppGroup controller stores it: the lists
  below are given in that sorted order.
"""

from __future__ import annotations

from typing import Any

NETWORKOVERHEAD_TEST = "pkg/networkaware/networkoverhead/networkoverhead_test.go"
TOPOLOGICALSORT_TEST = "pkg/networkaware/topologicalsort/topologicalsort_test.go"

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"


def _workload(selector: str) -> dict[str, str]:
    return {"kind": "Deployment", "name": f"{selector}-deployment", "selector": selector,
            "apiVersion": "apps/v1", "namespace": "default"}


# ---- fixtures ----------------------------------------------------------------------------------

#: GetAppGroupCRBasic (networkoverhead_test.go; the same workloads in topologicalsort_test.go,
#: there without a UID): p1 -> p2 -> p3.
APP_GROUP_BASIC = {
    "name": "basic", "uid": "fake-uid", "numMembers": 3, "topologySortingAlgorithm": "KahnSort",
    "workloads": [("p1", ["p2"]), ("p2", ["p3"]), ("p3", [])],
    "topologyOrder": [("p1", 1), ("p2", 2), ("p3", 3)],
}

#: GetAppGroupCROnlineBoutique (both test files; no UID). topologyOrder sorted by selector.
APP_GROUP_ONLINE_BOUTIQUE = {
    "name": "onlineboutique", "uid": "", "numMembers": 11, "topologySortingAlgorithm": "KahnSort",
    "workloads": [
        ("p1", ["p2", "p3", "p4", "p6", "p8", "p9", "p10"]),  # frontend
        ("p2", ["p11"]),  # cartService
        ("p3", []), ("p4", []), ("p5", []), ("p6", []), ("p7", []),
        ("p8", ["p2", "p3", "p4", "p5", "p6", "p7"]),  # checkoutService
        ("p9", ["p3"]),  # recommendationService
        ("p10", []), ("p11", []),
    ],
    # Given upstream as p1:1, p10:2, p9:3, p8:4, p7:5, p6:6, p5:7, p4:8, p3:9, p2:10, p11:11.
    "topologyOrder": sorted([("p1", 1), ("p10", 2), ("p9", 3), ("p8", 4), ("p7", 5), ("p6", 6),
                             ("p5", 7), ("p4", 8), ("p3", 9), ("p2", 10), ("p11", 11)]),
}

#: GetNetworkTopologyCRBasic: nt-test, weights UserDefined.
NETWORK_TOPOLOGY_BASIC = {
    "name": "nt-test", "uid": "fake-uid",
    "weights": {"UserDefined": [
        (REGION, [("us-west-1", [("us-east-1", 20)]), ("us-east-1", [("us-west-1", 20)])]),
        (ZONE, [("Z1", [("Z2", 5)]), ("Z2", [("Z1", 5)]), ("Z3", [("Z4", 10)]),
                ("Z4", [("Z3", 10)])]),
    ]},
}

_REGIONS = ["R1", "R2", "R3", "R4", "R5"]
_ZONES = ["Z1", "Z2", "Z3", "Z4", "Z5", "Z6", "Z7", "Z8", "Z9", "Z10"]

#: GetNetworkTopologyCR: nt-test, weights UserDefined; every region 50 from every other; the
#: second TopologyInfo holds the zone costs (10 between any two zones) but is keyed
#: "topology.kubernetes.io/region" upstream too, so no zone cost is ever found by key.
NETWORK_TOPOLOGY_FULL = {
    "name": "nt-test", "uid": "",
    "weights": {"UserDefined": [
        (REGION, [(r, [(d, 50) for d in _REGIONS if d != r]) for r in _REGIONS]),
        (REGION, [(z, [(d, 10) for d in _ZONES if d != z]) for z in _ZONES]),
    ]},
}

#: The 8 nodes of TestNetworkOverheadScore and TestNetworkOverheadFilter.
NODES_BASIC = [
    ("n-1", "us-west-1", "Z1"), ("n-2", "us-west-1", "Z1"),
    ("n-3", "us-west-1", "Z2"), ("n-4", "us-west-1", "Z2"),
    ("n-5", "us-east-1", "Z3"), ("n-6", "us-east-1", "Z3"),
    ("n-7", "us-east-1", "Z4"), ("n-8", "us-east-1", "Z4"),
]


# ---- TestNetworkOverheadScore --------------------------------------------------------------------

_SCORE_PODS = [("p1", "p1-deployment", "n-2", "basic"), ("p2", "p2-deployment", "n-5", "basic"),
               ("p3", "p3-deployment", "n-1", "basic")]

#: PreFilter then Score on each of the 8 nodes (wantedScoresBefore), then NormalizeScore
#: (wantedScoresAfter); PreFilter's code is Success in every row.
SCORE_ROWS: list[dict[str, Any]] = [
    {"source": f"{NETWORKOVERHEAD_TEST} TestNetworkOverheadScore",
     "case": "AppGroup: basic, p1 to allocate, 8 nodes to score",
     "pods": _SCORE_PODS, "pod": ("p1", "p1-deployment", "basic"),
     "raw": [20, 20, 20, 20, 0, 1, 10, 10],
     "normalized": [0, 0, 0, 0, 100, 95, 50, 50]},
    {"source": f"{NETWORKOVERHEAD_TEST} TestNetworkOverheadScore",
     "case": "AppGroup: basic, p2 to allocate, 8 nodes to score",
     "pods": _SCORE_PODS, "pod": ("p2", "p2-deployment", "basic"),
     "raw": [0, 1, 5, 5, 20, 20, 20, 20],
     "normalized": [100, 95, 75, 75, 0, 0, 0, 0]},
    {"source": f"{NETWORKOVERHEAD_TEST} TestNetworkOverheadScore",
     "case": "AppGroup: basic, p3 to allocate, no dependency, 8 nodes to score",
     "pods": _SCORE_PODS, "pod": ("p3", "p3-deployment", "basic"),
     "raw": [0] * 8,
     "normalized": [0] * 8},
]


# ---- TestNetworkOverheadFilter -------------------------------------------------------------------

_FILTER_PODS = [("p1", "p1-deployment", "n-2", "basic"), ("p2", "p2-deployment", "n-5", "basic"),
                ("p3", "p3-deployment", "n-8", "basic")]


def _not_met(node: str, satisfied: int, violated: int) -> str:
    return (f"Node {node} does not meet several network requirements from Workload "
            f"dependencies: Satisfied: {satisfied} Violated: {violated}")


#: PreFilter (code Success in every row) then Filter on `node`; `want` None = nil status,
#: else (code, message).
FILTER_ROWS: list[dict[str, Any]] = [
    {"case": "AppGroup: basic, p1 to allocate, n-1 to filter: n-1 does not meet network "
             "requirements",
     "pod": ("p1", "p1-deployment", "basic"), "node": "n-1",
     "want": ("Unschedulable", _not_met("n-1", 0, 1))},
    {"case": "AppGroup: basic, p1 to allocate, n-6 to filter: n-6 meets network requirements",
     "pod": ("p1", "p1-deployment", "basic"), "node": "n-6", "want": None},
    {"case": "AppGroup: basic, p2 to allocate, n-5 to filter: n-5 does not meet network "
             "requirements",
     "pod": ("p2", "p2-deployment", "basic"), "node": "n-5",
     "want": ("Unschedulable", _not_met("n-5", 0, 1))},
    {"case": "AppGroup: basic, p2 to allocate, n-7 to filter: n-7 meets network requirements",
     "pod": ("p2", "p2-deployment", "basic"), "node": "n-7", "want": None},
    {"case": "AppGroup: basic, p3 to allocate, no dependencies, n-1 to filter: n-1 meets "
             "network requirements",
     "pod": ("p3", "p3-deployment", "basic"), "node": "n-1", "want": None},
    {"case": "AppGroup: basic, p10 to allocate, different AppGroup, n-1 to filter: n-1 meets "
             "network requirements",
     "pod": ("p10", "p10-deployment", ""), "node": "n-1", "want": None},
    {"case": "AppGroup: basic, p1 to allocate, n-1 to filter, multiple dependencies: n-1 does "
             "not meet network requirements",
     "pod": ("p1", "p1-deployment", "basic"), "node": "n-1",
     "want": ("Unschedulable", _not_met("n-1", 0, 1))},
    {"case": "AppGroup: basic, p1 to allocate, n-6 to filter, multiple dependencies: n-6 meets "
             "network requirements",
     "pod": ("p1", "p1-deployment", "basic"), "node": "n-6", "want": None},
]
for _row in FILTER_ROWS:
    _row["source"] = f"{NETWORKOVERHEAD_TEST} TestNetworkOverheadFilter"
    _row["pods"] = _FILTER_PODS


# ---- BenchmarkNetworkOverheadPreFilter -----------------------------------------------------------

#: The benchmark's allocated pods (onlineboutique).
BENCHMARK_PODS = [
    ("p1", "p1-deployment", "n-2"), ("p2", "p2-deployment", "n-5"),
    ("p3", "p3-deployment", "n-1"), ("p4", "p4-deployment", "n-9"),
    ("p5", "p5-deployment", "n-5"), ("p6", "p6-deployment", "n-1"),
    ("p7", "p7-deployment", "n-2"), ("p8", "p8-deployment", "n-5"),
    ("p9", "p9-deployment", "n-1"), ("p10", "p10-deployment", "n-2"),
]
#: `getNodes(n, regionNames, zoneNames)` gives node i a random region of R1..R5 and zone of
#: Z1..Z10 (math/rand): the tests draw them from a seeded generator instead. PreFilter for
#: makePod("p1", "p1-deployment", 0, "onlineboutique") must return Success.
BENCHMARK_REGIONS = _REGIONS
BENCHMARK_ZONES = _ZONES
PREFILTER_BENCHMARK_ROWS: list[dict[str, Any]] = [
    {"source": f"{NETWORKOVERHEAD_TEST} BenchmarkNetworkOverheadPreFilter",
     "case": f"AppGroup: onlineboutique, 10 pods allocated, {n} nodes, 1 pod to allocate",
     "nodes": n, "pod": ("p1", "p1-deployment", "onlineboutique"), "expected": "Success"}
    for n in (10, 100, 500, 1000, 2000, 3000, 5000, 10000)
]


# ---- TestTopologicalSortLess ---------------------------------------------------------------------

#: `Less(pInfo1, pInfo2)`; both QueuedPodInfos have zero timestamps; pods priority 0.
LESS_ROWS: list[dict[str, Any]] = [
    {"source": f"{TOPOLOGICALSORT_TEST} TestTopologicalSortLess",
     "case": "basic, same AppGroup, p1 order lower than p2", "app_group": "basic",
     "p1": ("p1", "p1-deployment", "basic"), "p2": ("p2", "p2-deployment", "basic"),
     "want": True},
    {"source": f"{TOPOLOGICALSORT_TEST} TestTopologicalSortLess",
     "case": "onlineboutique, same AppGroup, p5 order higher than p1",
     "app_group": "onlineboutique",
     "p1": ("p5", "p5-deployment", "onlineboutique"),
     "p2": ("p1", "p1-deployment", "onlineboutique"),
     "want": False},
    {"source": f"{TOPOLOGICALSORT_TEST} TestTopologicalSortLess",
     "case": "pods from different AppGroups... ", "app_group": "basic",
     "p1": ("p1", "p1-deployment", "basic"), "p2": ("p5", "p5-deployment", "other"),
     "want": False},
]
