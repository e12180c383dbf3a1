"""Filters and scorers over `NodeTable` rows: the vectorised path of `runner`.

Same answers as `run_filters` and `run_scores` (property tests hold them together), for
candidates that are the state's own nodes, given as table rows:

- the leading node-only filters' combined verdict per row comes from a `RowMemo` under the
  same signature `run_filters` memoises by, so it is computed once per node view and pod
  signature and then read as one gather;
- a check that offers `fits_rows(table, rows)` (NodeResourcesFit) decides the rows it can in
  one vectorised pass; the rows it cannot pass get their Status from `explain_rows` (one
  per distinct verdict) where the check offers it, else are asked one by one;
- any other check runs node by node over the survivors, as `run_checks` does;
- a scorer that offers `score_rows(state, pod, table, rows, ctx)` scores in numpy; the others
  get `NodeInfo`s and score as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from extender.engine.abilities import explains_rows, fits_rows, judges_rows
from extender.engine.abilities import of as abilities_of
from extender.engine.framework import (
    NOT_VECTORISED,
    ClusterContext,
    CycleState,
    EngineError,
    PluginError,
    Profile,
    Status,
)
from extender.engine.nodetable import NodeTable, RowMemo
from extender.engine.runner import (
    FilterPass,
    guarded_scores,
    node_fits,
    prepare_filters,
    run_checks,
)
from extender.model.node import signature
from extender.model.nodeinfo import NodeInfo
from extender.model.pod import PodView

log = logging.getLogger(__name__)

#: From how many failing rows a check's `explain_rows` words them (fewer: one by one, cheaper).
EXPLAIN_FROM = 16

@dataclass(slots=True)
class RowVerdicts:
    """Each candidate's verdict: `codes[i]` is 0 when `rows[i]` passes, else the index of its
    Status in `statuses` (the first failing plugin's, as `run_filters` records)."""

    rows: np.ndarray
    codes: np.ndarray
    statuses: list[Status | None]
    #: A PreFilter status that rejected the pod on every node (also every row's status).
    rejection: Status | None = None


def filter_rows(profile: Profile, pod: PodView, rows: np.ndarray, table: NodeTable,
                ctx: ClusterContext | None = None, prepared: FilterPass | None = None) -> RowVerdicts:
    """`run_filters` over table rows."""
    table.sync()
    codes = np.zeros(len(rows), dtype=np.int64)
    try:
        if prepared is None:
            prepared = prepare_filters(profile, pod, ctx)
        if prepared.rejection is not None:
            codes[:] = 1
            return RowVerdicts(rows, codes, [None, prepared.rejection], prepared.rejection)
        entries = prepared.entries
        count = 0
        while count < len(entries) and entries[count].node_only:
            count += 1
        statuses: list[Status | None] = [None]
        if count and pod.placement_key:
            checks = [entry.check for entry in entries[:count]]
            labels = tuple(entry.label for entry in entries[:count])
            key = signature("filters", labels, pod.placement_key)

            def judge(info: NodeInfo, memo: RowMemo) -> int:
                return memo.code(node_fits(checks, info))

            values, memo = table.memoised(key, rows, judge)
            statuses = list(memo.objects)
            codes[:] = values
        else:
            count = 0
        # Equal statuses share a code (a cross-node plugin builds one per node).
        index = {status: code for code, status in enumerate(statuses)}
        for entry in entries[count:]:
            alive = np.flatnonzero(codes == 0)
            if not len(alive):
                break
            _run_check(entry.check, rows, alive, table, codes, statuses, index)
    except EngineError:
        raise
    except Exception as exc:
        raise EngineError(f"filtering failed: {exc}") from exc
    return RowVerdicts(rows, codes, statuses)


def _run_check(check: object, rows: np.ndarray, alive: np.ndarray, table: NodeTable,
               codes: np.ndarray, statuses: list[Status | None],
               index: dict[Status | None, int]) -> None:
    """One check over the surviving positions `alive`, recording failures in `codes`."""
    if judges_rows(check):
        local, verdicts = check.judge_rows(table, rows[alive])
        _record(local, verdicts, alive, codes, statuses, index)
        return
    if fits_rows(check):
        fits = check.fits_rows(table, rows[alive])
        if fits is not None:
            alive = alive[~fits]  # only these need asking, for their Status
            if not len(alive):
                return
            explained = check.explain_rows(table, rows[alive]) \
                if explains_rows(check) and len(alive) >= EXPLAIN_FROM else None
            if explained is not None:
                local, verdicts = explained
                _record(local, verdicts, alive, codes, statuses, index)
                return
    infos = table.infos
    failed: dict[str, Status] = {}
    run_checks([check], [infos[row] for row in rows[alive].tolist()], failed)  # type: ignore[list-item]
    if not failed:
        return
    names = table.names
    for position in alive.tolist():
        status = failed.get(names[rows[position]])
        if status is not None:
            codes[position] = _code(status, statuses, index)


def _record(local: np.ndarray, verdicts: Sequence[Status | None], alive: np.ndarray,
            codes: np.ndarray, statuses: list[Status | None],
            index: dict[Status | None, int]) -> None:
    """A check's verdicts on the positions `alive` (`local[i]` indexes `verdicts`, None:
    passed) written into `codes`."""
    translate = np.zeros(len(verdicts), dtype=np.int64)
    for code, status in enumerate(verdicts):
        if status is not None:
            translate[code] = _code(status, statuses, index)
    codes[alive] = translate[local]


def _code(status: Status, statuses: list[Status | None], index: dict[Status | None, int]) -> int:
    """The code of `status` in this request's list (equal statuses share one)."""
    found = index.get(status)
    if found is None:
        statuses.append(status)
        found = index[status] = len(statuses) - 1
    return found


@dataclass(slots=True)
class RowScores:
    name: str
    weight: int
    scores: np.ndarray


def score_rows(profile: Profile, pod: PodView, rows: np.ndarray, table: NodeTable,
               ctx: ClusterContext, state: CycleState | None = None,
               errors: list[PluginError] | None = None) -> list[RowScores]:
    """`run_scores` over table rows: each enabled scorer's normalised 0..100 scores."""
    table.sync()
    results = []
    state = state if state is not None else CycleState()
    infos: list[NodeInfo] | None = None
    count = len(rows)
    for (plugin, weight), abilities in zip(profile.scorers, abilities_of(profile).scorers, strict=True):
        fast = abilities.scores_rows

        def compute() -> object:
            nonlocal infos
            scores = (NOT_VECTORISED if fast is None  # noqa: B023
                      else fast.score_rows(state, pod, table, rows, ctx))  # noqa: B023
            if scores is NOT_VECTORISED:
                if infos is None:
                    infos = table.infos_of(rows)
                scores = plugin.score(state, pod, infos, ctx)  # noqa: B023
            return None if scores is None else np.asarray(scores, dtype=np.int64)

        array = guarded_scores(plugin, pod, count, errors, compute)  # type: ignore[arg-type]
        if array is not None:
            results.append(RowScores(plugin.name, weight, array))  # type: ignore[arg-type]
    return results


def row_extender_scores(results: Sequence[RowScores], count: int) -> np.ndarray:
    """`runner.extender_scores` on arrays: the weighted mean on the wire's 0..10 scale."""
    weight_sum = sum(r.weight for r in results)
    if weight_sum == 0:
        return np.zeros(count, dtype=np.int64)
    total = np.zeros(count, dtype=np.int64)
    for r in results:
        total += r.scores * r.weight
    return (total + 5 * weight_sum) // (10 * weight_sum)


def row_totals(results: Sequence[RowScores], count: int) -> np.ndarray:
    """`runner.score_totals` on arrays: kube-scheduler's Σ score × weight per node."""
    total = np.zeros(count, dtype=np.int64)
    for r in results:
        total += r.scores * r.weight
    return total
