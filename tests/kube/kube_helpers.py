"""Helpers for the kube tests: polling, and comparing a `ClusterState` with the server's truth."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from extender.engine.cluster import ClusterState
from extender.model import k8s
from tests.kube.fake_apiserver import FakeApiServer


async def eventually(predicate: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    """Poll until `predicate()` holds; fail after `timeout` seconds (every wait is bounded)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        await asyncio.sleep(0.02)


def truth(server: FakeApiServer) -> ClusterState:
    """A fresh state built from everything the server holds now: the oracle."""
    state = ClusterState()
    for pc in server.items("PriorityClass"):
        state.apply_priority_class(k8s.convert(pc, k8s.PriorityClass))
    for pdb in server.items("PodDisruptionBudget"):
        state.apply_pdb(k8s.convert(pdb, k8s.PodDisruptionBudget))
    for node in server.items("Node"):
        state.apply_node(k8s.convert(node, k8s.Node))
    for pod in server.items("Pod"):
        state.apply_pod(k8s.convert(pod, k8s.Pod))
    return state


def summary(state: ClusterState) -> dict[str, Any]:
    """What must match between our state and the truth: sets, placements and totals."""
    return {
        "nodes": {
            name: (
                sorted(info.pods),
                info.requested.milli_cpu,
                info.requested.memory,
                info.non_zero_cpu,
                info.node.unschedulable,
                dict(info.node.labels),
            )
            for name, info in state.nodes.items()
        },
        "pods": {uid: (v.namespace, v.name, v.node_name, v.phase) for uid, v in state.pods.items()},
        "pdbs": {key: v.disruptions_allowed for key, v in state.pdbs.items()},
        "priority_classes": {name: v.value for name, v in state.priority_classes.items()},
    }


def converged(state: ClusterState, server: FakeApiServer) -> bool:
    return summary(state) == summary(truth(server))
