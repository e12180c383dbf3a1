"""kube-scheduler's scheduling queue (`PriorityQueue`), on virtual time.

A copy of `pkg/scheduler/internal/queue/scheduling_queue.go` (legacy mode ≈v1.28–v1.31; with
queueing hints from 1.32), see reference §D:

- activeQ: heap, PrioritySort order (priority desc, then queue timestamp asc), or the
  profile's own QueueSort order given as a key (`sort_key`): a tuple, or an object whose `<`
  is the plugin's `Less` when the order compares pairs (TopologicalSort);
- podBackoffQ: heap by backoff expiry, `timestamp + min(initial × 2^(attempts−1), max)`;
- unschedulablePods: a pool keyed by namespace/name;
- flushers: backoff-completed every 1 s, unschedulable leftovers every 30 s;
- `moveRequestCycle`: a pod that fails while a cluster move happened during its cycle goes to
  backoffQ, not to the pool (queueing hints disabled: before 1.32);
- with queueing hints (`queueing_hints`, on by default from 1.32, GA in 1.34): the cluster
  events that happen while a pod is in flight (popped, until it is requeued or done) are kept,
  and a pod that fails is requeued (backoffQ, or activeQ once its backoff is over) only if one
  of them is worth it (a plugin that rejected it registered the event, or a wildcard event for
  it), else it goes to the pool (`determineSchedulingHintForInFlightPod`);
- from 1.33 (SchedulerPopFromBackoffQ, beta and on by default): an empty activeQ pops the head
  of backoffQ, backoff or not; backoff expiries fall on whole seconds (the ordering window),
  a pod backs off until its window has passed, pods of one window are ordered as activeQ
  orders them, and pods that failed by an error (no rejecting plugin) wait in a heap of
  their own that is never popped early; the backoff flusher ticks on whole seconds;
- from 1.34 a pod's backoff doubles with its unschedulable attempts (or, after an error, its
  consecutive errors), not with all its attempts;
- the nominator for pods that preemption nominated to a node; a nominated pod's nomination
  changing or going (and, before 1.35, its binding) moves the pool's pods of lower or equal
  priority as an AssignedPodDelete would (`hasNominatedNodeNameChanged`, `eventhandlers.go`).

Pop never blocks: it returns None when there is nothing to pop and the loop moves virtual time on.
Real clocks never give two pods the same timestamp; virtual ones do, so each timestamp
assignment also takes a sequence number that breaks ties in assignment order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from extender.simulator.clock import SECOND, Timeline, TimelineEntry, VirtualClock
from extender.simulator.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    UNSCHEDULABLE_TIMEOUT,
    WILDCARD,
    ActionType,
    ClusterEvent,
    all_plugins,
    interest_map,
    plugin_events,
)
from extender.simulator.nominator import Nominator

Pod = Any  # an object with uid, namespace, name, priority (extender.model.pod.PodView)

DEFAULT_POD_INITIAL_BACKOFF = 1 * SECOND
DEFAULT_POD_MAX_BACKOFF = 10 * SECOND
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS = 300 * SECOND  # v1.24+
LEGACY_POD_MAX_IN_UNSCHEDULABLE_PODS = 60 * SECOND  # up to v1.23 (unschedulableQTimeInterval)
BACKOFF_FLUSH_PERIOD = 1 * SECOND
UNSCHEDULABLE_FLUSH_PERIOD = 30 * SECOND

ACTIVE = "active"
BACKOFF = "backoff"
UNSCHEDULABLE = "unschedulable"
NEW = "new"  # not queued before (a `move` from here is an arrival)

# Labels of the queue's own moves, as upstream names them in its metrics and logs.
UNSCHEDULED_POD_ADD = "UnscheduledPodAdd"
UNSCHEDULED_POD_UPDATE = "UnschedulablePodUpdate"
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
FORCE_ACTIVATE = "ForceActivate"

#: (pod, from, to, event label): what `PriorityQueue.on_move` is called with.
MoveHook = Callable[[Any, str, str, str], None]

# Fields of PodView that mirror pod.status; an update touching only these does not make a pod
# in the pool worth retrying (upstream `isPodUpdated` strips Status before comparing).
STATUS_FIELDS = frozenset({
    "nominated_node_name", "phase", "start_time", "preempted_by_scheduler", "scheduled_time",
})


def pod_key(pod: Pod) -> str:
    return f"{pod.namespace}/{pod.name}"


class QueueError(Exception):
    """A queue operation that upstream rejects with an error (e.g. a pod queued twice)."""


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """The queue's bookkeeping for one pod (framework.QueuedPodInfo)."""

    pod: Pod
    timestamp: int  # last time the pod was added or re-added to the queue
    seq: int = 0  # order in which `timestamp` was assigned: the tie-breaker
    initial_attempt_timestamp: int | None = None
    attempts: int = 0
    unschedulable_count: int = 0  # failed attempts a plugin rejected (1.34+: the backoff's count)
    consecutive_errors: int = 0  # failed attempts in a row that were errors
    unschedulable_plugins: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        return pod_key(self.pod)


