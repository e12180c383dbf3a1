"""DefaultPreemption's whole PostFilter flow (`Evaluator.Preempt`), as the simulator runs it.

eligibility → nodes where preemption might help → dry run on a window of them (from a random
offset, stopping once enough candidates are found) → pick one node. Evicting the victims and
nominating the pod (`prepareCandidate`) is the caller's business.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from extender.engine.abilities import RestoresRejectedState
from extender.engine.args import DefaultPreemptionArgs
from extender.engine.framework import ClusterContext, Code, Profile, Status
from extender.engine.preemption.pdb import PdbIndex
from extender.engine.preemption.pick import pick_one_node_for_preemption
from extender.engine.preemption.victims import (
    NoVictims,
    VictimGuard,
    VictimPredicate,
    Victims,
    lower_priority,
    no_preemption_victims,
    select_victims_on_node,
)
from extender.engine.runner import PRE_FILTER_SUFFIX, FilterPass, _Prepared, prepare_filters
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
#: CapacityScheduling's word when its PreFilter did not run (v0.34.7, `getPreFilterState`).
NOT_ELIGIBLE_NO_STATE = "not eligible due to failed to read from cycleState"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"

#: Modern kube-scheduler's status for nodes without one (`NewDefaultNodeToStatus`).
ABSENT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ())


#: A cluster context (it lists its nodes); kept as a name for callers.
PreemptionState = ClusterContext


def pod_eligible_to_preempt_others(
    pod: PodView,
    nominated_status: Status | None,
    nominated_node: NodeInfo | None,
    *,
    can_preempt: VictimPredicate | None = None,
    legacy_terminating: bool = False,
) -> tuple[bool, str]:
    """(eligible, why not). `nominated_status` is this cycle's filter status of the pod's
    nominated node (None: no status, which modern kube-scheduler treats as unresolvable);
    `nominated_node` that node, if it still exists.

    A pod that already preempted on its nominated node waits while a victim there is still
    terminating because of the scheduler's preemption. `legacy_terminating` uses the older
    rule (≤1.26, and scheduler-plugins' PreemptionToleration): any terminating lower-priority
    pod blocks.
    """
    if pod.preemption_policy == "Never":
        return False, NOT_ELIGIBLE_NEVER
    if not pod.nominated_node_name:
        return True, ""
    if nominated_status is None or nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return True, ""  # the nominated node is out of reach anyway: look elsewhere
    if nominated_node is not None:
        lower = lower_priority(pod)
        can_preempt = can_preempt or lower
        for other in nominated_node.pods.values():
            if not other.terminating:
                continue
            if (lower(other) if legacy_terminating
                    else can_preempt(other) and other.preempted_by_scheduler):
                return False, NOT_ELIGIBLE_TERMINATING
    return True, ""


def nodes_where_preemption_might_help(node_names: Iterable[str], statuses: Mapping[str, Status],
                                      absent: Status = ABSENT) -> list[str]:
    """The nodes, in the given order, whose filter status is exactly Unschedulable (so evicting
    pods might make room); `absent` stands for nodes without a status."""
    return [name for name in node_names
            if statuses.get(name, absent).code == Code.UNSCHEDULABLE]


def num_candidates(num_nodes: int, args: DefaultPreemptionArgs) -> int:
    """How many candidates the dry run looks for: a percentage of the potential nodes, at
    least the absolute minimum, at most all of them."""
    n = num_nodes * args.min_candidate_nodes_percentage // 100
    return min(max(n, args.min_candidate_nodes_absolute), num_nodes)


@dataclass(slots=True)
class DryRun:
    candidates: dict[str, Victims]  # PDB-respecting candidates first, each group in search order
    statuses: dict[str, Status]  # why each examined non-candidate node cannot help
    errors: list[str]


def dry_run_preemption(filters: FilterPass, pod: PodView, potential: Sequence[NodeInfo],
                       ctx: ClusterContext, offset: int, wanted: int, now: float,
                       can_preempt: VictimPredicate, guard: VictimGuard | None = None,
                       no_victims: NoVictims = no_preemption_victims) -> DryRun:
    """`DryRunPreemption`, sequentially (kube-scheduler with parallelism 1): nodes
    `potential[(offset + i) % n]` until at least one PDB-respecting candidate is kept and
    `wanted` candidates are kept in all.

    As upstream, each group (PDB-respecting, PDB-violating) keeps at most `wanted` candidates,
    the first found: a violating candidate found once `wanted` violating ones are kept is
    dropped (no candidate, no status) while the search goes on for a respecting one. The
    candidates are the respecting ones then the violating ones, each group in search order.
    `wanted` 0 keeps nothing and examines every node."""
    pdbs = PdbIndex(ctx.pdb_list())
    clean: dict[str, Victims] = {}
    violating: dict[str, Victims] = {}
    statuses: dict[str, Status] = {}
    errors: list[str] = []
    n = len(potential)
    for i in range(n):
        node_info = potential[(offset + i) % n]
        name = node_info.name
        result = select_victims_on_node(filters, pod, node_info, pdbs, ctx.nominated_pods(name),
                                        now, can_preempt=can_preempt, guard=guard,
                                        no_victims=no_victims)
        if isinstance(result, Victims) and result.pods:
            group = violating if result.num_pdb_violations else clean
            if len(group) < wanted:  # upstream's candidateList holds `wanted`; more are dropped
                group[name] = result
            if clean and len(clean) + len(violating) >= wanted:
                break
            continue
        if isinstance(result, Victims):  # fits without evicting anything: upstream calls it an error
            result = Status(Code.ERROR, (f'expected at least one victim pod on node "{name}"',))
        if result.code == Code.ERROR:
            errors.append(result.message)
        statuses[name] = result
    return DryRun({**clean, **violating}, statuses, errors)


def fit_error_message(num_all_nodes: int, statuses: Mapping[str, Status],
                      absent: Status) -> str:
    """`FitError.Error()`: `0/N nodes are available: <count> <reason>, ….` with the histogram
    sorted as strings and `absent` counted for every node without a status."""
    # Most nodes share a handful of reason tuples: count those first, then their reasons.
    return histogram_message(num_all_nodes, Counter(s.reasons for s in statuses.values()), absent)


def histogram_message(num_all_nodes: int, nodes_by_reasons: Mapping[tuple[str, ...], int],
                      absent: Status) -> str:
    """`fit_error_message` from how many nodes gave each tuple of reasons (the nodes not
    counted there count as `absent`)."""
    counts: Counter[str] = Counter()
    for reasons, times in nodes_by_reasons.items():
        for reason in reasons:
            counts[reason] += times
    missing = num_all_nodes - sum(nodes_by_reasons.values())
    if missing > 0:
        for reason in absent.reasons:
            counts[reason] += missing
    message = f"0/{num_all_nodes} nodes are available:"
    if counts:
        message += " " + ", ".join(sorted(f"{c} {r}" for r, c in counts.items())) + "."
    return message


def dry_run_filters(filters: FilterPass, post_filter: object, pod: PodView,
                    ctx: ClusterContext) -> FilterPass:
    """The filters `SelectVictimsOnNode` runs: the Filter plugins only
    (`RunFilterPluginsWithNominatedPods`), so a PreFilter rejection (one preemption may help:
    the nodes are in `potential` only when it is Unschedulable) does not fail every node. A
    PostFilter plugin whose own PreFilter writes its cycle state before rejecting
    (CapacityScheduling) gives that state back through `rejected_pre_filter_state`, so its
    RemovePod/AddPod and victim rules still see it."""
    rejection = filters.rejection
    if rejection is None:
        return filters
    # Every node is then potential, those a PreFilterResult left out too: the dry run runs
    # the Filters alone on them (`RunFilterPluginsWithNominatedPods` applies no result).
    entries = [e for e in filters.entries if not e.label.endswith(PRE_FILTER_SUFFIX)]
    # A runtime Protocol check, on this path only: after a PreFilter rejection.
    if isinstance(post_filter, RestoresRejectedState) and rejection.plugin == post_filter.name:
        name = post_filter.name
        data = post_filter.rejected_pre_filter_state(pod, ctx)
        if data is not None:
            filters.state.write(name, data)
            entries.append(_Prepared(name, False, data, True))
    return FilterPass(filters.pod, filters.state, entries, pre_filter_ran=filters.pre_filter_ran)


@dataclass(frozen=True, slots=True)
class PreemptionResult:
    """What the PostFilter decided. On success `status.code` is SUCCESS and `node_name` is the
    node to nominate, with `victims` to evict there."""

    status: Status
    node_name: str = ""
    victims: Victims | None = None
    #: kube-scheduler's `PostFilterResult{NominatedNodeName: ""}`: forget the pod's nomination.
    clear_nomination: bool = False
    #: Every candidate the dry run found (for reports), in search order.
    candidates: Mapping[str, Victims] = field(default_factory=dict)
    #: Why each examined node that is not a candidate cannot help.
    node_statuses: Mapping[str, Status] = field(default_factory=dict)


#: The `callExtenders` step: candidates in, the extenders' replacement map out, or the Status
#: (Error) of an extender that failed and is not ignorable.
ExtenderStep = Callable[[Mapping[str, Victims]], Mapping[str, Victims] | Status]


def candidate_on(profile: Profile, pod: PodView, node: str, state: ClusterContext,
                 now: float) -> Victims | None:
    """The victims the dry run finds for `pod` on `node` alone, or None when preempting there
    cannot make it fit (the simulator's `--follow` uses it to take the node a real
    kube-scheduler chose among equally good candidates)."""
    post_filter = profile.post_filter
    info = state.nodes.get(node)
    if post_filter is None or info is None:
        return None
    can_preempt = post_filter.can_preempt(pod, state, now)
    filters = dry_run_filters(prepare_filters(profile, pod, state), post_filter, pod, state)
    dry = dry_run_preemption(filters, pod, [info], state, 0, 1, now, can_preempt,
                             guard=post_filter.victim_guard, no_victims=post_filter.no_victims)
    return dry.candidates.get(node)


def preempt(profile: Profile, pod: PodView, statuses: Mapping[str, Status],
            state: ClusterContext, now: float, rng: random.Random, *,
            call_extenders: ExtenderStep | None = None) -> PreemptionResult:
    """Run the profile's PostFilter for `pod` after a failed filter pass.

    `statuses` are that pass's per-node filter statuses (nodes without one count as
    unresolvable, as in modern kube-scheduler); `rng` draws the dry run's start offset;
    `call_extenders`, if given, may replace the candidates before one is picked.
    Without a PostFilter plugin the result is Unschedulable with no message.
    """
    post_filter = profile.post_filter
    if post_filter is None:
        return PreemptionResult(Status(Code.UNSCHEDULABLE, ()))
    plugin = post_filter.name
    prefix = post_filter.message_prefix

    def failed(code: Code, message: str, *, clear: bool = False,
               node_statuses: Mapping[str, Status] | None = None) -> PreemptionResult:
        return PreemptionResult(Status(code, (prefix + message,), plugin), clear_nomination=clear,
                                node_statuses=node_statuses or {})

    filters: FilterPass | None = None
    if post_filter.reads_own_pre_filter_state and pod.preemption_policy != "Never":
        filters = prepare_filters(profile, pod, state)
        if plugin not in filters.pre_filtered:
            return failed(Code.UNSCHEDULABLE, NOT_ELIGIBLE_NO_STATE)
    can_preempt = post_filter.can_preempt(pod, state, now)
    nominated = pod.nominated_node_name
    nominated_status = statuses.get(nominated) if nominated else None
    nominated_node = state.nodes.get(nominated) if nominated else None
    # The plugin's `PodEligibleToPreemptOthers` (CapacityScheduling has its own).
    eligible, why = post_filter.pod_eligible_to_preempt_others(
        pod, nominated_status, nominated_node, can_preempt, state)
    if not eligible:
        return failed(Code.UNSCHEDULABLE, why)

    all_nodes = list(state.nodes.values())
    if not all_nodes:
        return failed(Code.ERROR, "no nodes available")
    potential = [state.nodes[n] for n in nodes_where_preemption_might_help(state.nodes, statuses)]
    dry = DryRun({}, {}, [])
    if potential:
        if filters is None:
            filters = prepare_filters(profile, pod, state)
        filters = dry_run_filters(filters, post_filter, pod, state)
        # The plugin's `GetOffsetAndNumCandidates` (CapacityScheduling: 0 and every node).
        offset, wanted = post_filter.offset_and_num_candidates(len(potential), rng)
        dry = dry_run_preemption(filters, pod, potential, state, offset, wanted, now, can_preempt,
                                 guard=post_filter.victim_guard, no_victims=post_filter.no_victims)
    if not dry.candidates:
        if dry.errors:
            message = dry.errors[0] if len(dry.errors) == 1 else f"[{', '.join(dry.errors)}]"
            return failed(Code.ERROR, message, node_statuses=dry.statuses)
        absent = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,))
        return failed(Code.UNSCHEDULABLE, fit_error_message(len(all_nodes), dry.statuses, absent),
                      clear=True, node_statuses=dry.statuses)

    candidates: Mapping[str, Victims] = dry.candidates
    if call_extenders is not None:
        replied = call_extenders(candidates)
        if isinstance(replied, Status):
            return failed(replied.code, replied.message, node_statuses=dry.statuses)
        candidates = replied
    best = pick_one_node_for_preemption(candidates, now)
    if best is None:  # every candidate vetoed by an extender
        return failed(Code.UNSCHEDULABLE, NO_CANDIDATE, node_statuses=dry.statuses)
    return PreemptionResult(Status(Code.SUCCESS, (), plugin), best, candidates[best],
                            candidates=candidates, node_statuses=dry.statuses)
