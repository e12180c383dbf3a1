"""scheduler-plugins' NodeResourceTopologyMatch unit-test tables, transcribed as data.

Source: kubernetes-sigs/scheduler-plugins, `pkg/noderesourcetopology/`:

* FT = filter_test.go, the newest stored version (the `fwk`/numaplacement era, the one with
  TestFilterPreemptionContext; its TestNodeResourceTopology* tables are identical to those of
  commit 4f943be4). Helpers: `makePodByResourceList` (requests = limits, one container),
  `makePodWithReqAndLimitByResourceList`, `makePodWithReqByResourceList` (requests only),
  `makePodByResourceListWithManyContainers` (n equal containers, requests = limits),
  `makePod(withMultiContainers)` / `parseTestUserEntry` (containers `cnt-<i>`, init containers
  the same way, requests = limits). Nodes: allocatable = Σ of the zones' `available`
  (`makeResourceListFromZones`) plus the descriptor's `node` extras.
* ST = score_test.go (commit 0404cc6b, Score taking a NodeInfo). `defaultNUMANodes`,
  `fourNUMANodes`, `makePodByResourceLists` (one container per list, requests = limits).

`MakeTopologyResInfo(name, capacity, available)` sets capacity and available only. Quantities
are written as the Go source writes them: `*resource.NewQuantity(2, DecimalSI)` is "2",
`resource.MustParse("2Gi")` is "2Gi", `*resource.NewQuantity(20*1024*1024, DecimalSI)` is
"20971520".
"""

from __future__ import annotations

from typing import Any

CPU = "cpu"
MEMORY = "memory"
EXTENDED = "namespace/extended"
HUGEPAGES_2MI = "hugepages-2Mi"
NIC = "vendor/nic1"
NOT_EXISTING_NIC = "vendor/notexistingnic"
NIC_NO_NUMA = "vendor.com/old-nic-model"
GPU = "gpu"
EPHEMERAL_STORAGE = "ephemeral-storage"

ALIGN_POD = "cannot align pod"
ALIGN_CONTAINER = "cannot align container"
ALIGN_INIT = "cannot align init container"

# An NRT descriptor: (name, topologyPolicies, zones, node extras); a zone is
# (name, [(resource, capacity, available), ...], costs {zone name: value} or None).
Zone = tuple[str, list[tuple[str, str, str]], dict[str, int] | None]
Desc = tuple[str, list[str], list[Zone], dict[str, str]]

# ---- FT TestNodeResourceTopology: nodeTopologyDescs ---------------------------------------
FT_NODES: list[Desc] = [
    ("node1", ["SingleNUMANodeContainerLevel"], [
        ("node-0", [(CPU, "20", "4"), (MEMORY, "8Gi", "8Gi"), (NIC, "30", "10")], None),
        ("node-1", [(CPU, "30", "8"), (MEMORY, "8Gi", "8Gi"), (NIC, "30", "10")], None),
    ], {}),
    ("node2", ["SingleNUMANodeContainerLevel"], [
        ("node-0", [(CPU, "20", "2"), (MEMORY, "8Gi", "4Gi"), (HUGEPAGES_2MI, "128Mi", "128Mi"),
                    (NIC, "30", "5")], None),
        ("node-1", [(CPU, "30", "4"), (MEMORY, "8Gi", "4Gi"), (HUGEPAGES_2MI, "128Mi", "128Mi"),
                    (NIC, "30", "2")], None),
    ], {NIC_NO_NUMA: "4"}),
    ("node3", ["SingleNUMANodePodLevel"], [
        ("node-0", [(CPU, "20", "2"), (MEMORY, "8Gi", "4Gi"), (NIC, "30", "5")], None),
        ("node-1", [(CPU, "30", "4"), (MEMORY, "8Gi", "4Gi"), (NIC, "30", "2")], None),
    ], {}),
    ("badly_formed_node", ["SingleNUMANodePodLevel"], [
        ("node-0", [(CPU, "20", "2"), (MEMORY, "8Gi", "4Gi"), (NIC, "30", "5")], None),
        ("node-75", [(CPU, "30", "4"), (MEMORY, "8Gi", "4Gi"), (NIC, "30", "2")], None),
    ], {}),
    ("extended", ["SingleNUMANodeContainerLevel"], [
        ("node-0", [(CPU, "20", "4"), (MEMORY, "8Gi", "8Gi"), (NIC, "30", "10")], None),
        ("node-1", [(CPU, "30", "8"), (MEMORY, "8Gi", "8Gi"), (NIC, "30", "10")], None),
    ], {EXTENDED: "1"}),
]

