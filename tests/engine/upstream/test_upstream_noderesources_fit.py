"""kube-scheduler's NodeResourcesFit Filter tables, transcribed (data only) and run through `evaluate`.

Source: kubernetes/kubernetes `pkg/scheduler/framework/plugins/noderesources/fit_test.go`, the
newest stored version (the `fwk` era with `testing/synctest`, `resource/v1` DRA and the
UnschedulableAndUnresolvable verdict of v1.34+): TestEnoughRequests, TestNotEnoughRequests,
TestStorageRequests, TestRestartableInitContainers. Every row cites its test function and case
`name` (the pytest id is the case name).

Mapping. Upstream sets one node's allocatable, puts the pods of `framework.NewNodeInfo(...)` on it,
runs PreFilter and Filter with `NodeResourcesFitArgs{ScoringStrategy: LeastAllocated cpu/memory}`
(plus the row's `args`). Here the node ("node"), the existing pods (bound via `spec.nodeName`), the
incoming pod, `policy(filters=["NodeResourcesFit"], scores=[], args=...)`, and the row asserts
`ev.filter["node"]`: None for a nil status, else `{"plugin", "code", "reasons"}`.

`newResourcePod(framework.Resource{...})` is rebuilt as upstream builds it: one container per
Resource, each with requests for cpu (milli), memory, pods (AllowedPodNumber) and
ephemeral-storage — zero amounts included — plus its scalar resources. `newResourceInitPod` puts
those containers into `initContainers`; `newResourceOverheadPod` sets `spec.overhead`;
`newPodLevelResourcesPod` sets `spec.resources`.

Only the Filter status is asserted; the `wantInsufficientResources` column checks the internal
helper `fitsRequest` (same verdicts, with Used/Capacity detail) and is not observable here.

Rows with `draExtendedResourceEnabled: true` whose verdict does not depend on DRA are transcribed
(their extended resource is not the one upstream's DeviceClass names, so Fit checks it as usual):
"extended resource backed by device plugin", "extended resource NOT backed by DRA", "extended
resource was backed by Device Plugin (Allocatable: 0), global cache".

Not transcribed:
* TestEnoughRequests "extended resource backed by DRA", "extended resource backed by DRA, nil
  draManager", "extended resource was backed by Device Plugin (Allocatable: 0)": they need a
  DeviceClass naming `extended.resource.dra.io/something` (DRAExtendedResource); the engine has no
  DRA.
* TestEnoughRequests "extended resource backed by DRA not enabled": it needs the
  DRAExtendedResource gate disabled (alpha off in v1.34/v1.35, beta on by default from v1.36).
* TestRestartableInitContainers "allow pod without restartable init containers if sidecar
  containers is disabled" and "not allow pod with restartable init containers if sidecar containers
  is disabled": they need the SidecarContainers gate disabled (GA since v1.33).
* TestPreFilterDisabled: Filter without PreFilter (an internal ErrNotFound status).
* TestIsFit, TestHaveAnyRequestedResourcesIncreased, Test_isSchedulableAfter*Change,
  TestEventsToRegister, TestFitSignPod: internal helpers, queueing hints, pod signatures.
* TestFitScore and BenchmarkTestFitScore: score tables, in `test_upstream_noderesources_scores.py`.
"""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine import evaluate
from tests.engine.upstream.builders import node, pod, policy

Obj = dict[str, Any]

PLUGIN = "NodeResourcesFit"
NODE = "node"
U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"

EXT_A = "example.com/aaa"  # extendedResourceA
EXT_B = "example.com/bbb"  # extendedResourceB
K8S_IO_A = "kubernetes.io/something"  # kubernetesIOResourceA
K8S_IO_B = "subdomain.kubernetes.io/something"  # kubernetesIOResourceB
HUGE_A = "hugepages-2Mi"  # hugePageResourceA


def status(code: str, *reasons: str) -> Obj:
    return {"plugin": PLUGIN, "code": code, "reasons": list(reasons)}


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"  # getErrReason


