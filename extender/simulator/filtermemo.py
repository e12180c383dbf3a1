"""A pod's filter verdicts from its last failed attempt, for its next one (and its replicas').

In a saturated cluster a pod fails on every node, waits in the pool, and is retried whenever
a pod is deleted anywhere (kube-scheduler's queue moves it then, and the simulation keeps
those attempts: they are part of the outcome). Between two attempts only a few nodes change.
When every check the pod meets is node-local — no PreFilter rejection, no cross-node plugin
state, and every node-local plugin's record declares `reply_reuse=REUSE_ROWS` (its answer depends on
the node's view and pods only, the contract the server's reply reuse relies on) — a node's
verdict depends on the node, the pods nominated to it and the pod's content, so the verdicts
of the nodes that did not change (`changes.NodeChanges`) are the ones found then, and only
the changed nodes are judged again. Every node gets the status a full pass gives it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from extender.engine import registry
from extender.engine.framework import REUSE_ROWS, Status, is_cross_node
from extender.engine.profile import Profile
from extender.engine.runner import FilterPass
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView
from extender.simulator.changes import NodeChanges
from extender.simulator.podmemo import PodMemo
from extender.simulator.reservations import Reservations


def rows_only(profile: Profile) -> bool:
    """Whether every node-local filter plugin of the profile answers from the node's view and
    pods alone (its record's `reply_reuse=REUSE_ROWS`)."""
    return all(registry.reply_reuse(plugin) == REUSE_ROWS
               for plugin in profile.filters if not is_cross_node(plugin))


def node_local(filters: FilterPass, profile: Profile) -> bool:
    """No PreFilter rejection and no cross-node plugin's state, and the node-local plugins
    read one node each (`rows_only`): each check's verdict reads one node."""
    return filters.rejection is None and not filters.has_extensions and rows_only(profile)


def check_labels(filters: FilterPass) -> tuple[str, ...]:
    """Which checks the pass runs, in order (with the pod's content, what they decide)."""
    return tuple(entry.label for entry in filters.entries)


@dataclass(slots=True)
class _Verdicts:
    labels: tuple[str, ...]  # the prepared checks that ran (`_Prepared.label`), in order
    nodes: Sequence[NodeInfo]  # the node list judged (the simulation's, while it is current)
    statuses: Mapping[str, Status]  # every node's first failing status
    plugins: frozenset[str]  # the plugins those statuses name


class FilterMemo:
    """Verdicts on every node from passes where no node fit (`podmemo.PodMemo`: by pod, and
    by shape); and the nodes with their nominated pods added (`reservations`)."""

    __slots__ = ("changes", "reservations", "_memo")

    def __init__(self, changes: NodeChanges) -> None:
        self.changes = changes
        self.reservations = Reservations(changes)
        self._memo: PodMemo[_Verdicts] = PodMemo()

    def recall(self, pod: PodView, nominated: bool, labels: tuple[str, ...],
               nodes: Sequence[NodeInfo],
               ) -> tuple[Mapping[str, Status], frozenset[str], set[str]] | None:
        """The statuses of a failed pass over `nodes` the pod may reuse, the plugins they
        name, and the nodes changed since, whose statuses must be judged again; None when
        there is none to reuse. `nominated`: the pod is nominated to a node."""
        entry = self._memo.get(pod, nominated)
        if entry is None:
            return None
        verdicts = entry.value
        if verdicts.nodes is not nodes or verdicts.labels != labels:
            return None
        changed = self.changes.since(entry.stamp)
        if changed is None or len(changed) >= len(nodes):
            return None
        return verdicts.statuses, verdicts.plugins, changed

    def keep(self, pod: PodView, nominated: bool, labels: tuple[str, ...],
             nodes: Sequence[NodeInfo], statuses: Mapping[str, Status],
             plugins: frozenset[str]) -> None:
        """Remember a pass over `nodes` that no node passed (`statuses` names every node,
        `plugins` every plugin they name; the caller never changes them afterwards)."""
        self._memo.put(pod, nominated, self.changes.stamp,
                       _Verdicts(labels, nodes, statuses, plugins))

    def forget(self, uid: str) -> None:
        self._memo.forget(uid)

    def __len__(self) -> int:
        return len(self._memo)
