"""Plugin shapes and statuses, after kube-scheduler's framework (`framework/interface.go`).

Filter plugins come in two shapes:

* node-local (`prepare(pod)`): PreFilter is a pure function of the pod (matchers, request
  vectors) returning a per-node check, or None to skip the plugin for that pod;
* cross-node (`pre_filter(state, pod, ctx)`): PreFilter sees the whole cluster and returns a
  `FilterState` (its per-node check over data computed for all nodes, with the AddPod/RemovePod
  extensions preemption and nominated pods call on a cloned `CycleState`), a Status that
  rejects the pod on every node, or None (Skip).

A score plugin has kube-scheduler's steps apart: `raw_scores(state, pod, nodes, ctx)` is
PreScore and Score (each candidate's raw score, or None to skip: PreScore Skip), and
`normalize(raw, state)` is NormalizeScore (0..100 per node). `score(state, pod, nodes, ctx)` is
the two in one call, `normalize(raw_scores(...))`, and is what the verbs run; it may take a
faster path to the same answer.
A PostFilter plugin (`post_filter(...)`) decides what to do when no node fits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from extender.engine.nodetable import NodeTable
from extender.engine.podindex import PodIndex
from extender.engine.stores import PluginStore
from extender.model.disruption import PdbView, PriorityClassView
from extender.model.node import signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

if TYPE_CHECKING:
    from typing_extensions import TypeIs

MAX_NODE_SCORE = 100
MAX_EXTENDER_PRIORITY = 10


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's verdict on one node; `message` is what a FailedScheduling event shows."""

    code: Code
    reasons: tuple[str, ...]
    plugin: str = ""
    # Joined once: one status object often stands for thousands of nodes in a reply.
    message: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", ", ".join(self.reasons))

    @property
    def resolvable(self) -> bool:
        """Whether preemption might help (Unschedulable, not ...AndUnresolvable)."""
        return self.code == Code.UNSCHEDULABLE


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)


NodeCheck = Callable[[NodeInfo], Status | None]

#: A plugin's `reply_reuse` says what its answers for a pod depend on, so that a reply may be
#: reused for the same pod signature and candidates (`api.rowreply`): `REUSE_ROWS`, only the
#: candidate nodes' views and pods (and, for scorers, the cluster's node set); `REUSE_STATE`,
#: anything in the cluster state (reuse until any change). A plugin without it (one that reads
#: the clock, load metrics or its own bookkeeping) turns reuse off.
REUSE_ROWS = "rows"
REUSE_STATE = "state"

#: What a scorer's optional `score_rows(state, pod, table, rows, ctx)` (the vectorised path
#: over `NodeTable` rows, `engine.rows`) answers when it cannot score those rows in numpy:
#: the caller then runs its `score` over the rows' `NodeInfo`s.
NOT_VECTORISED: Any = NotImplemented


class BatchCheck:
    """A prepared filter that can also judge many nodes in one tight loop.

    `__call__` judges one node (preemption and the simulator use it); `filter_many` must give
    the same verdicts, only faster, and records failures in `statuses`.
    """

    def __call__(self, node: NodeInfo) -> Status | None:
        raise NotImplementedError

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        kept: list[NodeInfo] = []
        for node in nodes:
            self.judge_into(node, kept, statuses)
        return kept

    def judge_into(self, node: NodeInfo, kept: list[NodeInfo], statuses: dict[str, Status]) -> None:
        """Judge one node: keep it, or record why not."""
        status = self(node)
        if status is None:
            kept.append(node)
        else:
            statuses[node.node.name] = status


T = TypeVar("T")
S = TypeVar("S", bound=PluginStore)


