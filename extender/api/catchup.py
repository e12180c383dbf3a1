"""A filter or a preempt that depends on pods kube-scheduler has just seen change: their nodes'
pods as the API server has them now (`state.catchup`) before the answer.

* A pod kube-scheduler has nominated (`status.nominatedNodeName`) is waiting for its victims,
  lower-priority pods on that node, to go; kube-scheduler retries it there as soon as its own
  watch shows them gone. When such a pod's filter comes and the node still holds
  lower-priority pods in the extender's view, the node is caught up first. Every other filter
  pays one search of its body for the field.
* kube-scheduler proposes as victims the pods its own cache places on each node. When the
  preempt verb finds it has ignored proposed pods that the extender's view does not place
  there (bound a moment ago), or proposed nodes it does not know, it raises `NodesBehind`
  instead of answering (`catch_up_first`): the route catches those nodes up (at most
  `MAX_NODES`) and asks it again. Reading the victims again ahead of every preempt would cost
  a tenth of its answer; this costs nothing until a victim or node is unknown.
* A filter or prioritize naming nodes the extender does not know (just added) does the same.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterable, Iterator, Mapping, Sequence
from itertools import islice

import msgspec

from extender.api.observe import RequestRecord
from extender.api.runtime import Runtime
from extender.model.pod import PodView
from extender.state.catchup import catch_up_nodes

log = logging.getLogger(__name__)

# kube-scheduler's JSON (Go's encoding/json) has no space after a colon, and leaves the field
# out when empty.
_NOMINATED = b'"nominatedNodeName":"'

#: Nodes one preempt call catches up at most (listed at once): more unknown victims than that
#: mean a watch far behind, which its own relist mends better than node-by-node lists.
MAX_NODES = 16


class _Status(msgspec.Struct):
    nominatedNodeName: str = ""


class _Spec(msgspec.Struct):
    priority: int | None = None


class _Pod(msgspec.Struct):
    spec: _Spec = msgspec.field(default_factory=_Spec)
    status: _Status = msgspec.field(default_factory=_Status)


class _FilterArgs(msgspec.Struct):
    Pod: _Pod | None = None


_filter_args = msgspec.json.Decoder(_FilterArgs)


def catch_up_nominated_node(runtime: Runtime, body: bytes) -> Awaitable[None] | None:
    """What to await before answering the filter `body` (None: nothing): the pod's nominated
    node caught up with the API server when the pod may be waiting for victims there."""
    live = runtime.live
    if live is None or body.find(_NOMINATED) < 0:
        return None
    try:
        pod = _filter_args.decode(body).Pod
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None  # the handler answers what is wrong with the body
    if pod is None:
        return None
    node, priority = pod.status.nominatedNodeName, pod.spec.priority or 0
    info = runtime.state.nodes.get(node)
    if info is None or not any(view.priority < priority for view in info.pods.values()):
        return None
    return _catch_up(runtime, [node])


class NodesBehind(Exception):
    """Raised by a verb's handler instead of answering: these nodes' pods may be behind the
    API server's. The route (`api.verb`) catches them up and calls the handler once more,
    with `RequestRecord.caught_up` set (with `serve --record`, that second call is recorded as
    a second `in` entry of the exchange, after the changes: what a replay answers)."""

    def __init__(self, nodes: Sequence[str]) -> None:
        super().__init__(", ".join(nodes))
        self.nodes = tuple(nodes)


def catch_up_first(runtime: Runtime, record: RequestRecord, nodes: Iterable[str]) -> None:
    """Raise `NodesBehind` for `nodes` (the first `MAX_NODES`), unless there are none, the
    extender has no API server, or this is already the handler's second call."""
    if runtime.live is None or record.caught_up:
        return
    first = list(islice(nodes, MAX_NODES))
    if first:
        raise NodesBehind(first)


def unplaced_victims(runtime: Runtime, ignored: Mapping[str, Sequence[str]]) -> Iterator[str]:
    """The nodes where the preempt verb ignored proposed victims that the state does not place
    there: pods kube-scheduler has seen bound and the watch not yet."""
    state = runtime.state
    for node, uids in ignored.items():
        if node in state.nodes and any(_not_placed(state.pod_by_uid(uid), node) for uid in uids):
            yield node


def _not_placed(view: PodView | None, node: str) -> bool:
    return view is None or view.node_name != node


async def catch_up(runtime: Runtime, nodes: Sequence[str]) -> None:
    """`nodes`' pods made those the API server has now (no-op without an API server)."""
    if runtime.live is not None and nodes:
        await _catch_up(runtime, nodes)


async def _catch_up(runtime: Runtime, nodes: Sequence[str]) -> None:
    assert runtime.live is not None
    try:
        await catch_up_nodes(runtime.live, nodes)
    except Exception:
        # The state as it is still answers; only the catching up is lost.
        log.exception("could not catch the pods of %s up with the API server", ", ".join(nodes))
