"""`extender simulate --events FILE`: what happened, one JSON object per line, in virtual time.

Every line is `{"t": <virtual seconds>, "action": "<action>", ...}` (the fields of each action
are listed in extender/simulator/README.md). Keys keep a fixed order and nested maps are sorted,
nothing comes from the wall clock: the same inputs and seed give the same bytes. Without
`--events` the simulation holds no `EventLog` and does no work for it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any, TextIO

from extender.simulator.clock import to_seconds

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

#: The plugin named for a node an extender's filter rejected (its status names no plugin).
EXTENDER = "Extender"


def rejection_counts(statuses: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """({plugin: nodes it rejected}, {reason: nodes}) from a FitError's node -> Status map;
    both sorted by key."""
    plugins: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for status in statuses.values():
        plugins[getattr(status, "plugin", "") or EXTENDER] += 1
        for reason in getattr(status, "reasons", ()):
            reasons[reason] += 1
    return dict(sorted(plugins.items())), dict(sorted(reasons.items()))


class EventLog:
    """Writes event lines to a text stream (the caller opens and closes it)."""

    __slots__ = ("_write", "lines")

    def __init__(self, stream: TextIO) -> None:
        self._write = stream.write
        self.lines = 0

    def emit(self, t: int, action: str, **fields: Any) -> None:
        """One line at virtual time `t` (ns); `fields` in the order given."""
        self._write(_encoder.encode({"t": to_seconds(t), "action": action, **fields}))
        self._write("\n")
        self.lines += 1
