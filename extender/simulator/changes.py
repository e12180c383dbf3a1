"""Which nodes changed since a given moment: what lets a retry skip work that cannot differ.

A pod's filter verdict on a node, and its preemption dry run there, depend on the node (its
view, its pods, the pods nominated to it) and on the pod; for the node-local plugins, on
nothing else. The simulation touches a node here whenever any of those change, and everything
when something beyond one node changes (a node added or removed, a PodDisruptionBudget,
PriorityClass, PodGroup or other object, replayed node metrics). A memo stamped at one moment
then knows exactly which of its nodes it must judge again.
"""

from __future__ import annotations

from typing import Any


class NodeChanges:
    """A change log: a stamp that grows with every change, and the nodes each change touched.

    Memos keyed by node name may also be `watch`ed: a change drops the changed node's entry
    (everything: every entry), so an entry found there is current."""

    __slots__ = ("_log", "_last", "_everything", "_watched")

    def __init__(self) -> None:
        self._log: list[str] = []  # the node touched by each change; the stamp is its length
        self._last: dict[str, int] = {}  # node -> stamp of its last change
        self._everything = 0  # stamp of the last change that touched every node
        self._watched: list[dict[str, Any]] = []

    def watch(self, memo: dict[str, Any]) -> None:
        """Drop `memo[name]` whenever node `name` changes, and everything when all do."""
        self._watched.append(memo)

    @property
    def stamp(self) -> int:
        """Now, as a stamp: a memo taken now is current until the next change."""
        return len(self._log)

    def node(self, name: str) -> None:
        """Something a node-local verdict reads changed on `name`."""
        if name:
            self._log.append(name)
            self._last[name] = len(self._log)
            for memo in self._watched:
                memo.pop(name, None)

    def everything(self) -> None:
        """Something every node's verdicts may read changed."""
        self._log.append("")
        self._everything = len(self._log)
        for memo in self._watched:
            memo.clear()

    def last_change(self, name: str) -> int:
        """The stamp of the last change that touched `name` (itself or everything)."""
        return max(self._last.get(name, 0), self._everything)

    def since(self, stamp: int) -> set[str] | None:
        """The nodes touched after `stamp`; None when everything was."""
        if self._everything > stamp:
            return None
        count = len(self._log) - stamp
        if count <= len(self._last):
            return set(self._log[stamp:])
        # A memo older than the whole node set's worth of changes: one pass over the nodes.
        return {name for name, last in self._last.items() if last > stamp}
