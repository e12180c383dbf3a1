"""Simulator throughput: pods scheduled per second of wall time.

    python -m bench.simulate [--nodes 1000] [--pods 10000] [--seed 7]
        [--percentage-of-nodes-to-score P] [--policy FILE] [--keep DIR] [--profile]

Generates a deterministic cluster (nodes over three zones, a few tainted or cordoned, some
low-priority pods already running) and a workload (pods of mixed sizes and priorities, some
pinned to a zone, arriving 5 ms apart), runs the simulation in-process and prints the
figures. Measures, never asserts.
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

ZONES = ("zone-a", "zone-b", "zone-c")
SHAPES = ((4, 16), (8, 32), (16, 64), (32, 128))  # cpu cores, memory GiB
POD_SIZES = ((100, 128), (250, 512), (500, 1024), (1000, 2048), (2000, 4096))  # m, Mi
DEFAULT_POLICY: dict[str, Any] = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}


def _pod(name: str, cpu_m: int, mem_mi: int, priority: int, **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "bench", "labels": {"app": name.rsplit("-", 1)[0]}}
    meta.update(extra.pop("meta", {}))
    spec = {"priority": priority, "containers": [{
        "name": "app", "image": f"registry.example/{name.rsplit('-', 1)[0]}:1",
        "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"}}}]}
    spec.update(extra)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def make_cluster(nodes: int, seed: int) -> dict[str, Any]:
    rng = random.Random(f"{seed}:cluster")
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
        for j in range(rng.randint(0, 3)):
            cpu_m, mem_mi = rng.choice(POD_SIZES)
            pod = _pod(f"system-{i}-{j}", cpu_m, mem_mi, -10, nodeName=name,
                       meta={"uid": f"uid-system-{i}-{j}"})
            pod["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
            items.append(pod)
    return {"apiVersion": "v1", "kind": "List", "items": items}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--load", type=float, default=0.5,
                        help="workload cpu requests / cluster allocatable cpu (default 0.5; "
                             "above ~0.9 pods preempt and stay pending)")
    parser.add_argument("--percentage-of-nodes-to-score", type=int, default=None)
    parser.add_argument("--policy", help="policy file (default: kube-scheduler's defaults)")
    parser.add_argument("--keep", metavar="DIR", help="keep the generated files here")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary")
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
        cluster = make_cluster(args.nodes, args.seed)
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
            seed=args.seed, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score))
        profiler = cProfile.Profile() if args.profile else None
        t1 = time.perf_counter()
        if profiler:
            profiler.enable()
        result = sim.run()
        if profiler:
            profiler.disable()
        wall = time.perf_counter() - t1
    totals = build_report(result, profile)["totals"]
    search = ("all nodes" if args.percentage_of_nodes_to_score is None
              else f"percentageOfNodesToScore={args.percentage_of_nodes_to_score}")
    print(f"{args.nodes} nodes, {args.pods} pods, load {args.load}, {search}, seed {args.seed}")
    print(f"load {loaded:.2f}s; simulate {wall:.2f}s wall, {totals['cycles']} cycles, "
          f"{totals['virtualTimeSeconds']:.1f}s virtual")
    print(f"scheduled {totals['scheduled']}, pending {totals['pending']}, "
          f"preempted {totals['preempted']}, preemptions {totals['preemptions']}")
    print(f"{totals['scheduled'] / wall:.1f} pods scheduled/s, {totals['cycles'] / wall:.1f} cycles/s")
    if profiler:
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
