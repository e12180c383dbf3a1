"""scheduler-plugins' NodeResourcesAllocatable unit-test rows, run through `evaluate`.

Source: https://github.com/kubernetes-sigs/scheduler-plugins
pkg/noderesources/allocatable_test.go @ 437ac6db88f1602a19fdc1c92a73a23be207e4d0,
`TestNodeResourcesAllocatable` (plugin: pkg/noderesources/allocatable.go
@ 2d20310880323ae307312d4d4fdfa78c2267073c, resource_allocation.go
@ 2bf86fe60dac8c76e9167c6486f3e9fcc2f27672). One pytest param per upstream case, id = its name.

Upstream calls Score on every node of `nodeInfos` (`makeNodeInfo(name, milliCPU, memory)`:
capacity = allocatable = cpu milliCPU (DecimalSI), memory bytes (BinarySI), no `pods`), then
NormalizeScore. Here: a policy with no filter (the "more than the node" rows must still be
scored) and NodeResourcesAllocatable as the only scorer; `ev.scores` is the normalised list.
The rows' `pods` go into upstream's pod informer only, never into the NodeInfos: they are
bound here to the nodes they name, which must not change a score (the plugin reads allocatable
only). `wantErr` rows are argument errors: `evaluate` raises PolicyError with the message.

Two case names say the opposite of their mode ("cpu weighted, most mode" runs Least and the
other way round); the names are upstream's, the modes are the rows' own.
"""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine import evaluate
from extender.engine.policy import PolicyError
from tests.engine.upstream.builders import policy

SOURCE = "pkg/noderesources/allocatable_test.go TestNodeResourcesAllocatable"
MIN, MAX = 0, 100  # framework.MinNodeScore, MaxNodeScore

#: 1 millicore weighted the same as 1 MiB / 1 GiB.
DEFAULT_SET = [{"name": "cpu", "weight": 1 << 20}, {"name": "memory", "weight": 1}]
CPU_SET = [{"name": "cpu", "weight": 1 << 30}, {"name": "memory", "weight": 1}]

NO_RESOURCES: dict[str, str] | None = None  # noResources: a spec with no container
CPU_AND_MEMORY = {"cpu": "1000m", "memory": "1Gi"}
BIG_CPU = {"cpu": "8000m", "memory": "1Gi"}

#: The rows' `pods`: (node, labels, per-container requests) — machine1Spec/machine2Spec carry
#: no container; scheduledPod two containers of 1000m/0 and 2000m/0.
LABELS1 = {"foo": "bar", "baz": "blah"}
LABELS2 = {"bar": "foo", "baz": "blah"}
PODS_NO_RESOURCES = [("machine1", LABELS2, []), ("machine1", LABELS1, []),
                     ("machine2", LABELS1, []), ("machine2", LABELS1, [])]
PODS_SCHEDULED = [("machine1", {}, [{"cpu": "1000m", "memory": "0"},
                                    {"cpu": "2000m", "memory": "0"}])]

