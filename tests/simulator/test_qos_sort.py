"""QOSSort in the simulator: the policy's `plugins.queueSort` orders activeQ by priority, then
QoS class (Guaranteed, Burstable, BestEffort), then queue time. The rows of scheduler-plugins'
`queue_sort_test.go` (TestSortLess, `tests/engine/upstream/test_qos_rows.py`) are replayed here
through the simulator's queue: both pods arrive at the same instant, the one listed first
being the one queued earlier."""

from __future__ import annotations

from typing import Any

import pytest

from extender.engine.policy import PolicyError, parse_policy
from tests.engine.upstream.test_qos_rows import BE, BU, SORT_LESS, G

from .helpers import by_name, node, pod, simulate

FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
           "NodeResourcesFit"]


def policy(queue_sort: str | None) -> dict[str, Any]:
    plugins: dict[str, Any] = {
        "filter": {"enabled": [{"name": n} for n in FILTERS]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 1}]},
    }
    if queue_sort:
        plugins["queueSort"] = {"enabled": [{"name": queue_sort}]}
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy", "plugins": plugins}


def qos_pod(name: str, resources: tuple, priority: int = 0) -> dict[str, Any]:
    """A pod of one container with exactly these requests and limits (None: unset)."""
    requests, limits = resources
    obj = pod(name, "0", priority=priority)
    container = obj["spec"]["containers"][0]
    container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return obj


def bound_order(report: dict) -> list[str]:
    bound = sorted((p for p in by_name(report).values() if p["status"] == "Scheduled"),
                   key=lambda p: p["scheduledAtSeconds"])
    return [p["name"] for p in bound]


def _row_workloads(p1: tuple, p2: tuple) -> list[list[dict[str, Any]]]:
    """The arrival orders that realise the row: queued earlier = listed first; a row without
    timestamps (equal) holds in both orders."""
    (prio1, res1, ts1), (prio2, res2, ts2) = p1, p2
    one, two = qos_pod("p1", res1, prio1), qos_pod("p2", res2, prio2)
    if ts1 == ts2:
        return [[one, two], [two, one]]
    return [[one, two]] if ts1 < ts2 else [[two, one]]


@pytest.mark.parametrize(("name", "p1", "p2", "want"), SORT_LESS, ids=[r[0] for r in SORT_LESS])
def test_sort_less_rows_through_the_simulator_s_queue(tmp_path, name, p1, p2, want):
    """Less(p1, p2) true: p1 is bound first; false: p2 is (every row's pair is strictly
    ordered one way or the other)."""
    cluster = [node("n1", "4", "8Gi")]
    for workload in _row_workloads(p1, p2):
        _, report = simulate(tmp_path, cluster, workload, policy("QOSSort"))
        assert bound_order(report) == (["p1", "p2"] if want else ["p2", "p1"]), name


@pytest.mark.parametrize(("queue_sort", "order"), [
    (None, ["best-effort", "burstable", "guaranteed"]),           # PrioritySort: arrival order
    ("PrioritySort", ["best-effort", "burstable", "guaranteed"]),
    ("QOSSort", ["guaranteed", "burstable", "best-effort"]),
])
def test_qos_sort_puts_guaranteed_pods_first(tmp_path, queue_sort, order):
    cluster = [node("n1", "4", "8Gi")]
    workload = [qos_pod("best-effort", BE), qos_pod("burstable", BU), qos_pod("guaranteed", G)]
    _, report = simulate(tmp_path, cluster, workload, policy(queue_sort))
    assert bound_order(report) == order


def test_qos_sort_gives_the_last_room_to_the_guaranteed_pod(tmp_path):
    """One pod's room left: the Guaranteed pod, queued last, takes it; the Burstable one waits.
    Priority still comes first: a higher-priority BestEffort pod would go before both."""
    room = (dict(cpu="1", memory="1Gi"), dict(cpu="1", memory="1Gi"))
    burst = (dict(cpu="1", memory="1Gi"), dict(cpu="2", memory="2Gi"))
    cluster = [node("n1", "1", "1Gi")]
    workload = [qos_pod("burstable", burst), qos_pod("guaranteed", room)]
    _, report = simulate(tmp_path, cluster, workload, policy("QOSSort"))
    pods = by_name(report)
    assert pods["guaranteed"]["status"] == "Scheduled"
    assert pods["burstable"]["status"] != "Scheduled"
    _, report = simulate(tmp_path, cluster, workload, policy("PrioritySort"))
    assert by_name(report)["burstable"]["status"] == "Scheduled"


def test_qos_sort_cannot_replace_coscheduling_s_queue_sort():
    document = policy("QOSSort")
    document["plugins"]["filter"]["enabled"].append({"name": "Coscheduling"})
    with pytest.raises(PolicyError, match="QOSSort cannot be enabled with Coscheduling"):
        parse_policy(document)


def test_check_config_says_where_qos_sort_runs():
    from extender.ops import kubeversions

    message = kubeversions.plugin_problem("QOSSort", (1, 37), "kubescheduler.config.k8s.io/v1")
    assert message is not None and message.startswith(
        "plugin QOSSort is a scheduler-plugins queue sort, not in kube-scheduler 1.37")
