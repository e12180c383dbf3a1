"""Trimaran's load-aware scorers through the real HTTP app: the demo snapshot cluster with node
load metrics set on the state (what the metrics refresher does in live mode), the prioritize
verb's 0..10 answers, and TargetLoadPacking counting a pod this extender has just bound.

The demo's worker-a1 and worker-a2 have 4 cpus (capacity = allocatable); the pending pod
api-7d9f requests 1 cpu without a limit, so TargetLoadPacking predicts 1000m × 1.5 = 1500m.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.evaluate import read_metrics
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from extender.state.snapshot import load_snapshot
from tests.conftest import DEMO_CLUSTER, fixture_json

NODES = ["worker-a1", "worker-a2"]


def metrics(end: int, **nodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"timestamp": end, "window": {"duration": "15m", "start": end - 900, "end": end},
            "source": "Prometheus",
            "data": {"NodeMetricsMap": {n.replace("_", "-"): {"metrics": m}
                                        for n, m in nodes.items()}}}


def cpu(avg: float, std: float = 0.0) -> list[dict[str, Any]]:
    return [{"name": "cpu", "type": "CPU", "operator": "AVG", "rollup": "15m", "value": avg},
            {"name": "cpu", "type": "CPU", "operator": "STD", "rollup": "15m", "value": std}]


def memory(avg: float, std: float = 0.0) -> list[dict[str, Any]]:
    return [{"name": "mem", "type": "Memory", "operator": "AVG", "rollup": "15m", "value": avg},
            {"name": "mem", "type": "Memory", "operator": "STD", "rollup": "15m", "value": std}]


def client_for(plugin: str, snapshot: dict[str, Any] | None) -> tuple[TestClient, Any]:
    state = load_snapshot(DEMO_CLUSTER)
    if snapshot is not None:
        state.store(TrimaranStore).set_metrics(read_metrics(snapshot))
    policy = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
              "plugins": {"filter": {"enabled": []}, "score": {"enabled": [{"name": plugin}]}}}
    profile = build_profile(parse_policy(policy))
    return TestClient(create_app(Runtime(profile, state, SnapshotBinder(state, 30.0)))), state


def prioritize(client: TestClient, pod: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    body = fixture_json("prioritize-names.request.json")
    if pod is not None:
        body["Pod"] = pod
    reply = client.post("/prioritize", json=body)
    assert reply.status_code == 200
    return reply.json()


def scores(*values: int) -> list[dict[str, Any]]:
    return [{"Host": n, "Score": s} for n, s in zip(NODES, values, strict=True)]


def test_targetloadpacking_prioritizes_by_measured_and_predicted_cpu() -> None:
    # worker-a1 at 10 %: (400 + 1500) / 4000 = 47.5 % > 40 -> 40 * 52.5 / 60 = 35 -> 4 on the wire
    # worker-a2 at 50 %: (2000 + 1500) / 4000 = 87.5 % -> 40 * 12.5 / 60 = 8.3 -> 8 -> 1
    now = int(time.time())
    client, _ = client_for("TargetLoadPacking",
                           metrics(now - 60, worker_a1=cpu(10), worker_a2=cpu(50)))
    with client:
        assert prioritize(client) == scores(4, 1)


def test_a_node_without_metrics_scores_zero_and_no_metrics_at_all_every_node() -> None:
    now = int(time.time())
    client, _ = client_for("TargetLoadPacking", metrics(now - 60, worker_a1=cpu(10)))
    with client:
        assert prioritize(client) == scores(4, 0)
    client, _ = client_for("TargetLoadPacking", None)
    with client:
        assert prioritize(client) == scores(0, 0)


def test_targetloadpacking_counts_a_pod_bound_after_the_metrics_window() -> None:
    """A pod the extender binds after the window closed is not in the metrics yet: its
    predicted cpu (a 1-cpu limit) is added to the node's, so worker-a1 drops from 35 to
    (400 + 1500 + 1000) / 4000 = 72.5 % -> 40 * 27.5 / 60 = 18.3 -> 18 -> 2."""
    now = int(time.time())
    client, state = client_for("TargetLoadPacking",
                               metrics(now - 5, worker_a1=cpu(10), worker_a2=cpu(50)))
    burst = copy.deepcopy(fixture_json("prioritize-names.request.json")["Pod"])
    burst["metadata"].update(name="burst", uid="uid-default-burst")
    burst["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    with client:
        prioritize(client, burst)  # the extender remembers the pending pod for its bind
        bound = client.post("/bind", json={"PodName": "burst", "PodNamespace": "default",
                                           "PodUID": "uid-default-burst", "Node": "worker-a1"})
        assert bound.json() == {"Error": ""}
        assert prioritize(client) == scores(2, 1)
    assert [pod.name for _, pod in state.store(TrimaranStore).recent("worker-a1")] == ["burst"]


def test_loadvariationriskbalancing_and_lowriskovercommitment_through_prioritize() -> None:
    now = int(time.time())
    snapshot = metrics(now - 60, worker_a1=cpu(10, 5) + memory(20, 10),
                       worker_a2=cpu(60, 30) + memory(20, 10))
    # LVRB, api-7d9f requests 1 cpu, 1Gi of 4 cpus, 8Gi:
    #   worker-a1 cpu mu (400 + 1000) / 4000 = .35, sigma .05 -> 80; memory (1638.4 + 1024) /
    #   8192 = .325, sigma .1 -> 78.75 -> min 78.75 -> 79 -> 8 on the wire
    #   worker-a2 cpu mu .85, sigma .3 -> 42.5 -> 43 (memory 78.75) -> 4
    client, _ = client_for("LoadVariationRiskBalancing", snapshot)
    with client:
        assert prioritize(client) == scores(8, 4)
    # LROC, api-7d9f given a 4-cpu limit. Nothing else sets limits (so each pod's limit is its
    # request, and the load risk, conditioned on the others' limits, is 0): the limit risk
    # alone, weighted 0.5. worker-a1 (web-1 1 cpu, batch-1 1.5 cpu): limits 6.5 > 4 cpus,
    # requests 3.5 -> (6.5 - 4) / (6.5 - 3.5) = .833 -> risk .417 -> 58 -> 6 on the wire;
    # worker-a2 (web-2 .5 cpu): limits 4.5, requests 1.5 -> .167 -> risk .083 -> 92 -> 9.
    pod = copy.deepcopy(fixture_json("prioritize-names.request.json")["Pod"])
    pod["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "4"}
    client, _ = client_for("LowRiskOverCommitment", snapshot)
    with client:
        assert prioritize(client, pod) == scores(6, 9)
