"""`engine.explain` agrees with `evaluate`, and its per-plugin detail with the verdicts.

`explain` answers from the same hot path as the verbs for what counts (feasibility, the
node's verdict, the scores) and from a separate all-plugins loop for the detail; these tests hold
the two together: the feasible set, verdicts and scores equal `evaluate`'s, the detail's first
failure is the verdict, and the raw scores it recomputes normalise to the plugins' scores.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from extender.engine import evaluate
from extender.engine.evaluate import EvaluationError
from extender.engine.explain import PASSING, Explanation, explain
from extender.engine.registry import DEFAULT_FILTERS, DEFAULT_SCORES
from tests.engine.test_cross_node_properties import IPA, PTS, Scenario, _settings, scenarios
from tests.engine.upstream import builders as b

Obj = dict[str, Any]

ALL_SCORES = [*DEFAULT_SCORES, ("PodState", 1)]


def _policy(pts_args: Obj | None = None, ipa_args: Obj | None = None) -> Obj:
    args = {name: a for name, a in ((PTS, pts_args), (IPA, ipa_args)) if a}
    return b.policy(filters=list(DEFAULT_FILTERS), scores=ALL_SCORES, args=args, post_filters=[])


def assert_agrees(objects: list[Obj], pod: Obj, policy: Obj, nodes: list[str] | None = None) -> Explanation:
    ex = explain(objects, pod, policy, nodes)
    try:
        ev = evaluate(objects, pod, policy, nodes)
    except EvaluationError as exc:
        # A scorer's Error fails evaluate (kube-scheduler's cycle); explain reports it.
        assert "score plugin" in str(exc)
        assert any(s["status"] == "Error" for s in ex.scorers)
        ev = None
    if ev is not None:
        assert ex.rejection == ev.prefilter
        assert ex.feasible == ev.feasible
        assert {name: node.verdict for name, node in ex.nodes.items()} == ev.filter
        scored = [s["plugin"] for s in ex.scorers if s["status"] == "Scored"]
        assert scored == list(ev.scores)
        for name in ev.feasible:
            node = ex.nodes[name]
            assert {s["plugin"]: s["normalized"] for s in node.scores} == {
                plugin: scores[name] for plugin, scores in ev.scores.items()}
            assert node.total == ev.total[name]
            assert node.extender_score == ev.extender_scores[name]
    for name, node in ex.nodes.items():
        failing = [v for v in node.filters if v["code"] not in PASSING]
        if node.verdict is None:
            assert not failing, name
        else:  # the verdict is one of the plugins' own failures (the first in the verbs' order)
            assert node.verdict in failing, name
        for s in node.scores:
            assert s["raw"] is not None, (name, s)  # recomputed raw normalises to the score
            assert s["weighted"] == s["normalized"] * s["weight"]
        if node.scores:
            assert node.total == sum(s["weighted"] for s in node.scores)
    return ex


@pytest.mark.slow
@_settings(60)
@given(scenarios())
def test_explain_agrees_with_evaluate(sc: Scenario) -> None:
    assert_agrees(sc.objects, sc.pod, _policy(sc.pts_args, sc.ipa_args))


ZONE = "topology.kubernetes.io/zone"


def _cluster() -> list[Obj]:
    big = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    nodes = [
        b.node("a1", {ZONE: "z1", "kubernetes.io/hostname": "a1", "disk": "ssd"}, allocatable=big),
        b.node("a2", {ZONE: "z1", "kubernetes.io/hostname": "a2"}, allocatable=big,
               taints=[{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]),
        b.node("b1", {ZONE: "z2", "kubernetes.io/hostname": "b1"}, allocatable=big,
               taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
        b.node("b2", {ZONE: "z2", "kubernetes.io/hostname": "b2"},
               allocatable={"cpu": "2", "memory": "8Gi", "pods": "110"}),
    ]
    pods = [b.pod("w1", node="a1", labels={"app": "web"}, requests={"cpu": "1"}),
            b.pod("w2", node="a1", labels={"app": "web"}, requests={"cpu": "1"}),
            b.pod("w3", node="a2", labels={"app": "web"}, requests={"cpu": "1"}),
            b.pod("d1", node="b2", labels={"app": "db"}, requests={"cpu": "1"})]
    return [*nodes, *pods]


def test_every_failing_filter_is_reported_and_raw_scores_shown() -> None:
    pod = b.pod("p", labels={"app": "web"}, requests={"cpu": "2"},
                spread=[{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                         "labelSelector": {"matchLabels": {"app": "web"}}}],
                affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [
                        {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}})
    ex = assert_agrees(_cluster(), pod, _policy())
    assert ex.feasible == ["a1", "a2"]
    b2 = {v["plugin"]: v for v in ex.nodes["b2"].filters}
    assert b2["NodeResourcesFit"] == {"plugin": "NodeResourcesFit", "code": "Unschedulable",
                                      "reasons": ["Insufficient cpu"]}
    b1 = [v for v in ex.nodes["b1"].filters if v["code"] not in PASSING]
    assert [v["plugin"] for v in b1] == ["TaintToleration"]
    scores = {s["plugin"]: s for s in ex.nodes["a1"].scores}
    # a1 holds the preferred disk (weight 10) and two of the three web pods in zone z1.
    assert (scores["NodeAffinity"]["raw"], scores["NodeAffinity"]["normalized"]) == (10, 100)
    assert (scores["TaintToleration"]["raw"], scores["TaintToleration"]["normalized"]) == (0, 100)
    a2 = {s["plugin"]: s for s in ex.nodes["a2"].scores}
    assert (a2["TaintToleration"]["raw"], a2["TaintToleration"]["normalized"]) == (1, 0)
    # Both candidates are in z1 (3 matching pods): equal raw spread scores, both 100.
    assert scores["PodTopologySpread"]["raw"] == a2["PodTopologySpread"]["raw"] > 0
    assert scores["PodTopologySpread"]["normalized"] == a2["PodTopologySpread"]["normalized"] == 100


def test_a_prefilter_rejection_still_shows_every_other_plugin() -> None:
    pod = b.pod("p", requests={"cpu": "2"}, affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]},
            "topologyKey": "kubernetes.io/hostname"}]}})
    ex = assert_agrees(_cluster(), pod, _policy())
    assert ex.rejection is not None and ex.rejection["plugin"] == "InterPodAffinity"
    assert ex.feasible == []
    assert {v["plugin"]: v["code"] for v in ex.prefilter}["InterPodAffinity"] == \
        "UnschedulableAndUnresolvable"
    for name, node in ex.nodes.items():
        assert node.verdict == ex.rejection
        failing = {v["plugin"] for v in node.filters if v["code"] not in PASSING}
        assert failing == {"InterPodAffinity", *{"b1": ["TaintToleration"],
                                                 "b2": ["NodeResourcesFit"]}.get(name, [])}


def test_a_scorer_error_is_reported_not_raised() -> None:
    pod = b.pod("p", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [
            {"key": "disk", "operator": "Bogus", "values": ["ssd"]}]}}]}})
    with pytest.raises(EvaluationError):
        evaluate(_cluster(), pod, _policy())
    ex = explain(_cluster(), pod, _policy())
    status = {s["plugin"]: s for s in ex.scorers}["NodeAffinity"]
    assert status["status"] == "Error" and "Bogus" in status["message"]
    assert ex.nodes["a1"].scores and "NodeAffinity" not in {
        s["plugin"] for s in ex.nodes["a1"].scores}


def test_candidates_and_to_dict_shape() -> None:
    ex = explain(_cluster(), b.pod("p"), _policy(), nodes=["b2", "a1", "b2"])
    out = ex.to_dict()
    assert list(out["nodes"]) == ["b2", "a1"]
    assert set(out) == {"pod", "prefilter", "rejection", "scorers", "feasible", "nodes"}
    assert set(out["nodes"]["a1"]) == {"feasible", "verdict", "filters", "scores", "total",
                                       "extenderScore"}
    assert out["pod"] == "default/p"


class _Scorer:
    """A scorer whose Score/NormalizeScore split can be made inconsistent or to fail."""

    name = "Fake"

    def __init__(self, raw: list[int] | None, normalized: list[int], fail: bool = False) -> None:
        self.raw, self.normalized, self.fail = raw, normalized, fail

    def raw_scores(self, state: Any, pod: Any, nodes: Any, ctx: Any) -> list[int] | None:
        if self.fail:
            raise RuntimeError("boom")
        return None if self.raw is None else list(self.raw)

    def normalize(self, raw: list[int], state: Any) -> list[int]:
        raw[:] = self.normalized  # in place, as the real ones may
        return raw

    def score(self, state: Any, pod: Any, nodes: Any, ctx: Any) -> list[int] | None:
        raw = self.raw_scores(state, pod, nodes, ctx)
        return None if raw is None else self.normalize(raw, state)


def test_raw_scores_are_shown_only_when_they_normalise_to_the_scores() -> None:
    from extender.engine.explain import raw_scores

    def shown(plugin: _Scorer, normalized: list[int]) -> list[int] | None:
        return raw_scores(plugin, normalized, None, [], None)  # type: ignore[arg-type]

    assert shown(_Scorer([3, 1], [100, 33]), [100, 33]) == [3, 1]  # not the normalised list
    assert shown(_Scorer([3, 1], [100, 33]), [100, 0]) is None  # drifted: not shown
    assert shown(_Scorer(None, []), [100, 0]) is None  # skipped, though it scored
    assert shown(_Scorer([3, 1], [100, 33], fail=True), [100, 33]) is None  # raised: logged