class ClusterContext(Protocol):
    """The cluster beyond the candidate nodes (`engine.cluster.ClusterState` is one)."""

    @property
    def nodes(self) -> Mapping[str, NodeInfo]: ...
    @property
    def pod_index(self) -> PodIndex: ...
    @property
    def namespaces(self) -> Mapping[str, Mapping[str, str]]: ...
    def node_count(self) -> int: ...
    def image_node_count(self, image: str) -> int: ...
    def nominated_pods(self, node_name: str) -> Sequence[PodView]: ...
    def pdb_list(self) -> Sequence[PdbView]: ...
    def priority_class(self, name: str) -> PriorityClassView | None: ...
    def namespace_labels(self, name: str) -> Mapping[str, str] | None: ...
    def services_in(self, namespace: str) -> list[Mapping[str, str]]: ...
    def controller_selector(self, kind: str, namespace: str, name: str) -> object | None: ...
    def node_memo(self, key: object, compute: Callable[[], T]) -> T: ...
    def label_column(self, key: str) -> Mapping[NodeInfo, str | None]: ...
    def pod_by_uid(self, uid: str) -> PodView | None: ...
    def nominated_all(self) -> list[PodView]: ...
    def unplaced_pods(self) -> list[PodView]:
        """Pods bound to a node the state does not know."""
    def clock(self) -> float:
        """Now, on the clock Coscheduling keeps its TTLs and failure times in."""
    def store(self, cls: type[S]) -> S:
        """A plugin's own data (`engine.stores`): the store of that class its record names."""


class StateData(Protocol):
    def clone(self) -> StateData: ...


class CycleState:
    """Data plugins keep for one pod's scheduling cycle, by key (kube-scheduler's CycleState).

    Cloned for each node a preemption dry run examines and for the nominated-pods pass, so
    AddPod/RemovePod on the copy leave the cycle's own data untouched."""

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    def write(self, key: str, data: Any) -> None:
        self._data[key] = data

    def read(self, key: str) -> Any:
        return self._data.get(key)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        return copy


class FilterState(BatchCheck):
    """A cross-node plugin's PreFilter result: the per-node check (`__call__`, `filter_many`)
    over data computed for the whole cluster, and the PreFilter extensions."""

    def clone(self) -> FilterState:
        raise NotImplementedError

    def add_pod(self, pod: PodView, node: NodeInfo) -> None:
        """`AddPod`: count `pod`, as if placed on `node` (a nominated pod, a reprieved victim)."""

    def remove_pod(self, pod: PodView, node: NodeInfo) -> None:
        """`RemovePod`: stop counting `pod` on `node` (a preemption victim)."""


