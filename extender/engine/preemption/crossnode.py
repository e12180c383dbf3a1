"""scheduler-plugins' CrossNodePreemption (`pkg/crossnodepreemption`, maturity "Sample"): a
PostFilter for constraints that span nodes (PodTopologySpread, required pod anti-affinity),
where evicting pods on one node cannot help but evicting pods on several can.

The newest scheduler-plugins sources comment the whole plugin out (`/* ... */` around the
file, e.g. commits b85f58d8 and 0146b58e); this follows the working version it comments out,
as of commit 1b685f0dd079ff8b919c0dd95d8ce0caa8474007 (`cross_node_preemption.go`):

1. `PodEligibleToPreemptOthers` (DefaultPreemption's of that time: any terminating
   lower-priority pod on the nominated node blocks), else Unschedulable with no message;
2. the potential nodes: every node whose status is not UnschedulableAndUnresolvable (nodes
   without a status count as unresolvable, as everywhere in this engine);
3. every pod of lower priority on those nodes, in node order; every subset of them, depth
   first, "pick" before "skip" (2^n subsets);
4. for each subset: a copy of the cycle state, each affected node copied with the subset's pods
   removed (RemovePod on the state copy, so PodTopologySpread and InterPodAffinity counts follow),
   then `RunFilterPluginsWithNominatedPods` on each affected node: each passing node is a
   candidate whose victims are the whole subset (on whichever nodes they run), with no PDB
   violation counted (upstream's candidate reports 0);
5. no candidate: Unschedulable with `FitError{Pod}.Error()`, a FitError without diagnosis
   ("0/0 nodes are available:"); the nomination is kept (upstream returns no PostFilterResult);
6. the extenders' `ProcessPreemption` (when the caller passes them), then `SelectCandidate`:
   the candidates become a node -> victims map (a node found by several subsets keeps the last
   one, which in this search order is never a superset of an earlier one) and
   `pickOneNodeForPreemption` chooses; the caller evicts every victim, on its own node, and
   nominates the chosen node (`PrepareCandidate`).

Differences, each documented:

* **A cap on the search.** Upstream tries all 2^n subsets, however many pods there are. Here
  more than `maxCandidatePods` (default 12: 4096 subsets) lower-priority pods on the potential
  nodes stops the plugin with an Unschedulable status that says so (`TOO_MANY`), before any
  dry run.
* **One copy per affected node.** Upstream clones a node once per victim on it, so with two
  victims on one node each copy lacks only one of them (and the node may be judged twice);
  here one copy per node lacks all of the subset's pods on it. The two agree whenever a subset
  has at most one pod per node (as in upstream's tests).
* Victims are listed most important first (the engine's `Victims` order); upstream's candidate
  keeps search order, and its `pickOneNodeForPreemption` reads the first victim as the highest
  priority, which `pick.py` computes as the maximum instead.

Not expressible through the extender's `preempt` verb (kube-scheduler sends one node's victims
at a time and runs its own PostFilter): `process_preemption` vets a policy naming this plugin
as DefaultPreemption.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import Field

from extender.engine.args import _Args
from extender.engine.framework import ClusterContext, Code, Profile, Status
from extender.engine.preemption.evaluator import (
    ABSENT,
    ExtenderStep,
    PreemptionResult,
    dry_run_filters,
    fit_error_message,
)
from extender.engine.preemption.ordering import by_importance
from extender.engine.preemption.pick import pick_one_node_for_preemption
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.preemption.victims import VictimPredicate, Victims, fits_with_nominated
from extender.engine.runner import FilterPass, prepare_filters
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NAME = "CrossNodePreemption"

#: The default bound on the pods whose subsets are tried (2^12 = 4096 dry runs).
DEFAULT_MAX_CANDIDATE_PODS = 12
#: The largest bound the arguments accept (2^24, some 16.7 million dry runs).
MAX_CANDIDATE_PODS_LIMIT = 24

TOO_MANY = ("{n} lower-priority pods run on the {nodes} node(s) where preemption might help: "
            "trying every subset of them (2^{n}) exceeds maxCandidatePods {cap}; raise "
            "maxCandidatePods (at most {limit}) or use DefaultPreemption")


class CrossNodePreemptionArgs(_Args):
    """Not upstream's (its plugin takes no arguments): the bound on the brute-force search."""

    max_candidate_pods: int = Field(default=DEFAULT_MAX_CANDIDATE_PODS, ge=0,
                                    le=MAX_CANDIDATE_PODS_LIMIT, alias="maxCandidatePods")


def nodes_where_preemption_might_help(nodes: Sequence[NodeInfo],
                                      statuses: Mapping[str, Status]) -> list[NodeInfo]:
    """CrossNodePreemption's own `nodesWherePreemptionMightHelp`: every node whose status is
    not UnschedulableAndUnresolvable (DefaultPreemption keeps only Unschedulable ones)."""
    return [info for info in nodes
            if statuses.get(info.name, ABSENT).code != Code.UNSCHEDULABLE_AND_UNRESOLVABLE]


def candidate_pods(potential: Sequence[NodeInfo], can_preempt: VictimPredicate) -> list[PodView]:
    """The pods the search picks from: those the preemptor may evict (lower priority), node by
    node in `potential` order."""
    return [p for info in potential for p in info.pods.values() if can_preempt(p)]


