"""QOSSort (scheduler-plugins `pkg/qos`) and the QoS class it reads (`v1qos.ComputePodQOS`).

* `TestSortLess` rows of scheduler-plugins `pkg/qos/queue_sort_test.go` as of commit
  3b77d02dfeb7ffb1c012b97af5a117817031b47b (after PR #855 added the queue timestamp as the last
  tie-break), run through the registered plugin's `less` and through the activeQ heap key the
  simulator uses (`sort_key`). A row without `Timestamp` has Go's zero time on both sides.
* `TestComputePodQOS` rows of kubernetes `pkg/apis/core/v1/helper/qos/qos_test.go` as of commit
  00c269c7d269989d555b69c295ba88e73e8acf94 (the pods are named after the cases), through
  `qos_sort.pod_qos`. The pod-level rows set `podLevelResourcesEnabled`; the model always reads
  pod-level resources when set (the gate is beta, on by default, since 1.34).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from extender.engine import registry
from extender.engine.args import parse_version
from extender.engine.plugins.qos_sort import NAME, pod_qos
from extender.model import k8s
from extender.model.pod import PodView

Obj = dict[str, Any]

EARLIER, LATER = 1_000, 2_000  # time.Now() and one second later, in the simulator's units


def res(cpu: str = "", memory: str = "") -> Obj:
    """`getResList` / `getResourceList`: only the non-empty amounts."""
    out: Obj = {}
    if cpu:
        out["cpu"] = cpu
    if memory:
        out["memory"] = memory
    return out


def container(name: str, requests: Obj | None, limits: Obj | None) -> Obj:
    resources: Obj = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "resources": resources}


def make_pod(name: str, priority: int | None = None, containers: list[Obj] | None = None, *,
             init: list[Obj] | None = None, pod_resources: Obj | None = None) -> PodView:
    spec: Obj = {"containers": containers or []}
    if priority is not None:
        spec["priority"] = priority
    if init:
        spec["initContainers"] = init
    if pod_resources is not None:
        spec["resources"] = pod_resources
    obj = {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}
    return PodView.from_k8s(k8s.convert(obj, k8s.Pod))


def sort_pod(name: str, priority: int, requests: Obj | None, limits: Obj | None) -> PodView:
    """queue_sort_test.go's `makePod(name, priority, requests, limits)`: one container."""
    return make_pod(name, priority, [container(name, requests, limits)])


def queued(pod: PodView, timestamp: int = 0) -> Any:
    return SimpleNamespace(pod=pod, timestamp=timestamp, seq=0)


def plugin() -> Any:
    return registry.factory("queueSort", NAME)(registry.PLUGINS[NAME].args_model(),
                                                parse_version(None))


G = (res("100m", "100Mi"), res("100m", "100Mi"))   # Guaranteed
BU = (res("100m", "100Mi"), res("200m", "200Mi"))  # Burstable
BE = (None, None)                                  # BestEffort

# (case name, (p1 priority, resources, timestamp), (p2 ...), want)
SORT_LESS = [
    ("p1's priority greater than p2", (100, BE, 0), (50, BE, 0), True),
    ("p1's priority less than p2", (50, BE, 0), (80, BE, 0), False),
    ("p1 and p2 are both BestEfforts, but p2 is added to schedulingQ earlier than p1",
     (0, BE, LATER), (0, BE, EARLIER), False),
    ("p1 is BestEfforts, p2 is Guaranteed", (0, BE, 0), (0, G, 0), False),
    ("p1 is Burstable, p2 is Guaranteed", (0, BU, 0), (0, G, 0), False),
    ("both p1 and p2 are Burstable, but p2 is added to schedulingQ earlier than p1",
     (0, BU, LATER), (0, BU, EARLIER), False),
    ("p1 is Guaranteed, p2 is Burstable", (0, G, 0), (0, BU, 0), True),
    ("both p1 and p2 are Guaranteed, but p1 is added to schedulingQ earlier than p2",
     (0, G, EARLIER), (0, G, LATER), True),
    # The table repeats this case, name and all.
    ("both p1 and p2 are Guaranteed, but p1 is added to schedulingQ earlier than p2 (repeated)",
     (0, G, EARLIER), (0, G, LATER), True),
]


def _infos(p1: tuple, p2: tuple) -> tuple[Any, Any]:
    (prio1, (req1, lim1), ts1), (prio2, (req2, lim2), ts2) = p1, p2
    return (queued(sort_pod("p1", prio1, req1, lim1), ts1),
            queued(sort_pod("p2", prio2, req2, lim2), ts2))


@pytest.mark.parametrize(("name", "p1", "p2", "want"), SORT_LESS, ids=[r[0] for r in SORT_LESS])
def test_sort_less(name, p1, p2, want):
    """queue_sort_test.go, TestSortLess, each case."""
    info1, info2 = _infos(p1, p2)
    sort = plugin()
    assert sort.less(info1, info2, None) is want
    key = sort.sort_key(None)
    assert (key(info1) < key(info2)) is want


