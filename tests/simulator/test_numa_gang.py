"""NodeResourceTopologyMatch beside Coscheduling in the simulator: a gang member waiting at
Permit is between Reserve and PostBind, so the overreserve cache counts it on its node until
its group is rejected (Unreserve gives its NUMA room back), and `discardReservedNodes`
discards its node meanwhile, as scheduler-plugins' caches do."""

from __future__ import annotations

import json
from typing import Any

from extender.simulator.clock import SECOND
from extender.simulator.eventlog import EventLog
from tests.engine.nrt_builders import container, nrt

from .helpers import at, by_name, node, simulate
from .scheduler_plugins import FILTERS, member, pod_group

CELLS = [("node-0", [("cpu", "4", "4"), ("memory", "16Gi", "16Gi")], None),
         ("node-1", [("cpu", "4", "4"), ("memory", "16Gi", "16Gi")], None)]


def _policy(nrt_args: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
            "plugins": {"filter": {"enabled": [{"name": n} for n in (
                *FILTERS, "Coscheduling", "NodeResourceTopologyMatch")]},
                        "score": {"disabled": [{"name": "*"}],
                                  "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}},
            "pluginConfig": [
                {"name": "Coscheduling", "args": {"podGroupBackoffSeconds": 600}},
                {"name": "NodeResourceTopologyMatch", "args": nrt_args}]}


def _guaranteed(obj: dict[str, Any]) -> dict[str, Any]:
    requests = obj["spec"]["containers"][0]["resources"]["requests"]
    obj["spec"]["containers"] = [container("c", requests, requests)]
    return obj


def _cluster() -> list[dict[str, Any]]:
    # n1: two NUMA cells of 4 cpus (single-numa-node); n2: too small for a 3-cpu pod.
    return [node("n1", "8", "32Gi"), node("n2", "2", "32Gi"),
            nrt("n1", CELLS, ["SingleNUMANodeContainerLevel"])]


def _workload() -> list[dict[str, Any]]:
    # A gang of two 3-cpu pods that only n1 can hold, and only one of them: g-0 waits at
    # Permit, g-1 fits nowhere, and Coscheduling's PostFilter rejects the group (then keeps it
    # out for podGroupBackoffSeconds). `solo` comes later and needs 3 cpus of one cell.
    return [pod_group("g", 2, created=at(0)),
            *(_guaranteed(member(f"g-{i}", "g", "3", created=at(1))) for i in range(2)),
            _guaranteed(member("solo", "none", "3", created=at(30)))]


def _run(tmp_path, nrt_args: dict[str, Any]) -> tuple[dict, list[str]]:
    """The pods of the report, and g-1's failures in order (the event log's attempts)."""
    workload = _workload()
    del workload[-1]["metadata"]["labels"]
    events = tmp_path / "events.jsonl"
    with events.open("w") as stream:
        _, report = simulate(tmp_path, _cluster(), workload, _policy(nrt_args),
                             max_time=60 * SECOND, events=EventLog(stream))
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    return by_name(report), [e["message"] for e in lines if e.get("action") == "attempt"
                             and e.get("pod") == "default/g-1"]


def test_a_rejected_gang_member_gives_its_numa_room_back(tmp_path) -> None:
    pods, failures = _run(tmp_path, {"cacheResyncPeriodSeconds": 5})
    # While g-0 waited at Permit on n1, the cache took its 3 cpus from both cells (no report
    # came since): 1 left in each, so g-1 could not align there; the group was rejected.
    assert failures[0] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 cannot align container. preemption: "
        "0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption "
        "is not helpful for scheduling., PodGroup default/g gets rejected due to Pod g-1 is "
        "unschedulable even after PostFilter")
    assert pods["g-0"]["status"] == pods["g-1"]["status"] == "Pending"
    # The rejection unreserved g-0 (Unreserve): `solo` finds 4 cpus in a cell again.
    assert (pods["solo"]["status"], pods["solo"]["node"]) == ("Scheduled", "n1")


def test_discard_reserved_nodes_while_a_gang_member_waits(tmp_path) -> None:
    pods, failures = _run(tmp_path, {"discardReservedNodes": True})
    # g-0 waiting at Permit on n1 is between Reserve and PostBind: n1 is discarded for g-1.
    assert failures[0].startswith(
        "0/2 nodes are available: 1 Insufficient cpu, 1 invalid node topology data. ")
    # Its binding cycle over (rejected), n1 is read from its report again.
    assert (pods["solo"]["status"], pods["solo"]["node"]) == ("Scheduled", "n1")
