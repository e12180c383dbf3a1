"""What the preempt verb answers per proposed node, shared by its straightforward path
(`process.py`) and its fast path (`fastpath.py`) so both record and word it alike."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from extender.engine.framework import Status
from extender.engine.preemption.victims import Victims

log = logging.getLogger("extender.engine.preemption.process")

FITS_AS_IS = "the pod fits without evicting any pod"
NODE_NOT_FOUND = "node is not in the cluster state"


class DropReason(StrEnum):
    """Why a proposed node is left out of the reply (the `reason` label of the drop metric)."""

    NODE_NOT_FOUND = "node_not_found"
    PREEMPTOR_NOT_ELIGIBLE = "preemptor_not_eligible"
    UNRESOLVABLE = "unresolvable"
    NOT_ENOUGH_VICTIMS = "not_enough_victims"
    NO_VICTIMS_NEEDED = "no_victims_needed"


#: One node's answer: its victims, or why it is dropped.
Verdict = Victims | tuple[DropReason, str]


@dataclass(slots=True)
class PreemptionOutcome:
    """The reply's nodes with their victims (in proposal order); the dropped nodes with their
    reason (a metric label) and a readable detail; the ignored proposed UIDs per node."""

    victims: dict[str, Victims] = field(default_factory=dict)
    dropped: dict[str, DropReason] = field(default_factory=dict)
    drop_details: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def kept_names(self) -> list[str]:
        """The nodes the answer keeps, in proposal order."""
        return list(self.victims)

    def drop(self, node: str, reason: DropReason, detail: str) -> None:
        self.dropped[node] = reason
        self.drop_details[node] = detail

    def ignore(self, node: str, uids: Sequence[str], preemptor: str) -> None:
        self.ignored[node] = tuple(uids)
        log.debug("preempt %s on %s: ignoring proposed victims %s (not on the node or not "
                  "preemptable)", preemptor, node, list(uids))

    def record(self, node: str, verdict: Verdict) -> None:
        if isinstance(verdict, Victims):
            self.victims[node] = verdict
        else:
            self.drop(node, *verdict)


def describe(status: Status) -> str:
    return f"{status.plugin}: {status.message}" if status.plugin else status.message
