"""The simulation report: JSON, byte-for-byte identical for the same inputs and seed.

Keys are sorted, lists have a defined order (pods by namespace/name, nodes by name), times
are virtual seconds, and nothing from the wall clock goes in.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from extender.engine.profile import Profile
from extender.simulator.clock import to_seconds
from extender.simulator.loop import (
    DELETED,
    FAILED,
    PENDING,
    PREEMPTED,
    REJECTED,
    SCHEDULED,
    SUCCEEDED,
    NodeUsage,
    PodRecord,
    SimulationConfig,
    SimulationResult,
)
from extender.simulator.records import cycle_cost
from extender.simulator.utilization import report_section

API_VERSION = "simulator.extender/v1"
KIND = "SimulationReport"


def _seconds(ns: int | None) -> float | None:
    return None if ns is None else to_seconds(ns)


def _fraction(used: int, total: int) -> float | None:
    return round(used / total, 6) if total > 0 else None


def _usage(u: NodeUsage) -> dict[str, Any]:
    return {
        "cpuMilli": u.milli_cpu,
        "memoryBytes": u.memory,
        "pods": u.pods,
        "cpuFraction": _fraction(u.milli_cpu, u.allocatable_milli_cpu),
        "memoryFraction": _fraction(u.memory, u.allocatable_memory),
        "podsFraction": _fraction(u.pods, u.allocatable_pods),
    }


def _pod(rec: PodRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "namespace": rec.namespace,
        "name": rec.name,
        "priority": rec.priority,
        "origin": rec.origin,
        "status": rec.status,
        "node": rec.node or None,
        "nominatedNode": rec.nominated_node or None,
        "message": rec.message or None,
        "attempts": rec.attempts,
        "arrivedAtSeconds": _seconds(rec.arrived_at),
        "scheduledAtSeconds": _seconds(rec.scheduled_at),
        "finishedAtSeconds": _seconds(rec.finished_at),
        "preemptedBy": rec.preempted_by or None,
        "preempted": sorted(rec.preemptions_caused),
    }
    if rec.owner:
        out["owner"] = rec.owner
    if rec.tied:
        out["tiedNodes"] = sorted(rec.tied)
    return out


def _inputs(config: SimulationConfig, profile: Profile | None) -> dict[str, Any]:
    pct = config.percentage_of_nodes_to_score
    inputs: dict[str, Any] = {
        "seed": config.seed,
        "nodeSearch": "all" if pct is None else ("adaptive" if pct == 0 else f"{pct}%"),
        "cycleCostSeconds": to_seconds(config.cycle_cost),
        "failureCostSeconds": to_seconds(cycle_cost(config, placed=False, nominated=False)),
        "preemptionCostSeconds": to_seconds(cycle_cost(config, placed=False, nominated=True)),
        "podInitialBackoffSeconds": to_seconds(config.pod_initial_backoff),
        "podMaxBackoffSeconds": to_seconds(config.pod_max_backoff),
        "podMaxInUnschedulablePodsSeconds": to_seconds(config.pod_max_in_unschedulable_pods),
        # null: each victim's own terminationGracePeriodSeconds (30 s when unset)
        "victimGracePeriodSeconds": _seconds(config.victim_grace_period),
        "maxTimeSeconds": _seconds(config.max_time),
        "extenders": [{"urlPrefix": e.url_prefix, "weight": e.weight,
                       "nodeCacheCapable": e.node_cache_capable, "ignorable": e.ignorable}
                      for e in config.extenders],
    }
    # What a failed or preempting cycle takes more for each pod nominated (a cycle with one
    # nominated pod, less one with none).
    for kind, nominated in (("failure", False), ("preemption", True)):
        per = (cycle_cost(config, placed=False, nominated=nominated, nominated_pods=1)
               - cycle_cost(config, placed=False, nominated=nominated))
        if per:
            inputs[f"{kind}CostPerNominatedSeconds"] = to_seconds(per)
    if config.utilization is not None:
        inputs["utilization"] = {"file": config.utilization.path,
                                 "window": config.utilization.window}
    if profile is not None:
        inputs["profile"] = _profile(profile)
    return inputs


def _profile(profile: Profile) -> dict[str, Any]:
    return {
        "filters": list(profile.filter_names),
        "scores": [{"name": p.name, "weight": w} for p, w in profile.scorers],
        "postFilter": profile.post_filter.name if profile.post_filter else None,
    }


def build_report(result: SimulationResult, profile: Profile | None = None) -> dict[str, Any]:
    records = sorted(result.records.values(), key=lambda r: (r.namespace, r.name, r.uid))
    statuses = Counter(r.status for r in records)
    arrivals = [r for r in records if r.arrived_at is not None]
    nodes = []
    for name in sorted(set(result.nodes_before) | set(result.nodes_after)):
        before, after = result.nodes_before.get(name), result.nodes_after.get(name)
        ref = after or before
        assert ref is not None
        nodes.append({
            "name": name,
            "allocatable": {"cpuMilli": ref.allocatable_milli_cpu, "memoryBytes": ref.allocatable_memory,
                            "pods": ref.allocatable_pods},
            "before": _usage(before) if before else None,
            "after": _usage(after) if after else None,
        })
    report = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "inputs": _inputs(result.config, profile),
        "totals": {
            # Every pod the table lists: the workload's, and the cluster's own that the run
            # touched (a preemption victim); `arrived`: the workload's alone.
            "pods": len(records),
            "arrived": len(arrivals),
            "scheduled": statuses[SCHEDULED],
            "pending": statuses[PENDING],
            "preempted": statuses[PREEMPTED],
            "deleted": statuses[DELETED],
            "succeeded": statuses[SUCCEEDED],  # pod lifetimes: completed after `run_for`
            "failed": statuses[FAILED],
            "rejected": statuses[REJECTED],  # refused at admission (unknown PriorityClass)
            "preemptions": sum(len(r.preemptions_caused) for r in records),
            "attempts": sum(r.attempts for r in records),
            "cycles": result.cycles,
            "virtualTimeSeconds": to_seconds(result.virtual_time),
            "lastBindSeconds": _seconds(result.last_bind_time),
            "truncated": result.truncated,
            "endReason": result.end_reason,
        },
        "pods": [_pod(r) for r in records],
        "nodes": nodes,
        "extenderCalls": dict(sorted(result.extender_calls.items())),
        "extenderFailures": dict(sorted(result.extender_failures.items())),
        "warnings": list(result.warnings),
    }
    profiles = getattr(result, "profiles", None)
    if profiles:  # only with several profiles: one-profile reports keep their bytes
        report["inputs"]["profiles"] = {
            name: {**_profile(p), "percentageOfNodesToScore": pct}
            for name, (p, pct) in profiles.items()}
    if result.utilization is not None:  # only with --utilization: other reports keep their bytes
        report["utilization"] = report_section(result.utilization)
    return report


def dumps(report: dict[str, Any]) -> str:
    return json.dumps(report, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_report(report: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(dumps(report), encoding="utf-8")


def write_report_to(doc: dict[str, Any], target: str) -> None:
    """`--report TARGET`: a report (or a comparison of reports) to the file, or to standard
    output for `-`."""
    if target == "-":
        sys.stdout.write(dumps(doc))
    else:
        write_report(doc, target)
