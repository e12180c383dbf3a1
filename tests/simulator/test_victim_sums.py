"""`victimsums.VictimSums` (a dry run's victims over sums) against the engine's
`select_victims_on_node`.

Random small clusters — pods of mixed priorities, sizes and start times (some unstarted, some
in the future), PodDisruptionBudgets with and without room, pending pods nominated to the
nodes ahead of and behind the preemptor, nodes short of pod slots — and a preemptor with or
without a node selector, toleration, host port or extended resource: wherever the sums decide
a node, their answer (victims in order, PDB violations) must be the engine's; where they do
not (a pass that is not node-only checks then NodeResourcesFit, a node the pod cannot fit
even emptied), they must say so (None) rather than guess.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.engine.cluster import ClusterState
from extender.engine.policy import parse_policy
from extender.engine.preemption.pdb import PdbIndex
from extender.engine.preemption.victims import (
    Victims,
    lower_priority,
    no_preemption_victims,
    select_victims_on_node,
)
from extender.engine.profile import Profile, build_profile
from extender.engine.runner import prepare_filters
from extender.model.pod import PodView
from extender.simulator.victimsums import Plans, VictimSums, fit_only_key
from tests.engine.test_preemption_helpers import T0, cluster, node, pdb, pod, profile, view

NOW = T0
GPU = "example.com/gpu"

PROFILES: dict[str, Profile] = {
    # The fixture policy's filters (kube-scheduler's order, no cross-node plugin).
    "fixture": profile(),
    # kube-scheduler's defaults (PodTopologySpread and InterPodAffinity among them).
    "default": build_profile(parse_policy({"apiVersion": "scheduler-extender/v1",
                                           "kind": "ExtenderPolicy"})),
}


def _requests(obj: dict[str, Any]) -> dict[str, str]:
    return obj["spec"]["containers"][0]["resources"]["requests"]  # type: ignore[no-any-return]


CPUS = st.sampled_from(["0", "100m", "500m", "1", "2", "3"])
MEMORIES = st.sampled_from(["0", "64Mi", "512Mi", "1Gi", "3Gi"])


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 4))
    objects = []
    for i in range(count):
        obj = node(f"n{i}", cpu=draw(st.sampled_from(["1", "2", "4", "6"])),
                   memory=draw(st.sampled_from(["1Gi", "2Gi", "4Gi"])),
                   pods=draw(st.sampled_from(["2", "3", "5", "110"])),
                   labels={"zone": draw(st.sampled_from(["a", "b"]))},
                   taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]
                   if draw(st.integers(0, 5)) == 0 else None)
        if draw(st.integers(0, 3)) == 0:
            obj["status"]["allocatable"]["ephemeral-storage"] = "10Gi"
        objects.append(obj)
    names = []
    for j in range(draw(st.integers(0, 14))):
        where = draw(st.integers(-1, count - 1))  # -1: pending, nominated somewhere
        start = draw(st.sampled_from([None, T0 - 3600, T0 - 600, T0 - 600, T0 - 60, T0 + 600]))
        app = draw(st.sampled_from(["a", "a", "b", None]))
        obj = pod(f"p{j}", "" if where < 0 else f"n{where}", priority=draw(st.integers(-2, 12)),
                  cpu=draw(CPUS), memory=draw(MEMORIES), start=start,
                  labels={"app": app} if app else None,
                  terminating=draw(st.integers(0, 9)) == 0,
                  nominated=f"n{draw(st.integers(0, count - 1))}" if where < 0 else "")
        if draw(st.integers(0, 5)) == 0:
            _requests(obj)["ephemeral-storage"] = "1Gi"
        objects.append(obj)
        names.append(f"p{j}")
    for k in range(draw(st.integers(0, 3))):
        disrupted: tuple[str, ...] = ()
        if names and draw(st.integers(0, 3)) == 0:
            disrupted = tuple(draw(st.lists(st.sampled_from(names), max_size=2)))
        objects.append(pdb(f"pdb{k}", {"app": draw(st.sampled_from(["a", "b"]))},
                           draw(st.sampled_from([0, 1, 1, 2])), disrupted=disrupted))
    return objects


@st.composite
def preemptors(draw: st.DrawFn) -> dict[str, Any]:
    obj = pod("me", priority=draw(st.integers(0, 14)), cpu=draw(CPUS), memory=draw(MEMORIES),
              host_port=80 if draw(st.integers(0, 9)) == 0 else 0,
              node_selector={"zone": "a"} if draw(st.integers(0, 4)) == 0 else None)
    if draw(st.integers(0, 9)) == 0:
        _requests(obj)[GPU] = "1"
    if draw(st.integers(0, 5)) == 0:
        _requests(obj)["ephemeral-storage"] = "1Gi"
    if draw(st.integers(0, 3)) == 0:
        obj["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    return obj


def _compare(prof: Profile, state: ClusterState, me: PodView) -> int:
    """Every node through the sums and the engine; how many the sums decided."""
    filters = prepare_filters(prof, me, state)
    can_preempt = lower_priority(me)
    plans: Plans = {}  # the second look at each node takes its plan from here
    sums = VictimSums.for_pass(filters, me, can_preempt, plans=plans)
    if sums is None:
        return 0
    pdbs = PdbIndex(state.pdb_list())
    for name, info in [*state.nodes.items(), *state.nodes.items()]:
        nominated = state.nominated_pods(name)
        ours = sums.select(info, pdbs, nominated, NOW)
        engine = select_victims_on_node(filters, me, info, pdbs, nominated, NOW,
                                        can_preempt=can_preempt)
        if ours is not None:
            assert ours == engine, name
        elif isinstance(engine, Victims):
            # Left to the engine only where it cannot fit even emptied, or a node-only
            # check or a nominated pod's duplicate decides: never a plain candidate.
            assert not any(p.uid in info.pods for p in nominated)
            assert sums._node_only(info) is not None  # noqa: SLF001
    return sums.decided


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), preemptors(), st.sampled_from(sorted(PROFILES)))
def test_sums_give_the_engine_s_victims(objects, me, profile_name):
    _compare(PROFILES[profile_name], cluster(*objects), view(me))


def test_the_common_cases_are_decided() -> None:
    state = cluster(node("n0", cpu="4", pods="5"), node("n1", cpu="6"), node("n2", cpu="2"),
                    pod("a", "n0", priority=1, cpu="2"), pod("b", "n0", priority=2, cpu="1"),
                    pod("c", "n0", priority=3, cpu="1", start=None),
                    pod("x", "n1", priority=1, cpu="1"), pod("y", "n1", priority=2, cpu="1"),
                    pod("e", "n1", priority=20, cpu="1"),
                    pod("f", "n2", priority=50, cpu="2"),
                    # Room reserved ahead of the preemptor (priority 10) on n1, and behind it.
                    pod("ahead", priority=10, cpu="2", nominated="n1"),
                    pod("behind", priority=5, cpu="3", nominated="n1"),
                    pdb("guard", {"app": "x"}, 0))
    me = view(pod("me", priority=10, cpu="2"))
    assert _compare(PROFILES["fixture"], state, me) == 4  # n0 and n1 twice; n2: no victim
    filters = prepare_filters(PROFILES["fixture"], me, state)
    sums = VictimSums.for_pass(filters, me, lower_priority(me))
    assert sums is not None
    pdbs = PdbIndex(state.pdb_list())
    assert sums.select(state.nodes["n2"], pdbs, [], NOW) == no_preemption_victims(
        state.nodes["n2"], me)
    n0 = sums.select(state.nodes["n0"], pdbs, [], NOW)
    assert isinstance(n0, Victims) and [p.name for p in n0.pods] == ["a"]  # c, b come back
    # n1: "y" comes back, "x" cannot: "me" (2) and "ahead" (2) beside "e" and "y" fill it.
    n1 = sums.select(state.nodes["n1"], pdbs, state.nominated_pods("n1"), NOW)
    assert isinstance(n1, Victims) and [p.name for p in n1.pods] == ["x"]
    # Without "ahead"'s reservation both come back: no victim (the dry run's error case).
    assert sums.select(state.nodes["n1"], pdbs, [], NOW) == Victims((), 0)


def test_a_node_the_pod_cannot_fit_even_emptied_is_left_to_the_engine() -> None:
    state = cluster(node("n0", cpu="2"), pod("low", "n0", priority=1, cpu="1"),
                    pod("high", "n0", priority=50, cpu="1"),
                    pod("ahead", priority=10, cpu="1", nominated="n0"))
    me = view(pod("me", priority=10, cpu="1"))
    sums = VictimSums.for_pass(prepare_filters(PROFILES["fixture"], me, state), me,
                               lower_priority(me))
    assert sums is not None
    pdbs = PdbIndex(state.pdb_list())
    assert sums.select(state.nodes["n0"], pdbs, [], NOW) is not None
    # With "ahead"'s reservation the node is full even without "low": the engine words why.
    assert sums.select(state.nodes["n0"], pdbs, state.nominated_pods("n0"), NOW) is None


def test_passes_beyond_fit_take_the_engine_s_path() -> None:
    state = cluster(node("n0"), pod("low", "n0", priority=1))
    fixture = PROFILES["fixture"]
    plain = pod("me", priority=10)
    assert VictimSums.for_pass(prepare_filters(fixture, view(plain), state), view(plain),
                               lower_priority(view(plain))) is not None
    port = view(pod("me", priority=10, host_port=80))  # NodePorts reads the node's pods
    gpu = pod("me", priority=10)
    _requests(gpu)[GPU] = "1"  # an extended resource: Fit's scalar arithmetic
    spread = pod("me", priority=10, labels={"app": "a"})
    spread["spec"]["topologySpreadConstraints"] = [{
        "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "a"}}}]  # cross-node state
    for me, prof in ((port, fixture), (view(gpu), fixture), (view(spread), PROFILES["default"])):
        filters = prepare_filters(prof, me, state)
        assert VictimSums.for_pass(filters, me, lower_priority(me)) is None
        assert fit_only_key(filters, me) is None
    me = view(plain)
    key = fit_only_key(prepare_filters(fixture, me, state), me)
    other = view(pod("other", priority=3, labels={"app": "b"}))
    assert key is not None and key == fit_only_key(prepare_filters(fixture, other, state), other)
    bigger = view(pod("bigger", priority=10, cpu="2"))
    assert key != fit_only_key(prepare_filters(fixture, bigger, state), bigger)


def test_plans_are_kept_per_priority_and_pdbs_and_only_for_started_pods() -> None:
    state = cluster(node("n0", cpu="4"), node("n1", cpu="4"),
                    pod("a", "n0", priority=1, cpu="2"), pod("b", "n0", priority=2, cpu="2"),
                    pod("c", "n1", priority=1, cpu="2", start=None),
                    pod("d", "n1", priority=2, cpu="2"))
    plans: Plans = {}
    pdbs = PdbIndex(state.pdb_list())
    n0, n1 = state.nodes["n0"], state.nodes["n1"]

    def sums_for(priority: int) -> VictimSums:
        me = view(pod(f"me{priority}", priority=priority, cpu="2"))
        found = VictimSums.for_pass(prepare_filters(PROFILES["fixture"], me, state), me,
                                    lower_priority(me), plans=plans)
        assert found is not None
        return found

    first = sums_for(10).select(n0, pdbs, [], NOW)
    assert set(plans) == {"n0"} and set(plans["n0"]) == {10}
    plan = plans["n0"][10][2]
    assert plan is not None and plan.count == 2 and plan.cpu == 4000
    assert sums_for(10).select(n0, pdbs, [], NOW) == first
    assert plans["n0"][10][2] is plan  # taken from the plans
    sums_for(2).select(n0, pdbs, [], NOW)  # only "a" is below 2: a plan of its own
    assert plans["n0"][2][2].count == 1  # type: ignore[union-attr]
    other = PdbIndex(state.pdb_list())
    sums_for(10).select(n0, other, [], NOW)
    assert plans["n0"][10][1] is other and plans["n0"][10][2] is not plan  # PDBs: new plan
    sums_for(10).select(n1, pdbs, [], NOW)
    assert "n1" not in plans  # "c" has not started: its place in the order is now's