def res(cpu: int = 0, mem: int = 0, eph: int = 0) -> dict[str, str]:
    """A framework.Resource{MilliCPU, Memory, EphemeralStorage} as newResourcePod turns it into a
    container's requests: cpu (milli), memory, pods (AllowedPodNumber, 0 here) and
    ephemeral-storage, zero amounts included."""
    return {"cpu": f"{cpu}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(eph)}


def scalar(cpu: int = 0, mem: int = 0, eph: int = 0, *, scalars: dict[str, int]) -> dict[str, str]:
    """res() plus the Resource's ScalarResources map."""
    out = res(cpu, mem, eph)
    out.update({name: str(amount) for name, amount in scalars.items()})
    return out


def containers(*usage: Obj) -> list[Obj]:
    return [{"name": f"c{i}", "image": "img", "resources": {"requests": dict(r)}}
            for i, r in enumerate(usage)]


def resource_pod(*usage: Obj, name: str = "p", node_name: str = "", init: list[Obj] | None = None,
                 overhead: dict[str, str] | None = None,
                 pod_level: dict[str, str] | None = None) -> Obj:
    """newResourcePod(usage...) [+ newResourceInitPod / newResourceOverheadPod /
    newPodLevelResourcesPod]."""
    out = pod(name, node=node_name, containers=containers(*usage))
    if init:
        out["spec"]["initContainers"] = [dict(c, name=f"init{i}") for i, c in enumerate(containers(*init))]
    if overhead is not None:
        out["spec"]["overhead"] = dict(overhead)
    if pod_level is not None:
        out["spec"]["resources"] = {"requests": dict(pod_level)}
    return out


def existing(*usage: Obj) -> list[Obj]:
    """framework.NewNodeInfo(newResourcePod(usage...)): one pod on the node."""
    return [resource_pod(*usage, name="existing", node_name=NODE)]


def allocatable(cpu: int, mem: int, pods: int, ext_a: int, storage: int, huge_a: int) -> dict[str, str]:
    """makeAllocatableResources(milliCPU, memory, pods, extendedA, storage, hugePageA)."""
    return {"cpu": f"{cpu}m", "memory": str(mem), "pods": str(pods), EXT_A: str(ext_a),
            "ephemeral-storage": str(storage), HUGE_A: str(huge_a)}


def run(alloc: dict[str, str], incoming: Obj, pods_on_node: list[Obj], args: Obj | None = None):
    objects = [node(NODE, allocatable=alloc), *pods_on_node]
    ev = evaluate(objects, incoming, policy=policy(filters=[PLUGIN], scores=[],
                                                  args={PLUGIN: args} if args else None))
    return ev.filter[NODE]


# =============================================================================================
# TestEnoughRequests — node allocatable makeAllocatableResources(10, 20, 32, 5, 20, 5)
# =============================================================================================
ENOUGH_ALLOC = allocatable(10, 20, 32, 5, 20, 5)


ENOUGH_ROWS = [
    # (name, incoming pod, existing pods, args, want)
    ("no resources requested always fits",
     pod("p", containers=[]), existing(res(10, 20)), None, None),
    ("too many resources fails",
     resource_pod(res(1, 1)), existing(res(10, 20)), None,
     status(U, insufficient("cpu"), insufficient("memory"))),
    ("too many resources fails due to init container cpu",
     resource_pod(res(1, 1), init=[res(3, 1)]), existing(res(8, 19)), None,
     status(U, insufficient("cpu"))),
    ("too many resources fails due to highest init container cpu",
     resource_pod(res(1, 1), init=[res(3, 1), res(2, 1)]), existing(res(8, 19)), None,
     status(U, insufficient("cpu"))),
    ("too many resources fails due to init container memory",
     resource_pod(res(1, 1), init=[res(1, 3)]), existing(res(9, 19)), None,
     status(U, insufficient("memory"))),
    ("too many resources fails due to highest init container memory",
     resource_pod(res(1, 1), init=[res(1, 3), res(1, 2)]), existing(res(9, 19)), None,
     status(U, insufficient("memory"))),
    ("init container fits because it's the max, not sum, of containers and init containers",
     resource_pod(res(1, 1), init=[res(1, 1)]), existing(res(9, 19)), None, None),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     resource_pod(res(1, 1), init=[res(1, 1), res(1, 1)]), existing(res(9, 19)), None, None),
    ("both resources fit", resource_pod(res(1, 1)), existing(res(5, 5)), None, None),
    ("one resource memory fits", resource_pod(res(2, 1)), existing(res(9, 5)), None,
     status(U, insufficient("cpu"))),
    ("one resource cpu fits", resource_pod(res(1, 2)), existing(res(5, 19)), None,
     status(U, insufficient("memory"))),
    ("equal edge case", resource_pod(res(5, 1)), existing(res(5, 19)), None, None),
    ("equal edge case for init container",
     resource_pod(res(4, 1), init=[res(5, 1)]), existing(res(5, 19)), None, None),
    ("extended resource fits",
     resource_pod(scalar(scalars={EXT_A: 1})), existing(res()), None, None),
    ("extended resource fits for init container",
     resource_pod(res(), init=[scalar(scalars={EXT_A: 1})]), existing(res()), None, None),
    ("extended resource capacity enforced",
     resource_pod(scalar(1, 1, scalars={EXT_A: 10})), existing(scalar(scalars={EXT_A: 0})), None,
     status(UU, insufficient(EXT_A))),
    ("extended resource capacity enforced for init container",
     resource_pod(res(), init=[scalar(1, 1, scalars={EXT_A: 10})]),
     existing(scalar(scalars={EXT_A: 0})), None, status(UU, insufficient(EXT_A))),
    ("extended resource allocatable enforced",
     resource_pod(scalar(1, 1, scalars={EXT_A: 1})), existing(scalar(scalars={EXT_A: 5})), None,
     status(U, insufficient(EXT_A))),
    ("extended resource allocatable enforced for init container",
     resource_pod(res(), init=[scalar(1, 1, scalars={EXT_A: 1})]),
     existing(scalar(scalars={EXT_A: 5})), None, status(U, insufficient(EXT_A))),
    ("extended resource allocatable enforced for multiple containers",
     resource_pod(scalar(1, 1, scalars={EXT_A: 3}), scalar(1, 1, scalars={EXT_A: 3})),
     existing(scalar(scalars={EXT_A: 2})), None, status(UU, insufficient(EXT_A))),
    ("extended resource allocatable admits multiple init containers",
     resource_pod(res(), init=[scalar(1, 1, scalars={EXT_A: 3}), scalar(1, 1, scalars={EXT_A: 3})]),
     existing(scalar(scalars={EXT_A: 2})), None, None),
    ("extended resource allocatable enforced for multiple init containers",
     resource_pod(res(), init=[scalar(1, 1, scalars={EXT_A: 6}), scalar(1, 1, scalars={EXT_A: 3})]),
     existing(scalar(scalars={EXT_A: 2})), None, status(UU, insufficient(EXT_A))),
    ("extended resource allocatable enforced for unknown resource",
     resource_pod(scalar(1, 1, scalars={EXT_B: 1})), existing(res()), None,
     status(UU, insufficient(EXT_B))),
    ("extended resource allocatable enforced for unknown resource for init container",
     resource_pod(res(), init=[scalar(1, 1, scalars={EXT_B: 1})]), existing(res()), None,
     status(UU, insufficient(EXT_B))),
    ("kubernetes.io resource capacity enforced",
     resource_pod(scalar(1, 1, scalars={K8S_IO_A: 10})), existing(res()), None,
     status(UU, insufficient(K8S_IO_A))),
    ("kubernetes.io resource capacity enforced for init container",
     resource_pod(res(), init=[scalar(1, 1, scalars={K8S_IO_B: 10})]), existing(res()), None,
     status(UU, insufficient(K8S_IO_B))),
    ("hugepages resource capacity enforced",
     resource_pod(scalar(1, 1, scalars={HUGE_A: 10})), existing(scalar(scalars={HUGE_A: 0})), None,
     status(UU, insufficient(HUGE_A))),
    ("hugepages resource capacity enforced for init container",
     resource_pod(res(), init=[scalar(1, 1, scalars={HUGE_A: 10})]),
     existing(scalar(scalars={HUGE_A: 0})), None, status(UU, insufficient(HUGE_A))),
    ("hugepages resource allocatable enforced for multiple containers",
     resource_pod(scalar(1, 1, scalars={HUGE_A: 3}), scalar(1, 1, scalars={HUGE_A: 3})),
     existing(scalar(scalars={HUGE_A: 2})), None, status(UU, insufficient(HUGE_A))),
    ("skip checking ignored extended resource",
     resource_pod(scalar(1, 1, scalars={EXT_B: 1})), existing(res()),
     {"ignoredResources": ["example.com/bbb"]}, None),
    ("resources + pod overhead fits",
     resource_pod(res(1, 1), overhead={"cpu": "3m", "memory": "13"}), existing(res(5, 5)), None, None),
    ("requests + overhead does not fit for memory",
     resource_pod(res(1, 1), overhead={"cpu": "1m", "memory": "15"}), existing(res(5, 5)), None,
     status(U, insufficient("memory"))),
    ("skip checking ignored extended resource via resource groups",
     resource_pod(scalar(1, 1, scalars={EXT_B: 1, K8S_IO_A: 1})), existing(res()),
     {"ignoredResourceGroups": ["example.com"]}, status(UU, insufficient(K8S_IO_A))),
    ("skip checking extended resource request with quantity zero via resource groups",
     resource_pod(scalar(1, 1, scalars={EXT_A: 0})), existing(scalar(scalars={EXT_A: 6})), None, None),
    # podLevelResourcesEnabled: true (PodLevelResources, beta since v1.34) from here to the DRA rows.
    ("skip checking resource request with quantity zero",
     resource_pod(scalar(scalars={EXT_A: 1})), existing(scalar(20, 30, scalars={EXT_A: 1})), None, None),
    ("both pod-level and container-level resources fit",
     resource_pod(res(1, 1), pod_level={"cpu": "1m", "memory": "2"}), existing(res(5, 5)), None, None),
    ("pod-level cpu resource not fit",
     resource_pod(res(1, 1), pod_level={"cpu": "7m", "memory": "2"}), existing(res(5, 5)), None,
     status(U, insufficient("cpu"))),
    ("pod-level memory resource not fit",
     resource_pod(res(1, 1), pod_level={"cpu": "3m", "memory": "2"}), existing(res(5, 19)), None,
     status(U, insufficient("memory"))),
    ("pod-level hugepages resource fit",
     resource_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), [], None, None),
    ("both pod-level and container-level hugepages resource fit",
     resource_pod(scalar(1, 1, scalars={HUGE_A: 3}), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
     [], None, None),
    ("pod-level hugepages resource not fit",
     resource_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}), [], None,
     status(UU, insufficient(HUGE_A))),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     resource_pod(res(1, 1), init=[res(1, 1)], pod_level={"cpu": "3m", "memory": "2"}),
     existing(res(5, 19)), None, status(U, insufficient("memory"))),
    # draExtendedResourceEnabled rows whose verdict needs no DeviceClass (see the docstring).
    ("extended resource backed by device plugin",
     resource_pod(scalar(scalars={EXT_A: 1})), existing(res()), None, None),
    ("extended resource NOT backed by DRA",
     resource_pod(scalar(1, 1, scalars={EXT_B: 1})), existing(res()), None,
     status(UU, insufficient(EXT_B))),
    ("extended resource was backed by Device Plugin (Allocatable: 0), global cache",
     resource_pod(scalar(scalars={EXT_A: 1})), existing(scalar(scalars={EXT_A: 0})), None, None),
]


