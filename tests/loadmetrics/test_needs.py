"""The metrics each load-aware plugin needs (`needs.py`) are what the plugins really read: a
node lacks them exactly when the plugin scores it 0 (`evaluate`, the engine's own scoring), and
the refresher counts those nodes as without data, plugin by plugin."""

from __future__ import annotations

import pytest

from extender.engine.evaluate import evaluate, read_metrics
from extender.model.loadmetrics import AVERAGE, CPU, LATEST, MEMORY, STD
from extender.state.loadmetrics.needs import need_of
from extender.state.loadmetrics.refresher import LoadMetricsRefresher
from tests.loadmetrics.cluster import node, pending_pod, trimaran_policy
from tests.loadmetrics.test_refresher import TRIMARAN, Clock, ScriptedSource, cluster

pytestmark = pytest.mark.anyio

#: node -> its metrics (type, operator, % of capacity); "absent" is not in the snapshot. The
#: loads are low, so a plugin that reads them scores the node above 0 (4 cpu, 8Gi; the pod asks
#: for 1 cpu and 1Gi).
VARIANTS: dict[str, list[tuple[str, str, float]]] = {
    "cpu-avg": [(CPU, AVERAGE, 20)],
    "cpu-latest": [(CPU, LATEST, 20)],
    "cpu-std": [(CPU, STD, 5)],
    "cpu-no-operator": [(CPU, "", 20)],
    "memory": [(MEMORY, AVERAGE, 30), (MEMORY, STD, 5)],
    "memory-latest": [(MEMORY, LATEST, 30)],
    "both": [(CPU, AVERAGE, 20), (CPU, STD, 5), (MEMORY, AVERAGE, 30), (MEMORY, STD, 5)],
    "other-type": [("Bandwidth", AVERAGE, 10)],
    "empty": [],
}
NAMES = (*VARIANTS, "absent")


def metrics_json() -> dict:
    return {"timestamp": 1_700_000_000,
            "window": {"duration": "15m", "start": 1_699_999_100, "end": 1_700_000_000},
            "source": "Test", "data": {"NodeMetricsMap": {
                name: {"metrics": [{"type": kind, "operator": op, "value": value}
                                   for kind, op, value in metrics]}
                for name, metrics in VARIANTS.items()}}}


def scores(plugin: str) -> dict[str, int]:
    ev = evaluate([node(name) for name in NAMES], pending_pod(), trimaran_policy({}, (plugin,)),
                  metrics=metrics_json())
    return ev.scores[plugin]


@pytest.mark.parametrize("plugin", TRIMARAN)
async def test_a_node_lacks_data_exactly_when_the_plugin_scores_it_0(plugin: str) -> None:
    got = scores(plugin)
    snapshot = read_metrics(metrics_json())
    need = need_of(plugin)
    lacking = {name for name in NAMES
               if not need.met(getattr(snapshot.node(name), "metrics", None) or [])}
    assert lacking == {name for name, score in got.items() if score == 0}
    assert lacking >= {"absent", "empty"}
    # And the refresher counts as many nodes without data for that plugin.
    refresher = LoadMetricsRefresher(ScriptedSource(snapshot), cluster(*NAMES), clock=Clock(),
                                     plugins=(plugin,))
    await refresher.refresh()
    assert refresher.status().nodes_without_data == len(lacking)


def test_what_each_plugin_needs() -> None:
    # Spelled out, so that a change to a plugin's reading shows here too.
    lacking = {plugin: sorted(name for name, score in scores(plugin).items() if score == 0)
               for plugin in TRIMARAN}
    assert lacking == {
        "TargetLoadPacking": ["absent", "cpu-no-operator", "cpu-std", "empty", "memory",
                              "memory-latest", "other-type"],
        "LoadVariationRiskBalancing": ["absent", "empty", "other-type"],
        "LowRiskOverCommitment": ["absent", "empty"],
    }
