"""The preempt verb's fast path (`preemption/fastpath.py`) against its straightforward path.

Random small clusters and proposals go through `process_preemption` with the fast path on and
forced off (`fast_path=False`); the outcomes (victims per node in order, NumPDBViolations,
dropped nodes with their reasons and details, ignored UIDs) must be identical, also when the
fast path reuses its memo across requests, after the cluster changed, and at a clock reading
that puts some start times in the future.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.engine.cluster import ClusterState
from extender.engine.policy import parse_policy
from extender.engine.preemption import PreemptionMemo, PreemptionOutcome, process_preemption
from extender.engine.preemption import fastpath as fastpath_module
from extender.engine.preemption.plans import NodePlan, reprieve
from extender.engine.profile import build_profile
from extender.model import k8s
from tests.engine.test_preemption_helpers import T0, cluster, node, pdb, pod, profile, view
from tests.seeded import Draws, seeded

NOW = T0
GPU = "example.com/gpu"

#: The cluster's objects, the preemptor and the proposals (node name -> UIDs).
Scenario = tuple[list[dict[str, Any]], dict[str, Any], dict[str, list[str]]]

#: The fixture policy's filters (no cross-node plugin), and the default plugin set (with
#: PodTopologySpread and InterPodAffinity), each with DefaultPreemption.
PROFILES = {
    "fixture": profile(),
    "default": build_profile(parse_policy({"apiVersion": "scheduler-extender/v1",
                                           "kind": "ExtenderPolicy"})),
    "toleration": profile("PreemptionToleration"),
}


def summary(outcome: PreemptionOutcome) -> dict[str, Any]:
    """Everything the outcome says, orders included."""
    return {
        "victims": [(name, [p.uid for p in v.pods], v.num_pdb_violations)
                    for name, v in outcome.victims.items()],
        "dropped": list(outcome.dropped.items()),
        "details": list(outcome.drop_details.items()),
        "ignored": list(outcome.ignored.items()),
    }


def requests_of(obj: dict[str, Any]) -> dict[str, str]:
    return obj["spec"]["containers"][0]["resources"]["requests"]  # type: ignore[no-any-return]


# ---- strategies ----------------------------------------------------------------------------

CPUS = ["0", "100m", "500m", "1", "2", "3"]
MEMORIES = ["0", "64Mi", "512Mi", "1Gi", "3Gi"]


def node_object(d: Draws, i: int) -> dict[str, Any]:
    obj = node(f"n{i}", cpu=d.choice(["1", "2", "3", "4", "6"]),
               memory=d.choice(["1Gi", "2Gi", "4Gi"]),
               pods=d.choice(["1", "2", "3", "110"]),
               labels={"zone": d.choice(["a", "b"])},
               taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]
               if d.one_in(6) else None,
               unschedulable=d.one_in(8))
    if d.boolean():
        obj["status"]["allocatable"][GPU] = d.choice(["1", "2"])
    if d.one_in(4):
        obj["status"]["allocatable"]["ephemeral-storage"] = "10Gi"
    return obj


def pod_object(d: Draws, j: int, nodes: int) -> dict[str, Any]:
    where = d.integer(-1, nodes - 1)  # -1: pending, maybe nominated
    start = d.choice([None, T0 - 3600, T0 - 600, T0 - 600, T0 - 60])
    if d.one_in(20):
        start = T0 + 600  # clock skew
    app = d.choice(["a", "a", "b", None])
    obj = pod(f"p{j}", "" if where < 0 else f"n{where}", priority=d.integer(-2, 12),
              cpu=d.choice(CPUS), memory=d.choice(MEMORIES), start=start,
              labels={"app": app} if app else None,
              namespace=d.choice(["default", "default", "other"]),
              terminating=d.one_in(10),
              host_port=80 if d.one_in(8) else 0,
              nominated=f"n{d.integer(0, nodes - 1)}" if where < 0 else "")
    if d.one_in(6):
        requests_of(obj)[GPU] = "1"
    if d.one_in(6):
        requests_of(obj)["ephemeral-storage"] = "1Gi"
    return obj


def preemptor(d: Draws) -> dict[str, Any]:
    obj = pod("me", priority=d.integer(0, 14), cpu=d.choice(CPUS), memory=d.choice(MEMORIES),
              host_port=80 if d.one_in(10) else 0,
              node_selector={"zone": "a"} if d.one_in(5) else None,
              preemption_policy="Never" if d.one_in(20) else None)
    if d.one_in(10):
        requests_of(obj)[GPU] = "1"
    if d.one_in(6):
        requests_of(obj)["ephemeral-storage"] = "1Gi"
    if d.one_in(4):
        obj["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    if d.one_in(10):
        obj["spec"]["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}}}]
    return obj


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """The sizes are Hypothesis's draws (they shrink), the objects' fields `tests.seeded`'s."""
    count = draw(st.integers(1, 4))
    pod_count = draw(st.integers(0, 16))
    pdb_count = draw(st.integers(0, 3))
    d = seeded(draw)
    objects = [node_object(d, i) for i in range(count)]
    pods = [pod_object(d, j, count) for j in range(pod_count)]
    objects += pods
    for k in range(pdb_count):
        disrupted: tuple[str, ...] = ()
        if pods and d.one_in(4):
            disrupted = tuple(d.choice([p["metadata"]["name"] for p in pods])
                              for _ in range(d.integer(0, 2)))
        objects.append(pdb(f"pdb{k}", {"app": d.choice(["a", "b"])},
                           d.choice([0, 1, 1, 2]),
                           namespace=d.choice(["default", "default", "other"]),
                           disrupted=disrupted))
    uids = [p["metadata"]["uid"] for p in pods] + ["uid-nope"]
    proposals: dict[str, list[str]] = {}
    candidates = [f"n{i}" for i in range(count)] + ["ghost"]
    for name in d.some(candidates, 5, unique=True):
        # Mostly the node's own pods, sometimes a stranger or an unknown UID.
        mine = [p["metadata"]["uid"] for p in pods if p["spec"]["nodeName"] == name]
        proposals[name] = [d.choice(mine * 4 + uids) for _ in range(d.integer(0, 5))]
    return objects, preemptor(d), proposals


