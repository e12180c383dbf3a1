"""The simulation's settings and what it reports: one record per pod, node usage before and
after, and the run's totals (`SimulationResult`, which `report.py` turns into JSON)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from extender.engine.args import NEWEST_VERSION
from extender.engine.cluster import ClusterState
from extender.engine.preemption.evaluator import ABSENT
from extender.engine.preemption.evaluator import fit_error_message as _histogram_message
from extender.simulator.clock import (
    MILLISECOND,
    SECOND,
)
from extender.simulator.extenders import HttpExtender
from extender.simulator.queue import (
    DEFAULT_POD_INITIAL_BACKOFF,
    DEFAULT_POD_MAX_BACKOFF,
    DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS,
)
from extender.simulator.utilization import ReplayRecord, Utilization

PENDING = "Pending"
SCHEDULED = "Scheduled"
PREEMPTED = "Preempted"
DELETED = "Deleted"
SUCCEEDED = "Succeeded"  # ran for its lifetime (`Arrival.run_for`), then completed
FAILED = "Failed"
#: Refused by the Priority admission plugin (an unknown PriorityClass): never queued.
REJECTED = "Rejected"

#: Why a run ended: nothing could change any more, or `max_time` cut it.
SETTLED = "settled"
HORIZON = "horizon"

#: The API server's default `terminationGracePeriodSeconds`.
DEFAULT_TERMINATION_GRACE_PERIOD = 30 * SECOND

ProgressFn = Callable[[int, int, int], None]  # (settled pods, pods to schedule, cycles)
FastPaths = Literal["on", "off", "verify"]


#: Releases whose DynamicResources PostFilter speaks for every pod, claims or not (seen on the
#: real kube-scheduler 1.34.4, 1.35.4 and 1.36.3; not on 1.37.2).
DRA_POST_FILTER = ((1, 34), (1, 37))
DRA_NO_CLAIMS = "no new claims to deallocate"
#: Its PostFilter's Error when its PreFilter did not run (an earlier PreFilter plugin answered
#: UnschedulableAndUnresolvable): reading its cycle state finds nothing (`framework.ErrNotFound`),
#: and no PostFilter after it runs (seen on the real 1.34.4 with Coscheduling).
DRA_NOT_FOUND = "not found"


def dra_speaks(version: tuple[int, int]) -> bool:
    """Whether DynamicResources' PostFilter runs first for every pod in this release."""
    return DRA_POST_FILTER[0] <= version < DRA_POST_FILTER[1]


def fit_error(num_all_nodes: int, statuses: Mapping[str, Any], post_filter_msg: str = "",
              pre_filter_msg: str = "", version: tuple[int, int] = NEWEST_VERSION,
              pre_filter_stopped: bool = False) -> str:
    """FitError.Error() of kube-scheduler `version`: the PreFilter rejection's message or else
    the reasons histogram, then `" <PostFilterMsg>"`. From 1.34 on (checked against the real
    kube-scheduler 1.34 to 1.37) the preemption message ends the sentence with its own period;
    older releases wrote another after it (`..`, as in their FailedScheduling events), and
    1.34 to 1.36 put DynamicResources' word before preemption's — or, when PreFilter stopped
    before DynamicResources' own (`pre_filter_stopped`), its Error alone."""
    if pre_filter_msg:
        # A PreFilter rejection gives every node the same status: upstream shows its message
        # once instead of the histogram.
        message = f"0/{num_all_nodes} nodes are available: {pre_filter_msg}."
    else:
        message = _histogram_message(num_all_nodes, statuses, ABSENT)
    if pre_filter_stopped and dra_speaks(version):
        message += f" {DRA_NOT_FOUND}"
    elif post_filter_msg:
        if version < DRA_POST_FILTER[0]:
            message += f" {post_filter_msg}."
        elif version < DRA_POST_FILTER[1]:
            message += f" {DRA_NO_CLAIMS}, {post_filter_msg}"
        else:
            message += f" {post_filter_msg}"
    return message


