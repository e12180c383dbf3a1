"""Trimaran's scorers beyond upstream's tables: bounds and edge cases as properties (no
metrics, zero capacity, huge values), and TargetLoadPacking's load of pods assigned since the
metrics window closed, as `ClusterState` records them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.engine import evaluate, registry
from extender.engine.args import (
    LoadVariationRiskBalancingArgs,
    LowRiskOverCommitmentArgs,
    TargetLoadPackingArgs,
)
from extender.engine.cluster import ClusterState
from extender.engine.evaluate import EvaluationError, read_metrics
from extender.engine.framework import CycleState
from extender.engine.plugins.trimaran import (
    LoadVariationRiskBalancing,
    LowRiskOverCommitment,
    TargetLoadPacking,
)
from extender.engine.plugins.trimaran import store as assignment_store
from extender.engine.plugins.trimaran.common import go_round
from extender.engine.plugins.trimaran.store import TrimaranStore
from extender.model import k8s
from extender.model.pod import PodView
from extender.model.quantity import milli_value, value

PLUGINS = ("TargetLoadPacking", "LoadVariationRiskBalancing", "LowRiskOverCommitment")
END = 1_700_000_000  # the metrics window's end, Unix seconds


def node_obj(name: str, cpu: str = "1000m", memory: str = "1Gi") -> dict[str, Any]:
    res = {"cpu": cpu, "memory": memory}
    return {"kind": "Node", "metadata": {"name": name},
            "status": {"capacity": res, "allocatable": res}}


def pod_obj(name: str, node: str = "", requests: dict[str, str] | None = None,
            limits: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": resources}]}
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def cpu_metrics(nodes: dict[str, float], end: int = END) -> dict[str, Any]:
    return {"window": {"duration": "15m", "start": end - 900, "end": end},
            "data": {"NodeMetricsMap": {n: {"metrics": [
                {"type": "CPU", "operator": "AVG", "value": v}]} for n, v in nodes.items()}}}


def policy(plugin: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
            "plugins": {"filter": {"enabled": []}, "score": {"enabled": [{"name": plugin}]}},
            "pluginConfig": [{"name": plugin, "args": args or {}}]}


# ---- properties -----------------------------------------------------------------------------------
quantities = st.one_of(st.integers(0, 10**6).map(lambda m: f"{m}m"),
                       st.sampled_from(["0", "1", "64", "1e15", "100Ei"]))
memories = st.one_of(st.integers(0, 2**40).map(str), st.sampled_from(["0", "1Ki", "1e18"]))
values = st.one_of(st.floats(0, 100), st.floats(0, 1e300), st.sampled_from([0.0, 100.0, 1e308]))
OPERATORS = ["AVG", "STD", "Latest", "", "Other"]


@st.composite
def metric_lists(draw: st.DrawFn) -> list[dict[str, Any]]:
    return draw(st.lists(st.fixed_dictionaries({
        "type": st.sampled_from(["CPU", "Memory", "Bandwidth"]),
        "operator": st.sampled_from(OPERATORS), "value": values}), max_size=5))


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    count = draw(st.integers(1, 4))
    objects = [node_obj(f"n{i}", draw(quantities), draw(memories)) for i in range(count)]
    for i in range(count):
        for j in range(draw(st.integers(0, 2))):
            objects.append(pod_obj(f"n{i}-p{j}", f"n{i}",
                                   draw(st.none() | st.fixed_dictionaries({"cpu": quantities})),
                                   draw(st.none() | st.fixed_dictionaries({"memory": memories}))))
    pod = pod_obj("incoming", "", draw(st.none() | st.fixed_dictionaries(
        {"cpu": quantities, "memory": memories})), draw(st.none() | st.fixed_dictionaries(
            {"cpu": quantities})))
    present = [f"n{i}" for i in range(count) if draw(st.booleans())]
    metrics = {"window": {"end": END},
               "data": {"NodeMetricsMap": {n: {"metrics": draw(metric_lists())} for n in present}}}
    return objects, pod, metrics


@settings(max_examples=150, deadline=None)
@given(clusters(), st.sampled_from(PLUGINS))
def test_scores_are_ints_in_0_100_for_non_negative_metrics(cluster, plugin) -> None:
    objects, pod, metrics = cluster
    ev = evaluate(objects, pod, policy(plugin), metrics=metrics)
    scores = ev.scores[plugin]
    assert set(scores) == {o["metadata"]["name"] for o in objects if o["kind"] == "Node"}
    assert all(type(s) is int and 0 <= s <= 100 for s in scores.values()), scores


@settings(max_examples=60, deadline=None)
@given(clusters(), st.sampled_from(PLUGINS))
def test_a_node_without_metrics_scores_zero(cluster, plugin) -> None:
    objects, pod, metrics = cluster
    present = metrics["data"]["NodeMetricsMap"]
    ev = evaluate(objects, pod, policy(plugin), metrics=metrics)
    for name, score in ev.scores[plugin].items():
        if name not in present or not present[name]["metrics"]:
            assert score == 0
    # no metrics at all: every node 0, as upstream before its first fetch
    bare = evaluate(objects, pod, policy(plugin))
    assert set(bare.scores[plugin].values()) == {0}


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_score_is_raw_scores_and_independent_of_node_order(cluster) -> None:
    objects, pod, metrics = cluster
    state = ClusterState()
    for obj in objects:
        state.apply(obj["kind"], k8s.convert(obj, registry.KINDS[obj["kind"]]))
    state.store(TrimaranStore).set_metrics(read_metrics(metrics))
    view = PodView.from_k8s(k8s.convert(pod, k8s.Pod))
    infos = list(state.nodes.values())
    for plugin in (TargetLoadPacking(TargetLoadPackingArgs()),
                   LoadVariationRiskBalancing(LoadVariationRiskBalancingArgs()),
                   LowRiskOverCommitment(LowRiskOverCommitmentArgs())):
        scores = plugin.score(CycleState(), view, infos, state)
        raw = plugin.raw_scores(CycleState(), view, infos, state)
        assert plugin.normalize(list(raw), CycleState()) == scores
        assert plugin.score(CycleState(), view, infos[::-1], state) == scores[::-1]


def test_zero_capacity() -> None:
    """Upstream's arithmetic on a node reporting no cpu: TargetLoadPacking predicts 0 % and so
    scores the target; LoadVariationRiskBalancing scores the resource 0; LowRiskOverCommitment
    finds no load risk (mu 0)."""
    objects = [node_obj("n", "0", "0")]
    metrics = {"data": {"NodeMetricsMap": {"n": {"metrics": [
        {"type": "CPU", "operator": "AVG", "value": 50},
        {"type": "Memory", "operator": "AVG", "value": 50}]}}}}
    pod = pod_obj("p", requests={"cpu": "100m", "memory": "1Mi"})
    scores = {plugin: evaluate(objects, pod, policy(plugin), metrics=metrics).scores[plugin]["n"]
              for plugin in PLUGINS}
    # LROC: limits (raised to requests) exceed the zero capacity fully -> limit risk 1,
    # weighted 0.5; load risk 0 -> risk 0.5 -> 50.
    assert scores == {"TargetLoadPacking": 40, "LoadVariationRiskBalancing": 0,
                      "LowRiskOverCommitment": 50}


def test_huge_values_do_not_break_scoring() -> None:
    objects = [node_obj("n", "100Ei", "100Ei")]
    metrics = {"data": {"NodeMetricsMap": {"n": {"metrics": [
        {"type": "CPU", "operator": "AVG", "value": 1e308},
        {"type": "CPU", "operator": "STD", "value": 1e308},
        {"type": "Memory", "operator": "Latest", "value": 1e308}]}}}}
    pod = pod_obj("p", requests={"cpu": "1e15", "memory": "1e18"}, limits={"cpu": "1e16"})
    for plugin in PLUGINS:
        score = evaluate(objects, pod, policy(plugin), metrics=metrics).scores[plugin]["n"]
        assert 0 <= score <= 100


def test_metrics_shapes_evaluate_reads() -> None:
    """A dict, its JSON text or bytes, Go's `null` for a nil map or slice; a bad shape is an
    EvaluationError naming the metrics and the place."""
    objects = [node_obj("n")]
    pod = pod_obj("p", limits={"cpu": "0"})
    doc = cpu_metrics({"n": 50})
    for form in (doc, json.dumps(doc), json.dumps(doc).encode()):
        assert evaluate(objects, pod, policy("TargetLoadPacking"),
                        metrics=form).scores["TargetLoadPacking"] == {"n": 33}
    nil = {"data": {"NodeMetricsMap": None}, "window": None}
    assert evaluate(objects, pod, policy("TargetLoadPacking"),
                    metrics=nil).scores["TargetLoadPacking"] == {"n": 0}
    with pytest.raises(EvaluationError, match=r"metrics: .*\$\.data\.NodeMetricsMap\[\.\.\.\]\.metrics"):
        evaluate(objects, pod, policy("TargetLoadPacking"),
                 metrics={"data": {"NodeMetricsMap": {"n": {"metrics": "x"}}}})
    with pytest.raises(EvaluationError, match="metrics: "):
        evaluate(objects, pod, policy("TargetLoadPacking"), metrics=b"{not json")
    with pytest.raises(EvaluationError, match="metrics: expected"):
        evaluate(objects, pod, policy("TargetLoadPacking"), metrics=42)  # type: ignore[arg-type]


@pytest.mark.parametrize(("limits", "requests", "multiplier", "expected"), [
    ({"cpu": "300m"}, {"cpu": "100m"}, "1.5", 300),   # the limit wins
    (None, {"cpu": "100m"}, "1.5", 150),              # request x multiplier
    (None, {"cpu": "333m"}, "1.5", 500),              # Go rounding: 499.5 -> 500
    (None, {"memory": "1Gi"}, "1.5", 1000),           # neither: defaultRequests.cpu
    ({"cpu": "0"}, {"cpu": "500m"}, "1.5", 0),        # a zero limit is a limit
])
def test_targetloadpacking_predicts_a_pod(limits, requests, multiplier, expected) -> None:
    plugin = TargetLoadPacking(TargetLoadPackingArgs(defaultRequestsMultiplier=multiplier))
    view = PodView.from_k8s(k8s.convert(pod_obj("p", requests=requests, limits=limits), k8s.Pod))
    assert plugin.predict(view.load) == expected


# ---- the missing load: pods assigned since the metrics window closed -------------------------------
class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def live_state(now: float) -> tuple[ClusterState, Clock]:
    clock = Clock(now)
    state = ClusterState(wall_clock=clock)
    state.apply_node(k8s.convert(node_obj("n1"), k8s.Node))
    state.apply_node(k8s.convert(node_obj("n2"), k8s.Node))
    state.store(TrimaranStore).set_metrics(read_metrics(cpu_metrics({"n1": 0, "n2": 0})))
    return state, clock


def tlp_scores(state: ClusterState, pod: dict[str, Any] | None = None) -> list[int]:
    view = PodView.from_k8s(k8s.convert(pod or pod_obj("incoming"), k8s.Pod))
    plugin = TargetLoadPacking(TargetLoadPackingArgs(defaultRequests={}))
    return plugin.score(CycleState(), view, [state.nodes["n1"], state.nodes["n2"]], state)


def bind(state: ClusterState, name: str, node: str, limits: dict[str, str]) -> None:
    """The bind verb: the extender assumes the pod it has bound."""
    view = PodView.from_k8s(k8s.convert(pod_obj(name, limits=limits), k8s.Pod))
    state.assume(view, node, ttl=30.0)


@pytest.mark.parametrize(("bound_at", "counted"), [
    (END + 5, True),      # after the window closed
    (END - 30, True),     # less than 60 s before it closed: maybe not reported yet
    (END - 60, False),    # 60 s before: in the metrics
    (END - 200, False),
])
def test_a_pod_bound_since_the_window_closed_adds_its_load(bound_at, counted) -> None:
    state, clock = live_state(bound_at)
    bind(state, "a", "n1", {"cpu": "200m"})
    clock.now = END + 10
    # n1: 0 % + 200m missing of 1000m = 20 % -> (100-40)*20/40 + 40 = 70; n2 stays at 40
    assert tlp_scores(state) == ([70, 40] if counted else [40, 40])


def test_the_informer_records_pods_it_saw_pending_then_bound() -> None:
    state, clock = live_state(END + 1)
    state.apply_pod(k8s.convert(pod_obj("a", limits={"cpu": "200m"}), k8s.Pod))
    state.apply_pod(k8s.convert(pod_obj("a", "n2", limits={"cpu": "200m"}), k8s.Pod))
    # first seen already bound (the initial list, a snapshot): not a pod becoming assigned
    state.apply_pod(k8s.convert(pod_obj("b", "n1", limits={"cpu": "500m"}), k8s.Pod))
    assert tlp_scores(state) == [40, 70]


def test_the_watch_confirming_a_bind_keeps_the_bind_time() -> None:
    state, clock = live_state(END + 1)
    bind(state, "a", "n1", {"cpu": "200m"})
    clock.now = END + 100
    state.apply_pod(k8s.convert(pod_obj("a", "n1", limits={"cpu": "200m"}), k8s.Pod))
    assert [at for at, _ in state.store(TrimaranStore).recent("n1")] == [END + 1]


def test_deleted_and_expired_pods_are_forgotten() -> None:
    state, clock = live_state(END + 1)
    bind(state, "a", "n1", {"cpu": "200m"})
    bind(state, "b", "n2", {"cpu": "200m"})
    assert tlp_scores(state) == [70, 70]
    state.delete_pod("default", "a")
    state.clock = lambda: 10**12  # b's assumption runs out: its bind never happened
    state.expire_assumptions()
    assert tlp_scores(state) == [40, 40]
    assert state.store(TrimaranStore).assignments == {}


def test_records_follow_upstreams_cleanup_and_stay_bounded(monkeypatch) -> None:
    """A record goes at the first 5-minute cleanup after it is 60 s old; and there are never
    more than the limit."""
    state, clock = live_state(END)  # cleanups at END + 300, END + 600, ...
    clock.now = END + 200
    bind(state, "a", "n1", {"cpu": "200m"})
    clock.now = END + 299
    assert len(state.store(TrimaranStore).recent("n1")) == 1
    clock.now = END + 300  # a was 100 s old at this cleanup
    assert state.store(TrimaranStore).recent("n1") == []
    clock.now = END + 250  # (a later record prunes what the cleanups removed)
    monkeypatch.setattr(assignment_store, "LIMIT", 3)
    for i in range(10):
        clock.now = END + 250 + i
        bind(state, f"p{i}", "n2", {"cpu": "1m"})
    assert len(state.store(TrimaranStore)._order) == 3
    assert [pod.name for _, pod in state.store(TrimaranStore).recent("n2")] == ["p7", "p8", "p9"]


def test_a_pod_bound_after_the_window_with_requests_only_predicts_by_the_multiplier() -> None:
    state, clock = live_state(END + 1)
    view = PodView.from_k8s(k8s.convert(pod_obj("a", requests={"cpu": "100m"}), k8s.Pod))
    state.assume(view, "n1", ttl=30.0)
    # 100m x 1.5 = 150m: 15 % -> 60*15/40 + 40 = 62.5 -> 63 (half away from zero)
    assert tlp_scores(state) == [63, 40]


def test_scores_follow_each_new_metrics_snapshot() -> None:
    """The per-view memos are per snapshot: a refresh's new values are scored at once, for
    TargetLoadPacking and LoadVariationRiskBalancing alike."""
    state, clock = live_state(END + 1)
    tlp = TargetLoadPacking(TargetLoadPackingArgs(defaultRequests={}))
    lvrb = LoadVariationRiskBalancing(LoadVariationRiskBalancingArgs())
    view = PodView.from_k8s(k8s.convert(pod_obj("incoming"), k8s.Pod))
    infos = [state.nodes["n1"], state.nodes["n2"]]
    seen = []
    for util in (0, 50, 90, 0, 50):
        state.store(TrimaranStore).set_metrics(read_metrics(cpu_metrics({"n1": util, "n2": 100 - util})))
        seen.append((tlp.score(CycleState(), view, infos, state),
                     lvrb.score(CycleState(), view, infos, state)))
    assert seen[0] == seen[3] and seen[1] == seen[4]
    assert seen[0][0] == [40, 0] and seen[1][0] == [33, 33] and seen[2][0] == [7, 55]


# ---- the pod's Trimaran figures: the fast pass against upstream's arithmetic written plainly ----
amounts = st.one_of(st.none(), st.integers(0, 5000).map(lambda m: f"{m}m"),
                    st.sampled_from(["0", "1", "2.5", "1Gi", "100Mi", "3e3"]))


@st.composite
def resource_lists(draw: st.DrawFn) -> dict[str, str] | None:
    found = {name: draw(amounts) for name in ("cpu", "memory")}
    found = {k: v for k, v in found.items() if v is not None}
    return found if found or draw(st.booleans()) else None


@st.composite
def containers(draw: st.DrawFn, prefix: str) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0, 3))):
        container: dict[str, Any] = {"name": f"{prefix}{i}"}
        requests, limits = draw(resource_lists()), draw(resource_lists())
        if requests is not None or limits is not None:
            container["resources"] = {k: v for k, v in (("requests", requests),
                                                        ("limits", limits)) if v is not None}
        out.append(container)
    return out


def reference_load(spec: dict[str, Any]) -> tuple[int, int, int, int, int]:
    """GetResourceRequested / GetResourceLimits (containers summed, max'ed with each init
    container, + overhead) and TargetLoadPacking's summed PredictUtilisation (limit, else
    request x 1.5 rounded, else 1000m), as resourcestats.go and targetloadpacking.go read."""
    def effective(kind: str) -> tuple[int, int]:
        cpu = memory = 0
        for c in spec.get("containers", []):
            found = c.get("resources", {}).get(kind) or {}
            cpu += milli_value(found["cpu"]) if "cpu" in found else 0
            memory += value(found["memory"]) if "memory" in found else 0
        for c in spec.get("initContainers", []):
            found = c.get("resources", {}).get(kind) or {}
            cpu = max(cpu, milli_value(found["cpu"])) if "cpu" in found else cpu
            memory = max(memory, value(found["memory"])) if "memory" in found else memory
        overhead = spec.get("overhead") or {}
        return (cpu + (milli_value(overhead["cpu"]) if "cpu" in overhead else 0),
                memory + (value(overhead["memory"]) if "memory" in overhead else 0))

    predicted = 0
    for c in spec.get("containers", []):
        res = c.get("resources", {})
        if "cpu" in (res.get("limits") or {}):
            predicted += milli_value(res["limits"]["cpu"])
        elif "cpu" in (res.get("requests") or {}):
            predicted += go_round(milli_value(res["requests"]["cpu"]) * 1.5)
        else:
            predicted += 1000
    return (*effective("requests"), *effective("limits"), predicted)


@settings(max_examples=300, deadline=None)
@given(containers("c"), containers("i"), resource_lists())
def test_pod_load_is_upstreams_arithmetic(regular, init, overhead) -> None:
    spec: dict[str, Any] = {"containers": regular, "initContainers": init}
    if overhead is not None:
        spec["overhead"] = overhead
    view = PodView.from_k8s(k8s.convert({"metadata": {"name": "p", "uid": "p"}, "spec": spec},
                                        k8s.Pod))
    load = view.load
    predicted = TargetLoadPacking(TargetLoadPackingArgs()).predict(load)
    assert (load.request_cpu, load.request_memory, load.limit_cpu, load.limit_memory,
            predicted) == reference_load(spec)


@pytest.mark.parametrize(("args", "words"), [
    ({"defaultRequestsMultiplier": "Inf"}, "must be a finite number not below 0, got 'Inf'"),
    ({"defaultRequestsMultiplier": "NaN"}, "must be a finite number not below 0, got 'NaN'"),
    ({"defaultRequestsMultiplier": "-1"}, "must be a finite number not below 0, got '-1'"),
    ({"defaultRequests": {"cpu": "-500m"}}, "cpu: must not be negative, got -500m"),
])
def test_predictions_that_would_score_outside_0_100_are_refused(args, words):
    """Upstream takes them; every cycle would then reject the plugin's scores (logged per
    request), as a targetUtilization above 100 would: refused at load, naming the field."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=words):
        TargetLoadPackingArgs.model_validate(args)
    TargetLoadPackingArgs.model_validate({"defaultRequestsMultiplier": "0",
                                          "defaultRequests": {"cpu": "0"}})