@pytest.mark.parametrize(("incoming", "pods_on_node", "args", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in ENOUGH_ROWS])
def test_enough_requests(incoming: Obj, pods_on_node: list[Obj], args: Obj | None, want: Obj | None):
    # fit_test.go TestEnoughRequests, case `name` = the test id.
    assert run(ENOUGH_ALLOC, incoming, pods_on_node, args) == want


# =============================================================================================
# TestNotEnoughRequests — node allocatable makeAllocatableResources(10, 20, 1, 0, 0, 0)
# =============================================================================================
NOT_ENOUGH_ROWS = [
    ("even without specified resources, predicate fails when there's no space for additional pod",
     pod("p", containers=[]), existing(res(10, 20))),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     resource_pod(res(1, 1)), existing(res(5, 5))),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     resource_pod(res(5, 1)), existing(res(5, 19))),
    ("even for equal edge case, predicate fails when there's no space for additional pod due to "
     "init container",
     resource_pod(res(5, 1), init=[res(5, 1)]), existing(res(5, 19))),
]


@pytest.mark.parametrize(("incoming", "pods_on_node"),
                         [pytest.param(*r[1:], id=r[0]) for r in NOT_ENOUGH_ROWS])
def test_not_enough_requests(incoming: Obj, pods_on_node: list[Obj]):
    # fit_test.go TestNotEnoughRequests, case `name` = the test id; every row wants
    # NewStatus(Unschedulable, "Too many pods").
    assert run(allocatable(10, 20, 1, 0, 0, 0), incoming, pods_on_node) == status(U, "Too many pods")


