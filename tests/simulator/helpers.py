"""Builders for small clusters and workloads, and a one-call simulation runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.simulator.loop import Simulation, SimulationConfig, SimulationResult
from extender.simulator.report import build_report, dumps
from extender.simulator.workload import load_workload
from extender.state.snapshot import load_snapshot

EPOCH = "2024-01-01T00:00:00Z"

#: Filters as kube-scheduler's defaults, one scorer (LeastAllocated on cpu and memory, weight
#: 1) so placements can be computed by hand, DefaultPreemption.
LEAST_ALLOCATED_ONLY: dict[str, Any] = {
    "apiVersion": "scheduler-extender/v1",
    "kind": "ExtenderPolicy",
    "plugins": {"score": {"disabled": [{"name": "*"}],
                          "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}},
}
DEFAULTS: dict[str, Any] = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}


def node(name: str, cpu: str, memory: str, *, pods: str = "110", labels: dict | None = None,
         taints: list | None = None, unschedulable: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}",
                         "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec,
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}


def pod(name: str, cpu: str, memory: str = "1Gi", *, priority: int = 0, node_name: str = "",
        created: str | None = None, started: str | None = None, namespace: str = "default",
        **spec_extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if created:
        meta["creationTimestamp"] = created
    spec: dict[str, Any] = {"priority": priority, "containers": [{
        "name": "c", "image": "registry.example/app:1",
        "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec_extra}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if node_name:
        spec["nodeName"] = node_name
        obj["status"] = {"phase": "Running", "startTime": started or EPOCH}
    return obj


def at(seconds: float) -> str:
    """An RFC 3339 time `seconds` after EPOCH (whole milliseconds)."""
    ms = round(seconds * 1000)
    return f"2024-01-01T00:{ms // 60000:02d}:{(ms // 1000) % 60:02d}.{ms % 1000:03d}Z"


def write(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def simulate(tmp_path: Path, cluster: list[dict], workload: list[dict],
             policy: dict[str, Any] | None = None, *, events: Any = None,
             **config: Any) -> tuple[SimulationResult, dict]:
    """Run a simulation; `events` an `EventLog` (`--events`), `config` SimulationConfig's."""
    state = load_snapshot(write(tmp_path / "cluster.json", cluster))
    profile = build_profile(parse_policy(policy or LEAST_ALLOCATED_ONLY))
    sim = Simulation(state, profile, load_workload(write(tmp_path / "workload.json", workload)),
                     SimulationConfig(**config), events=events)
    result = sim.run()
    return result, build_report(result, profile)


def report_bytes(result: SimulationResult, report: dict) -> bytes:
    return dumps(report).encode()


def by_name(report: dict) -> dict[str, dict]:
    return {p["name"]: p for p in report["pods"]}
