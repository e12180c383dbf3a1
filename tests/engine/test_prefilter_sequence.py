"""PreFilter in the profile's order, as kube-scheduler's `RunPreFilterPlugins` (kubernetes
v1.34.4 `pkg/scheduler/framework/runtime/framework.go`): a plugin answering
UnschedulableAndUnresolvable ends PreFilter — the plugins after it do not run and keep no
state —, after an Unschedulable the others still run and the last Unschedulable is the pod's
status. Found replaying on the real kube-scheduler: a pod Coscheduling rejects for missing
siblings leaves the plugins after it without their PreFilter state."""

from __future__ import annotations

import pytest

from extender.engine.abilities import find_abilities
from extender.engine.cluster import ClusterState
from extender.engine.explain import explain_nodes
from extender.engine.framework import Code, CycleState, EngineError, Profile, Status
from extender.engine.preemption.evaluator import dry_run_filters
from extender.engine.preemption.plugins import DefaultPreemption
from extender.engine.runner import FilterPass, pre_filter_one, prepare_filters
from tests.engine.filter_helpers import node, pod, profile


class _PreFilter:
    """A cross-node filter plugin whose PreFilter answers `status` (None: passes, with
    state), recording that it ran."""

    def __init__(self, name: str, code: Code | None, ran: list[str]) -> None:
        self.name, self.code, self.ran = name, code, ran

    def pre_filter(self, state: CycleState, pod, ctx) -> object:  # noqa: ANN001
        self.ran.append(self.name)
        if self.code is None:
            return lambda node: None
        return Status(self.code, (f"{self.name} says no",), self.name)


def _run(*plugins: tuple[str, Code | None]) -> tuple[Status | None, list[str], list[str]]:
    ran: list[str] = []
    profile = Profile(tuple(_PreFilter(n, c, ran) for n, c in plugins), (), None, None)
    prepared = prepare_filters(profile, pod("p"), ClusterState())
    written = [n for n, _ in plugins if prepared.state.read(n) is not None]
    return prepared.rejection, ran, written


def test_unschedulable_lets_the_others_run_and_the_last_one_stands():
    rejection, ran, written = _run(("A", Code.UNSCHEDULABLE), ("B", None),
                                   ("C", Code.UNSCHEDULABLE), ("D", None))
    assert ran == ["A", "B", "C", "D"]
    assert rejection is not None and rejection.reasons == ("C says no",)
    assert written == ["B", "D"]


def test_unschedulable_and_unresolvable_ends_prefilter():
    rejection, ran, written = _run(("A", Code.UNSCHEDULABLE), ("B", None),
                                   ("C", Code.UNSCHEDULABLE_AND_UNRESOLVABLE), ("D", None))
    assert ran == ["A", "B", "C"]  # D never runs: it keeps no state
    assert rejection is not None and rejection.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert rejection.reasons == ("C says no",)
    assert written == ["B"]


def test_every_plugin_passing_rejects_nothing():
    rejection, ran, written = _run(("A", None), ("B", None))
    assert (rejection, ran, written) == (None, ["A", "B"], ["A", "B"])


# ---- which plugins' PreFilter ran (`FilterPass.pre_filtered`) -------------------------------

def _pass(*plugins: tuple[str, Code | None]) -> FilterPass:
    profile = Profile(tuple(_PreFilter(n, c, []) for n, c in plugins), (), None, None)
    return prepare_filters(profile, pod("p"), ClusterState())


def test_pre_filtered_stops_at_unschedulable_and_unresolvable():
    prepared = _pass(("A", Code.UNSCHEDULABLE), ("B", None),
                     ("C", Code.UNSCHEDULABLE_AND_UNRESOLVABLE), ("D", None))
    assert prepared.pre_filtered == frozenset({"A", "B", "C"})  # C ran and rejected; D did not
    assert prepared.clone().pre_filtered == prepared.pre_filtered
    # The dry run's pass (the Filter plugins only) keeps it.
    dry = dry_run_filters(prepared, DefaultPreemption(), pod("p"), ClusterState())
    assert dry.rejection is None and dry.pre_filtered == prepared.pre_filtered


def test_pre_filtered_names_every_plugin_when_none_ends_prefilter():
    assert _pass(("A", Code.UNSCHEDULABLE), ("B", None), ("C", None)).pre_filtered \
        == frozenset({"A", "B", "C"})
    assert _pass().pre_filtered == frozenset()


def test_a_node_name_restriction_ends_prefilter_before_the_plugins_after_it():
    """NodeAffinity's restriction rejecting every node (node names no node can have: its
    PreFilter's UnschedulableAndUnresolvable) ends PreFilter: the plugins after it do not run."""
    prof = profile(["NodeAffinity", "NodeResourcesFit"])
    impossible = pod("p", required_terms=[{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]},
        {"key": "metadata.name", "operator": "In", "values": ["b"]}]}])
    prepared = prepare_filters(prof, impossible, ClusterState())
    assert prepared.rejection is not None and prepared.rejection.plugin == "NodeAffinity"
    assert prepared.rejection.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert prepared.pre_filtered == frozenset({"NodeAffinity"})


# ---- one PreFilter step for the sequence and for explain's diagnosis --------------------------

class _Raising:
    name = "Raising"

    def prepare(self, pod):  # noqa: ANN001, ANN201
        raise RuntimeError("broken")


def test_a_raising_plugin_fails_prepare_filters_with_an_engine_error():
    plugin = _Raising()
    with pytest.raises(RuntimeError, match="broken"):  # the step leaves it to its caller
        pre_filter_one(plugin, find_abilities(plugin), pod("p"), CycleState(), None)
    profile = Profile((plugin,), (), None, None)
    with pytest.raises(EngineError, match="filter plugin Raising failed in PreFilter: broken"):
        prepare_filters(profile, pod("p"))


def test_explain_reports_a_plugin_the_sequence_did_not_run_and_one_that_raises():
    """explain's diagnosis runs every plugin's PreFilter step, including those after an
    UnschedulableAndUnresolvable (which the filter verb never reaches): a raising one is an
    Error verdict there, not a failed explanation."""
    ran: list[str] = []
    plugins = (_PreFilter("A", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ran), _Raising(),
               _PreFilter("C", None, ran))
    profile = Profile(plugins, (), None, None)  # type: ignore[arg-type]
    state = ClusterState()
    ex = explain_nodes(profile, pod("p"), [node("n1")], state)
    assert [(v["plugin"], v["code"]) for v in ex.prefilter] == [
        ("A", "UnschedulableAndUnresolvable"), ("Raising", "Error"), ("C", "Success")]
    assert ex.prefilter[1]["reasons"] == ["RuntimeError: broken"]
    assert prepare_filters(profile, pod("p"), state).pre_filtered == frozenset({"A"})
