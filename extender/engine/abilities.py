"""Optional abilities of plugins and of their prepared checks, as small Protocols.

A profile's plugins' abilities are found once, when `build_profile` builds it (or on the
first use of a profile made elsewhere: `of(profile)`, a `PluginAbilities` record per plugin
kept on the profile), so the hot paths ask the record instead of looking attributes up per
request. A prepared check (what `prepare`/`pre_filter`
return, made per pod) is asked through `judges_rows`, `fits_rows`, `explains_rows` and
`filters_many`: an `issubclass` against the Protocol, once per check type (an `isinstance`
against a runtime-checkable Protocol costs microseconds; the checks' abilities are methods of
their classes).

This module imports nothing of the engine at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import TypeIs

    from extender.engine.framework import (
        ClusterContext,
        CycleState,
        FilterState,
        NodeCheck,
        Profile,
        Status,
    )
    from extender.engine.nodetable import NodeTable
    from extender.model.nodeinfo import NodeInfo
    from extender.model.pod import PodView


# ---- plugin abilities (found at profile build) -----------------------------------------------

@runtime_checkable
class Restricts(Protocol):
    """A filter whose PreFilter restricts the pod to node names (a PreFilterResult), judged first."""

    def restrict(self, pod: PodView) -> NodeCheck | Status | None: ...


@runtime_checkable
class MemoLabelled(Protocol):
    """A filter whose memoised verdicts are keyed by `memo_label` (its name and what configures it)."""

    memo_label: str


@runtime_checkable
class ScoresRows(Protocol):
    """A scorer that scores `NodeTable` rows in numpy (or answers `NOT_VECTORISED`)."""

    def score_rows(self, state: CycleState, pod: PodView, table: NodeTable, rows: np.ndarray,
                   ctx: ClusterContext) -> Any: ...


@runtime_checkable
class GuardsVictims(Protocol):
    """A PostFilter with steps of its own inside `SelectVictimsOnNode` (`victim_guard`; None: none)."""

    victim_guard: Any  # a `preemption.victims.VictimGuard` (that module imports the runner, which imports this one)


@runtime_checkable
class VictimRule(Protocol):
    """A PostFilter declaring whether its victim rule is DefaultPreemption's "lower priority"."""

    default_victim_rule: bool


@runtime_checkable
class RestoresRejectedState(Protocol):
    """A PostFilter giving back the cycle state its own PreFilter wrote before rejecting the pod."""

    name: str

    def rejected_pre_filter_state(self, pod: PodView, ctx: ClusterContext) -> FilterState | None: ...


@dataclass(frozen=True, slots=True)
class PluginAbilities:
    """One plugin's optional abilities, found once when its profile is built (`find_abilities`):
    an ability that is a method is the plugin itself seen through its Protocol (None: the
    plugin lacks it), so the method is still looked up on the plugin when called."""

    restricts: Restricts | None = None
    #: What the plugin's memoised verdicts are keyed by: its `memo_label`, else its name.
    memo_label: str = ""
    scores_rows: ScoresRows | None = None
    victim_guard: Any = None  # a `preemption.victims.VictimGuard`, or None
    #: Whether the plugin's victim rule is "lower priority" (what preemption's plans assume).
    default_victim_rule: bool = False


def find_abilities(plugin: Any) -> PluginAbilities:
    """`plugin`'s optional abilities (the Protocols above).

    Asked as `isinstance` against each Protocol would ask (a method there and not None, a
    field there), without its cost: five such checks took 85 % of `build_profile`, which
    `evaluate` runs for every case it is given."""
    return PluginAbilities(
        restricts=plugin if getattr(plugin, "restrict", None) is not None else None,
        memo_label=plugin.memo_label if hasattr(plugin, "memo_label") else plugin.name,
        scores_rows=plugin if getattr(plugin, "score_rows", None) is not None else None,
        victim_guard=getattr(plugin, "victim_guard", None),
        default_victim_rule=bool(getattr(plugin, "default_victim_rule", False)),
    )