class _KeyedHeap:
    """A binary heap of QueuedPodInfo keyed by namespace/name, with update and delete.

    Deletion is lazy: a replaced or removed entry is marked dead and skipped on pop."""

    __slots__ = ("_sort_key", "_heap", "_live", "_counter")

    def __init__(self, sort_key: Callable[[QueuedPodInfo], Any]) -> None:
        self._sort_key = sort_key
        self._heap: list[list] = []
        self._live: dict[str, list] = {}
        self._counter = 0

    def add_or_update(self, info: QueuedPodInfo) -> None:
        key = info.key
        old = self._live.get(key)
        if old is not None:
            old[2] = None
        self._counter += 1
        entry = [self._sort_key(info), self._counter, info]
        self._live[key] = entry
        heapq.heappush(self._heap, entry)

    def get(self, key: str) -> QueuedPodInfo | None:
        entry = self._live.get(key)
        return entry[2] if entry is not None else None

    def delete(self, key: str) -> QueuedPodInfo | None:
        entry = self._live.pop(key, None)
        if entry is None:
            return None
        info = entry[2]
        entry[2] = None
        return info

    def _prune(self) -> None:
        heap = self._heap
        while heap and heap[0][2] is None:
            heapq.heappop(heap)

    def peek(self) -> QueuedPodInfo | None:
        self._prune()
        return self._heap[0][2] if self._heap else None

    def pop(self) -> QueuedPodInfo | None:
        self._prune()
        if not self._heap:
            return None
        info = heapq.heappop(self._heap)[2]
        del self._live[info.key]
        return info

    def ordered(self) -> list[QueuedPodInfo]:
        """Live entries in heap order (not a destructive pop)."""
        return [e[2] for e in sorted(self._live.values())]

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, key: object) -> bool:
        return key in self._live

    def __iter__(self) -> Iterator[QueuedPodInfo]:
        return (e[2] for e in self._live.values())


def priority_sort_key(info: QueuedPodInfo) -> tuple:
    """PrioritySort's `Less` as a key: higher priority first, then the earlier queue timestamp
    (the sequence number breaks the ties a virtual clock makes)."""
    return (-info.pod.priority, info.timestamp, info.seq)


def is_pod_updated(old_pod: Pod | None, new_pod: Pod) -> bool:
    """Did anything but status change? (upstream `isPodUpdated`)."""
    if old_pod is None:
        return True
    names = getattr(type(new_pod), "__slots__", None)
    if names is None:
        names = [n for n in vars(new_pod)]
    return any(
        getattr(old_pod, n, None) != getattr(new_pod, n, None)
        for n in names if n not in STATUS_FIELDS
    )