# =============================================================================================
# TestStorageRequests — node allocatable makeAllocatableResources(10, 20, 32, 5, 20, 5)
# =============================================================================================
STORAGE_ROWS = [
    ("empty storage requested, and pod fits", resource_pod(res(1, 1)), existing(res(2, 10)), None),
    ("storage ephemeral local storage request exceeds allocatable",
     resource_pod(res(eph=25)), existing(res(2, 2)), status(UU, insufficient("ephemeral-storage"))),
    # newResourceInitPod(newResourcePod(Resource{EphemeralStorage: 5})) with no init usage.
    ("ephemeral local storage is sufficient", resource_pod(res(eph=5)), existing(res(2, 2, eph=10)), None),
    ("pod fits", resource_pod(res(eph=10)), existing(res(2, 2)), None),
]


@pytest.mark.parametrize(("incoming", "pods_on_node", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in STORAGE_ROWS])
def test_storage_requests(incoming: Obj, pods_on_node: list[Obj], want: Obj | None):
    # fit_test.go TestStorageRequests, case `name` = the test id.
    assert run(ENOUGH_ALLOC, incoming, pods_on_node) == want


# =============================================================================================
# TestRestartableInitContainers — node allocatable makeAllocatableResources(2, 0, 1, 0, 0, 0)
# =============================================================================================
def regular_pod() -> Obj:
    """newPod(): one container "regular" without requests."""
    return pod("p", containers=[{"name": "regular", "image": "img"}])


