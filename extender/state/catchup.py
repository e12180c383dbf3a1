"""Catching the pod watch up on a few nodes: what the API server has changed there and the
watch has not yet delivered.

kube-scheduler and the extender watch the API server each on their own, and the extender's
watch may run a moment behind (docs/operations.md). Two of kube-scheduler's calls depend on
pods it has just seen change:

* a preemptor's retry on its nominated node once its own watch shows the victims gone: the
  extender, still counting them, would reject the node, and kube-scheduler park the pod until
  some other event (five minutes in a quiet cluster);
* a preempt call proposing victims bound a moment ago: the extender, not knowing them, would
  find the pod fitting without them and drop the node.

`catch_up_nodes` asks the API server which pods the nodes hold now (one consistent LIST each,
at once) and applies the difference through the pod informer's own sink, exactly as the
watch's events will (which then change nothing): pods gone are deleted, pods missing added.
With `serve --record` they are recorded as the watch's changes are. When the watch has by
then delivered everything the list shows (its resourceVersion not older than the list's),
nothing is applied: the state is already as new, and a pod the watch has deleted since the
list is not brought back. Else the informer skips the watch's events of the pods applied up
to the list's version (`Informer.caught_up`): older than what the state holds, they would
put a bound pod back to pending, or a deleted one back, for a moment.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from extender.kube.client import KubeError
from extender.model import k8s
from extender.model.pod import PodView
from extender.state.informer import PODS, Informer, LiveState, apply_change, is_newer

log = logging.getLogger(__name__)

#: Seconds the API server's answers are waited for before the state is read as it is (well
#: within the 5 s httpTimeout kube-scheduler gives a filter by default).
LIST_TIMEOUT = 2.0


@dataclass(frozen=True, slots=True)
class CaughtUp:
    """How many pods were deleted from the state and added to it."""

    deleted: int = 0
    added: int = 0


async def catch_up_nodes(live: LiveState, nodes: Sequence[str], *,
                         timeout: float = LIST_TIMEOUT) -> CaughtUp:
    """Make `live`'s pods on `nodes` those the API server has there now. Pods the state
    assumes bound stay: their binding may be newer than the list. The API failing or slow
    leaves the state as it is."""
    informer = live.informers.get(PODS.name)
    known = [node for node in dict.fromkeys(nodes) if node in live.state.nodes]
    if informer is None or not known:
        return CaughtUp()
    try:
        async with asyncio.timeout(timeout):
            pages = await asyncio.gather(*(_pods_on(live, node) for node in known))
    except (KubeError, TimeoutError) as exc:
        log.info("could not list the pods of %s to catch the watch up: %s", ", ".join(known), exc)
        return CaughtUp()
    # Read after the await: the watch may have delivered some of the changes meanwhile.
    deleted = added = 0
    for node, (version, pods) in zip(known, pages, strict=True):
        if informer.resource_version and not is_newer(version, informer.resource_version):
            continue
        d, a = _apply(live, informer, node, version, pods)
        deleted, added = deleted + d, added + a
    live.counters.gone_before_watch += deleted
    live.counters.seen_before_watch += added
    return CaughtUp(deleted, added)


async def _pods_on(live: LiveState, node: str) -> tuple[str, list[k8s.Pod]]:
    """The list's resourceVersion and the pods it holds on `node`."""
    selector = f"spec.nodeName={node},{PODS.field_selector}"
    pods: list[k8s.Pod] = []
    version = token = ""
    while True:
        page = await live.client.list(PODS.path, k8s.Pod, continue_token=token,
                                      field_selector=selector)
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
    for view in gone:
        meta = k8s.ObjectMeta(namespace=view.namespace, name=view.name, uid=view.uid)
        informer.gate.call(apply_change, informer.sink, "delete", k8s.Pod(metadata=meta))
        informer.caught_up(view.uid, version)
        log.info("pod %s/%s is gone from the API server before its watch event: deleted",
                 view.namespace, view.name)
    new = [pod for pod in pods if _unplaced(state.pod_by_uid(pod.metadata.uid), node)]
    for pod in new:
        informer.gate.call(apply_change, informer.sink, "apply", pod)
        informer.caught_up(pod.metadata.uid, version)
        log.info("pod %s/%s is on node %s at the API server before its watch event: added",
                 pod.metadata.namespace, pod.metadata.name, node)
    return len(gone), len(new)


def _unplaced(view: PodView | None, node: str) -> bool:
    # Unknown, or known still pending: bound since, the binding not yet watched.
    return view is None or view.node_name != node
