"""Checkouts of this extender side by side on the traffic kube-scheduler sends, in one run.

    python -m bench.ab HEAD .                       # the last commit against the working tree
    python -m bench.ab --nodes 500 --cycles 600 main ../other-checkout

A change's effect on a request is often a few per cent, while this VM's speed moves by more
than that between two runs minutes apart (twice as slow within the hour on 2026-12-03): two
runs one after the other compare the VM, not the code. Here every tree's `extender serve`
runs at once (all on one CPU, the client on the other) and each of `bench.traffic`'s cycles (a
distinct pod, kube-scheduler's window of the nodes its filters pass, prioritize on what
passed, a bind to the best) goes to every server in turn, each cycle starting with the next
server. A TREE is a directory holding a checkout, or a git revision of this repository
(checked out into a temporary worktree, removed afterwards). It prints each tree's p50 of
filter, prioritize and bind and its cycle's mean, in milliseconds, and each against the first
tree's; with `--preempts N`, then N preempt calls to each in turn too (a distinct preemptor
each, with the candidates kube-scheduler's dry run finds on the cluster that server's own
binds left: `bench.proposals`), and their p50. The cluster and the pods come from this
checkout's `bench.generate`, and every tree's server runs on this environment's Python and
packages: a tree that needs others fails to start, with its log's end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from bench import generate, proposals, traffic
from bench.run import HOST, REPO, Server, cpu_plan, free_port, spawn, wait_ready
from extender import cliargs

VERBS = ("filter", "prioritize", "bind")


@contextlib.contextmanager
def checkouts(trees: Sequence[str], workdir: Path) -> Iterator[list[Path]]:
    """Each tree as a directory: as given, or a git revision checked out into `workdir`."""
    made: list[Path] = []
    paths = []
    try:
        for index, tree in enumerate(trees):
            path = Path(tree)
            if (path / "extender" / "__init__.py").is_file():
                paths.append(path.resolve())
                continue
            found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{tree}^{{commit}}"],
                                   cwd=REPO, capture_output=True, text=True, check=False)
            if found.returncode != 0:
                raise SystemExit(f"bench.ab: {tree!r} is neither a checkout of this extender "
                                 "nor a git revision of this repository")
            worktree = workdir / f"tree-{index}"
            subprocess.run(["git", "worktree", "add", "--quiet", "--detach", str(worktree),
                            found.stdout.strip()], cwd=REPO, check=True)
            made.append(worktree)
            paths.append(worktree)
        yield paths
    finally:
        for worktree in made:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO,
                           check=False, capture_output=True)


def imported_from(tree: Path) -> Path:
    """Where a Python started in `tree` as `start` starts it imports `extender` from."""
    found = subprocess.run([sys.executable, "-c", "import extender; print(extender.__file__)"],
                           cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                           capture_output=True, text=True, check=True)
    return Path(found.stdout.strip()).resolve()


def start(tree: Path, snapshot: Path, policy: Path, workdir: Path, index: int,
          cpu: int | None) -> Server:
    """`extender serve` from `tree`: `-m` puts its working directory first on the path, so
    the tree's own package is the one imported, whatever is installed (checked first)."""
    where = imported_from(tree)
    if not where.is_relative_to(tree.resolve()):
        raise SystemExit(f"bench.ab: started in {tree}, Python imports extender from {where}")
    port = free_port()
    cmd = [sys.executable, "-m", "extender", "serve", "--host", HOST, "--port", str(port),
           "--snapshot", str(snapshot), "--policy", str(policy)]
    return spawn(cmd, snapshot, port, workdir / f"server-{index}.log", cpu,
                 {**os.environ, "PYTHONPATH": str(tree)}, cwd=tree)