def subsets(pods: Sequence[PodView]) -> Iterator[list[PodView]]:
    """Every subset of `pods` in upstream's `dfs` order: pick `pods[i]` before skipping it, so
    the first subset is all of them and the last the empty one (a mask counting down, pods[0]
    its highest bit). A subset always comes after each of its supersets."""
    n = len(pods)
    for mask in range((1 << n) - 1, -1, -1):
        yield [pods[i] for i in range(n) if mask >> (n - 1 - i) & 1]


def dry_run_one_pass(filters: FilterPass, preemptor: PodView, victims: Sequence[PodView],
                     ctx: ClusterContext, now: float) -> list[tuple[str, Victims]]:
    """`dryRunOnePass`: remove `victims` from copies of their nodes and from a copy of the cycle
    state; each affected node where `preemptor` then passes every filter (with the node's
    nominated pods) is a candidate with all of `victims`."""
    if not victims:
        return []
    work = filters.clone()
    copies: dict[str, NodeInfo] = {}
    for victim in victims:
        name = victim.node_name
        copy = copies.get(name)
        if copy is None:
            copy = copies[name] = ctx.nodes[name].clone()
        copy.remove_pod(victim)
        work.remove_pod(victim, copy)
    found: list[tuple[str, Victims]] = []
    chosen: Victims | None = None
    for name, copy in copies.items():
        if fits_with_nominated(work, preemptor, copy, ctx.nominated_pods(name)) is None:
            if chosen is None:
                chosen = Victims(tuple(by_importance(victims, now)), 0)
            found.append((name, chosen))
    return found


def find_candidates(filters: FilterPass, preemptor: PodView, pods: Sequence[PodView],
                    ctx: ClusterContext, now: float) -> list[tuple[str, Victims]]:
    """`bruteForceDryRunPreemption`: the candidates of every subset of `pods`, in search
    order (a node may appear several times, once per subset that frees it)."""
    found: list[tuple[str, Victims]] = []
    for subset in subsets(pods):
        found.extend(dry_run_one_pass(filters, preemptor, subset, ctx, now))
    return found


def candidates_to_victims_map(candidates: Sequence[tuple[str, Victims]]) -> dict[str, Victims]:
    """`CandidatesToVictimsMap`: node -> victims, the last candidate of a node winning."""
    out: dict[str, Victims] = {}
    for name, victims in candidates:
        out[name] = victims
    return out


class CrossNodePreemption(DefaultPreemption):
    name = NAME
    #: Upstream's statuses carry no "preemption: " prefix.
    message_prefix = ""
    #: DefaultPreemption's `PodEligibleToPreemptOthers` of upstream's time (≤1.26): any
    #: terminating lower-priority pod on the nominated node blocks.
    legacy_terminating = True

    def __init__(self, args: CrossNodePreemptionArgs | None = None) -> None:
        super().__init__()
        self.cross_args = args or CrossNodePreemptionArgs()

    def offset_and_num_candidates(self, num_nodes: int, rng: Any) -> tuple[int, int]:
        """Every potential node, from the first (no sampled window)."""
        return 0, num_nodes

    def post_filter(self, profile: Profile, pod: PodView, statuses: Mapping[str, Status],
                    ctx: ClusterContext, now: float, rng: Any, *,
                    call_extenders: ExtenderStep | None = None) -> PreemptionResult:
        def failed(code: Code, message: str = "") -> PreemptionResult:
            return PreemptionResult(Status(code, (message,) if message else (), self.name))

        can_preempt = self.can_preempt(pod, ctx, now)
        nominated = pod.nominated_node_name
        eligible, _ = self.pod_eligible_to_preempt_others(
            pod, statuses.get(nominated) if nominated else None,
            ctx.nodes.get(nominated) if nominated else None, can_preempt, ctx)
        if not eligible:
            return failed(Code.UNSCHEDULABLE)  # upstream: "" → Unschedulable, no message
        all_nodes = list(ctx.nodes.values())
        if not all_nodes:
            return failed(Code.ERROR, "no nodes available")
        potential = nodes_where_preemption_might_help(all_nodes, statuses)
        pods = candidate_pods(potential, can_preempt)
        cap = self.cross_args.max_candidate_pods
        if len(pods) > cap:
            return failed(Code.UNSCHEDULABLE, TOO_MANY.format(
                n=len(pods), nodes=len(potential), cap=cap, limit=MAX_CANDIDATE_PODS_LIMIT))
        filters = dry_run_filters(prepare_filters(profile, pod, ctx), self, pod, ctx)
        found = find_candidates(filters, pod, pods, ctx, now)
        if not found:
            return failed(Code.UNSCHEDULABLE, fit_error_message(0, {}, ABSENT))
        candidates: Mapping[str, Victims] = candidates_to_victims_map(found)
        if call_extenders is not None:
            replied = call_extenders(candidates)
            if isinstance(replied, Status):
                return failed(replied.code, replied.message)
            candidates = replied
        best = pick_one_node_for_preemption(candidates, now)
        if best is None:  # every candidate vetoed by an extender: Unschedulable, no message
            return failed(Code.UNSCHEDULABLE)
        return PreemptionResult(Status(Code.SUCCESS, (), self.name), best, candidates[best],
                                candidates=candidates)