# ---- the property ----------------------------------------------------------------------------

def assert_same(profile_name: str, state: ClusterState, me: dict[str, Any],
                proposals: dict[str, list[str]], memo: PreemptionMemo, now: float) -> None:
    preemptor = view(me)
    prof = PROFILES[profile_name]
    fast = process_preemption(prof, preemptor, proposals, state, now, memo=memo)
    slow = process_preemption(prof, preemptor, proposals, state, now, fast_path=False)
    assert summary(fast) == summary(slow)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.sampled_from(["fixture", "default", "default", "toleration"]), st.data())
def test_fast_path_gives_the_straightforward_answer(scenario, profile_name, data):
    objects, me, proposals = scenario
    state = cluster(*objects)
    memo = PreemptionMemo()
    assert_same(profile_name, state, me, proposals, memo, NOW)
    # Again with the memo's plans, then at a time before some pods started.
    assert_same(profile_name, state, me, proposals, memo, NOW)
    assert_same(profile_name, state, me, proposals, memo, NOW - 1800)
    # The cluster changes under the memo: a pod leaves, one arrives, a PDB changes.
    bound = [o for o in objects if o["kind"] == "Pod" and o["spec"]["nodeName"]]
    if bound:
        gone = data.draw(st.sampled_from(bound))
        state.delete_pod(gone["metadata"]["namespace"], gone["metadata"]["name"])
    newcomer = pod("late", f"n{data.draw(st.integers(0, 3))}",
                   priority=data.draw(st.integers(0, 9)), cpu="500m", labels={"app": "a"})
    if newcomer["spec"]["nodeName"] in state.nodes:
        state.apply_pod(k8s.convert(newcomer, k8s.Pod))
    if data.draw(st.booleans()):
        state.apply_pdb(k8s.convert(pdb("pdb0", {"app": "a"}, data.draw(st.integers(0, 1))),
                                    k8s.PodDisruptionBudget))
    assert_same(profile_name, state, me, proposals, memo, NOW)


@st.composite
def crowded_nodes(draw: st.DrawFn) -> Scenario:
    """Two full nodes under budgets with room: the cases the fast path decides with a plan
    (completing a proposal, counting violations that depend on the order)."""
    pod_count = draw(st.integers(1, 14))
    d = seeded(draw)
    objects: list[dict[str, Any]] = [node("n0", cpu="4", pods=d.choice(["8", "110"])),
                                     node("n1", cpu="6", memory="3Gi")]
    for j in range(pod_count):
        app = d.choice(["a", "b", "c"])
        # Few priorities and start times: ties, which keep the given order.
        objects.append(pod(f"p{j}", f"n{d.integer(0, 1)}", priority=d.integer(0, 3),
                           cpu=d.choice(["0", "100m", "500m", "1"]),
                           memory=d.choice(["0", "64Mi", "256Mi"]),
                           start=d.choice([None, T0 - 600, T0 - 1800, T0 - 3600]),
                           labels={"app": app}))
    objects += [pdb("pa", {"app": "a"}, d.integer(0, 2)),
                pdb("pb", {"app": "b"}, d.integer(1, 3))]
    me = pod("me", priority=d.integer(1, 5), cpu=d.choice(["1", "2", "3"]),
             memory=d.choice(["0", "512Mi"]))
    proposals = {}
    for name in ("n0", "n1"):
        mine = [o["metadata"]["uid"] for o in objects
                if o["kind"] == "Pod" and o["spec"]["nodeName"] == name]
        if mine:
            proposals[name] = d.some(mine, 4)
    return objects, me, proposals


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(crowded_nodes())
def test_completions_and_violations_match_on_crowded_nodes(scenario):
    objects, me, proposals = scenario
    state = cluster(*objects)
    memo = PreemptionMemo()
    assert_same("fixture", state, me, proposals, memo, NOW)
    assert_same("fixture", state, me, proposals, memo, NOW)
    # Some pods "started" after this reading (clock skew): unstarted pods now come first.
    assert_same("fixture", state, me, proposals, memo, NOW - 1800)
    # Other preemptor priorities: the plans serve those that evict the same pods.
    for priority in (me["spec"]["priority"] + 1, me["spec"]["priority"] - 1, 7):
        other = pod("me", priority=priority, cpu=requests_of(me)["cpu"],
                    memory=requests_of(me)["memory"])
        assert_same("fixture", state, other, proposals, memo, NOW)


