"""A verb that depends on what kube-scheduler has just seen change asks for the nodes concerned
as the API server has them now (`state.catchup`) before it answers.

* A pod kube-scheduler has nominated (`status.nominatedNodeName`) is waiting for its victims,
  lower-priority pods on that node, to go; kube-scheduler retries it there as soon as its own
  watch shows them gone. When such a pod's filter comes and the node still holds
  lower-priority pods in the extender's view, the filter asks for the node
  (`nominated_node`).
  The pod's retry often comes before its nomination has reached the pod kube-scheduler
  sends; the nodes the preempt verb kept for it (`state.catchup.PreemptAnswers`) tell then
  (`preempted_nodes`).
* kube-scheduler proposes as victims the pods its own cache places on each node. When the
  preempt verb finds it has ignored proposed pods that the extender's view does not place
  there (bound a moment ago), or proposed nodes it does not know, it asks for those nodes
  (`unplaced_victims`). Reading the victims again ahead of every preempt would cost a tenth
  of its answer; this costs nothing until a victim or node is unknown.
* A filter or prioritize naming nodes the extender does not know (just added) asks for them.
* A filter that passes none of a few candidates asks for them on a guess (`passed_none`):
  kube-scheduler, whose own filters passed them, may have retried the pod on a change the
  extender's watch has not delivered (a taint removed as a new node turns Ready, a cordon
  lifted, a pod deleted). Within a budget: the guess is often wrong (the extender's own rules
  refuse the pod).

* A filter that Coscheduling's PreFilter rejects for too few pods in the pod's group, or
  CapacityScheduling's for its quota's use, asks for the group's, or the namespace's, pods
  (`pods_first`): kube-scheduler, whose watch has seen more, may have retried it on its last
  sibling's arrival or on a pod of the quota gone. Each is read at most once a second;
  within the second after a read, a group's filter answers an Error instead of the
  rejection (a quota's gives the rejection).

A handler asks by raising `Behind` instead of answering (`catch_up_first`, `pods_first`);
the route (`api.verb.answer_caught_up`) catches up what it names and calls it once more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice

from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.engine.framework import Status
from extender.engine.plugins.capacity_scheduling import quota_refusal
from extender.engine.plugins.coscheduling import too_few_siblings
from extender.engine.preemption.batch import BatchOutcome
from extender.engine.preemption.outcome import PreemptionOutcome
from extender.model.pod import PodView
from extender.state.catchup import (
    catch_up_nodes,
    catch_up_pods_in,
    guess_budget,
    pods_budget,
    preempt_answers,
    unplaced,
)

log = logging.getLogger(__name__)

#: Nodes one request catches up at most (read at once): more than that unknown means a watch
#: far behind, which its own relist mends better than node-by-node reads.
MAX_NODES = 16


class Behind(Exception):
    """Raised by a verb's handler instead of answering: these nodes, and their pods, or the
    pods of a namespace (`pods`: namespace and PodGroup, or "" for all of its pods), may be
    behind the API server's. The route (`api.verb`) catches them up and calls the handler once
    more, with `RequestRecord.caught_up` set (with `serve --record`, that second call is
    recorded as a second `in` entry of the exchange, after the changes: what a replay
    answers)."""

    def __init__(self, nodes: Sequence[str] = (), pods: tuple[str, str] | None = None) -> None:
        self.nodes = tuple(nodes)
        self.pods = pods
        self.what = self.nodes + ((_pods_read(*pods),) if pods else ())
        super().__init__(", ".join(self.what))


def _pods_read(namespace: str, group: str) -> str:
    return f"podgroup {namespace}/{group}" if group else f"namespace {namespace}"


def catch_up_first(runtime: Runtime, record: RequestRecord, nodes: Iterable[str]) -> None:
    """Raise `Behind` for `nodes` (the first `MAX_NODES`), unless there are none, the
    extender has no API server, or this is already the handler's second call."""
    if runtime.live is None or record.caught_up:
        return
    first = list(islice(nodes, MAX_NODES))
    if first:
        raise Behind(first)


