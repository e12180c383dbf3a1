"""Simulator throughput: pods scheduled per second of wall time.

    python -m bench.simulate [--nodes 1000] [--pods 10000] [--seed 7] [--load 0.5]
        [--saturated [--prefill 0.9]] [--fast-paths on|off|verify]
        [--percentage-of-nodes-to-score P] [--policy FILE] [--keep DIR]
        [--profile] [--profile-out FILE]

Generates a deterministic cluster (nodes over three zones, a few tainted or cordoned, some
low-priority pods already running) and a workload (pods of mixed sizes and priorities, some
pinned to a zone, arriving 5 ms apart), runs the simulation in-process and prints the
figures. Measures, never asserts.

`--saturated`: the cluster starts full. Every node already runs batch pods of priority 0 up to
`--prefill` of its cpu, and its node agents run at system-node-critical priority (never
preempted), so the workload (priorities 1000, 100 and 0, as without the flag) meets a cluster
with no room: most pods fail their first attempt, those of priority 100 and 1000 preempt batch
pods (and running workload pods of lower priority), and those of priority 0 find nothing of
lower priority to evict and give up pending.

Figures: `pods scheduled/s` is pods bound by the end per wall second of the run; `pods/s` is
the workload's pods that reached a final outcome (scheduled, preempted after being scheduled,
or given up pending at the end of a settled run) per wall second; `attempts` is scheduling
attempts over all pods (so attempts/s is cycles/s).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from extender import cliargs

ZONES = ("zone-a", "zone-b", "zone-c")
SHAPES = ((4, 16), (8, 32), (16, 64), (32, 128))  # cpu cores, memory GiB
POD_SIZES = ((100, 128), (250, 512), (500, 1024), (1000, 2048), (2000, 4096))  # m, Mi
DEFAULT_POLICY: dict[str, Any] = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}
SYSTEM_PRIORITY = -10
#: `--saturated`: node agents at system-node-critical's value, batch pods below the workload.
CRITICAL_PRIORITY = 2000001000
BATCH_PRIORITY = 0


def _pod(name: str, cpu_m: int, mem_mi: int, priority: int, **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "bench", "labels": {"app": name.rsplit("-", 1)[0]}}
    meta.update(extra.pop("meta", {}))
    spec = {"priority": priority, "containers": [{
        "name": "app", "image": f"registry.example/{name.rsplit('-', 1)[0]}:1",
        "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}}}]}
    spec.update(extra)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def make_cluster(nodes: int, seed: int, prefill: float = 0.0) -> dict[str, Any]:
    """`prefill` > 0: the saturated cluster (node agents critical, each node running batch
    pods up to that share of its cpu)."""
    rng = random.Random(f"{seed}:cluster")
    system_priority = CRITICAL_PRIORITY if prefill > 0 else SYSTEM_PRIORITY
    items: list[dict[str, Any]] = []
    for i in range(nodes):
        cpu, mem = rng.choice(SHAPES)
        zone = ZONES[i % len(ZONES)]
        name = f"node-{i:05d}"
        node: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-{name}", "labels": {
                "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": "bench"}},
            "spec": {},
            "status": {"allocatable": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110"}},
        }
        if rng.random() < 0.05:
            node["spec"]["taints"] = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
        if rng.random() < 0.01:
            node["spec"]["unschedulable"] = True
        items.append(node)
        used_m = 0
        for j in range(rng.randint(0, 3)):
            cpu_m, mem_mi = rng.choice(POD_SIZES)
            items.append(_running(f"system-{i}-{j}", cpu_m, mem_mi, system_priority, name))
            used_m += cpu_m
        if prefill > 0:
            items.extend(_batch_pods(rng, i, name, int(cpu * 1000 * prefill) - used_m))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def _running(name: str, cpu_m: int, mem_mi: int, priority: int, node: str) -> dict[str, Any]:
    pod = _pod(name, cpu_m, mem_mi, priority, nodeName=node, meta={"uid": f"uid-{name}"})
    pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    return pod


def _batch_pods(rng: random.Random, i: int, node: str, room_m: int) -> list[dict[str, Any]]:
    """Batch pods of mixed sizes filling `room_m` millicores of the node (never more)."""
    pods: list[dict[str, Any]] = []
    while True:
        cpu_m, mem_mi = rng.choice(POD_SIZES)
        if cpu_m > room_m:
            return pods
        pods.append(_running(f"batch{i % 20}-{i}n{len(pods)}", cpu_m, mem_mi, BATCH_PRIORITY, node))
        room_m -= cpu_m


def cluster_cpu_m(cluster: dict[str, Any]) -> int:
    return sum(int(o["status"]["allocatable"]["cpu"]) * 1000 for o in cluster["items"]
               if o["kind"] == "Node")


def make_workload(pods: int, seed: int, cpu_budget_m: int) -> dict[str, Any]:
    """Pods whose requests add up to about `cpu_budget_m` millicores."""
    rng = random.Random(f"{seed}:workload")
    mean_cpu = sum(c for c, _ in POD_SIZES) / len(POD_SIZES)
    scale = cpu_budget_m / (pods * mean_cpu) if pods else 1.0
    items = []
    for i in range(pods):
        cpu_m, mem_mi = rng.choice(POD_SIZES)
        cpu_m, mem_mi = max(10, int(cpu_m * scale)), max(16, int(mem_mi * scale))
        roll = rng.random()
        priority = 1000 if roll < 0.05 else (100 if roll < 0.2 else 0)
        extra: dict[str, Any] = {}
        if rng.random() < 0.1:
            extra["nodeSelector"] = {"topology.kubernetes.io/zone": rng.choice(ZONES)}
        if rng.random() < 0.05:
            extra["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        ms = 5 * i
        stamp = f"2026-01-01T01:{ms // 60000:02d}:{(ms // 1000) % 60:02d}.{ms % 1000:03d}Z"
        items.append(_pod(f"app{i % 50}-{i:05d}", cpu_m, mem_mi, priority,
                          meta={"creationTimestamp": stamp}, **extra))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def final_outcomes(result: Any) -> int:
    """Workload pods whose fate is decided: bound, preempted after being bound, or still
    pending when the run settled (given up: nothing could change any more)."""
    from extender.simulator.records import PENDING, PREEMPTED, SCHEDULED

    final = {SCHEDULED, PREEMPTED} if result.truncated else {SCHEDULED, PREEMPTED, PENDING}
    return sum(1 for r in result.records.values()
               if r.origin == "workload" and r.status in final)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.simulate",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=cliargs.positive_int, default=1000,
                        help="nodes of the generated cluster (default 1000)")
    parser.add_argument("--pods", type=cliargs.count, default=10000,
                        help="pods of the generated workload (default 10000)")
    parser.add_argument("--seed", type=int, default=7, help="the seed (default 7)")
    parser.add_argument("--load", type=cliargs.positive_float, default=0.5,
                        help="workload cpu requests / cluster allocatable cpu (default 0.5; "
                             "above ~0.9 pods preempt and stay pending; with --saturated, on "
                             "top of the batch pods already running)")
    parser.add_argument("--saturated", action="store_true",
                        help="start from a full cluster: every node runs priority-0 batch pods "
                             "up to --prefill of its cpu (node agents critical), so most pods "
                             "fail a first attempt and those of priority 100 and 1000 preempt")
    parser.add_argument("--prefill", type=cliargs.non_negative_float, default=0.9,
                        help="with --saturated: the share of each node's cpu batch pods take "
                             "(default 0.9)")
    parser.add_argument("--fast-paths", choices=("on", "off", "verify"), default="on",
                        help="the simulator's reuse of failed attempts' verdicts and the row "
                             "filter/score path: on (default), off (every node judged every "
                             "time, per node), verify (both, compared; slow). Same outcome")
    parser.add_argument("--percentage-of-nodes-to-score", type=cliargs.percentage, default=None,
                        metavar="P", help="kube-scheduler's percentageOfNodesToScore (default: "
                                         "its adaptive one)")
    parser.add_argument("--policy", help="policy file (default: kube-scheduler's defaults)")
    parser.add_argument("--keep", metavar="DIR", help="keep the generated files here")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary")
    parser.add_argument("--profile-out", metavar="FILE",
                        help="profile, and write the cProfile stats to FILE (for pstats)")
    args = parser.parse_args(argv)

    from extender.engine.policy import load_policy
    from extender.engine.profile import build_profile
    from extender.simulator.loop import Simulation, SimulationConfig
    from extender.simulator.report import build_report
    from extender.simulator.workload import load_workload
    from extender.state.snapshot import load_snapshot

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep or tmp)
        out.mkdir(parents=True, exist_ok=True)
        cluster = make_cluster(args.nodes, args.seed, args.prefill if args.saturated else 0.0)
        budget = int(args.load * cluster_cpu_m(cluster))
        (out / "cluster.json").write_text(json.dumps(cluster))
        (out / "workload.json").write_text(json.dumps(make_workload(args.pods, args.seed, budget)))
        policy_path = Path(args.policy) if args.policy else out / "policy.json"
        if not args.policy:
            policy_path.write_text(json.dumps(DEFAULT_POLICY))
        t0 = time.perf_counter()
        profile = build_profile(load_policy(policy_path))
        state = load_snapshot(out / "cluster.json")
        workload = load_workload(out / "workload.json")
        loaded = time.perf_counter() - t0
        sim = Simulation(state, profile, workload, SimulationConfig(
            seed=args.seed, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
            fast_paths=args.fast_paths))
        profiler = cProfile.Profile() if args.profile or args.profile_out else None
        t1, c1 = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        result = sim.run()
        if profiler:
            profiler.disable()
        wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    totals = build_report(result, profile)["totals"]
    search = ("all nodes" if args.percentage_of_nodes_to_score is None
              else f"percentageOfNodesToScore={args.percentage_of_nodes_to_score}")
    scenario = f"saturated (prefill {args.prefill}), " if args.saturated else ""
    print(f"{args.nodes} nodes, {args.pods} pods, {scenario}load {args.load}, {search}, "
          f"seed {args.seed}")
    # CPU time beside wall time: on a shared machine the wall figure also counts waiting.
    print(f"load {loaded:.2f}s; simulate {wall:.2f}s wall ({cpu:.2f}s cpu), "
          f"{totals['cycles']} cycles, {totals['virtualTimeSeconds']:.1f}s virtual")
    print(f"scheduled {totals['scheduled']}, pending {totals['pending']}, "
          f"preempted {totals['preempted']}, preemptions {totals['preemptions']}")
    print(f"{totals['scheduled'] / wall:.1f} pods scheduled/s, {totals['cycles'] / wall:.1f} cycles/s")
    # After the lines above, which bench/run.py reads by their first match.
    final = final_outcomes(result)
    print(f"attempts {totals['attempts']}, end {totals['endReason']}, "
          f"{final} workload pods reached a final outcome")
    print(f"{final / wall:.1f} pods/s (final outcomes per wall second)")
    if profiler:
        stats = pstats.Stats(profiler, stream=sys.stdout)
        if args.profile_out:
            stats.dump_stats(args.profile_out)
        stats.sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