class ProjectedFilterState(FilterState):
    """A `FilterState` whose verdict on a node depends only on the node's values for `keys`
    (topology keys): each distinct projection is judged once per cycle."""

    keys: tuple[str, ...]
    verdicts: dict[Any, Status | None]
    #: With one key: the cluster's nodes' values for it (`ClusterContext.label_column`).
    column: Mapping[NodeInfo, str | None] | None = None

    def judge_values(self, values: tuple[str | None, ...]) -> Status | None:
        raise NotImplementedError

    def failing_values(self) -> dict[str | None, Status] | None:
        """With one key: the values whose nodes fail, with their Status, when the state
        knows them up front (every other value passes); None otherwise."""
        return None

    def node_values(self, nodes: Sequence[NodeInfo]) -> list[str | None]:
        """Each node's value for the one key: from the column where the node is the cluster's
        (no pointer chasing through views and label maps), else from its labels."""
        key = self.keys[0]
        column = self.column
        if column is None:
            return [node.node.labels.get(key) for node in nodes]
        get = column.get
        values = [get(node, _UNJUDGED) for node in nodes]
        if _UNJUDGED in values:  # nodes a request carried itself (Nodes form)
            values = [node.node.labels.get(key) if value is _UNJUDGED else value
                      for node, value in zip(nodes, values, strict=True)]
        return values  # type: ignore[return-value]

    def __call__(self, node: NodeInfo) -> Status | None:
        labels = node.node.labels
        return self._verdict(tuple([labels.get(k) for k in self.keys]))

    def _verdict(self, values: tuple[str | None, ...]) -> Status | None:
        """`judge_values`, once per projection and cycle."""
        verdict = self.verdicts.get(values, _UNJUDGED)
        if verdict is _UNJUDGED:
            verdict = self.verdicts[values] = self.judge_values(values)
        return verdict  # type: ignore[return-value]

    def judge_rows(self, table: NodeTable, rows: np.ndarray) -> tuple[np.ndarray, list[Status | None]]:
        """Each row's verdict as an index into the list returned (0: passes): the rows'
        projections are memoised per node view, and each distinct one is judged once."""
        keys = self.keys
        projections, memo = table.memoised(
            signature("projection", keys), rows,
            lambda info, memo: memo.code(tuple([info.node.labels.get(k) for k in keys])))
        failing = self.failing_values()
        if failing is not None:  # only the failing values' rows need a verdict
            judged = [(code, (value,)) for value in failing
                      if (code := memo.find((value,))) is not None]
        else:
            judged = [(code, memo.objects[code]) for code in np.unique(projections).tolist()]
        lookup = np.zeros(len(memo.objects), dtype=np.int64)
        verdicts: list[Status | None] = [None]
        index: dict[Status, int] = {}
        for code, values in judged:
            verdict = failing[values[0]] if failing is not None else self._verdict(values)
            if verdict is not None:
                found = index.get(verdict)
                if found is None:
                    verdicts.append(verdict)
                    found = index[verdict] = len(verdicts) - 1
                lookup[code] = found
        return lookup[projections], verdicts

    def filter_many(self, nodes: Sequence[NodeInfo], statuses: dict[str, Status]) -> list[NodeInfo]:
        if len(self.keys) != 1:
            return super().filter_many(nodes, statuses)
        values = self.node_values(nodes)
        # Judge each distinct value once, then map nodes to verdicts at C speed.
        by_value = {projection[0]: verdict for projection, verdict in self.verdicts.items()}
        for value in set(values).difference(by_value):
            by_value[value] = self.verdicts[(value,)] = self.judge_values((value,))
        return keep_passing(nodes, list(map(by_value.__getitem__, values)), statuses)


def keep_passing(nodes: Sequence[NodeInfo], verdicts: Sequence[Status | None],
                 statuses: dict[str, Status]) -> list[NodeInfo]:
    """The nodes whose verdict is None; the others' statuses recorded."""
    kept = [node for node, verdict in zip(nodes, verdicts, strict=True) if verdict is None]
    if len(kept) != len(nodes):
        statuses.update({node.node.name: verdict
                         for node, verdict in zip(nodes, verdicts, strict=True)
                         if verdict is not None})
    return kept


_UNJUDGED = object()


class FilterPlugin(Protocol):
    """Node-local: `prepare(pod)` returns the per-node check, or None to pass every node."""

    name: str

    def prepare(self, pod: PodView) -> NodeCheck | None: ...


class CrossNodeFilterPlugin(Protocol):
    name: str

    def pre_filter(self, state: CycleState, pod: PodView,
                   ctx: ClusterContext) -> FilterState | Status | None:
        """A `FilterState`; a Status rejecting the pod on every node; or None (Skip)."""


def is_cross_node(plugin: FilterPlugin | CrossNodeFilterPlugin) -> TypeIs[CrossNodeFilterPlugin]:
    """Whether a filter plugin has the cross-node shape (`pre_filter`), not the node-local
    one (`prepare`)."""
    return hasattr(plugin, "pre_filter")


class ScorePlugin(Protocol):
    name: str

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        """PreScore, Score and NormalizeScore: 0..100 in the order of `nodes`; None to skip.
        Always equal to `normalize(raw_scores(...))` (a property test holds it so)."""

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int] | None:
        """PreScore and Score: each node's score before NormalizeScore, in the order of
        `nodes`; None to skip. A plugin without NormalizeScore returns its 0..100 scores.
        It may record what `normalize` needs in `state` (as PreScore's CycleState data)."""

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        """NormalizeScore: `raw_scores`' values (given the same `state`) onto 0..100. May work
        in place on `raw`; without a NormalizeScore step, `raw` itself."""


