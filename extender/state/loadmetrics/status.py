"""What the load-metrics refresher knows, for `/metrics` and the `load-metrics` readiness line:
`RefresherStatus`, and the line's clauses on the nodes each plugin scores 0 for lack of data."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Shortfall:
    """The nodes one plugin scores 0 for lack of the metrics it needs."""

    plugin: str                    # "" when the refresher serves no named plugin
    need: str                      # what it needs ("CPU average")
    nodes: int                     # nodes of the state it scores 0 for lack of data
    partial: int                   # ... of which have other fresh metrics


@dataclass(frozen=True)
class RefresherStatus:
    """What the refresher knows now (for `/metrics` and readiness)."""

    kind: str
    description: str
    nodes: int                     # nodes of the cluster state
    nodes_with_data: int           # ... with the fresh metrics every enabled plugin needs
    age_seconds: float             # since the newest data of the newest successful fetch
    consecutive_failures: int
    failing_seconds: float         # since the first of those failures (0 when none)
    last_error: str
    fetched: bool                  # a fetch has succeeded at least once
    last_fetch_nodes: int          # nodes in the last successful fetch
    last_fetch_known: int = 0      # ... that are nodes of the cluster state
    shortfalls: tuple[Shortfall, ...] = ()
    notes: tuple[str, ...] = ()    # what the source said of its last successful fetch

    @property
    def nodes_without_data(self) -> int:
        return self.nodes - self.nodes_with_data


def shortfall_lines(status: RefresherStatus) -> Iterable[str]:
    """`N of M node(s) without fresh metrics (scored 0 by P)` per group of plugins scoring the
    same number of nodes 0 for the same reason."""
    groups: dict[tuple[int, int, str], list[str]] = {}
    for short in status.shortfalls:
        if short.nodes:
            key = (short.nodes, short.partial, short.need if short.partial else "")
            groups.setdefault(key, []).append(short.plugin)
    for (count, partial, need), plugins in groups.items():
        named = [plugin for plugin in plugins if plugin]
        who = " by " + ", ".join(named) if named else ""
        if partial:
            yield (f"{count} of {status.nodes} node(s) without a fresh {need} (scored 0{who}; "
                   f"{partial} of them have other metrics)")
        else:
            yield f"{count} of {status.nodes} node(s) without fresh metrics (scored 0{who})"


def count_in(names: Collection[str], members: Collection[str]) -> int:
    """How many of `names` are in `members` (walking the smaller)."""
    if len(members) < len(names):
        return sum(1 for name in members if name in names)
    return sum(1 for name in names if name in members)
