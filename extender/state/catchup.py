"""Catching the watches up on a few nodes: what the API server has changed there and the
watches have not yet delivered.

kube-scheduler and the extender watch the API server each on their own, and the extender's
watch may run a moment behind (docs/operations.md). kube-scheduler retries a pod the moment
its own watch shows a change that may let it fit, and some of its calls depend on what it has
just seen:

* a preemptor's retry on its nominated node once its own watch shows the victims gone: the
  extender, still counting them, would reject the node, and kube-scheduler park the pod until
  some other event (five minutes in a quiet cluster);
* a preempt call proposing victims bound a moment ago: the extender, not knowing them, would
  find the pod fitting without them and drop the node;
* a filter naming a node just added (a cluster autoscaler's, for the very pods that wait):
  the extender, not knowing it, would reject it as not found;
* a retry after a node was freed (a taint removed, as when a new node turns Ready; cordon
  lifted; a pod deleted): the extender, still seeing the node as it was, would reject it.
  That one cannot be told from a pod that fits nowhere by the extender's own rules, so it is
  a guess, made only when a filter passes none of a few candidates, and kept within
  `GuessBudget`.

* a gang's pod retried as its last sibling arrives (kube-scheduler's retries of a pod
  Coscheduling's PreFilter rejected come with its siblings' arrivals, and the last arrival is
  the last retry): the extender, not counting that sibling yet, would reject the pod again
  for too few pods in its group, and the members held at Permit wait out their group's
  timeout. `catch_up_pods_in` lists the group's pods by its label; within `pods_budget`, a
  group still being created being short for real;
* a pod waiting on its ElasticQuota retried as a pod of its namespace goes: the extender,
  still counting that pod, would refuse it again. `catch_up_pods_in` lists the namespace's
  pods, within the same budget.

`catch_up_nodes` reads from the API server each node (one GET) and which pods the nodes hold
now (one consistent LIST each, all at once), and applies the difference through the
informers' own sinks, exactly as the watches' events will (which then change nothing): a
node missing or older is added or updated, pods gone are deleted, pods missing added. With
`serve --record` they are recorded as the watches' changes are. When a watch has by then
delivered everything the answer shows (its resourceVersion not older than the answer's),
nothing is applied: the state is already as new, and what the watch has deleted since is not
brought back. Else the informer skips the watch's events of the objects applied, up to the
answer's version (`Informer.caught_up`): older than what the state holds, they would put a
bound pod back to pending, or a deleted one back, for a moment.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar
from weakref import WeakKeyDictionary

from extender.engine.cluster import ClusterState
from extender.kube.client import ApiError, KubeError
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.scheduling import POD_GROUP_LABEL
from extender.state.informer import NODES, PODS, Informer, LiveState, apply_change, is_newer

log = logging.getLogger(__name__)

#: Seconds the API server's answers are waited for before the state is read as it is (well
#: within the 5 s httpTimeout kube-scheduler gives a filter by default).
LIST_TIMEOUT = 2.0


class GuessBudget:
    """How many nodes may be read on a guess (`guess_budget`): a node at most once every
    `node_interval` seconds, and at most `per_second` nodes a second in all. A node read costs
    two API calls, and a pod that fits nowhere by the extender's own rules would otherwise
    make them at every retry."""

    def __init__(self, *, node_interval: float = 1.0, per_second: int = 10,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.node_interval = node_interval
        self.per_second = per_second
        self.clock = clock
        self._last: dict[str, float] = {}
        self._recent: deque[float] = deque()  # when each node read this second was allowed

    def allow(self, nodes: Sequence[str]) -> list[str]:
        """Those of `nodes` that may be read now (taken from the budget), in order."""
        now = self.clock()
        recent, last = self._recent, self._last
        while recent and now - recent[0] >= 1.0:
            recent.popleft()
        room = self.per_second - len(recent)
        allowed = [node for node in nodes
                   if now - last.get(node, -math.inf) >= self.node_interval][:max(room, 0)]
        if len(last) > 4096:  # forget the nodes not read lately
            self._last = last = {n: t for n, t in last.items() if now - t < self.node_interval}
        for node in allowed:
            last[node] = now
            recent.append(now)
        return allowed


T = TypeVar("T")


def _one_per_live(memo: WeakKeyDictionary[LiveState, T], live: LiveState,
                  make: Callable[[], T]) -> T:
    """`live`'s own `make()` (each server, each test, its own), made on first use."""
    found = memo.get(live)
    if found is None:
        found = memo[live] = make()
    return found


_budgets: WeakKeyDictionary[LiveState, GuessBudget] = WeakKeyDictionary()
_pods_budgets: WeakKeyDictionary[LiveState, GuessBudget] = WeakKeyDictionary()


