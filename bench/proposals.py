"""The preempt calls a real kube-scheduler makes: its dry run's candidates on the current state.

kube-scheduler calls an extender's preempt verb with DefaultPreemption's candidates: from a
random offset among the nodes where preemption might help (filter status Unschedulable), each
node's `SelectVictimsOnNode` victims (the fewest, least important pods whose eviction lets the
pod fit, listed most important first, with how many of them overdraw a PDB), until
`numCandidates` are found (10 % of those nodes, at least 100). `dry_run_bodies` finds them with
the engine's DefaultPreemption dry run (held to kube-scheduler's own code by `python -m
conformance`) over the filters that decide for the bench's preemptor (`FILTERS_POLICY`), on the
cluster the bench's binds left.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import generate
from extender.engine.policy import load_policy
from extender.engine.preemption.evaluator import (
    dry_run_preemption,
    nodes_where_preemption_might_help,
)
from extender.engine.preemption.victims import Victims, lower_priority
from extender.engine.profile import build_profile
from extender.engine.runner import prepare_filters, run_filters
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.snapshot import load_snapshot

JSON = Any
#: The filters that decide for the preemptor: it has no ports, volumes, spread constraints or
#: pod affinity, so kube-scheduler's other default filters pass it on every node.
FILTERS_POLICY = Path(__file__).with_name("policy-yardstick.json")


def preemptor(seed: int, k: int, rng: random.Random) -> JSON:
    """The k-th distinct high-priority pod (its own name and UID) that needs room."""
    return generate.make_pod(seed, name=f"critical-job-{rng.randrange(16**9):09x}-{k}",
                             namespace="ml-training", priority_class="critical",
                             priority=1_000_000, cpu_m=3000, memory_mi=6144,
                             zones=generate.ZONES)


def placed(pod: JSON, node: str) -> JSON:
    """`pod` bound to `node`, as the extender's state holds a pod it bound (not started: it
    counts as started now, the least important of its priority)."""
    return {**pod, "spec": {**pod["spec"], "nodeName": node}}


def body(pod: JSON, candidates: Mapping[str, Victims]) -> bytes:
    """The preempt request for `candidates`, nodes in name order as Go's `encoding/json`
    writes a map, each node's victims in the order found (most important first)."""
    return generate.encode({"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": {
        name: {"Pods": [{"UID": victim.uid} for victim in found.pods],
               "NumPDBViolations": found.num_pdb_violations}
        for name, found in sorted(candidates.items())}})


def dry_run_bodies(snapshot: Path, bound: Sequence[tuple[JSON, str]], seed: int,
                   count: int, wanted: int, now: float | None = None) -> list[bytes]:
    """`count` preempt requests, each for a distinct preemptor, proposing what kube-scheduler's
    dry run finds on `snapshot` with the `bound` pods (pod, node) added: from a random offset
    among the nodes where preemption might help, each node's `SelectVictimsOnNode` victims,
    until `wanted` candidates (kube-scheduler's `numCandidates` is 10 % of those nodes, at
    least 100: fewer than `wanted` here, where the preemptor fits some nodes as they are)."""
    state = load_snapshot(snapshot)
    for pod, node in bound:
        state.apply_pod(k8s.convert(placed(pod, node), k8s.Pod))
    profile = build_profile(load_policy(FILTERS_POLICY))
    nodes = list(state.nodes.values())
    rng = random.Random(f"{seed}:preempt")  # the preemptors: the same for every cluster
    offsets = random.Random(f"{seed}:offsets")
    clock = time.time() if now is None else now
    bodies = []
    for k in range(count):
        pod = preemptor(seed, k, rng)
        view = PodView.from_k8s(k8s.convert(pod, k8s.Pod))
        filters = prepare_filters(profile, view, state)
        statuses = run_filters(profile, view, nodes, state, filters).statuses
        potential = [state.nodes[name]
                     for name in nodes_where_preemption_might_help(state.nodes, statuses)]
        offset = offsets.randrange(len(potential)) if potential else 0
        dry = dry_run_preemption(filters, view, potential, state, offset, wanted, clock,
                                 lower_priority(view))
        bodies.append(body(pod, dry.candidates))
    return bodies