# ---- the fast path is taken, and only where it may be -----------------------------------------

def decided(monkeypatch: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> int | None:
    """How many nodes the fast path decided (None: not used for the request)."""
    seen: list[fastpath_module.FastPath | None] = []
    original = fastpath_module.FastPath.for_request.__func__  # type: ignore[attr-defined]

    def spy(cls: type, *a: Any, **k: Any) -> fastpath_module.FastPath | None:
        found = original(cls, *a, **k)
        seen.append(found)
        return found

    monkeypatch.setattr(fastpath_module.FastPath, "for_request", classmethod(spy))
    process_preemption(*args, **kwargs)
    return seen[0].decided if seen and seen[0] is not None else None


def plain_cluster() -> ClusterState:
    return cluster(node("n", cpu="3"), node("m", cpu="3", taints=[
        {"key": "k", "value": "v", "effect": "NoSchedule"}]),
        pod("a", "n", priority=30, labels={"app": "a"}), pod("b", "n", priority=20),
        pod("c", "n", priority=10, labels={"app": "a"}), pod("d", "m", priority=1),
        pdb("pa", {"app": "a"}, 1))


def test_the_common_cases_are_decided_without_the_straightforward_path(monkeypatch):
    me = view(pod("me", priority=100, cpu="2"))
    proposals = {"n": ["uid-c"], "m": ["uid-d"], "ghost": []}
    assert decided(monkeypatch, PROFILES["default"], me, proposals, plain_cluster(), NOW) == 2


@pytest.mark.parametrize("change", ["host port", "extended resource", "spread", "toleration"])
def test_requests_it_cannot_prove_take_the_straightforward_path(monkeypatch, change):
    obj = pod("me", priority=100, cpu="2", host_port=80 if change == "host port" else 0)
    if change == "extended resource":
        requests_of(obj)[GPU] = "1"
    if change == "spread":
        obj["spec"]["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "a"}}}]
    prof = PROFILES["toleration" if change == "toleration" else "default"]
    assert decided(monkeypatch, prof, view(obj), {"n": ["uid-c"]}, plain_cluster(), NOW) is None


def test_a_node_with_room_reserved_by_a_nominated_pod_takes_the_straightforward_path(monkeypatch):
    state = plain_cluster()
    state.apply_pod(k8s.convert(pod("waiting", priority=500, nominated="n"), k8s.Pod))
    me = view(pod("me", priority=100, cpu="2"))
    assert decided(monkeypatch, PROFILES["default"], me, {"n": ["uid-c"]}, state, NOW) == 0


def test_nodes_too_small_are_worded_each_by_its_own_failures():
    # Both nodes are too small for 2 cpu; one is also full. Each drop names its own reasons.
    state = cluster(node("full", cpu="1", pods="1"), node("roomy", cpu="1"),
                    pod("x", "full", priority=500, cpu="100m"),
                    pod("y", "roomy", priority=500, cpu="100m"))
    me = view(pod("me", priority=100, cpu="2"))
    proposals: dict[str, list[str]] = {"full": [], "roomy": [], "ghost": []}
    fast = process_preemption(PROFILES["fixture"], me, proposals, state, NOW)
    slow = process_preemption(PROFILES["fixture"], me, proposals, state, NOW, fast_path=False)
    assert summary(fast) == summary(slow)
    assert fast.drop_details["full"] == "NodeResourcesFit: Too many pods, Insufficient cpu"
    assert fast.drop_details["roomy"] == "NodeResourcesFit: Insufficient cpu"


# ---- the walk ----------------------------------------------------------------------------------

def one_by_one(amounts: list[int], room: int, slots: int, pinned: set[int]) -> list[int]:
    """`select_victims_on_node`'s loop in one resource, pod by pod."""
    victims, used, back = [], 0, 0
    for i, amount in enumerate(amounts):
        if i in pinned or used + amount > room or back + 1 > slots:
            victims.append(i)
        else:
            used += amount
            back += 1
    return victims


@given(st.lists(st.integers(0, 5), max_size=12), st.integers(0, 20), st.integers(0, 12),
       st.data())
def test_reprieve_agrees_with_offering_pods_back_one_by_one(amounts, room, slots, data):
    pods = tuple(view(pod(f"p{i}", "n", priority=0, cpu=f"{a}m", memory="0",
                          start=T0 - 100 + i)) for i, a in enumerate(amounts))
    plan = NodePlan(pods, 1, 0, lambda p: (), ())
    assert [p.name for p in plan.walk] == [p.name for p in pods]
    pinned = sorted(set(data.draw(st.lists(st.integers(0, max(len(amounts) - 1, 0)),
                                           max_size=3)))) if amounts else []
    assert reprieve(plan.table, plan.size, [(0, room)], slots, pinned) == \
        one_by_one(amounts, room, slots, set(pinned))