def guess_budget(live: LiveState) -> GuessBudget:
    """The budget of `live`'s guesses."""
    return _one_per_live(_budgets, live, GuessBudget)


def pods_budget(live: LiveState) -> GuessBudget:
    """The budget of `live`'s reads of a PodGroup's or a namespace's pods (`catch_up_pods_in`),
    by what is read: each at most once a second, ten a second in all."""
    return _one_per_live(_pods_budgets, live, GuessBudget)


class PreemptAnswers:
    """The nodes the preempt verb kept for each preemptor lately (`remember`), by pod UID.

    kube-scheduler deletes the victims on one of them and retries the pod once its own watch
    shows them gone, often before the pod's `status.nominatedNodeName` has reached the pod it
    sends (the nomination and the victims' deletion are separate writes): its filter then
    says nothing of the node it waits for, and only this memory tells. At most `size` pods,
    each for `ttl` seconds (a pod waits for its victims a grace period or so)."""

    def __init__(self, *, ttl: float = 600.0, size: int = 4096,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.size = size
        self.clock = clock
        self._kept: OrderedDict[str, tuple[float, frozenset[str]]] = OrderedDict()

    def remember(self, pod_uid: str, nodes: Iterable[str]) -> None:
        kept = frozenset(nodes)
        self._kept.pop(pod_uid, None)
        if not kept or not pod_uid:
            return
        self._kept[pod_uid] = (self.clock(), kept)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)

    def nodes(self, pod_uid: str) -> frozenset[str]:
        """The nodes last kept for the pod; none when it had no preempt answer lately."""
        entry = self._kept.get(pod_uid)
        if entry is None:
            return frozenset()
        if self.clock() - entry[0] > self.ttl:
            del self._kept[pod_uid]
            return frozenset()
        return entry[1]


_answers: WeakKeyDictionary[LiveState, PreemptAnswers] = WeakKeyDictionary()


def preempt_answers(live: LiveState) -> PreemptAnswers:
    """The preempt verb's recent answers for `live`."""
    return _one_per_live(_answers, live, PreemptAnswers)


async def catch_up_nodes(live: LiveState, nodes: Sequence[str], *,
                         timeout: float = LIST_TIMEOUT) -> None:
    """Make `live`'s `nodes`, and the pods on them, those the API server has now: each node
    read (one GET) and its pods listed. Pods the state assumes bound stay: their binding may
    be newer than the list. The API failing or slow leaves the state as it is. What changed
    is counted in `live.counters`."""
    pods_informer = live.informers.get(PODS.name)
    nodes_informer = live.informers.get(NODES.name)
    wanted = list(dict.fromkeys(nodes))
    if pods_informer is None or nodes_informer is None or not wanted:
        return
    try:
        async with asyncio.timeout(timeout):
            found = await asyncio.gather(*(_node(live, node) for node in wanted),
                                         *(_pods_on(live, node) for node in wanted))
    except (KubeError, TimeoutError) as exc:
        log.info("could not read %s from the API server to catch the watch up: %s",
                 ", ".join(wanted), exc)
        return
    # Applied after the await: the watch may have delivered some of the changes meanwhile.
    fetched = [node for node in found[:len(wanted)] if node is not None]
    new_nodes = sum(_apply_node(nodes_informer, live.state, node) for node in fetched)
    deleted = added = 0
    for node, (version, pods) in zip(wanted, found[len(wanted):], strict=True):
        if node not in live.state.nodes:
            continue  # the API server has no such node either
        if pods_informer.resource_version and \
                not is_newer(version, pods_informer.resource_version):
            continue
        d, a = _apply(live, pods_informer, node, version, pods)
        deleted, added = deleted + d, added + a
    live.counters.gone_before_watch += deleted
    live.counters.seen_before_watch += added
    live.counters.nodes_seen_before_watch += new_nodes