#: The release from which kube-scheduler runs with queueing hints (SchedulerQueueingHints beta
#: and on by default in 1.32, GA in 1.34).
QUEUEING_HINTS = (1, 32)
#: The release from which an empty activeQ pops backoffQ (SchedulerPopFromBackoffQ, beta and
#: on by default in 1.33; KEP-5142), with backoff expiries aligned to `BACKOFF_WINDOW`.
POP_FROM_BACKOFF_Q = (1, 33)
#: The release from which the backoff counts unschedulable attempts or consecutive errors
#: (`UnschedulableCount`, `ConsecutiveErrorsCount`) instead of all attempts.
BACKOFF_BY_FAILURE = (1, 34)
#: From this release binding a nominated pod no longer moves the pool as its nomination's
#: end (`deletePodFromSchedulingQueue(pod, inBinding)`); its deletion still does.
BINDING_ENDS_NOMINATION_QUIETLY = (1, 35)
#: `backoffQOrderingWindowDuration`.
BACKOFF_WINDOW = 1 * SECOND
#: The queue label of a pod popped from backoffQ (`framework.PopFromBackoffQ`).
POP_FROM_BACKOFF = "PopFromBackoffQ"
#: Upstream's zero `time.Time` (no backoff at all) in a heap key: before every real time.
_NO_BACKOFF = -(1 << 62)
#: `framework.EventForceActivate`: a wildcard event, for one pod.
FORCE_ACTIVATE_EVENT = ClusterEvent(WILDCARD, ActionType.ALL, FORCE_ACTIVATE)