class ScoredAsIs:
    """For a score plugin without NormalizeScore (its Score is already 0..100): `raw_scores`
    is `score`, and `normalize` leaves the scores as they are."""

    def score(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
              ctx: ClusterContext) -> list[int] | None:
        raise NotImplementedError

    def raw_scores(self, state: CycleState, pod: PodView, nodes: Sequence[NodeInfo],
                   ctx: ClusterContext) -> list[int] | None:
        return self.score(state, pod, nodes, ctx)

    def normalize(self, raw: list[int], state: CycleState) -> list[int]:
        return raw


class PostFilterPlugin(Protocol):
    """A preemption PostFilter (`engine.preemption.plugins`): kube-scheduler's
    `preemption.Interface` hooks around the shared `Evaluator` flow."""

    name: str
    #: Put before the plugin's failure messages ("preemption: " for DefaultPreemption).
    message_prefix: str
    #: Any terminating lower-priority pod on the nominated node blocks the preemptor (≤1.26).
    legacy_terminating: bool
    args: Any  # DefaultPreemptionArgs
    #: The plugin's own steps inside `SelectVictimsOnNode` (a `VictimGuard`), or None.
    victim_guard: Any
    #: Its `PodEligibleToPreemptOthers` reads what its own PreFilter wrote (CapacityScheduling).
    reads_own_pre_filter_state: bool

    def can_preempt(self, preemptor: PodView, ctx: ClusterContext,
                    now: float) -> Callable[[PodView], bool]:
        """Which pods the preemptor may evict."""

    def pod_eligible_to_preempt_others(self, pod: PodView, nominated_status: Status | None,
                                       nominated_node: NodeInfo | None,
                                       can_preempt: Callable[[PodView], bool],
                                       ctx: ClusterContext) -> tuple[bool, str]:
        """`PodEligibleToPreemptOthers`: (eligible, why not)."""

    def no_victims(self, node: NodeInfo, pod: PodView) -> Status:
        """The status of a node without a pod the preemptor may evict."""

    def offset_and_num_candidates(self, num_nodes: int, rng: Any) -> tuple[int, int]:
        """`GetOffsetAndNumCandidates`."""

    def post_filter(self, profile: Profile, pod: PodView, statuses: Mapping[str, Status],
                    ctx: ClusterContext, now: float, rng: Any, *,
                    call_extenders: Any = None) -> Any:
        """What to do when no node fits (preemption): see `engine.preemption.preempt`."""


class PluginError(Exception):
    """A plugin's Error status (kube-scheduler's `AsStatus(err)`): the cycle fails for the pod."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(f"{plugin}: {message}")
        self.plugin = plugin
        self.message = message


@dataclass(frozen=True)
class Profile:
    """The runnable plugin set a policy builds (`engine.profile.build_profile`)."""

    filters: tuple[FilterPlugin | CrossNodeFilterPlugin, ...]
    scorers: tuple[tuple[ScorePlugin, int], ...]
    post_filter: PostFilterPlugin | None
    policy: Any  # the ExtenderPolicy it was built from
    #: Filter plugins whose verdict may be memoised per node view (their records say so).
    memoised: frozenset[str] = frozenset()

    @property
    def filter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.filters)

    @property
    def plugins(self) -> tuple[Any, ...]:
        """The filter plugins, then the score plugins (a plugin at both points may be twice)."""
        return (*self.filters, *(plugin for plugin, _ in self.scorers))

    @property
    def plugin_names(self) -> tuple[str, ...]:
        """Every plugin the profile runs, at any extension point."""
        names = [plugin.name for plugin in self.plugins]
        if self.post_filter is not None:
            names.append(self.post_filter.name)
        return tuple(dict.fromkeys(names))

    def node_only(self, plugin: Any) -> bool:
        return plugin.name in self.memoised


class EngineError(Exception):
    """An internal failure the caller reports as the protocol's Error."""