@dataclass(frozen=True, slots=True)
class ProfileAbilities:
    """A profile's plugins' abilities: in the order of its filters, of its scorers, and its
    PostFilter's (None: it has none)."""

    filters: tuple[PluginAbilities, ...]
    scorers: tuple[PluginAbilities, ...]
    post_filter: PluginAbilities | None


def of(profile: Profile) -> ProfileAbilities:
    """`profile`'s plugins' abilities, found on first use and kept on the profile (a profile
    is frozen; `dataclasses.replace` makes a new one, which finds its own)."""
    found: ProfileAbilities | None = profile.__dict__.get("_abilities")
    if found is None:
        found = ProfileAbilities(
            tuple(map(find_abilities, profile.filters)),
            tuple(find_abilities(plugin) for plugin, _ in profile.scorers),
            None if profile.post_filter is None else find_abilities(profile.post_filter))
        object.__setattr__(profile, "_abilities", found)
    return found


# ---- check abilities (per check type) ----------------------------------------------------------

@runtime_checkable
class JudgesRows(Protocol):
    """A check giving every `NodeTable` row's verdict in one pass (an index into its verdicts)."""

    def judge_rows(self, table: NodeTable,
                   rows: np.ndarray) -> tuple[np.ndarray, list[Status | None]]: ...


@runtime_checkable
class FitsRows(Protocol):
    """A check telling in one vectorised pass which rows surely pass (None: it cannot)."""

    def fits_rows(self, table: NodeTable, rows: np.ndarray) -> np.ndarray | None: ...


@runtime_checkable
class ExplainsRows(Protocol):
    """A `FitsRows` check wording its failing rows' verdicts in one pass (`judge_rows`' shape)."""

    def explain_rows(self, table: NodeTable,
                     rows: np.ndarray) -> tuple[np.ndarray, list[Status | None]] | None: ...


@runtime_checkable
class FiltersMany(Protocol):
    """A check judging many nodes in one tight loop, recording the failures in `statuses`."""

    def filter_many(self, nodes: Sequence[NodeInfo],
                    statuses: dict[str, Status]) -> list[NodeInfo]: ...


_JUDGES, _FITS, _EXPLAINS, _MANY = 1, 2, 4, 8
_KINDS: dict[type, int] = {}


def _learn(cls: type) -> int:
    """The abilities of the check type `cls`, as bits (found on its first check)."""
    found = _KINDS[cls] = ((_JUDGES if issubclass(cls, JudgesRows) else 0)
                           | (_FITS if issubclass(cls, FitsRows) else 0)
                           | (_EXPLAINS if issubclass(cls, ExplainsRows) else 0)
                           | (_MANY if issubclass(cls, FiltersMany) else 0))
    return found


# One dict lookup each (they run per check and request).

def judges_rows(check: object) -> TypeIs[JudgesRows]:
    kind = _KINDS.get(check.__class__)
    return ((_learn(check.__class__) if kind is None else kind) & _JUDGES) != 0


def fits_rows(check: object) -> TypeIs[FitsRows]:
    kind = _KINDS.get(check.__class__)
    return ((_learn(check.__class__) if kind is None else kind) & _FITS) != 0


def explains_rows(check: object) -> TypeIs[ExplainsRows]:
    kind = _KINDS.get(check.__class__)
    return ((_learn(check.__class__) if kind is None else kind) & _EXPLAINS) != 0


def filters_many(check: object) -> TypeIs[FiltersMany]:
    kind = _KINDS.get(check.__class__)
    return ((_learn(check.__class__) if kind is None else kind) & _MANY) != 0


__all__ = [
    "ExplainsRows", "FiltersMany", "FitsRows", "GuardsVictims", "JudgesRows", "MemoLabelled",
    "PluginAbilities", "ProfileAbilities", "Restricts", "RestoresRejectedState", "ScoresRows", "VictimRule",
    "explains_rows", "filters_many", "find_abilities", "fits_rows", "judges_rows", "of",
]