def measure(trees: Sequence[Path], nodes: int, cycles: int, warmup: int, seed: int,
            policy: Path, workdir: Path, preempts: int = 0) -> list[dict[str, float]]:
    """Each tree's p50 per verb and cycle mean (ms), from the same cycles, interleaved; then,
    with `preempts`, the p50 of that many preempt calls ("preempt"), interleaved too."""
    snapshot = workdir / f"cluster-{nodes}.json"
    generate.write_cluster(snapshot, generate.ClusterSpec(nodes, nodes * traffic.PODS_PER_NODE,
                                                          generate.DEFAULT_SEED))
    names = [generate.node_name(i) for i in range(nodes)]
    server_cpu, client_cpu = cpu_plan()
    targets: list[traffic.Target] = []
    try:
        for index, tree in enumerate(trees):
            targets.append(traffic.Target(f"tree-{index}", start(
                tree, snapshot, policy, workdir, index, server_cpu), binds=True))
        for target in targets:
            wait_ready(target.server, 300.0)
        if client_cpu is not None:
            os.sched_setaffinity(0, {client_cpu})
        pods = traffic.pending_pods(seed, warmup + cycles)
        plan = traffic.windows(names, warmup + cycles, seed,
                               feasible=traffic.feasible_nodes(snapshot, pods, names))
        traffic._interleaved(targets, pods, plan, warmup, "")  # the warm-up's times dropped
        if preempts:
            window = traffic.num_feasible_nodes_to_find(nodes)
            bodies = {t.name: proposals.dry_run_bodies(snapshot, t.bound, seed + 1, preempts,
                                                       window) for t in targets}
            for turn in range(preempts):
                for target in traffic._turn(targets, turn):
                    elapsed, _ = target.post("/preempt", bodies[target.name][turn])
                    target.times["preempt"].append(elapsed)
    finally:
        for target in targets:
            target.server.stop()
    return [{**{verb: statistics.median(t.times[verb]) * 1000 for verb in VERBS},
             "cycle": statistics.fmean(t.times["cycle"]) * 1000,
             **({"preempt": statistics.median(t.times["preempt"]) * 1000} if preempts else {})}
            for t in targets]


def table(trees: Sequence[str], rows: Sequence[dict[str, float]]) -> str:
    columns = (*VERBS, "cycle", *(["preempt"] if "preempt" in rows[0] else []))
    heads = [f"{c} p50" if c != "cycle" else "cycle mean" for c in columns]
    lines = [f"| tree | {' | '.join(heads)} | against the first ({', '.join(columns)}) |",
             "|---|" + "---|" * (len(columns) + 1)]
    for tree, row in zip(trees, rows, strict=True):
        against = ", ".join(f"{row[c] / rows[0][c]:.3f}" for c in columns)
        lines.append(f"| {tree} | " + " | ".join(f"{row[c]:.3f}" for c in columns)
                     + f" | {against} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.split("\n\n")[0])
    p.add_argument("trees", nargs="+", metavar="TREE",
                   help="a checkout's directory, or a git revision of this repository")
    p.add_argument("--nodes", type=cliargs.positive_int, default=1000,
                   help="cluster size (default 1000)")
    p.add_argument("--cycles", type=cliargs.positive_int, default=300,
                   help="measured cycles (default 300)")
    p.add_argument("--warmup", type=cliargs.count, default=20, help="unmeasured cycles first (default 20)")
    p.add_argument("--seed", type=int, default=None, help="the pods' seed (default: fresh each run)")
    p.add_argument("--preempts", type=cliargs.count, default=0,
                   help="preempt calls after the cycles, a distinct preemptor each (default 0)")
    p.add_argument("--policy", type=Path, default=REPO / "bench" / "policy-yardstick.json",
                   help="the servers' policy (default: the Go yardstick's work)")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp, \
            checkouts(args.trees, Path(tmp)) as paths:
        rows = measure(paths, args.nodes, args.cycles, args.warmup, seed, args.policy.resolve(),
                       Path(tmp), args.preempts)
    print(f"{args.nodes} nodes, {args.cycles} cycles (+{args.warmup} warm-up), seed {seed}, "
          "every tree's server answering each cycle in turn; milliseconds.\n")
    print(table(args.trees, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
