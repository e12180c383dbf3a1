"""PodTopologySpread and InterPodAffinity through preemption: the preempt verb and the dry run
remove victims through the plugins' RemovePod on a copy of the cycle state, and nominated pods
count through AddPod, as `SelectVictimsOnNode` and `RunFilterPluginsWithNominatedPods` do."""

from __future__ import annotations

import random

from extender.engine.evaluate import cluster_from_objects
from extender.engine.framework import Code
from extender.engine.policy import parse_policy
from extender.engine.preemption import fits_with_nominated, preempt, process_preemption
from extender.engine.profile import build_profile
from extender.engine.runner import prepare_filters, run_filters
from extender.model import k8s
from extender.model.pod import PodView
from tests.engine.upstream.builders import node, pod, policy, selector

NOW = 1_700_000_000.0
PROFILE = build_profile(parse_policy(policy(
    filters=["NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"], scores=[],
    post_filters=["DefaultPreemption"], args={"PodTopologySpread": {"defaultingType": "List"}})))
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def n(name: str, zone: str, cpu: str = "4") -> dict:
    return node(name, {ZONE: zone, HOST: name}, allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"})


def view(obj: dict) -> PodView:
    return PodView.from_k8s(k8s.convert(obj, k8s.Pod))


def anti(app: str, key: str = HOST) -> dict:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": key, "labelSelector": selector({"app": app})}]}}


def spread(app: str, max_skew: int = 1) -> list[dict]:
    return [{"maxSkew": max_skew, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": selector({"app": app})}]


def test_preempt_verb_keeps_a_proposal_whose_removal_lifts_anti_affinity():
    objects = [n("n1", "a"), n("n2", "b"),
               pod("db", labels={"app": "db"}, node="n1", priority=1, requests={"cpu": "1"}),
               pod("other", labels={"app": "x"}, node="n1", priority=1, requests={"cpu": "1"})]
    state = cluster_from_objects(objects)
    me = view(pod("web", labels={"app": "web"}, affinity=anti("db"), priority=100,
                  requests={"cpu": "1"}))
    result = run_filters(PROFILE, me, [state.nodes["n1"]], state)
    assert result.statuses["n1"].reasons == ("node(s) didn't match pod anti-affinity rules",)
    assert result.statuses["n1"].code == Code.UNSCHEDULABLE
    # The scheduler proposes the db pod: once RemovePod takes it out, the pod fits.
    outcome = process_preemption(PROFILE, me, {"n1": ["uid-default-db"]}, state, NOW)
    assert [p.name for p in outcome.victims["n1"].pods] == ["db"]
    # Proposing only `other` is not enough: the verb completes it with the db pod.
    outcome = process_preemption(PROFILE, me, {"n1": ["uid-default-other"]}, state, NOW)
    assert sorted(p.name for p in outcome.victims["n1"].pods) == ["db", "other"]
    # The state itself is untouched by the verb's RemovePod calls.
    assert run_filters(PROFILE, me, [state.nodes["n1"]], state).statuses["n1"].reasons == (
        "node(s) didn't match pod anti-affinity rules",)


def test_dry_run_removes_an_existing_pods_anti_affinity_through_remove_pod():
    # Symmetry: the existing pod refuses web pods on its node; evicting it is the only way.
    objects = [n("n1", "a"),
               pod("guard", labels={"app": "guard"}, node="n1", priority=1, affinity=anti("web"),
                   requests={"cpu": "1"}),
               pod("filler", labels={"app": "x"}, node="n1", priority=1, requests={"cpu": "1"})]
    state = cluster_from_objects(objects)
    me = view(pod("web", labels={"app": "web"}, priority=100, requests={"cpu": "1"}))
    statuses = run_filters(PROFILE, me, list(state.nodes.values()), state).statuses
    assert statuses["n1"].reasons == ("node(s) didn't satisfy existing pods anti-affinity rules",)
    result = preempt(PROFILE, me, statuses, state, NOW, random.Random(0))
    assert result.status.code == Code.SUCCESS
    assert result.node_name == "n1"
    assert [p.name for p in result.victims.pods] == ["guard"]  # `filler` is reprieved


def test_dry_run_with_spread_counts_removed_and_reprieved_pods():
    # zone a holds two web pods; zone b is full of a lower-priority hog.
    objects = [n("a1", "a"), n("b1", "b", cpu="2"),
               pod("web-1", labels={"app": "web"}, node="a1", priority=1, requests={"cpu": "1"}),
               pod("web-2", labels={"app": "web"}, node="a1", priority=2, requests={"cpu": "1"}),
               pod("hog", labels={"app": "hog"}, node="b1", priority=1, requests={"cpu": "2"})]
    state = cluster_from_objects(objects)
    me = view(pod("web-3", labels={"app": "web"}, spread=spread("web"), priority=100,
                  requests={"cpu": "1"}))
    statuses = run_filters(PROFILE, me, list(state.nodes.values()), state).statuses
    assert statuses["a1"].reasons == ("node(s) didn't match pod topology spread constraints",)
    assert statuses["b1"].reasons == ("Insufficient cpu",)
    result = preempt(PROFILE, me, statuses, state, NOW, random.Random(0))
    # On a1 both web pods must go (with one back, zone a would be 2 against zone b's 0); on
    # b1 the hog alone. One victim beats two.
    assert {name: sorted(p.name for p in v.pods) for name, v in result.candidates.items()} == {
        "a1": ["web-1", "web-2"], "b1": ["hog"]}
    assert result.node_name == "b1"


def test_nominated_pods_count_through_add_pod():
    objects = [n("n1", "a"), n("n2", "b")]
    state = cluster_from_objects(objects)
    me = view(pod("web-2", labels={"app": "web"}, affinity=anti("web"), priority=10,
                  requests={"cpu": "1"}))
    reserved = view(pod("web-1", labels={"app": "web"}, priority=10, requests={"cpu": "1"}))
    filters = prepare_filters(PROFILE, me, state)
    # A web pod of equal priority nominated to n1 takes its place, as if it were there.
    status = fits_with_nominated(filters, me, state.nodes["n1"], [reserved])
    assert status is not None
    assert status.reasons == ("node(s) didn't match pod anti-affinity rules",)
    assert fits_with_nominated(filters, me, state.nodes["n2"], []) is None
    # The pass's own state is untouched: without nominations n1 fits.
    assert filters.node_fits(state.nodes["n1"]) is None