# A pod: (builder, resources...) with builder one of
#   "gu"    makePodByResourceList(requests)                    requests = limits
#   "rl"    makePodWithReqAndLimitByResourceList(req, lim)
#   "req"   makePodWithReqByResourceList(requests)             no limits
#   "many"  makePodByResourceListWithManyContainers(res, n)
#   "none"  &v1.Pod{}
Pod = tuple[Any, ...]

# (case name, pod, node index into FT_NODES, wanted reason or None); Unschedulable throughout.
FT_TEST_NODE_RESOURCE_TOPOLOGY: list[tuple[str, Pod, int, str | None]] = [
    ("Guaranteed QoS, pod with extended resource fit",
     ("gu", {CPU: "2", MEMORY: "2Gi", EXTENDED: "1", NIC: "3"}), 4, None),
    ("Guaranteed QoS, pod with extended resource no devices; pod fit",
     ("gu", {CPU: "2", MEMORY: "2Gi", EXTENDED: "1"}), 4, None),
    ("Best effort QoS, pod fit", ("none",), 0, None),
    ("Best effort QoS requesting devices, Pod Scope Topology policy; pod fit",
     ("gu", {NIC: "5"}), 2, None),
    ("Best effort QoS requesting devices, Pod Scope Topology policy; pod doesn't fit",
     ("gu", {NIC: "20"}), 2, ALIGN_POD),
    ("Best effort QoS requesting devices, Container Scope Topology policy; pod fit",
     ("gu", {NIC: "5"}), 1, None),
    ("Best effort QoS requesting devices, Container Scope Topology policy; pod doesn't fit",
     ("gu", {NIC: "20"}), 0, ALIGN_CONTAINER),
    ("Best effort QoS requesting devices and extended resources, Container Scope Topology policy; pod doesn't fit",
     ("gu", {EXTENDED: "1", NIC: "10"}), 4, None),
    ("Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; pod doesn't fit",
     ("rl", {CPU: "3", MEMORY: "3Gi", NIC: "11"}, {CPU: "4", MEMORY: "4Gi", NIC: "11"}), 1,
     ALIGN_CONTAINER),
    ("Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
     ("rl", {CPU: "1", MEMORY: "1Gi", NIC: "6"}, {CPU: "2", MEMORY: "2Gi", NIC: "6"}), 2, ALIGN_POD),
    ("Best effort QoS requesting CPU, memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("rl", {CPU: "1", MEMORY: "1Gi", NIC: "5"}, {CPU: "2", MEMORY: "2Gi", NIC: "5"}), 2, None),
    ("Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("rl", {CPU: "19", MEMORY: "5Gi", NIC: "5"}, {CPU: "20", MEMORY: "6Gi", NIC: "5"}), 2, None),
    ("Best effort QoS requesting CPU, memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("rl", {CPU: "3", MEMORY: "3Gi", NIC: "5"}, {CPU: "4", MEMORY: "4Gi", NIC: "5"}), 1, None),
    ("Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("rl", {CPU: "5", MEMORY: "5Gi", NIC: "5"}, {CPU: "6", MEMORY: "6Gi", NIC: "5"}), 1, None),
    ("Guaranteed QoS, minimal, pod fit", ("gu", {CPU: "2", MEMORY: "2Gi"}), 0, None),
    # findAvailableResourceByName(nodeTopologyDescs[0].nrt.Zones[1].Resources, cpu / memory)
    ("Guaranteed QoS, minimal, saturating zone, pod fit", ("gu", {CPU: "8", MEMORY: "8Gi"}), 0, None),
    ("Guaranteed QoS, zero quantity of unavailable resource, pod fit",
     ("gu", {CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "0", NIC: "3"}), 0, None),
    ("Guaranteed QoS, pod fit", ("gu", {CPU: "2", MEMORY: "2Gi", NIC: "3"}), 1, None),
    ("Guaranteed QoS, hugepages, pod fit",
     ("gu", {CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "64Mi", NIC: "3"}), 1, None),
    ("Burstable QoS, pod fit", ("gu", {CPU: "4", NIC: "3"}), 1, None),
    ("Burstable QoS, requesting CPU and devices (not enough), Container Scope Topology policy; pod doesn't fit",
     ("gu", {CPU: "4", NIC: "11"}), 1, ALIGN_CONTAINER),
    ("Burstable QoS, requesting CPU and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
     ("gu", {CPU: "2", NIC: "6"}), 2, ALIGN_POD),
    ("Burstable QoS requesting CPU (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("gu", {CPU: "2", NIC: "5"}), 2, None),
    ("BurstableQoS requesting CPU (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("gu", {CPU: "20", NIC: "5"}), 2, None),
    ("Burstable QoS requesting CPU (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("gu", {CPU: "2", NIC: "5"}), 1, None),
    ("Burstable QoS requesting CPU (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("gu", {CPU: "4", NIC: "5"}), 1, None),
    ("Burstable QoS, requesting memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; pod doesn't fit",
     ("gu", {MEMORY: "2Gi", NIC: "11"}), 1, ALIGN_CONTAINER),
    ("Burstable QoS, requesting memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
     ("gu", {MEMORY: "2Gi", NIC: "6"}), 2, ALIGN_POD),
    ("Burstable QoS requesting memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("gu", {MEMORY: "2Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("gu", {MEMORY: "5Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("gu", {MEMORY: "4Gi", NIC: "5"}), 1, None),
    ("Burstable QoS requesting memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("gu", {MEMORY: "5Gi", NIC: "5"}), 1, None),
    ("Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Container Scope Topology policy; pod doesn't fit",
     ("req", {CPU: "4", MEMORY: "4Gi", NIC: "11"}), 1, ALIGN_CONTAINER),
    ("Burstable QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), Pod Scope Topology policy; pod doesn't fit",
     ("req", {CPU: "2", MEMORY: "2Gi", NIC: "6"}), 2, ALIGN_POD),
    ("Burstable QoS requesting CPU, memory (enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("req", {CPU: "2", MEMORY: "2Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, Pod Scope Topology policy; pod fit",
     ("req", {CPU: "20", MEMORY: "5Gi", NIC: "5"}), 2, None),
    ("Burstable QoS requesting CPU, memory (enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("req", {CPU: "4", MEMORY: "4Gi", NIC: "5"}), 1, None),
    ("Burstable QoS requesting CPU, memory (not enough on NUMA) and devices, Container Scope Topology policy; pod fit",
     ("req", {CPU: "5", MEMORY: "5Gi", NIC: "5"}), 1, None),
    ("Burstable QoS with extended resources, pod fit",
     ("gu", {EXTENDED: "1", CPU: "4", NIC: "3"}), 4, None),
    ("Guaranteed QoS, hugepages, pod doesn't fit",
     ("gu", {CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "256Mi", NIC: "3"}), 1, ALIGN_CONTAINER),
    ("Guaranteed QoS, pod doesn't fit", ("gu", {CPU: "9", MEMORY: "1Gi", NIC: "3"}), 0,
     ALIGN_CONTAINER),
    # The table has two cases named "Guaranteed QoS, pod fit"; this is the second one.
    ("Guaranteed QoS, pod fit", ("gu", {CPU: "2", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}), 0, None),
    ("Guaranteed QoS Topology Scope, pod doesn't fit",
     ("many", {CPU: "3", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3), 2, ALIGN_POD),
    ("Guaranteed QoS Topology Scope, minimal, pod fit", ("gu", {CPU: "1", MEMORY: "1Gi"}), 2, None),
    # findAvailableResourceByName(nodeTopologyDescs[3].nrt.Zones[0].Resources, cpu / memory)
    ("Guaranteed QoS TopologyScope, minimal, saturating zone, pod fit",
     ("gu", {CPU: "2", MEMORY: "4Gi"}), 3, None),
    ("Guaranteed QoS Topology Scope, pod fit",
     ("many", {CPU: "1", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3), 2, None),
    ("Guaranteed QoS Topology Scope, invalid node",
     ("many", {CPU: "1", MEMORY: "1Gi", NOT_EXISTING_NIC: "0"}, 3), 3, ALIGN_POD),
    ("Guaranteed QoS, hugepages, non-NUMA affine NIC, pod fit",
     ("gu", {CPU: "2", MEMORY: "2Gi", HUGEPAGES_2MI: "64Mi", NIC_NO_NUMA: "3"}), 1, None),
    ("Guaranteed QoS, ephemeral-storage (non-NUMA), pod fit",
     ("gu", {CPU: "2", MEMORY: "2Gi", EPHEMERAL_STORAGE: "100Mi"}), 1, None),
]

# ---- FT TestNodeResourceTopologyMultiContainerPodScope / ...ContainerScope ----------------
_HOST0_ZONES: list[Zone] = [
    ("node-0", [(CPU, "32", "30"), (MEMORY, "64Gi", "60Gi"), (HUGEPAGES_2MI, "384Mi", "384Mi"),
                (NIC, "16", "16")], None),
    ("node-1", [(CPU, "32", "32"), (MEMORY, "64Gi", "64Gi"), (HUGEPAGES_2MI, "512Mi", "512Mi"),
                (NIC, "32", "32")], None),
]
FT_HOST0_POD_SCOPE: Desc = ("host0", ["SingleNUMANodePodLevel"], _HOST0_ZONES, {})
FT_HOST0_CONTAINER_SCOPE: Desc = ("host0", ["SingleNUMANodeContainerLevel"], _HOST0_ZONES, {})

# (case name, [container requests = limits, ...], wanted reason or None)
FT_MULTI_CONTAINER_POD_SCOPE: list[tuple[str, list[dict[str, str]], str | None]] = [
    ("gu pod fits only on a numa node",
     [{CPU: "2", MEMORY: "2Gi"}, {CPU: "4", MEMORY: "8Gi"},
      {CPU: "26", MEMORY: "32Gi", HUGEPAGES_2MI: "512Mi", NIC: "26"}], None),
    ("gu pod does not fit - not enough CPUs available on any NUMA node",
     [{CPU: "2", MEMORY: "2Gi"}, {CPU: "8", MEMORY: "8Gi"},
      {CPU: "26", MEMORY: "26Gi", HUGEPAGES_2MI: "52Mi", NIC: "26"}], ALIGN_POD),
    ("gu pod does not fit - not enough memory available on any NUMA node",
     [{CPU: "2", MEMORY: "4Gi"}, {CPU: "4", MEMORY: "16Gi"},
      {CPU: "26", MEMORY: "52Gi", HUGEPAGES_2MI: "52Mi", NIC: "26"}], ALIGN_POD),
    ("gu pod does not fit - not enough Hugepages available on any NUMA node",
     [{CPU: "2", MEMORY: "2Gi"}, {CPU: "4", MEMORY: "8Gi"},
      {CPU: "26", MEMORY: "32Gi", HUGEPAGES_2MI: "3328Mi", NIC: "26"}], ALIGN_POD),
    ("gu pod does not fit - not enough devices available on any NUMA node",
     [{CPU: "2", MEMORY: "2Gi"}, {CPU: "4", MEMORY: "8Gi"},
      {CPU: "26", MEMORY: "26Gi", HUGEPAGES_2MI: "52Mi", NIC: "52"}], ALIGN_POD),
]

# (description, init container requests, app container requests, statusErr or None)
FT_MULTI_CONTAINER_CONTAINER_SCOPE: list[
        tuple[str, list[dict[str, str]], list[dict[str, str]], str | None]] = [
    ("[1][tier3] single container with good allocation - fit",
     [], [{CPU: "2", MEMORY: "4G"}], None),
    ("[2][tier3] single container with cpu over allocation - fit",
     [], [{CPU: "40", MEMORY: "4G"}], ALIGN_CONTAINER),
    ("[2][tier3] single container with memory over allocation - fit",
     [], [{CPU: "2", MEMORY: "100G"}], ALIGN_CONTAINER),
    ("[2][tier3] single container with cpu and memory over allocation - fit",
     [], [{CPU: "40", MEMORY: "100G"}], ALIGN_CONTAINER),
    ("[4][tier2] multi-containers with good allocation, spread across NUMAs - fit",
     [], [{CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "40G"}], None),
    ("[4][tier1] multi containers with good devices and hugepages allocation, spread across NUMAs - fit",
     [], [{CPU: "2", MEMORY: "6G", HUGEPAGES_2MI: "500Mi", NIC: "16"},
          {CPU: "2", MEMORY: "6G", HUGEPAGES_2MI: "50Mi", NIC: "8"}], None),
    ("[7][tier1] init container with cpu over allocation, multi-containers with good allocation - not fit",
     [{CPU: "40", MEMORY: "40G"}], [{CPU: "1", MEMORY: "4G"}, {CPU: "1", MEMORY: "4G"}], ALIGN_INIT),
    ("[7][tier1] init container with memory over allocation, multi-containers with good allocation - not fit",
     [{CPU: "4", MEMORY: "70G"}], [{CPU: "1", MEMORY: "4G"}, {CPU: "1", MEMORY: "4G"}], ALIGN_INIT),
    ("[11][tier1] init container with good allocation, multi-containers spread across NUMAs - fit",
     [{CPU: "4", MEMORY: "10G"}], [{CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "40G"}], None),
    ("[17][tier1] multi init containers with good allocation, multi-containers spread across NUMAs - fit",
     [{CPU: "4", MEMORY: "10G"}] * 3,
     [{CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "40G"}, {CPU: "6", MEMORY: "10G"}], None),
    ("[24][tier1] multi init containers with good allocation, multi-containers with over cpu allocation - not fit",
     [{CPU: "30", MEMORY: "10G"}] * 2,
     [{CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "6G"}],
     ALIGN_CONTAINER),
    ("[27][tier1] multi init containers with good allocation, container with cpu over allocation - not fit",
     [{CPU: "30", MEMORY: "10G"}] * 2, [{CPU: "35", MEMORY: "40G"}], ALIGN_CONTAINER),
    ("[28][tier1] multi init containers with good allocation, multi-containers with good allocation - fit",
     [{CPU: "30", MEMORY: "10G"}] * 2, [{CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "40G"}], None),
    ("[29][tier1] multi init containers when sum of their cpus requests (together) is over allocatable, multi-containers with good allocation - fit",
     [{CPU: "30", MEMORY: "10G"}] * 3,
     [{CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "40G"}, {CPU: "2", MEMORY: "6G"}], None),
    ("[29][tier1] multi init containers when sum of their memory requests (together) is over allocatable, multi-containers with good allocation - fit",
     [{CPU: "3", MEMORY: "50G"}] * 3,
     [{CPU: "20", MEMORY: "40G"}, {CPU: "20", MEMORY: "40G"}, {CPU: "2", MEMORY: "6G"}], None),
    ("[32][tier1] multi init containers with over cpu allocation - not fit",
     [{CPU: "40", MEMORY: "50G"}, {CPU: "3", MEMORY: "50G"}, {CPU: "3", MEMORY: "50G"}],
     [{CPU: "20", MEMORY: "40G"}, {CPU: "2", MEMORY: "6G"}], ALIGN_INIT),
    ("[32][tier1] multi init containers with over memory allocation - not fit",
     [{CPU: "20", MEMORY: "50G"}, {CPU: "40", MEMORY: "50G"}, {CPU: "3", MEMORY: "50G"}],
     [{CPU: "20", MEMORY: "40G"}, {CPU: "2", MEMORY: "6G"}], ALIGN_INIT),
]

# ---- FT TestFilterPreemptionContext / TestFilterPreemptionPodScope: the rows without a ------
# preemption context (no victims removed): a plain Filter over a fake cache holding one NRT.
# makeFilterResInfo(name, capacity, allocatable, available).
FT_WORKER_CONTAINER_SCOPE: Desc = ("worker-1", ["SingleNUMANodeContainerLevel"], [
    ("node-0", [(CPU, "8", "2"), (MEMORY, "16Gi", "4Gi")], None),
    ("node-1", [(CPU, "8", "4"), (MEMORY, "16Gi", "4Gi")], None),
], {})
FT_WORKER_POD_SCOPE: Desc = ("worker-1", ["SingleNUMANodePodLevel"], [
    ("node-0", [(CPU, "16", "2"), (MEMORY, "32Gi", "4Gi")], None),
    ("node-1", [(CPU, "16", "3"), (MEMORY, "32Gi", "6Gi")], None),
], {})
FT_PREEMPTION_CONTEXT_PLAIN: list[tuple[str, dict[str, str], str | None]] = [
    ("no preemption context, pod doesn't fit (needs 5 CPUs, max NUMA has 4)",
     {CPU: "5", MEMORY: "3Gi"}, ALIGN_CONTAINER),
    ("no preemption context, pod fits (needs 4 CPUs, NUMA 1 has 4)",
     {CPU: "4", MEMORY: "4Gi"}, None),
]
FT_PREEMPTION_POD_SCOPE_PLAIN: list[tuple[str, dict[str, str], str | None]] = [
    ("pod-scope: pod doesn't fit without preemption", {CPU: "8", MEMORY: "16Gi"}, ALIGN_POD),
]

# ---- ST: defaultNUMANodes and fourNUMANodes ------------------------------------------------
ST_DEFAULT_NUMA_NODES: list[tuple[str, list[Zone]]] = [
    ("Node1", [("node-0", [(CPU, "4", "4"), (MEMORY, "500Mi", "500Mi")], None),
               ("node-1", [(CPU, "4", "4"), (MEMORY, "500Mi", "500Mi")], None)]),
    ("Node2", [("node-0", [(CPU, "2", "2"), (MEMORY, "50Mi", "50Mi")], None),
               ("node-1", [(CPU, "2", "2"), (MEMORY, "50Mi", "50Mi")], None)]),
    ("Node3", [("node-0", [(CPU, "6", "6"), (MEMORY, "60Mi", "60Mi")], None),
               ("node-1", [(CPU, "6", "6"), (MEMORY, "60Mi", "60Mi")], None)]),
]

_NEAR_01 = {"node-0": 10, "node-1": 12, "node-2": 20, "node-3": 20}
_NEAR_10 = {"node-0": 12, "node-1": 10, "node-2": 20, "node-3": 20}
_NEAR_23 = {"node-0": 20, "node-1": 20, "node-2": 10, "node-3": 12}
_NEAR_32 = {"node-0": 20, "node-1": 20, "node-2": 12, "node-3": 10}


def _four(gpus: tuple[str, str, str, str]) -> list[Zone]:
    costs = (_NEAR_01, _NEAR_10, _NEAR_23, _NEAR_32)
    return [(f"node-{i}", [(CPU, "2", "2"), (MEMORY, "50Mi", "50Mi"), (GPU, gpus[i], gpus[i])],
             costs[i]) for i in range(4)]


# fourNUMANodes: policy BestEffortContainerLevel on both.
ST_FOUR_NUMA_NODES: list[tuple[str, list[Zone]]] = [
    ("Node1", _four(("1", "1", "0", "0"))),
    ("Node2", _four(("1", "0", "1", "0"))),
]

# The one pod of TestNodeResourceScorePlugin / TestNodeResourcePartialDataScorePlugin.
ST_POD1 = {CPU: "2", MEMORY: "20971520"}  # *resource.NewQuantity(20*1024*1024, DecimalSI)

# TestNodeResourceScorePlugin (SingleNUMANodeContainerLevel): (name, strategy, wanted max node
# and its score).
ST_TEST_NODE_RESOURCE_SCORE_PLUGIN: list[tuple[str, str, dict[str, int]]] = [
    ("MostAllocated strategy", "MostAllocated", {"Node2": 70}),
    ("BalancedAllocation strategy", "BalancedAllocation", {"Node3": 100}),
    ("LeastAllocated strategy", "LeastAllocated", {"Node1": 73}),
]

# TestNodeResourcePartialDataScorePlugin: (name, strategy, NRT kept for ("all" | "none" |
# "Node1"), wanted max node and its score).
ST_PARTIAL_DATA: list[tuple[str, str, str, dict[str, int]]] = [
    ("No data at all, MostAllocated strategy", "MostAllocated", "none", {}),
    ("No data at all, LeastAllocated strategy", "LeastAllocated", "none", {}),
    ("No data at all, BalancedAllocation strategy", "BalancedAllocation", "none", {}),
    ("One node with NRT data, MostAllocated strategy", "MostAllocated", "Node1", {"Node1": 27}),
    ("One node with NRT data, LeastAllocated strategy", "LeastAllocated", "Node1", {"Node1": 73}),
    ("One node with NRT data, BalancedAllocation strategy", "BalancedAllocation", "Node1",
     {"Node1": 89}),
]

# TestNodeResourceScorePluginLeastNUMA: (name, containers (requests = limits), nodes
# ("default:<policy>" or "four"), wanted score of every node).
ST_LEAST_NUMA: list[tuple[str, list[dict[str, str]], str, dict[str, int]]] = [
    ("container scope, one container case 1", [{CPU: "2", MEMORY: "50Mi"}],
     "default:BestEffortContainerLevel", {"Node1": 94, "Node2": 94, "Node3": 94}),
    ("container scope, one container case 2", [{CPU: "4", MEMORY: "50Mi"}],
     "default:BestEffortContainerLevel", {"Node1": 94, "Node2": 82, "Node3": 94}),
    ("container scope, one container case 3", [{CPU: "6", MEMORY: "50Mi"}],
     "default:BestEffortContainerLevel", {"Node1": 82, "Node2": 0, "Node3": 94}),
    ("container scope, two containers case 1",
     [{CPU: "2", MEMORY: "50Mi"}, {CPU: "2", MEMORY: "50Mi"}],
     "default:BestEffortContainerLevel", {"Node1": 94, "Node2": 94, "Node3": 94}),
    ("container scope, two containers case 2",
     [{CPU: "1", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}],
     "default:BestEffortContainerLevel", {"Node1": 94, "Node2": 82, "Node3": 94}),
    ("container scope, two containers case 3",
     [{CPU: "5", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}],
     "default:BestEffortContainerLevel", {"Node1": 82, "Node2": 0, "Node3": 94}),
    ("container scope, two containers non NUMA resource",
     [{"non-numa-resource": "1"}, {"non-numa-resource": "2"}],
     "default:BestEffortContainerLevel", {"Node1": 100, "Node2": 100, "Node3": 100}),
    ("pod scope, two containers case 1",
     [{CPU: "2", MEMORY: "50Mi"}, {CPU: "2", MEMORY: "50Mi"}],
     "default:BestEffortPodLevel", {"Node1": 94, "Node2": 82, "Node3": 82}),
    ("pod scope, two containers case 2",
     [{CPU: "1", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}],
     "default:BestEffortPodLevel", {"Node1": 94, "Node2": 82, "Node3": 82}),
    ("pod scope, two containers case 3",
     [{CPU: "5", MEMORY: "50Mi"}, {CPU: "3", MEMORY: "50Mi"}],
     "default:BestEffortPodLevel", {"Node1": 82, "Node2": 0, "Node3": 82}),
    ("pod scope, one containers non NUMA resource", [{"non-numa-resource": "1"}],
     "default:BestEffortPodLevel", {"Node1": 100, "Node2": 100, "Node3": 100}),
    ("container scope, one container, 4 NUMA nodes, 1 gpu ",
     [{CPU: "2", MEMORY: "50Mi", GPU: "1"}], "four", {"Node1": 94, "Node2": 94}),
    ("container scope, one container, 4 NUMA nodes, 2 gpu ",
     [{CPU: "2", MEMORY: "50Mi", GPU: "2"}], "four", {"Node1": 82, "Node2": 76}),
    ("container scope, 2 containers, 4 NUMA nodes, 2 gpu in one container ",
     [{CPU: "2", MEMORY: "50Mi", GPU: "2"}, {CPU: "2", MEMORY: "50Mi"}], "four",
     {"Node1": 82, "Node2": 76}),
]