class PriorityQueue:
    """kube-scheduler's PriorityQueue on a `VirtualClock` (see the module docstring)."""

    def __init__(
        self,
        clock: VirtualClock,
        *,
        pod_initial_backoff: int = DEFAULT_POD_INITIAL_BACKOFF,
        pod_max_backoff: int = DEFAULT_POD_MAX_BACKOFF,
        pod_max_in_unschedulable_pods: int = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS,
        plugins: Iterable[str] | None = None,
        nominator: Nominator | None = None,
        sort_key: Callable[[QueuedPodInfo], Any] | None = None,
        queueing_hints: bool = False,
        pop_from_backoff: bool = False,
        backoff_by_failure: bool = False,
        window_phase: int = 0,
    ) -> None:
        """`window_phase`: where whole wall-clock seconds fall on the virtual clock (the
        nanoseconds past a whole second of the time the virtual clock's 0 stands for)."""
        self.clock = clock
        self.queueing_hints = queueing_hints
        self.pop_from_backoff = pop_from_backoff
        self.backoff_by_failure = backoff_by_failure
        self._window_phase = window_phase % BACKOFF_WINDOW
        #: With queueing hints: in-flight pod key -> where its events start in `_flight_events`
        #: (offset by `_flight_base`), and the events (with the pod a wildcard one is for).
        self._in_flight: dict[str, int] = {}
        self._flight_events: list[tuple[ClusterEvent, str | None]] = []
        self._flight_base = 0
        self.pod_initial_backoff = pod_initial_backoff
        self.pod_max_backoff = pod_max_backoff
        self.pod_max_in_unschedulable_pods = pod_max_in_unschedulable_pods
        # Enabled plugins decide which cluster events are of interest at all.
        self._interest = interest_map(all_plugins() if plugins is None else plugins)
        self.nominator = nominator if nominator is not None else Nominator()
        # activeQ's order is the profile's QueueSort `Less` as a key: PrioritySort (priority,
        # then queue timestamp) unless the profile brings its own (Coscheduling's).
        active_key = sort_key or priority_sort_key
        self._active = _KeyedHeap(active_key)
        # podBackoffQ; from 1.33 the pods of one window in activeQ's order, and the pods that
        # failed by an error in podErrorBackoffQ (before, one heap holds both).
        self._backoff = _KeyedHeap(
            (lambda i: (self._expiry_key(i), active_key(i))) if pop_from_backoff
            else (lambda i: (self._expiry_key(i), i.seq)))
        self._error_backoff = _KeyedHeap(lambda i: (self._expiry_key(i), i.seq))
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self._seq = 0
        self.backoff_flusher: TimelineEntry | None = None
        self.leftover_flusher: TimelineEntry | None = None
        #: Called for every move between sub-queues (the event log); None: no work at all.
        self.on_move: MoveHook | None = None

    # -- wiring -------------------------------------------------------------------------------

    def start(self, timeline: Timeline) -> None:
        """`Run()`: register the two flushers on `timeline` (wait.Until fires at once; from
        1.33 the backoff flusher first waits for the next whole second)."""
        first = self.window(self.clock.now() + BACKOFF_WINDOW) if self.pop_from_backoff else None
        self.backoff_flusher = timeline.every(BACKOFF_FLUSH_PERIOD, self.flush_backoff_completed,
                                              start=first, rank=-2)
        self.leftover_flusher = timeline.every(UNSCHEDULABLE_FLUSH_PERIOD,
                                               self.flush_unschedulable_leftover, rank=-1)

    # -- bookkeeping helpers -------------------------------------------------------------------

    def _stamp(self, info: QueuedPodInfo) -> None:
        self._seq += 1
        info.timestamp = self.clock.now()
        info.seq = self._seq

    def new_pod_info(self, pod: Pod) -> QueuedPodInfo:
        info = QueuedPodInfo(pod, 0)
        self._stamp(info)
        return info

    def window(self, t: int) -> int:
        """`alignToWindow`: the start of the whole second `t` falls in."""
        return t - (t + self._window_phase) % BACKOFF_WINDOW

    def _backoff_count(self, info: QueuedPodInfo) -> int:
        if self.backoff_by_failure:
            return info.consecutive_errors or info.unschedulable_count
        return info.attempts

    def backoff_duration(self, info: QueuedPodInfo) -> int:
        """min(initial × 2^(count−1), max), count being the attempts (from 1.34 the
        unschedulable attempts, or the consecutive errors); 0 before any, or when max is 0."""
        count = self._backoff_count(info)
        if count == 0 or self.pod_max_backoff == 0:
            return 0
        duration = self.pod_initial_backoff
        for _ in range(1, count):
            # Upstream compares by subtraction to avoid overflow; kept for identical capping.
            if duration > self.pod_max_backoff - duration:
                return self.pod_max_backoff
            duration += duration
        return duration

    def backoff_expiry(self, info: QueuedPodInfo) -> int | None:
        """When the pod's backoff ends (from 1.33 the start of that window); None: it has no
        backoff at all (never tried; from 1.34 also a max backoff of 0)."""
        if not self.pop_from_backoff:
            return info.timestamp + self.backoff_duration(info)
        if self._backoff_count(info) == 0 or (self.backoff_by_failure
                                               and self.pod_max_backoff == 0):
            return None
        return self.window(info.timestamp + self.backoff_duration(info))

    def _expiry_key(self, info: QueuedPodInfo) -> int:
        expiry = self.backoff_expiry(info)
        return _NO_BACKOFF if expiry is None else expiry

    def is_backing_off(self, info: QueuedPodInfo) -> bool:
        """Still backing off (from 1.33: until the window its backoff ends in has passed)."""
        expiry = self.backoff_expiry(info)
        if not self.pop_from_backoff:
            return expiry is not None and expiry > self.clock.now()
        return expiry is not None and expiry >= self.window(self.clock.now())

    def backoff_over_at(self, info: QueuedPodInfo) -> int:
        """The first time `info` is no longer backing off."""
        expiry = self.backoff_expiry(info)
        if expiry is None:
            return self.clock.now()
        return expiry + BACKOFF_WINDOW if self.pop_from_backoff else expiry

    def _backoff_heap(self, info: QueuedPodInfo) -> _KeyedHeap:
        """podErrorBackoffQ for a pod that failed by an error (from 1.33), else podBackoffQ."""
        if self.pop_from_backoff and not info.unschedulable_plugins:
            return self._error_backoff
        return self._backoff

    def _backoff_get(self, key: str) -> QueuedPodInfo | None:
        """The pod in backoffQ (podBackoffQ or podErrorBackoffQ), or None."""
        return self._backoff.get(key) or self._error_backoff.get(key)

    def _backoff_delete(self, key: str) -> QueuedPodInfo | None:
        """Take the pod out of backoffQ (whichever heap holds it); None when in neither."""
        return self._backoff.delete(key) or self._error_backoff.delete(key)

    def _add_to_active(self, info: QueuedPodInfo) -> None:
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.clock.now()
        self._active.add_or_update(info)

    def _requeue(self, info: QueuedPodInfo) -> str:
        """Back to backoffQ if still backing off, else to activeQ."""
        if self.is_backing_off(info):
            self._backoff_heap(info).add_or_update(info)
            return BACKOFF
        self._add_to_active(info)
        return ACTIVE

    # -- pod lifecycle -------------------------------------------------------------------------

    def add(self, pod: Pod) -> QueuedPodInfo:
        """A new pending pod: straight to activeQ."""
        info = self.new_pod_info(pod)
        self._add_to_active(info)
        self._unschedulable.pop(info.key, None)
        self._backoff_delete(info.key)
        self.nominator.add(pod)
        if self.on_move is not None:
            self.on_move(pod, NEW, ACTIVE, UNSCHEDULED_POD_ADD)
        return info

    @property
    def can_pop(self) -> bool:
        """Would `pop` return a pod? (activeQ, or from 1.33 podBackoffQ, is not empty)"""
        return len(self._active) > 0 or (self.pop_from_backoff and len(self._backoff) > 0)

    def pop(self) -> QueuedPodInfo | None:
        """Head of activeQ (when it is empty, from 1.33, the head of podBackoffQ, backing off
        or not); counts an attempt and a scheduling cycle. None when there is none."""
        info = self._active.pop()
        if info is None and self.pop_from_backoff:
            info = self._backoff.pop()
            if info is not None and self.on_move is not None:
                self.on_move(info.pod, BACKOFF, ACTIVE, POP_FROM_BACKOFF)
        if info is None:
            return None
        info.attempts += 1
        self.scheduling_cycle += 1
        info.unschedulable_plugins.clear()
        if self.queueing_hints:
            self._in_flight[info.key] = self._flight_base + len(self._flight_events)
        return info

    def done(self, key: str) -> None:
        """`Done`: the pod's attempt is over (bound, or gone); its in-flight events go."""
        if self._in_flight.pop(key, None) is not None and not self._in_flight:
            self._flight_base += len(self._flight_events)
            self._flight_events.clear()

    def _record_in_flight(self, event: ClusterEvent, target: str | None = None) -> None:
        """`addEventIfAnyInFlight` (target None) / `addEventsIfPodInFlight` (target: the pod
        the event is for, which must be in flight)."""
        if not self.queueing_hints or not self._in_flight:
            return
        if target is None or target in self._in_flight:
            self._flight_events.append((event, target))

    def _hint_for_in_flight(self, info: QueuedPodInfo) -> bool:
        """`determineSchedulingHintForInFlightPod`: whether an event of its flight is worth
        requeuing it for (else it goes to the pool). A pod that failed with an error (no
        rejecting plugin) is always requeued."""
        if not info.unschedulable_plugins:
            return True
        start = self._in_flight.get(info.key)
        if start is None:
            return False
        for event, target in self._flight_events[start - self._flight_base:]:
            if target is not None and target != info.key:
                continue  # a wildcard event for another pod
            if self._worth_requeuing(info, event):
                return True
        return False

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo,
                                         pod_scheduling_cycle: int) -> str:
        """Requeue a pod after a failed attempt; returns the sub-queue it went to.

        `info.unschedulable_plugins` must hold the plugins that rejected it (empty for an
        error). No rejecting plugin, or (legacy) a move request during its cycle, or (with
        queueing hints) an event of its flight worth requeuing it for → backoffQ."""
        key = info.key
        if key in self._unschedulable:
            raise QueueError(f"Pod {key} is already present in unschedulable queue")
        if key in self._active:
            raise QueueError(f"Pod {key} is already present in the active queue")
        if self._backoff_get(key) is not None:
            raise QueueError(f"Pod {key} is already present in the backoff queue")
        if info.unschedulable_plugins:
            info.unschedulable_count += 1
            info.consecutive_errors = 0
        else:  # an error (the API server, a plugin's own failure), not a rejection
            info.consecutive_errors += 1
        self._stamp(info)
        if self.queueing_hints:
            requeue = self._hint_for_in_flight(info)
            self.done(key)
            # requeuePodWithQueueingStrategy(queueAfterBackoff): backoffQ, or activeQ if its
            # backoff is over (no backoff: podMaxBackoffSeconds 0).
            where = self._requeue(info) if requeue else ""
        elif self.move_request_cycle >= pod_scheduling_cycle or not info.unschedulable_plugins:
            self._backoff_heap(info).add_or_update(info)
            where = BACKOFF
        else:
            where = ""
        if not where:
            self._unschedulable[key] = info
            where = UNSCHEDULABLE
        self.nominator.add(info.pod)
        if self.on_move is not None:  # popped from activeQ, back after a failed attempt
            self.on_move(info.pod, ACTIVE, where, SCHEDULE_ATTEMPT_FAILURE)
        return where

    def update(self, old_pod: Pod | None, new_pod: Pod) -> str:
        """An update of a pending pod; returns the sub-queue it is in afterwards."""
        if old_pod is not None:
            for heap, where in ((self._active, ACTIVE), (self._backoff, BACKOFF),
                                (self._error_backoff, BACKOFF)):
                info = heap.get(pod_key(old_pod))
                if info is not None:
                    info.pod = new_pod
                    self.nominator.update(old_pod, new_pod)
                    heap.add_or_update(info)
                    return where
        info = self._unschedulable.get(pod_key(new_pod))
        if info is not None:
            info.pod = new_pod
            self.nominator.update(old_pod if old_pod is not None else new_pod, new_pod)
            if is_pod_updated(old_pod, new_pod):
                del self._unschedulable[info.key]
                where = self._requeue(info)
                if self.on_move is not None:
                    self.on_move(new_pod, UNSCHEDULABLE, where, UNSCHEDULED_POD_UPDATE)
                return where
            return UNSCHEDULABLE
        # Not queued anywhere: treat it as a new pod.
        info = self.new_pod_info(new_pod)
        self._add_to_active(info)
        self.nominator.add(new_pod)
        if self.on_move is not None:
            self.on_move(new_pod, NEW, ACTIVE, UNSCHEDULED_POD_UPDATE)
        return ACTIVE

    def delete(self, pod: Pod) -> bool:
        """A pending pod was deleted. Returns whether it was queued."""
        self.nominator.delete(pod)
        key = pod_key(pod)
        if self._active.delete(key) is not None:
            return True
        if self._backoff_delete(key) is not None:
            return True
        return self._unschedulable.pop(key, None) is not None

    def activate(self, pods: Iterable[Pod]) -> bool:
        """Move the given pods from the pool or backoffQ straight to activeQ."""
        activated = False
        for pod in pods:
            key = pod_key(pod)
            if key in self._active:
                continue
            info = self._unschedulable.pop(key, None)
            source = UNSCHEDULABLE
            if info is None:
                info = self._backoff_delete(key)
                source = BACKOFF
            if info is None:
                # In flight: it is requeued when it comes back (upstream's Activate).
                self._record_in_flight(FORCE_ACTIVATE_EVENT, key)
                self.move_request_cycle = self.scheduling_cycle
                continue
            self._add_to_active(info)
            self.nominator.add(info.pod)
            activated = True
            if self.on_move is not None:
                self.on_move(info.pod, source, ACTIVE, FORCE_ACTIVATE)
        return activated

    def resort(self, keys: Iterable[str]) -> None:
        """Re-key the activeQ entries of these pods ("namespace/name") after what a QueueSort
        plugin's `Less` reads changed (Coscheduling: a group's last failure or its PodGroup)."""
        for key in keys:
            info = self._active.get(key)
            if info is not None:
                self._active.add_or_update(info)

    # -- cluster events ------------------------------------------------------------------------

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        if event.is_wildcard():
            return True
        return any(reg.match(event) for regs in self._interest.values() for reg in regs)

    def _worth_requeuing(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Legacy hint: Queue iff a rejecting plugin registered this event."""
        if not info.unschedulable_plugins or event.is_wildcard():
            return True
        for plugin in info.unschedulable_plugins:
            regs = self._interest.get(plugin)
            if regs is None:
                regs = plugin_events(plugin)
            if any(reg.match(event) for reg in regs):
                return True
        return False

    def _move_pods(self, infos: Iterable[QueuedPodInfo], event: ClusterEvent) -> int:
        """movePodsToActiveOrBackoffQueue; returns how many pods left the pool."""
        if not self.is_event_of_interest(event):
            return 0
        moved = 0
        for info in infos:
            if not self._worth_requeuing(info, event):
                continue
            del self._unschedulable[info.key]
            where = self._requeue(info)
            moved += 1
            if self.on_move is not None:
                self.on_move(info.pod, UNSCHEDULABLE, where, event.label)
        self.move_request_cycle = self.scheduling_cycle
        self._record_in_flight(event)
        return moved

    def _pool_sorted(self) -> list[QueuedPodInfo]:
        # Upstream iterates a Go map; the outcome does not depend on the order, but a sorted
        # walk keeps runs reproducible byte for byte.
        return [self._unschedulable[k] for k in sorted(self._unschedulable)]

    def move_all_to_active_or_backoff(self, event: ClusterEvent,
                                      pre_check: Callable[[Pod], bool] | None = None) -> int:
        """MoveAllToActiveOrBackoffQueue for a cluster event (node add/update, assigned pod
        delete, …). `pre_check` (upstream's PreEnqueueCheck) can veto individual pods."""
        if not self.is_event_of_interest(event):
            return 0
        infos = [i for i in self._pool_sorted() if pre_check is None or pre_check(i.pod)]
        return self._move_pods(infos, event)

    def assigned_pod_added(self, pod: Pod,
                           affinity_match: Callable[[Pod, Pod], bool] | None = None) -> int:
        """A pod was bound. Only pool pods with a required affinity term matching it move;
        `affinity_match(pending, assigned)` decides (none without inter-pod affinity)."""
        infos = [i for i in self._pool_sorted()
                 if affinity_match is not None and affinity_match(i.pod, pod)]
        return self._move_pods(infos, ASSIGNED_POD_ADD)

    def assigned_pod_updated(self, old_pod: Pod, new_pod: Pod,
                             affinity_match: Callable[[Pod, Pod], bool] | None = None) -> int:
        infos = [i for i in self._pool_sorted()
                 if affinity_match is not None and affinity_match(i.pod, new_pod)]
        return self._move_pods(infos, ASSIGNED_POD_UPDATE)

    def assigned_pod_deleted(self, pod: Pod) -> int:
        """A bound pod went away (deletion, preemption victim): frees room for the pool."""
        return self.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE)

    def nominated_pod_gone(self, pod: Pod) -> int:
        """`pod` no longer holds its nominated node (its nomination changed or went, or it was
        deleted): pods of lower or equal priority counted it there as if it were bound, so
        to them it is an AssignedPodDelete (`getLEPriorityPreCheck`)."""
        priority = pod.priority
        return self.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE,
                                                  lambda other: other.priority <= priority)

    # -- flushers ------------------------------------------------------------------------------

    def flush_backoff_completed(self) -> int:
        """Every 1 s: pods whose backoff has expired go from backoffQ to activeQ (podBackoffQ's,
        then podErrorBackoffQ's)."""
        moved = 0
        for heap in (self._backoff, self._error_backoff):
            while True:
                info = heap.peek()
                if info is None or self.is_backing_off(info):
                    break
                heap.pop()
                self._add_to_active(info)
                moved += 1
                if self.on_move is not None:
                    self.on_move(info.pod, BACKOFF, ACTIVE, BACKOFF_COMPLETE)
        return moved

    def flush_unschedulable_leftover(self) -> int:
        """Every 30 s: pods in the pool longer than podMaxInUnschedulablePodsDuration move on
        (event UnschedulableTimeout, a wildcard)."""
        now = self.clock.now()
        limit = self.pod_max_in_unschedulable_pods
        infos = [i for i in self._pool_sorted() if now - i.timestamp > limit]
        if not infos:
            return 0
        return self._move_pods(infos, UNSCHEDULABLE_TIMEOUT)

    # -- inspection ----------------------------------------------------------------------------

    def where(self, pod: Pod) -> str | None:
        """The sub-queue holding `pod`, or None (in flight, bound, or unknown)."""
        key = pod_key(pod)
        if key in self._active:
            return ACTIVE
        if self._backoff_get(key) is not None:
            return BACKOFF
        if key in self._unschedulable:
            return UNSCHEDULABLE
        return None

    def get(self, pod: Pod) -> QueuedPodInfo | None:
        key = pod_key(pod)
        return self._active.get(key) or self._backoff_get(key) or self._unschedulable.get(key)

    def active_pods(self) -> list[Pod]:
        """activeQ in pop order."""
        return [i.pod for i in self._active.ordered()]

    def backoff_pods(self) -> list[Pod]:
        """backoffQ in expiry order (podBackoffQ's, then podErrorBackoffQ's)."""
        return [i.pod for i in self._backoff.ordered() + self._error_backoff.ordered()]

    def unschedulable_pods(self) -> list[Pod]:
        """The pool, sorted by namespace/name."""
        return [i.pod for i in self._pool_sorted()]

    def unschedulable_infos(self) -> list[QueuedPodInfo]:
        """The pool's bookkeeping, in no particular order."""
        return list(self._unschedulable.values())

    def unschedulable_by_age(self) -> Iterator[QueuedPodInfo]:
        """The pool's bookkeeping, oldest queue timestamp first: a pod enters the pool only
        in `add_unschedulable_if_not_present`, stamped then, and keeps its place (and its
        stamp) until it leaves, so the pool's insertion order is timestamp order."""
        return iter(self._unschedulable.values())

    def next_backoff_expiry(self) -> int | None:
        """The first time a pod of backoffQ is no longer backing off (None: it is empty)."""
        heads = [i for i in (self._backoff.peek(), self._error_backoff.peek()) if i is not None]
        return min((self.backoff_over_at(i) for i in heads), default=None)

    def oldest_unschedulable_timestamp(self) -> int | None:
        return min((i.timestamp for i in self._unschedulable.values()), default=None)

    @property
    def num_active(self) -> int:
        return len(self._active)

    @property
    def num_backoff(self) -> int:
        return len(self._backoff) + len(self._error_backoff)

    @property
    def num_unschedulable(self) -> int:
        return len(self._unschedulable)

    def __len__(self) -> int:
        return self.num_active + self.num_backoff + len(self._unschedulable)

    def __repr__(self) -> str:
        return (f"PriorityQueue(activeQ:{self.num_active}; backoffQ:{self.num_backoff}; "
                f"unschedulablePods:{self.num_unschedulable}; cycle:{self.scheduling_cycle})")