def pods_first(runtime: Runtime, record: RequestRecord, pod: PodView,
               rejection: Status | None) -> str | None:
    """When a PreFilter rejected the pod by counting pods the watch may not have delivered
    (Coscheduling: too few pods in its group; CapacityScheduling: its quota's use): raise
    `Behind` for those pods (its group's; its namespace's), to read them, or, when they were
    read less than a second ago (`pods_budget`), return the Error to answer instead of the
    rejection.

    kube-scheduler, whose own watch may have seen the change, retries the pod on it (a
    sibling's arrival, a pod of the quota gone), and may have no other event to retry it on:
    a rejection then, wrong only because this extender's watch runs behind, parks the pod
    (for the 5-minute flush; a gang's members held at Permit meanwhile wait out its
    timeout). So this verdict is given only from a read made for this request; an Error
    instead makes kube-scheduler retry after its backoff, by when a read is allowed. A pod
    refused for real is refused as upstream refuses it, after one read a second at most.
    A quota's refusal within the second after a read is given as it stands (no Error): a
    quota is often full for long, its pods retried on every event of a busy cluster, and
    their events would read as the extender's errors."""
    if runtime.live is None or record.caught_up:
        return None
    if too_few_siblings(rejection):
        pods, unsure = (pod.namespace, pod.pod_group), True
    elif quota_refusal(rejection):
        # A quota is often full for long, and its refusals are what its users read in the
        # pod's events: within the second after a read they are given as they stand.
        pods, unsure = (pod.namespace, ""), False
    else:
        return None
    assert rejection is not None
    if pods_budget(runtime.live).allow([_pods_read(*pods)]):
        raise Behind(pods=pods)
    if not unsure:
        return None
    # Worded as what happens, not as a fault: on an idle cluster too a group's members come
    # one after another, and this is how the one too early is given its retry.
    return (f"{rejection.message} (answered as an error, so kube-scheduler retries the pod: "
            f"this extender read the pods of {_pods_read(*pods)} less than a second ago, and "
            "reads them again then, in case a pod created since has not reached its watch)")


def nominated_node(runtime: Runtime, pod: PodView) -> list[str]:
    """The pod's nominated node when the pod may be waiting there for victims: the node holds
    pods of lower priority in the state (the victims, if the watch is behind)."""
    node = pod.nominated_node_name
    info = runtime.state.nodes.get(node) if node else None
    if info is None or not any(view.priority < pod.priority for view in info.pods.values()):
        return []
    return [node]


def preempted_nodes(runtime: Runtime, pod: PodView, offered: Callable[[str], bool]) -> list[str]:
    """The nodes the preempt verb kept for `pod` lately that this request offers
    (`offered(name)`) and whose pods in the state include some of lower priority (the
    victims, if the watch is behind). Nothing for a pod without such an answer: one lookup."""
    if runtime.live is None:
        return []
    kept = preempt_answers(runtime.live).nodes(pod.uid)
    if not kept:
        return []
    nodes = runtime.state.nodes
    return [name for name in sorted(kept)
            if offered(name) and (info := nodes.get(name)) is not None
            and any(view.priority < pod.priority for view in info.pods.values())]


def remember_kept(runtime: Runtime, pod: PodView, answer: BatchOutcome | PreemptionOutcome) -> None:
    """What the preempt verb answered `pod`: the nodes it kept (`preempted_nodes` reads it;
    only with an API server, the one case they are read)."""
    if runtime.live is not None:
        preempt_answers(runtime.live).remember(pod.uid, answer.kept_names)


def passed_none(runtime: Runtime, names: Sequence[str]) -> list[str]:
    """For a filter that passed none of `names` (kube-scheduler's own filters passed them
    all): those to read again on a guess that the watch is behind (a taint removed, a pod
    deleted). Only a few (up to `MAX_NODES`: more, all refused, is the policy speaking) and
    within the live state's `GuessBudget`."""
    if runtime.live is None or not names or len(names) > MAX_NODES:
        return []
    return guess_budget(runtime.live).allow(names)


def unplaced_victims(runtime: Runtime, ignored: Mapping[str, Sequence[str]]) -> Iterator[str]:
    """The nodes where the preempt verb ignored proposed victims that the state does not place
    there: pods kube-scheduler has seen bound and the watch not yet."""
    state = runtime.state
    for node, uids in ignored.items():
        if node in state.nodes and any(unplaced(state.pod_by_uid(uid), node) for uid in uids):
            yield node


async def catch_up_behind(runtime: Runtime, behind: Behind) -> None:
    """What `behind` names (nodes and their pods, a namespace's pods) made what the API
    server has now (no-op without an API server; a failure is logged: the state as it is
    still answers)."""
    live = runtime.live
    if live is None:
        return
    try:
        if behind.nodes:
            await catch_up_nodes(live, behind.nodes)
        if behind.pods is not None:
            await catch_up_pods_in(live, *behind.pods)
    except Exception:
        log.exception("could not catch %s up with the API server", ", ".join(behind.what))
