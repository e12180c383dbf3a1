"""The simulator against the real kube-scheduler on a generated cluster and workload.

    python -m bench.agreement --out DIR [--nodes 200] [--pods 2000] [--seed 1]
        [--scheduler-plugins] [--percentage-of-nodes-to-score P] [--time-scale F]
        [--scheduler-verbosity N] [--run]

writes DIR/cluster.yaml (nodes of three shapes over three zones, a few hundred low-priority
pods already bound), DIR/workload.yaml (PriorityClasses; Deployments arriving one every few
seconds: zone spread with DoNotSchedule, required pod anti-affinity by hostname, preferred
zone affinity, plain ones that fill the cluster; late high-priority Deployments that only fit
by preempting; with `--scheduler-plugins` also a PodGroup gang and an ElasticQuota'd team)
and DIR/policy.yaml. With `--run` it then does what a user does:

    extender simulate --cluster … --workload … --policy … --on-sandbox --report DIR/real.json
    extender simulate --cluster … --workload … --policy … --follow DIR/real.json --report DIR/sim.json
    extender simulate --agreement DIR/sim.json DIR/real.json

and prints the agreement (the last line: `agreement: A/N pods`). The same seed gives the
same files.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from extender import cliargs

ZONES = ("zone-a", "zone-b", "zone-c")
#: (cpu, memory, share of the nodes)
SHAPES = (("8", "32Gi", 0.6), ("16", "64Gi", 0.3), ("4", "16Gi", 0.1))
CLASSES = (("low", 10), ("medium", 100), ("high", 1000))
EPOCH = "2026-11-20T10:00:00Z"


def _stamp(seconds: float) -> str:
    import datetime

    base = datetime.datetime(2026, 11, 20, 10, 0, 0, tzinfo=datetime.UTC)
    return (base + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _container(cpu: str, memory: str) -> dict[str, Any]:
    return {"name": "app", "image": "registry.example/app:1",
            "resources": {"requests": {"cpu": cpu, "memory": memory}}}


def cluster(nodes: int, rng: random.Random) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    width = len(str(nodes))
    shapes = [s for s in SHAPES for _ in range(round(s[2] * 100))]
    for i in range(nodes):
        name = f"node-{i + 1:0{width}d}"
        cpu, memory, _ = shapes[(i * 37) % len(shapes)]
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[i % 3]}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}})
    for name, value in CLASSES:
        out.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": name}, "value": value})
    # Pods already running: low priority, a little on most nodes (victims for later).
    for i in range(nodes):
        for j in range(rng.randint(0, 2)):
            node = out[i]["metadata"]["name"]
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"existing-{i:03d}-{j}", "namespace": "default",
                "labels": {"app": "existing"},
                "creationTimestamp": "2026-11-20T09:00:00Z"},
                "spec": {"nodeName": node, "priorityClassName": "low", "priority": 10,
                         "terminationGracePeriodSeconds": 2,
                         "containers": [_container(f"{rng.choice((250, 500, 1000))}m", "1Gi")]},
                "status": {"phase": "Running", "startTime": "2026-11-20T09:00:00Z"}})
    return out


def _deployment(name: str, replicas: int, at: float, cpu: str, memory: str, priority: str,
                kind: str, namespace: str = "default") -> dict[str, Any]:
    labels = {"app": name}
    spec: dict[str, Any] = {"priorityClassName": priority, "terminationGracePeriodSeconds": 2,
                            "containers": [_container(cpu, memory)]}
    if kind == "spread":
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
             "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": labels}},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname",
             "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": labels}}]
    elif kind == "anti-affinity":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": labels}}]}}
    elif kind == "zone-preference":
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In",
                 "values": [ZONES[len(name) % 3]]}]}}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": _stamp(at)},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": spec}}}


def workload(nodes: int, pods: int, rng: random.Random, gang_quota: bool,
             ) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    kinds = ("spread", "anti-affinity", "plain", "zone-preference")
    left, at, i = pods, 0.0, 0
    late = max(1, pods // 20)  # high-priority pods at the end, which preempt
    if gang_quota:
        left -= 8 + 12
    left -= late
    while left > 0:
        kind = kinds[i % len(kinds)]
        cap = min(nodes // 2, 60) if kind == "anti-affinity" else 150
        replicas = min(left, rng.randint(20, cap))
        cpu = {"plain": rng.choice(("2", "2500m", "3")), "anti-affinity": "500m"}.get(
            kind, rng.choice(("300m", "500m", "1")))
        priority = "low" if i % 3 else "medium"
        out.append(_deployment(f"app-{i:02d}-{kind}", replicas, at, cpu,
                               rng.choice(("256Mi", "512Mi", "1Gi")), priority, kind))
        left -= replicas
        i += 1
        at += 4.0
    at += 6.0
    if gang_quota:
        out.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                    "metadata": {"name": "train", "namespace": "team-gang",
                                 "creationTimestamp": _stamp(at)},
                    "spec": {"minMember": 8, "scheduleTimeoutSeconds": 60}})
        for k in range(8):
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"train-{k}", "namespace": "team-gang",
                "labels": {"scheduling.x-k8s.io/pod-group": "train"},
                "creationTimestamp": _stamp(at)},
                "spec": {"priorityClassName": "medium", "terminationGracePeriodSeconds": 2,
                         "containers": [_container("2", "4Gi")]}})
        at += 4.0
        out.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
                    "metadata": {"name": "quota", "namespace": "team-quota",
                                 "creationTimestamp": _stamp(at)},
                    "spec": {"min": {"cpu": "4", "memory": "16Gi"},
                             "max": {"cpu": "6", "memory": "24Gi"}}})
        out.append(_deployment("quota-app", 12, at + 1, "1", "1Gi", "low", "plain",
                               namespace="team-quota"))
        at += 6.0
    out.append(_deployment("urgent", late, at, "4", "4Gi", "high", "plain"))
    return out


def policy(gang_quota: bool) -> dict[str, Any]:
    filters = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
               "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"]
    doc: dict[str, Any] = {
        "apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
        "plugins": {
            "filter": {"enabled": [{"name": n} for n in filters]},
            "score": {"enabled": [{"name": n, "weight": w} for n, w in (
                ("TaintToleration", 3), ("NodeAffinity", 2), ("PodTopologySpread", 2),
                ("InterPodAffinity", 2), ("NodeResourcesFit", 1),
                ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1))]},
            "postFilter": {"enabled": [{"name": "DefaultPreemption"}]}},
        "pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "System"}}]}
    if gang_quota:
        doc["plugins"]["filter"]["enabled"] += [{"name": "Coscheduling"},
                                                {"name": "CapacityScheduling"}]
        doc["plugins"]["postFilter"] = {"enabled": [{"name": "CapacityScheduling"}]}
        doc["pluginConfig"].append({"name": "Coscheduling", "args": {
            "permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0}})
        doc["kubernetesVersion"] = "1.34"
    return doc


def write(out: Path, nodes: int, pods: int, seed: int, gang_quota: bool) -> None:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cluster.yaml").write_text(yaml.safe_dump_all(cluster(nodes, rng), sort_keys=False))
    (out / "workload.yaml").write_text(yaml.safe_dump_all(
        workload(nodes, pods, rng, gang_quota), sort_keys=False))
    (out / "policy.yaml").write_text(yaml.safe_dump(policy(gang_quota), sort_keys=False))


def _extender(*argv: str) -> int:
    """Run `extender simulate ARGV` as a user would; its exit status (it says why it failed)."""
    cmd = [sys.executable, "-m", "extender", "simulate", *argv]
    print("$ extender simulate " + " ".join(argv), flush=True)
    return subprocess.run(cmd, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.agreement", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="where the inputs, both reports, event logs and agreement.html go "
                        "(default: a new directory under the system's temporary one, printed)")
    p.add_argument("--nodes", type=cliargs.positive_int, default=200,
                   help="nodes of the generated cluster (default 200)")
    p.add_argument("--pods", type=cliargs.count, default=2000,
                   help="pods of the generated workload (default 2000)")
    p.add_argument("--seed", type=int, default=1, help="the generator's seed (default 1)")
    p.add_argument("--scheduler-plugins", action="store_true",
                   help="add a gang and a quota (Coscheduling, CapacityScheduling): the real side "
                        "runs scheduler-plugins' kube-scheduler")
    p.add_argument("--percentage-of-nodes-to-score", type=cliargs.percentage, default=None,
                   metavar="P",
                   help="kube-scheduler's percentageOfNodesToScore on both sides (default: its "
                        "adaptive one; 100 scores every node, so ties are broken alike)")
    p.add_argument("--time-scale", type=cliargs.positive_float, default=1.0,
                   help="the real side's --time-scale (default 1: the workload's own times)")
    p.add_argument("--scheduler-verbosity", type=cliargs.scheduler_verbosity, default=None,
                   metavar="N",
                   help="kube-scheduler's -v in the replay (extender simulate "
                        "--scheduler-verbosity; 5 logs every queue move)")
    p.add_argument("--run", action="store_true",
                   help="replay on the sandbox, simulate with --follow, compare (minutes: "
                        "the real side runs on the workload's own clock); without it, only "
                        "write the inputs")
    args = p.parse_args(argv)
    if args.out is None:
        import tempfile

        args.out = Path(tempfile.mkdtemp(prefix="agreement-"))
    write(args.out, args.nodes, args.pods, args.seed, args.scheduler_plugins)
    print(f"wrote {args.out}/cluster.yaml, workload.yaml, policy.yaml")
    if not args.run:
        return 0
    common = ["--cluster", str(args.out / "cluster.yaml"), "--workload",
              str(args.out / "workload.yaml"), "--policy", str(args.out / "policy.yaml")]
    if args.percentage_of_nodes_to_score is not None:
        common += ["--percentage-of-nodes-to-score", str(args.percentage_of_nodes_to_score)]
    real = ["--on-sandbox", "--time-scale", str(args.time_scale),
            "--sandbox-state-dir", str(args.out / "sandbox")]
    if args.scheduler_plugins:
        real.append("--scheduler-plugins")
    if args.scheduler_verbosity is not None:
        real += ["--scheduler-verbosity", str(args.scheduler_verbosity)]
    steps = [
        [*common, *real, "--report", str(args.out / "real.json"),
         "--events", str(args.out / "real.jsonl")],
        [*common, "--follow", str(args.out / "real.json"), "--report",
         str(args.out / "sim.json"), "--events", str(args.out / "sim.jsonl")],
        ["--agreement", str(args.out / "sim.json"), str(args.out / "real.json"),
         "--report", str(args.out / "agreement.json"), "--html",
         str(args.out / "agreement.html"), "--agreement-events",
         str(args.out / "sim.jsonl"), str(args.out / "real.jsonl")],
    ]
    for step in steps:
        status = _extender(*step)
        if status:  # each later step reads what this one writes
            print(f"python -m bench.agreement: stopped: extender simulate exited {status}",
                  file=sys.stderr)
            return status
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