ROWS: list[dict[str, Any]] = [
    {"case": "nothing scheduled, nothing requested", "pod": NO_RESOURCES,
     "nodes": [("machine1", 4000, 10000), ("machine2", 4000, 10000)],
     "args": {"resources": DEFAULT_SET, "mode": "Least"}, "expected": [MIN, MIN]},
    {"case": "nothing scheduled, resources requested, differently sized machines, least mode",
     "pod": CPU_AND_MEMORY, "nodes": [("machine1", 4000, 10000), ("machine2", 6000, 10000)],
     "args": {"resources": DEFAULT_SET, "mode": "Least"}, "expected": [MAX, MIN]},
    {"case": "nothing scheduled, resources requested, differently sized machines, most mode",
     "pod": CPU_AND_MEMORY, "nodes": [("machine1", 4000, 10000), ("machine2", 6000, 10000)],
     "args": {"resources": DEFAULT_SET, "mode": "Most"}, "expected": [MIN, MAX]},
    {"case": "no resources requested, pods scheduled", "pod": NO_RESOURCES,
     "nodes": [("machine1", 4000, 10000), ("machine2", 4000, 10000)],
     "args": {"resources": DEFAULT_SET, "mode": "Least"}, "expected": [MIN, MIN],
     "pods": PODS_NO_RESOURCES},
    {"case": "no resources requested, pods scheduled with resources", "pod": NO_RESOURCES,
     "nodes": [("machine1", 10000, 20000), ("machine2", 10000, 20000)],
     "args": {"resources": DEFAULT_SET, "mode": "Least"}, "expected": [MIN, MIN],
     "pods": PODS_SCHEDULED},
    {"case": "resources requested, pods scheduled with resources", "pod": CPU_AND_MEMORY,
     "nodes": [("machine1", 10000, 20000), ("machine2", 10000, 20000)],
     "args": {"resources": DEFAULT_SET, "mode": "Least"}, "expected": [MIN, MIN],
     "pods": PODS_SCHEDULED},
    {"case": "resources requested with more than the node, differently sized machines, least mode",
     "pod": BIG_CPU, "nodes": [("machine1", 4000, 1000), ("machine2", 5000, 1000)],
     "args": {"resources": DEFAULT_SET, "mode": "Least"}, "expected": [MAX, MIN]},
    {"case": "resources requested with more than the node, differently sized machines, most mode",
     "pod": BIG_CPU, "nodes": [("machine1", 4000, 1000), ("machine2", 5000, 1000)],
     "args": {"resources": DEFAULT_SET, "mode": "Most"}, "expected": [MIN, MAX]},
    {"case": "nothing scheduled, resources requested, differently sized machines, cpu weighted, "
             "most mode",
     "pod": CPU_AND_MEMORY, "nodes": [("machine1", 1000, 2000), ("machine2", 1005, 1000)],
     "args": {"resources": CPU_SET, "mode": "Least"}, "expected": [MAX, MIN]},
    {"case": "nothing scheduled, resources requested, differently sized machines, cpu weighted, "
             "least mode",
     "pod": CPU_AND_MEMORY, "nodes": [("machine1", 1000, 2000), ("machine2", 1005, 1000)],
     "args": {"resources": CPU_SET, "mode": "Most"}, "expected": [MIN, MAX]},
    {"case": "nothing scheduled, resources requested, 3 differently sized machines, least mode",
     "pod": CPU_AND_MEMORY,
     "nodes": [("machine1", 1000, 1000 * (1 << 20)), ("machine2", 2000, 2000 * (1 << 20)),
               ("machine3", 3000, 3000 * (1 << 20))],
     "args": {"resources": DEFAULT_SET, "mode": "Least"},
     "expected": [MAX, (MIN + MAX) // 2, MIN]},
    {"case": "nothing scheduled, resources requested, 3 differently sized machines, most mode",
     "pod": CPU_AND_MEMORY,
     "nodes": [("machine1", 1000, 1000 * (1 << 20)), ("machine2", 2000, 2000 * (1 << 20)),
               ("machine3", 3000, 3000 * (1 << 20))],
     "args": {"resources": DEFAULT_SET, "mode": "Most"},
     "expected": [MIN, (MIN + MAX) // 2, MAX]},
    {"case": "resource with negative weight", "pod": CPU_AND_MEMORY,
     "nodes": [("machine", 4000, 10000)],
     "args": {"resources": [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}]},
     "want_err": "resource Weight of memory should be a positive value, got -1"},
    {"case": "resource with zero weight", "pod": CPU_AND_MEMORY,
     "nodes": [("machine", 4000, 10000)],
     "args": {"resources": [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 0}]},
     "want_err": "resource Weight of cpu should be a positive value, got 0"},
]


def _node(name: str, milli_cpu: int, memory: int) -> dict[str, Any]:
    quantities = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}"},
            "status": {"capacity": dict(quantities), "allocatable": dict(quantities)}}


def _pod(name: str, containers: list[dict[str, str]], node: str = "",
         labels: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [
        {"name": f"c{i}", "image": "img", "resources": {"requests": dict(requests)}}
        for i, requests in enumerate(containers)]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "labels": dict(labels or {})},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def _policy(args: dict[str, Any]) -> dict[str, Any]:
    return policy(filters=[], scores=[("NodeResourcesAllocatable", 1)],
                  args={"NodeResourcesAllocatable": args})


# pkg/noderesources/allocatable_test.go TestNodeResourcesAllocatable
@pytest.mark.parametrize("row", [pytest.param(r, id=r["case"]) for r in ROWS])
def test_node_resources_allocatable(row: dict[str, Any]) -> None:
    objects: list[dict[str, Any]] = [_node(*n) for n in row["nodes"]]
    objects += [_pod(f"scheduled-{i}", containers, node, labels)
                for i, (node, labels, containers) in enumerate(row.get("pods", []))]
    pending = _pod("pending", [] if row["pod"] is None else [row["pod"]])
    if "want_err" in row:
        with pytest.raises(PolicyError) as caught:
            evaluate(objects, pending, _policy(row["args"]))
        assert row["want_err"] in str(caught.value)
        return
    ev = evaluate(objects, pending, _policy(row["args"]))
    assert ev.prefilter is None
    names = [n[0] for n in row["nodes"]]
    assert [ev.scores["NodeResourcesAllocatable"][n] for n in names] == row["expected"]


def test_defaults_are_least_with_cpu_weighted_like_a_mib() -> None:
    """Args left out: mode Least, resources cpu 1<<20 and memory 1 (apis/config/v1 defaults);
    the raw Score is Go's truncating int64 division of the negative weighted sum."""
    from extender.engine.plugins.node_resources_allocatable import (
        NodeResourcesAllocatable,
        NodeResourcesAllocatableArgs,
    )
    from extender.model import k8s
    from extender.model.node import NodeView
    from extender.model.nodeinfo import NodeInfo

    plugin = NodeResourcesAllocatable(NodeResourcesAllocatableArgs.model_validate({}))
    info = NodeInfo(NodeView.from_k8s(k8s.convert(_node("n", 1001, 3), k8s.Node)))
    # -(1001·2^20 + 3) / (2^20 + 1) = -1000.99... → -1000 (toward zero, not -1001)
    assert plugin.node_score(info) == -1000
    ev = evaluate([_node("a", 1000, 1 << 30), _node("b", 2000, 1 << 30)], _pod("p", []),
                  policy(filters=[], scores=[("NodeResourcesAllocatable", 1)]))
    assert ev.scores["NodeResourcesAllocatable"] == {"a": 100, "b": 0}