def test_the_old_table_s_equal_rows_now_compare_false():
    """Before PR #855 (queue_sort_test.go at 7da686c0) "p1 and p2 are both BestEfforts" and the
    other equal-class rows wanted true: `compQOS` returned true for equal classes. Now equal
    priority, class and timestamp is not less either way, as a strict order must be."""
    sort = plugin()
    a, b = queued(sort_pod("p1", 0, None, None)), queued(sort_pod("p2", 0, None, None))
    assert not sort.less(a, b, None) and not sort.less(b, a, None)


# qos_test.go, TestComputePodQOS: (pod name, containers, init containers, pod resources, want)
COMPUTE_POD_QOS = [
    ("guaranteed", [container("guaranteed", res("100m", "100Mi"), res("100m", "100Mi"))],
     None, None, "Guaranteed"),
    ("guaranteed-guaranteed",
     [container("guaranteed", res("100m", "100Mi"), res("100m", "100Mi")),
      container("guaranteed", res("100m", "100Mi"), res("100m", "100Mi"))],
     None, None, "Guaranteed"),
    ("best-effort-best-effort",
     [container("best-effort", res(), res()), container("best-effort", res(), res())],
     None, None, "BestEffort"),
    ("best-effort", [container("best-effort", res(), res())], None, None, "BestEffort"),
    ("best-effort-burstable",
     [container("best-effort", res(), res()), container("burstable", res("1"), res("2"))],
     None, None, "Burstable"),
    ("best-effort-guaranteed",
     [container("best-effort", res(), res()),
      container("guaranteed", res("10m", "100Mi"), res("10m", "100Mi"))],
     None, None, "Burstable"),
    ("burstable-cpu-guaranteed-memory",
     [container("burstable", res("", "100Mi"), res("", "100Mi"))], None, None, "Burstable"),
    ("burstable-no-limits", [container("burstable", res("100m", "100Mi"), res())],
     None, None, "Burstable"),
    ("burstable-guaranteed",
     [container("burstable", res("1", "100Mi"), res("2", "100Mi")),
      container("guaranteed", res("100m", "100Mi"), res("100m", "100Mi"))],
     None, None, "Burstable"),
    ("burstable-unbounded-but-requests-match-limits",
     [container("burstable", res("100m", "100Mi"), res("200m", "200Mi")),
      container("burstable-unbounded", res("100m", "100Mi"), res())],
     None, None, "Burstable"),
    ("burstable-1", [container("burstable", res("10m", "100Mi"), res("100m", "200Mi"))],
     None, None, "Burstable"),
    ("burstable-2", [container("burstable", res("0", "0"), res("100m", "200Mi"))],
     None, None, "Burstable"),
    ("best-effort-hugepages",
     [container("best-effort", {**res("0", "0"), "hugepages-2Mi": "1Gi"},
                {**res("0", "0"), "hugepages-2Mi": "1Gi"})],
     None, None, "BestEffort"),
    ("init-container", [container("best-effort", res(), res())],
     [container("burstable", res("10m", "100Mi"), res("100m", "200Mi"))], None, "Burstable"),
    ("guaranteed-with-pod-level-resources", [container("best-effort", res(), res())], None,
     {"requests": res("10m", "100Mi"), "limits": res("10m", "100Mi")}, "Guaranteed"),
    ("guaranteed-with-pod-and-container-level-resources",
     [container("burstable", res("3m", "10Mi"), res("5m", "20Mi"))], None,
     {"requests": res("10m", "100Mi"), "limits": res("10m", "100Mi")}, "Guaranteed"),
    ("burstable-with-pod-level-resources", [container("best-effort", res(), res())], None,
     {"requests": res("10m", "10Mi"), "limits": res("20m", "50Mi")}, "Burstable"),
    ("burstable-with-pod-and-container-level-resources",
     [container("burstable", res("5m", "10Mi"), res("5m", "10Mi"))], None,
     {"requests": res("10m", "10Mi"), "limits": res("20m", "50Mi")}, "Burstable"),
    ("burstable-with-pod-and-container-level-requests",
     [container("burstable", res("5m", "10Mi"), res())], None,
     {"requests": res("10m", "10Mi"), "limits": res()}, "Burstable"),
    ("burstable-with-pod-and-container-level-resources-2",
     [container("burstable", res("5m", "10Mi"), res()),
      container("guaranteed", res("5m", "10Mi"), res("5m", "10Mi"))], None,
     {"requests": res("10m", "10Mi"), "limits": res("5m")}, "Burstable"),
]


@pytest.mark.parametrize(("name", "containers", "init", "pod_resources", "want"), COMPUTE_POD_QOS,
                         ids=[r[0] for r in COMPUTE_POD_QOS])
def test_compute_pod_qos(name, containers, init, pod_resources, want):
    """qos_test.go, TestComputePodQOS, the row whose pod is `name`."""
    pod = make_pod(name, containers=containers, init=init, pod_resources=pod_resources)
    assert pod_qos(pod) == want


def test_the_class_decides_only_at_equal_priority():
    """Priority first: a BestEffort pod of priority 1 goes before a Guaranteed pod of 0."""
    sort = plugin()
    high_be = queued(sort_pod("a", 1, None, None), LATER)
    low_g = queued(sort_pod("b", 0, *G), EARLIER)
    assert sort.less(high_be, low_g, None) and not sort.less(low_g, high_be, None)