async def catch_up_pods_in(live: LiveState, namespace: str, group: str = "", *,
                           timeout: float = LIST_TIMEOUT) -> None:
    """Make `live`'s pods of `namespace` (of PodGroup `group` alone, when given: one LIST by
    its label) those the API server has now: pods the watch has not delivered added, pods it
    has not yet deleted deleted (pods the state assumes bound stay). Coscheduling's PreFilter
    counts a group's pods, CapacityScheduling's a quota's. The API failing or slow leaves the
    state as it is."""
    informer = live.informers.get(PODS.name)
    if informer is None:
        return
    what = f"PodGroup {namespace}/{group}" if group else f"namespace {namespace}"
    try:
        async with asyncio.timeout(timeout):
            version, pods = await _list_pods(
                live, f"/api/v1/namespaces/{namespace}/pods",
                label_selector=f"{POD_GROUP_LABEL}={group}" if group else "")
    except (KubeError, TimeoutError) as exc:
        log.info("could not list the pods of %s to catch the watch up: %s", what, exc)
        return
    if informer.resource_version and not is_newer(version, informer.resource_version):
        return  # the watch has delivered all of it meanwhile
    state = live.state
    present = {pod.metadata.uid for pod in pods}
    gone = [view for view in state.pods.values()
            if view.namespace == namespace and (not group or view.pod_group == group)
            and view.uid not in present and view.uid not in state.assumed]
    # A pod assumed bound stays as the state has it while the list shows it pending.
    new = [pod for pod in pods
           if (known := state.pod_by_uid(pod.metadata.uid)) is None
           or (pod.spec.node_name and not known.node_name)]
    _apply_pods(informer, version, gone, new)
    if new or gone:
        log.info("pods of %s at the API server before their watch events: %d added, %d deleted",
                 what, len(new), len(gone))
    live.counters.seen_before_watch += len(new)
    live.counters.gone_before_watch += len(gone)


async def _node(live: LiveState, name: str) -> k8s.Node | None:
    """The node as the API server has it now; None when it has none of that name."""
    try:
        return await live.client.get(f"{NODES.path}/{name}", k8s.Node)
    except ApiError as exc:
        if exc.code == 404:
            return None
        raise


def _apply_node(informer: Informer, state: ClusterState, node: k8s.Node) -> int:
    meta = node.metadata
    known = state.nodes.get(meta.name)
    if known is not None and not is_newer(meta.resource_version, known.node.resource_version):
        return 0  # the state has this version (or the watch delivered a newer one meanwhile)
    if informer.resource_version and not is_newer(meta.resource_version,
                                                  informer.resource_version):
        return 0  # the watch is past this version: deleted since, if it is not in the state
    informer.gate.call(apply_change, informer.sink, "apply", node)
    informer.caught_up(meta.uid, meta.resource_version)
    log.info("node %s is newer at the API server than its watch events: %s", meta.name,
             "updated" if known is not None else "added")
    return 1


async def _pods_on(live: LiveState, node: str) -> tuple[str, list[k8s.Pod]]:
    """The list's resourceVersion and the pods it holds on `node`."""
    return await _list_pods(live, PODS.path, node_name=node)


async def _list_pods(live: LiveState, path: str, *, node_name: str = "",
                     label_selector: str = "") -> tuple[str, list[k8s.Pod]]:
    """The list's resourceVersion and the pods at `path` (on `node_name`, with
    `label_selector`, when given) the pod informer would hold, every page read."""
    selector = f"spec.nodeName={node_name},{PODS.field_selector}" if node_name \
        else PODS.field_selector
    pods: list[k8s.Pod] = []
    version = token = ""
    while True:
        page = await live.client.list(path, k8s.Pod, continue_token=token,
                                      field_selector=selector, label_selector=label_selector)
        version = version or page.resource_version  # every page carries the first's version
        pods.extend(page.items or ())
        token = page.continue_token
        if not token:
            return version, pods


def _apply(live: LiveState, informer: Informer, node: str, version: str,
           pods: list[k8s.Pod]) -> tuple[int, int]:
    state = live.state
    info = state.nodes.get(node)
    here = info.pods if info is not None else {}
    present = {pod.metadata.uid for pod in pods}
    gone = [view for uid, view in here.items() if uid not in present and uid not in state.assumed]
    new = [pod for pod in pods if unplaced(state.pod_by_uid(pod.metadata.uid), node)]
    _apply_pods(informer, version, gone, new)
    for view in gone:
        log.info("pod %s/%s is gone from the API server before its watch event: deleted",
                 view.namespace, view.name)
    for pod in new:
        log.info("pod %s/%s is on node %s at the API server before its watch event: added",
                 pod.metadata.namespace, pod.metadata.name, node)
    return len(gone), len(new)


def _apply_pods(informer: Informer, version: str, gone: Iterable[PodView],
                new: Iterable[k8s.Pod]) -> None:
    """The pods gone deleted and the new ones applied through the pod informer's own sink, as
    its watch events will be (the informer then skips those up to the list's `version`)."""
    for view in gone:
        meta = k8s.ObjectMeta(namespace=view.namespace, name=view.name, uid=view.uid)
        informer.gate.call(apply_change, informer.sink, "delete", k8s.Pod(metadata=meta))
        informer.caught_up(view.uid, version)
    for pod in new:
        informer.gate.call(apply_change, informer.sink, "apply", pod)
        informer.caught_up(pod.metadata.uid, version)


def unplaced(view: PodView | None, node: str) -> bool:
    """Whether a pod the API server has on `node` is not there in the state: unknown, or known
    still pending (bound since, the binding not yet watched)."""
    return view is None or view.node_name != node