@dataclass
class SimulationConfig:
    seed: int = 0
    #: 0 (the default, as kube-scheduler's): adaptive sampling; 1..100: that percentage;
    #: None: filter every node.
    percentage_of_nodes_to_score: int | None = 0
    #: Virtual time a scheduling cycle takes: one that places its pod; one that finds no
    #: node (every node filtered, a preemption dry run that found nothing; None: `cycle_cost`);
    #: one whose PostFilter nominates a node (a preemption; None: `failure_cost`).
    cycle_cost: int = 1 * MILLISECOND
    failure_cost: int | None = None
    preemption_cost: int | None = None
    #: What a cycle that finds no node (None: nothing), and one that nominates a node (None:
    #: as the failed one when `preemption_cost` is None, else nothing), takes more for each
    #: other pod nominated at the time: kube-scheduler runs a node's filters with the
    #: nominated pods added, twice, on a clone of the cycle's state, and its preemption dry
    #: run does so on every candidate node.
    failure_cost_per_nominated: int | None = None
    preemption_cost_per_nominated: int | None = None
    pod_initial_backoff: int = DEFAULT_POD_INITIAL_BACKOFF
    pod_max_backoff: int = DEFAULT_POD_MAX_BACKOFF
    pod_max_in_unschedulable_pods: int = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS
    #: Time between a victim's eviction and its disappearance (it keeps its room meanwhile);
    #: None: each victim's own `terminationGracePeriodSeconds` (30 s when unset).
    victim_grace_period: int | None = None
    max_time: int | None = 24 * 3600 * SECOND
    extenders: Sequence[HttpExtender] = ()
    #: Also call the extender's bind verb (keeps an offline extender's state in step).
    extender_bind: bool = False
    #: Node utilization replayed into the Trimaran store's `metrics` at its sample times (`--utilization`).
    utilization: Utilization | None = None
    # -- extenders kept in sync (apisync.py, `--serve-api`) ----------------------------------
    #: Called with the simulation before each scheduling cycle: publish the cluster to the
    #: served API and wait until every extender observed it (`ServedCluster.before_cycle`).
    before_cycle: Callable[[Any], None] | None = None
    #: Reuse what a pod's last failed attempt found where nothing it read has changed since
    #: (`filtermemo`, `dryrun`): "on"; "off" judges every node every time; "verify" does both
    #: and raises AssertionError where they differ (for tests). The outcome is the same.
    fast_paths: FastPaths = "on"
    #: Break ties toward what a real run chose (`follow.Follow`, `--follow REAL.json`): where
    #: the real node is among this cycle's tied best, take it, so the two runs stay
    #: comparable pod by pod. None: the seeded draw alone.
    follow: Any = None



@dataclass
class PodRecord:
    """What happened to one pod the simulation scheduled, or evicted."""

    uid: str
    namespace: str
    name: str
    priority: int
    origin: str  # "workload" or "cluster"
    status: str = PENDING
    node: str = ""
    nominated_node: str = ""
    #: The last failure: a message, or the FitError's (nodes, statuses, post-filter message,
    #: pre-filter message), formatted only when asked for (most are superseded by a later
    #: attempt).
    failure: str | tuple[int, Mapping[str, Any], str, str] | \
        tuple[int, Mapping[str, Any], str, str, tuple[int, int]] = ""
    attempts: int = 0
    arrived_at: int | None = None
    scheduled_at: int | None = None
    #: When it completed (Succeeded/Failed), was evicted, deleted or terminated by preemption.
    finished_at: int | None = None
    preempted_by: str = ""
    preemptions_caused: list[str] = field(default_factory=list)
    #: "<kind>/<name>" of its controller (ownerReferences' controller), "" for a bare pod.
    owner: str = ""
    #: The nodes that shared the top score in the cycle that placed it (when more than one):
    #: kube-scheduler picks among them at random, so any of them is as right as another.
    tied: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def message(self) -> str:
        if isinstance(self.failure, tuple):
            self.failure = fit_error(*self.failure)
        return self.failure


@dataclass
class NodeUsage:
    name: str
    milli_cpu: int
    memory: int
    pods: int
    allocatable_milli_cpu: int
    allocatable_memory: int
    allocatable_pods: int


def node_usage(state: ClusterState) -> dict[str, NodeUsage]:
    out = {}
    for name, info in state.nodes.items():
        alloc = info.node.allocatable
        out[name] = NodeUsage(name, info.requested.milli_cpu, info.requested.memory,
                              len(info.pods), alloc.milli_cpu, alloc.memory, alloc.allowed_pods)
    return out


@dataclass
class SimulationResult:
    records: dict[str, PodRecord]
    nodes_before: dict[str, NodeUsage]
    nodes_after: dict[str, NodeUsage]
    cycles: int
    virtual_time: int
    last_bind_time: int | None
    truncated: bool
    config: SimulationConfig
    warnings: list[str]
    extender_calls: dict[str, int]
    utilization: ReplayRecord | None = None
    #: SETTLED (nothing could change any more) or HORIZON (`max_time` cut the run).
    end_reason: str = SETTLED
    #: "<extender>/<verb>" -> failed calls (transport errors, non-200, `Error` replies).
    extender_failures: dict[str, int] = field(default_factory=dict)
    #: schedulerName -> (its Profile, its percentageOfNodesToScore) when several profiles
    #: routed the pods (`report.py` lists them under `inputs.profiles`); empty with one.
    profiles: dict[str, Any] = field(default_factory=dict)


def cycle_cost(config: SimulationConfig, *, placed: bool, nominated: bool,
               nominated_pods: int = 0) -> int:
    """The virtual time of a cycle that placed its pod, nominated a node for it, or neither;
    `nominated_pods`: the other pods nominated when it ran."""
    if placed:
        return config.cycle_cost
    failure = config.cycle_cost if config.failure_cost is None else config.failure_cost
    failure_per = config.failure_cost_per_nominated or 0
    if not nominated:
        return failure + failure_per * nominated_pods
    base = failure if config.preemption_cost is None else config.preemption_cost
    per = config.preemption_cost_per_nominated
    if per is None:
        per = failure_per if config.preemption_cost is None else 0
    return base + per * nominated_pods