def sidecar_pod(cpu_m: int | None, sidecar_cpu_m: int | None) -> Obj:
    """newPodWithRestartableInitContainers(request, sidecarRequest)."""
    regular: Obj = {"name": "regular", "image": "img"}
    if cpu_m is not None:
        regular["resources"] = {"requests": {"cpu": f"{cpu_m}m"}}
    sidecar: Obj = {"name": "restartable-init", "image": "img", "restartPolicy": "Always"}
    if sidecar_cpu_m is not None:
        sidecar["resources"] = {"requests": {"cpu": f"{sidecar_cpu_m}m"}}
    out = pod("p", containers=[regular])
    out["spec"]["initContainers"] = [sidecar]
    return out


RESTARTABLE_ROWS = [
    # enableSidecarContainers: true on every row transcribed.
    ("allow pod without restartable init containers if sidecar containers is enabled",
     regular_pod(), None),
    ("allow pod with restartable init containers if sidecar containers is enabled",
     sidecar_pod(None, None), None),
    ("allow pod if the total requested resources do not exceed the node's allocatable resources",
     sidecar_pod(1, 1), None),
    ("not allow pod if the total requested resources do exceed the node's allocatable resources",
     sidecar_pod(1, 2), status(UU, insufficient("cpu"))),
]


@pytest.mark.parametrize(("incoming", "want"), [pytest.param(*r[1:], id=r[0]) for r in RESTARTABLE_ROWS])
def test_restartable_init_containers(incoming: Obj, want: Obj | None):
    # fit_test.go TestRestartableInitContainers, case `name` = the test id.
    assert run(allocatable(2, 0, 1, 0, 0, 0), incoming, []) == want
