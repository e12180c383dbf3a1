"""Synthetic `--events` lines for the demo run (config/examples/cluster.json, workload.yaml,
the default policy, seed 0), written by hand to /tmp/notes/sim-events-schema.md: what the
HTML tests feed the renderer, independent of the loop's emitter."""

from __future__ import annotations

import json

# The FitErrors of the demo run, as the report's messages have them.
BATCH_4_MESSAGE = (
    "0/6 nodes are available: 1 Insufficient memory, 1 Too many pods, 1 node(s) had untolerated "
    "taint(s), 1 node(s) were unschedulable, 3 Insufficient cpu. preemption: 0/6 nodes are "
    "available: 3 No preemption victims found for incoming pod, 3 Preemption is not helpful for "
    "scheduling.")
CRITICAL_MESSAGE = (
    "0/6 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), 1 node(s) "
    "were unschedulable, 3 node(s) didn't match Pod's node affinity/selector.")
BATCH_4_PLUGINS = {"NodeResourcesFit": 4, "NodeUnschedulable": 1, "TaintToleration": 1}
BATCH_4_REASONS = {"Insufficient cpu": 3, "Insufficient memory": 1, "Too many pods": 1,
                   "node(s) had untolerated taint(s)": 1, "node(s) were unschedulable": 1}
CRITICAL_PLUGINS = {"NodeAffinity": 3, "NodeResourcesFit": 1, "NodeUnschedulable": 1,
                    "TaintToleration": 1}
CRITICAL_REASONS = {"Insufficient cpu": 1, "node(s) didn't match Pod's node affinity/selector": 3,
                    "node(s) had untolerated taint(s)": 1, "node(s) were unschedulable": 1}


def _q(t: float, active: int, backoff: int, unschedulable: int, pending: int, cpu: float,
       memory: float) -> dict:
    return {"t": t, "action": "queues", "active": active, "backoff": backoff,
            "unschedulable": unschedulable, "pending": pending, "cpuAllocated": cpu,
            "memoryAllocated": memory}


def _scheduled(t: float, pod: str, cycle: int, node: str) -> list[dict]:
    return [{"t": t, "action": "attempt", "pod": pod, "cycle": cycle, "result": "scheduled",
             "node": node, "plugins": {}, "reasons": {}},
            {"t": t, "action": "bind", "pod": pod, "node": node}]


def _arrive(t: float, pod: str, priority: int) -> list[dict]:
    return [{"t": t, "action": "arrive", "pod": pod, "priority": priority},
            {"t": t, "action": "move", "pod": pod, "from": "new", "to": "active",
             "event": "UnscheduledPodAdd"}]


def _failed(t: float, pod: str, cycle: int, message: str, plugins: dict, reasons: dict) -> list[dict]:
    return [{"t": t, "action": "attempt", "pod": pod, "cycle": cycle, "result": "unschedulable",
             "message": message, "plugins": plugins, "reasons": reasons},
            {"t": t, "action": "move", "pod": pod, "from": "active", "to": "unschedulable",
             "event": "ScheduleAttemptFailure"}]


def demo_events() -> list[dict]:
    """The run: three web pods placed at once; batch-4 (3 cpu) fits nowhere until worker-d1
    joins at 5m; critical-job (priority 1000, zone us-east-1b) preempts batch-2 on worker-b2
    and binds when the victim's 30 s grace period is over."""
    web = [f"default/web-{i}" for i in (3, 4, 5)]
    batch, critical, victim = "default/batch-4", "default/critical-job", "default/batch-2"
    ev: list[dict] = []
    for pod in web:
        ev += _arrive(0.0, pod, 0)
    ev.append(_q(0.0, 2, 0, 0, 3, 0.266154, 0.18796))
    for i, pod in enumerate(web):
        t = round(0.001 * (i + 1), 3)
        ev += _scheduled(t, pod, i + 1, "worker-a2")
        ev.append(_q(t, max(1 - i, 0), 0, 0, 2 - i, (0.285385, 0.304615, 0.323846)[i],
                     (0.195312, 0.202665, 0.210018)[i]))
    ev += _arrive(60.0, batch, 0)
    ev.append(_q(60.0, 0, 0, 0, 1, 0.323846, 0.210018))
    ev += _failed(60.001, batch, 4, BATCH_4_MESSAGE, BATCH_4_PLUGINS, BATCH_4_REASONS)
    ev.append(_q(60.001, 0, 0, 1, 1, 0.323846, 0.210018))
    ev += _arrive(120.0, critical, 1000)
    ev.append(_q(120.0, 0, 0, 1, 2, 0.323846, 0.210018))
    ev += _failed(120.001, critical, 5, CRITICAL_MESSAGE, CRITICAL_PLUGINS, CRITICAL_REASONS)
    ev += [{"t": 120.001, "action": "nominate", "pod": critical, "node": "worker-b2"},
           {"t": 120.001, "action": "preempt", "pod": critical, "node": "worker-b2",
            "victims": [victim]},
           {"t": 120.001, "action": "evict", "pod": victim, "node": "worker-b2", "by": critical,
            "gracePeriodSeconds": 30.0},
           _q(120.001, 0, 0, 2, 2, 0.323846, 0.210018),
           {"t": 150.001, "action": "evict", "pod": victim, "node": "worker-b2", "by": critical,
            "terminated": True},
           {"t": 150.001, "action": "move", "pod": batch, "from": "unschedulable", "to": "active",
            "event": "AssignedPodDelete"},
           {"t": 150.001, "action": "move", "pod": critical, "from": "unschedulable",
            "to": "active", "event": "AssignedPodDelete"},
           _q(150.001, 1, 0, 0, 2, 0.254615, 0.195312)]
    ev += _scheduled(150.002, critical, 6, "worker-b2")
    ev.append(_q(150.002, 0, 0, 0, 1, 0.312308, 0.210018))
    ev += _failed(150.003, batch, 7, BATCH_4_MESSAGE, BATCH_4_PLUGINS, BATCH_4_REASONS)
    ev += [_q(150.003, 0, 0, 1, 1, 0.312308, 0.210018),
           {"t": 300.0, "action": "node", "node": "worker-d1", "change": "add"},
           {"t": 300.0, "action": "move", "pod": batch, "from": "unschedulable", "to": "active",
            "event": "NodeAdd"},
           _q(300.0, 0, 0, 0, 1, 0.238824, 0.170015)]
    ev += _scheduled(300.001, batch, 8, "worker-d1")
    ev += [_q(300.001, 0, 0, 0, 0, 0.327059, 0.217634),
           {"t": 300.001, "action": "end", "reason": "settled"}]
    return ev


def demo_events_jsonl() -> str:
    return "".join(json.dumps(e, sort_keys=True) + "\n" for e in demo_events())
