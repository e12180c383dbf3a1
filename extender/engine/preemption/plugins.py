"""The PostFilter plugins: DefaultPreemption and scheduler-plugins' PreemptionToleration.

Both run kube-scheduler's preemption flow (`evaluator.preempt`); they differ in which pods a
preemptor may evict, how their messages read and which terminating pods block a preemptor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from extender.engine.args import DefaultPreemptionArgs
from extender.engine.framework import ClusterContext, Code, Profile, Status
from extender.engine.preemption.evaluator import (
    ExtenderStep,
    PreemptionResult,
    num_candidates,
    pod_eligible_to_preempt_others,
    preempt,
)
from extender.engine.preemption.toleration import PLUGIN as TOLERATION
from extender.engine.preemption.toleration import exempted_from_preemption
from extender.engine.preemption.victims import (
    VictimGuard,
    VictimPredicate,
    lower_priority,
    no_preemption_victims,
)
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView


class DefaultPreemption:
    name = "DefaultPreemption"
    #: DefaultPreemption prefixes its messages; PreemptionToleration returns them bare.
    message_prefix = "preemption: "
    #: Whether any terminating lower-priority pod on the nominated node blocks the preemptor
    #: (≤1.26 and PreemptionToleration), rather than only victims of the scheduler's preemption.
    legacy_terminating = False
    #: Steps of the plugin's own inside `SelectVictimsOnNode` (CapacityScheduling's quotas).
    victim_guard: VictimGuard | None = None
    #: Whether `can_preempt` is this rule, "lower priority" (the preempt verb's fast path and
    #: its plans assume it). A subclass with a rule of its own says False.
    default_victim_rule = True
    #: Whether its `PodEligibleToPreemptOthers` reads what its own PreFilter wrote: when that
    #: did not run (an earlier PreFilter answered UnschedulableAndUnresolvable), the pod is
    #: not eligible (`evaluator.NOT_ELIGIBLE_NO_STATE`).
    reads_own_pre_filter_state = False

    def __init__(self, args: DefaultPreemptionArgs | None = None) -> None:
        self.args = args or DefaultPreemptionArgs()

    def can_preempt(self, preemptor: PodView, ctx: ClusterContext, now: float) -> VictimPredicate:
        """Which pods `preemptor` may evict: any of lower priority."""
        return lower_priority(preemptor)

    def no_victims(self, node: NodeInfo, pod: PodView) -> Status:
        """The status of a node without a pod the preemptor may evict."""
        return no_preemption_victims(node, pod)

    def pod_eligible_to_preempt_others(self, pod: PodView, nominated_status: Status | None,
                                       nominated_node: NodeInfo | None,
                                       can_preempt: VictimPredicate,
                                       ctx: ClusterContext) -> tuple[bool, str]:
        """`PodEligibleToPreemptOthers`: (eligible, why not)."""
        return pod_eligible_to_preempt_others(pod, nominated_status, nominated_node,
                                              can_preempt=can_preempt,
                                              legacy_terminating=self.legacy_terminating)

    def offset_and_num_candidates(self, num_nodes: int, rng: Any) -> tuple[int, int]:
        """`GetOffsetAndNumCandidates`: a random start among the potential nodes (Go:
        `rand.Int31n(n)`), and how many candidates the dry run looks for."""
        return rng.randrange(num_nodes), num_candidates(num_nodes, self.args)

    def post_filter(self, profile: Profile, pod: PodView, statuses: Mapping[str, Status],
                    ctx: ClusterContext, now: float, rng: Any, *,
                    call_extenders: ExtenderStep | None = None) -> PreemptionResult:
        return preempt(profile, pod, statuses, ctx, now, rng, call_extenders=call_extenders)


class PreemptionToleration(DefaultPreemption):
    name = TOLERATION
    message_prefix = ""
    legacy_terminating = True
    default_victim_rule = False  # exemptions by PriorityClass annotations

    def no_victims(self, node: NodeInfo, pod: PodView) -> Status:
        """scheduler-plugins' own wording (v0.34.7, `SelectVictimsOnNode`), naming the node
        and the preemptor (by name only)."""
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                      (f"No victims found on node {node.name} for preemptor pod {pod.name}",))

    def can_preempt(self, preemptor: PodView, ctx: ClusterContext, now: float) -> VictimPredicate:
        """Lower priority, and not exempted by the victim's PriorityClass annotations."""
        lower = lower_priority(preemptor)

        def allowed(pod: PodView) -> bool:
            if not lower(pod):
                return False
            name = pod.priority_class_name
            priority_class = ctx.priority_class(name) if name else None
            return not exempted_from_preemption(pod, preemptor, priority_class, now)

        return allowed
