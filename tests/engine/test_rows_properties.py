"""The vectorised path over `NodeTable` rows (`engine.rows`) against the per-node one.

`filter_rows` must give every candidate the status `run_filters` gives it (the same first
failing plugin and message), and each scorer's `score_rows` (and the runner's `score_rows`)
the scores `score`/`run_scores` give: on cold and warm row memos, for any subset and order of
the rows, and after a node's pods or its view change under a memoised value.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.engine.abilities import find_abilities
from extender.engine.framework import NOT_VECTORISED, CycleState, Profile
from extender.engine.nodetable import NodeTable
from extender.engine.rows import filter_rows, row_extender_scores, row_totals, score_rows
from extender.engine.runner import extender_scores, run_filters, run_scores, score_totals
from extender.model.nodeinfo import NodeInfo
from tests.engine.filter_helpers import DEFAULT_ORDER, bound, container, node, profile
from tests.engine.test_filter_properties import build_nodes, build_pod, workloads
from tests.engine.test_scores_properties import clusters, plugins

_settings = settings(max_examples=150, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def table_of(infos: list[NodeInfo]) -> NodeTable:
    table = NodeTable(capacity=2)  # small, so that growing is exercised too
    for info in infos:
        table.put(info)
    return table


def verdicts_by_name(result, table: NodeTable) -> tuple[list[str], dict[str, object]]:
    names = [table.names[row] for row in result.rows.tolist()]
    passed = [name for name, code in zip(names, result.codes.tolist(), strict=True) if code == 0]
    statuses = {name: result.statuses[code]
                for name, code in zip(names, result.codes.tolist(), strict=True) if code}
    return passed, statuses


def assert_rows_like_run_filters(prof, incoming, infos, table, order) -> None:
    chosen = [infos[i] for i in order]
    expected = run_filters(prof, incoming, chosen)
    rows = table.rows([info.node.name for info in chosen])
    assert rows is not None
    for _ in range(2):  # cold, then warm row memos
        passed, statuses = verdicts_by_name(filter_rows(prof, incoming, rows, table), table)
        assert passed == [info.node.name for info in expected.passed]
        assert statuses == expected.statuses


@pytest.mark.slow
@_settings
@given(workload=workloads(), order_seed=st.randoms(use_true_random=False),
       prof_order=st.permutations(list(DEFAULT_ORDER)))
def test_filter_rows_equals_run_filters(workload, order_seed, prof_order):
    pod_specs, node_specs = workload
    infos = build_nodes(node_specs)
    table = table_of(infos)
    for prof in (profile(DEFAULT_ORDER), profile(prof_order)):
        for i, spec in enumerate(pod_specs):
            order = list(range(len(infos)))
            order_seed.shuffle(order)
            order = order[: order_seed.randint(0, len(order))] if order else order
            assert_rows_like_run_filters(prof, build_pod(spec, i), infos, table, order)


@pytest.mark.slow
@_settings
@given(workload=workloads(), data=st.data())
def test_filter_rows_follows_pod_and_node_changes(workload, data):
    """A pod added to a node (`touch`) and a node's new view (`put`) reach the next answer:
    memoised verdicts are dropped for the changed view, fit reads the new totals."""
    pod_specs, node_specs = workload
    infos = build_nodes(node_specs)
    if not infos:
        return
    table = table_of(infos)
    prof = profile(DEFAULT_ORDER)
    everyone = list(range(len(infos)))
    incoming = build_pod(pod_specs[0], 0)
    assert_rows_like_run_filters(prof, incoming, infos, table, everyone)
    target = data.draw(st.integers(0, len(infos) - 1))
    info = infos[target]
    info.add_pod(bound(info.node.name, "newcomer", containers=[container(
        {"cpu": "2", "memory": "2Gi"})]))
    table.touch(info)
    assert_rows_like_run_filters(prof, incoming, infos, table, everyone)
    # A new view of another node (here: the spec of a different generated node).
    spec = node_specs[data.draw(st.integers(0, len(infos) - 1))]
    replacement = node(info.node.name, pods=list(info.pods.values()), labels=spec["labels"],
                       taints=spec["taints"], unschedulable=spec["unschedulable"],
                       allocatable=spec["allocatable"])
    infos[target] = replacement
    table.put(replacement)
    assert_rows_like_run_filters(prof, incoming, infos, table, everyone)
    table.drop(info.node.name)
    assert table.rows([info.node.name]) is None


@pytest.mark.slow
@_settings
@given(plugin=plugins(), cluster=clusters(), order_seed=st.randoms(use_true_random=False))
def test_score_rows_equals_score(plugin, cluster, order_seed):
    pod, infos, ctx = cluster
    fast = find_abilities(plugin).scores_rows
    if fast is None:
        return
    table = table_of(infos)
    order = list(range(len(infos)))
    order_seed.shuffle(order)
    chosen = [infos[i] for i in order]
    rows = table.rows([info.node.name for info in chosen])
    for _ in range(2):
        got = fast.score_rows(CycleState(), pod, table, rows, ctx)
        expected = plugin.score(CycleState(), pod, chosen, ctx)
        if got is NOT_VECTORISED:
            continue
        if expected is None:
            assert got is None
        else:
            assert got is not None and got.tolist() == expected


@pytest.mark.slow
@_settings
@given(scorers=st.lists(st.tuples(plugins(), st.integers(1, 5)), max_size=4),
       cluster=clusters())
def test_runner_score_rows_equals_run_scores(scorers, cluster):
    pod, infos, ctx = cluster
    prof = Profile((), tuple(scorers), None, None)
    table = table_of(infos)
    rows = table.rows([info.node.name for info in infos])
    expected = run_scores(prof, pod, infos, ctx)
    got = score_rows(prof, pod, rows, table, ctx)
    assert [(r.name, r.weight, r.scores.tolist()) for r in got] == [
        (r.name, r.weight, r.scores) for r in expected]
    assert row_extender_scores(got, len(infos)).tolist() == extender_scores(expected, len(infos))
    assert row_totals(got, len(infos)).tolist() == score_totals(expected, len(infos))


def test_rows_resolve_names_in_order_and_refuse_unknown_ones():
    infos = build_nodes([{"labels": {}, "taints": [], "unschedulable": False,
                          "allocatable": {"cpu": "1", "memory": "1Gi", "pods": "3"}, "pods": []}
                         for _ in range(3)])
    table = table_of(infos)
    assert table.rows(["n2", "n0"]).tolist() == [table.ordinal["n2"], table.ordinal["n0"]]
    assert table.rows(["n1"]).tolist() == [table.ordinal["n1"]]
    assert table.rows([]).tolist() == []
    assert table.rows(["n1", "nope"]) is None
    table.drop("n1")
    reused = build_nodes([{"labels": {}, "taints": [], "unschedulable": False,
                           "allocatable": {"cpu": "8", "memory": "1Gi", "pods": "3"},
                           "pods": []}])[0]
    table.put(reused)  # n0 again: a known name keeps its row
    assert np.array_equal(table.rows(["n0"]), [0])
