"""Preemption: victim selection, node choice, PreemptionToleration and the extender's verb.

Pure functions over `NodeInfo`/`PodView` and a cluster context; the clock reading `now` (epoch
seconds) and the random source are passed in.

* `process_preemption` — the extender's `preempt` verb (vet/complete the scheduler's proposal);
* `preempt` — DefaultPreemption's whole PostFilter flow, for the simulator;
* the building blocks, named after kube-scheduler's functions.
"""

from extender.engine.preemption.evaluator import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    NOT_HELPFUL,
    DryRun,
    ExtenderStep,
    PreemptionResult,
    dry_run_preemption,
    fit_error_message,
    nodes_where_preemption_might_help,
    num_candidates,
    pod_eligible_to_preempt_others,
    preempt,
)
from extender.engine.preemption.memo import PreemptionMemo
from extender.engine.preemption.ordering import (
    by_importance,
    earliest_start_of_highest,
    importance_key,
    more_important_pod,
)
from extender.engine.preemption.pdb import (
    PdbIndex,
    SelectorMatches,
    count_pdb_violations,
    filter_pods_with_pdb_violation,
)
from extender.engine.preemption.pick import pick_one_node_for_preemption
from extender.engine.preemption.plugins import DefaultPreemption, PreemptionToleration
from extender.engine.preemption.process import (
    DropReason,
    PreemptionOutcome,
    process_preemption,
)
from extender.engine.preemption.toleration import (
    MINIMUM_PREEMPTABLE_PRIORITY,
    TOLERATION_SECONDS,
    TolerationPolicy,
    exempted_from_preemption,
    toleration_policy,
)
from extender.engine.preemption.victims import (
    NO_VICTIMS,
    Victims,
    fits_with_nominated,
    select_victims_on_node,
)

__all__ = [
    "MINIMUM_PREEMPTABLE_PRIORITY", "NOT_ELIGIBLE_NEVER", "NOT_ELIGIBLE_TERMINATING",
    "NOT_HELPFUL", "NO_VICTIMS", "TOLERATION_SECONDS",
    "DefaultPreemption", "DropReason", "DryRun", "ExtenderStep", "PdbIndex", "PreemptionMemo",
    "PreemptionOutcome", "PreemptionResult", "PreemptionToleration",
    "SelectorMatches", "TolerationPolicy", "Victims",
    "by_importance", "count_pdb_violations", "dry_run_preemption", "earliest_start_of_highest",
    "exempted_from_preemption", "filter_pods_with_pdb_violation", "fit_error_message",
    "fits_with_nominated", "importance_key", "more_important_pod",
    "nodes_where_preemption_might_help", "num_candidates", "pick_one_node_for_preemption",
    "pod_eligible_to_preempt_others", "preempt", "process_preemption",
    "select_victims_on_node", "toleration_policy"
]
