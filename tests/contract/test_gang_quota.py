"""CapacityScheduling and Coscheduling through the real HTTP app (snapshot mode): the filter
verb's PreFilter rejections, the quota reservation between filter and bind, and the preempt
verb pruning kube-scheduler's victims to those the quota rules allow."""

from __future__ import annotations

import json

from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.engine.evaluate import cluster_from_objects
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from tests.engine.upstream.builders import node, pod

GROUP = "scheduling.x-k8s.io/pod-group"


def quota(namespace: str, low: dict[str, str], high: dict[str, str]) -> dict:
    return {"kind": "ElasticQuota", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "metadata": {"name": "eq", "namespace": namespace},
            "spec": {"min": low, "max": high}}


def pod_group(name: str, min_member: int, min_resources: dict[str, str] | None = None) -> dict:
    spec: dict = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = min_resources
    return {"kind": "PodGroup", "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def client_for(objects: list[dict], filters: list[str], post_filter: str | None = None,
               reservation_ttl: float = 30.0) -> TestClient:
    document: dict = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                      "plugins": {"filter": {"enabled": [{"name": n} for n in filters]}}}
    if post_filter:
        document["plugins"]["postFilter"] = {"enabled": [{"name": post_filter}]}
    state = cluster_from_objects(objects)
    runtime = Runtime(build_profile(parse_policy(document)), state, SnapshotBinder(state, 30.0))
    if "CapacityScheduling" in filters:
        runtime.quota_reservation_ttl = reservation_ttl
    return TestClient(create_app(runtime))


def filter_args(pending: dict, names: list[str]) -> dict:
    return {"Pod": pending, "Nodes": None, "NodeNames": names}


NODES = [node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}),
         node("n2", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})]
ROOMY = {"cpu": "100", "memory": "100Gi"}


def test_quota_rejection_fails_every_node_as_resolvable() -> None:
    objects = [*NODES, quota("ns1", {"cpu": "1", **{"memory": "100Gi"}}, {"cpu": "2", "memory": "100Gi"}),
               pod("old", "ns1", node="n1", requests={"cpu": "1500m"})]
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"]) as client:
        big = pod("big", "ns1", requests={"cpu": "1"})
        reply = client.post("/filter", json=filter_args(big, ["n1", "n2"])).json()
    message = "Pod ns1/big is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    # FailedNodes (preemption may help), every candidate with the same message.
    assert reply["FailedNodes"] == {"n1": message, "n2": message}
    assert not reply["FailedAndUnresolvableNodes"]
    assert not reply["NodeNames"]


def test_two_pods_filtered_back_to_back_cannot_both_take_the_last_unit() -> None:
    objects = [*NODES, quota("ns1", {"cpu": "2", "memory": "100Gi"}, {"cpu": "2", "memory": "100Gi"}),
               pod("old", "ns1", node="n1", requests={"cpu": "1"})]
    first = pod("first", "ns1", requests={"cpu": "1"})
    second = pod("second", "ns1", requests={"cpu": "1"})
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"]) as client:
        assert client.post("/filter", json=filter_args(first, ["n1", "n2"])).json()["NodeNames"] == ["n1", "n2"]
        # `first` is not bound yet, but it passed: kube-scheduler has reserved it.
        reply = client.post("/filter", json=filter_args(second, ["n1", "n2"])).json()
        assert reply["NodeNames"] == []
        assert reply["FailedNodes"]["n1"] == ("Pod ns1/second is rejected in PreFilter because "
                                              "ElasticQuota ns1 is more than Max")
        # Filtering `first` again (a retry) does not count it twice.
        assert client.post("/filter", json=filter_args(first, ["n1"])).json()["NodeNames"] == ["n1"]
        bind = {"PodName": "first", "PodNamespace": "ns1", "PodUID": first["metadata"]["uid"],
                "Node": "n2"}
        assert client.post("/bind", json=bind).json() == {"Error": ""}
        reply = client.post("/filter", json=filter_args(second, ["n1", "n2"])).json()
        assert reply["NodeNames"] == []


def test_reservation_expires_when_no_bind_follows() -> None:
    objects = [*NODES, quota("ns1", {"cpu": "1", "memory": "100Gi"}, {"cpu": "1", "memory": "100Gi"})]
    first = pod("first", "ns1", requests={"cpu": "1"})
    second = pod("second", "ns1", requests={"cpu": "1"})
    with client_for(objects, ["CapacityScheduling"], reservation_ttl=0.0001) as client:
        assert client.post("/filter", json=filter_args(first, ["n1"])).json()["NodeNames"] == ["n1"]
        assert client.post("/filter", json=filter_args(second, ["n1"])).json()["NodeNames"] == ["n1"]


def test_a_failed_bind_gives_its_reservation_back() -> None:
    # CapacityScheduling's Unreserve: a pod whose bind failed no longer counts in its quota
    # (kube-scheduler retries it, and its next filter reserves again).
    objects = [*NODES, quota("ns1", {"cpu": "1", "memory": "100Gi"}, {"cpu": "1", "memory": "100Gi"})]
    first = pod("first", "ns1", requests={"cpu": "1"})
    second = pod("second", "ns1", requests={"cpu": "1"})
    with client_for(objects, ["CapacityScheduling"]) as client:
        assert client.post("/filter", json=filter_args(first, ["n1"])).json()["NodeNames"] == ["n1"]
        assert client.post("/filter", json=filter_args(second, ["n1"])).json()["NodeNames"] == []
        bind = {"PodName": "first", "PodNamespace": "ns1", "PodUID": first["metadata"]["uid"],
                "Node": "gone"}
        assert client.post("/bind", json=bind).json() == {"Error": 'node "gone" not found'}
        assert client.post("/filter", json=filter_args(second, ["n1"])).json()["NodeNames"] == [
            "n1"]


def _clocked(objects: list[dict], filters: list[str]) -> tuple[TestClient, list[float], Runtime]:
    """An app whose state reads `now[0]` as its clock, with serve's reservation lifetimes."""
    from extender.api.runtime import configure_gang_and_quota

    document: dict = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                      "plugins": {"filter": {"enabled": [{"name": n} for n in filters]}}}
    now = [1000.0]
    state = cluster_from_objects(objects)
    state.clock = lambda: now[0]
    runtime = Runtime(build_profile(parse_policy(document)), state, SnapshotBinder(state, 30.0))
    configure_gang_and_quota(runtime, bind_deadline=4.0, scheduler_http_timeout=None)
    return TestClient(create_app(runtime)), now, runtime


def test_a_filter_flood_locks_a_quota_only_while_the_flooding_cycles_last() -> None:
    # A pod that passes the filter counts against its quota until its bind, or until
    # kube-scheduler's cycle for it is over: its prioritize and its bind (5 s + the bind
    # deadline 4 s + 1 s). A stream of pods that pass and never bind (one a second) keeps the
    # last unit taken only while those cycles could still end in a bind.
    objects = [*NODES, quota("ns1", {"cpu": "1", "memory": "100Gi"},
                             {"cpu": "1", "memory": "100Gi"})]
    client, now, runtime = _clocked(objects, ["CapacityScheduling"])
    assert runtime.quota_reservation_ttl == 10.0
    legit = pod("legit", "ns1", requests={"cpu": "1"})
    with client:
        for i in range(30):
            flood = pod(f"flood-{i}", "ns1", requests={"cpu": "1"})
            if client.post("/filter", json=filter_args(flood, ["n1"])).json()["NodeNames"]:
                taken_at = now[0]
            assert client.post("/filter", json=filter_args(legit, ["n1"])).json()[
                "NodeNames"] == []
            now[0] += 1.0
        # The flood stops; the last reservation ends 10 s after it was made.
        now[0] = taken_at + 10.0
        assert client.post("/filter", json=filter_args(legit, ["n1"])).json()[
            "NodeNames"] == ["n1"]


def test_a_new_cycle_that_fails_ends_the_last_reservation() -> None:
    objects = [*NODES, quota("ns1", {"cpu": "2", "memory": "100Gi"},
                             {"cpu": "2", "memory": "100Gi"})]
    client, now, _ = _clocked(objects, ["NodeAffinity", "NodeResourcesFit", "CapacityScheduling"])
    first = pod("first", "ns1", requests={"cpu": "1"})
    other = pod("other", "ns1", requests={"cpu": "2"})
    with client:
        assert client.post("/filter", json=filter_args(first, ["n1"])).json()["NodeNames"]
        assert client.post("/filter", json=filter_args(other, ["n1"])).json()["NodeNames"] == []
        # `first` comes back with a node selector n1 does not match: its new cycle fails, and
        # the reservation of its last one is over.
        small = {**first, "spec": {**first["spec"], "nodeSelector": {"none": "none"}}}
        reply = client.post("/filter", json=filter_args(small, ["n1"])).json()
        assert reply["NodeNames"] == []
        assert client.post("/filter", json=filter_args(other, ["n1"])).json()["NodeNames"] == [
            "n1"]


def test_a_gang_members_reservation_lasts_its_wait_at_permit() -> None:
    members = [pod(f"m{i}", "ns1", labels={GROUP: "pg"}, requests={"cpu": "1"})
               for i in range(2)]
    group = {**pod_group("pg", 2), "metadata": {"name": "pg", "namespace": "ns1"}}
    objects = [*NODES, quota("ns1", {"cpu": "1", "memory": "100Gi"},
                             {"cpu": "1", "memory": "100Gi"}), group, *members]
    client, now, runtime = _clocked(objects, ["CapacityScheduling", "Coscheduling"])
    loner = pod("loner", "ns1", requests={"cpu": "1"})
    with client:
        assert client.post("/filter", json=filter_args(members[0], ["n1"])).json()["NodeNames"]
        # Past a plain pod's cycle, but within the group's wait at Permit (60 s): still held.
        now[0] += 30.0
        assert client.post("/filter", json=filter_args(loner, ["n1"])).json()["NodeNames"] == []
        now[0] += 40.0  # 70 s: the wait (60 s) and the rest of the cycle are over
        assert client.post("/filter", json=filter_args(loner, ["n1"])).json()["NodeNames"] == [
            "n1"]


def test_coscheduling_prefilter_rejections_are_unresolvable() -> None:
    members = [pod(f"m{i}", labels={GROUP: "pg"}, requests={"cpu": "1"}) for i in range(2)]
    objects = [*NODES, pod_group("pg", 3), *members]
    with client_for(objects, ["NodeResourcesFit", "Coscheduling"]) as client:
        reply = client.post("/filter", json=filter_args(members[0], ["n1", "n2"])).json()
        message = ("pre-filter pod m0 cannot find enough sibling pods, current pods number: 2, "
                   "minMember of group: 3")
        assert reply["FailedAndUnresolvableNodes"] == {"n1": message, "n2": message}
        assert not reply["FailedNodes"]
        # A pod of no group is not Coscheduling's business.
        loner = pod("loner", requests={"cpu": "1"})
        assert client.post("/filter", json=filter_args(loner, ["n1"])).json()["NodeNames"] == ["n1"]


def test_coscheduling_counts_the_pod_being_scheduled_which_the_snapshot_lacks() -> None:
    # kube-scheduler's pod lister holds the pod it schedules; a snapshot (or an informer that
    # has not seen it yet) does not: it still counts, once.
    siblings = [pod(f"m{i}", labels={GROUP: "pg"}, requests={"cpu": "1"}) for i in range(2)]
    newcomer = pod("m2", labels={GROUP: "pg"}, requests={"cpu": "1"})
    with client_for([*NODES, pod_group("pg", 3), *siblings], ["Coscheduling"]) as client:
        assert client.post("/filter", json=filter_args(newcomer, ["n1"])).json()["NodeNames"] == [
            "n1"]
        # A sibling the snapshot holds is not counted twice.
        reply = client.post("/filter", json=filter_args(siblings[0], ["n1"])).json()
    assert reply["FailedAndUnresolvableNodes"] == {"n1": (
        "pre-filter pod m0 cannot find enough sibling pods, current pods number: 2, "
        "minMember of group: 3")}
    with client_for([*NODES, pod_group("pg", 4), *siblings], ["Coscheduling"]) as client:
        reply = client.post("/filter", json=filter_args(newcomer, ["n1"])).json()
    assert reply["FailedAndUnresolvableNodes"] == {"n1": (
        "pre-filter pod m2 cannot find enough sibling pods, current pods number: 3, "
        "minMember of group: 4")}


def test_coscheduling_min_resources_gap() -> None:
    members = [pod(f"m{i}", labels={GROUP: "pg"}, requests={"cpu": "1"}) for i in range(3)]
    objects = [*NODES, pod_group("pg", 3, {"cpu": "10"}), *members]
    with client_for(objects, ["Coscheduling"]) as client:
        reply = client.post("/filter", json=filter_args(members[0], ["n1"])).json()
    # As Go prints a ResourceList's Quantity values (the conformance oracle's words).
    assert reply["FailedAndUnresolvableNodes"] == {
        "n1": "resource gap: map[cpu:{{2000 -3} {<nil>}  DecimalSI}]"}


# capacity_scheduling_test.go TestDryRunPreemption, "in-namespace preemption" and
# "cross-namespace preemption" (memory only), through the preempt verb: kube-scheduler's
# DefaultPreemption proposes every lower-priority pod; CapacityScheduling keeps the ones its
# quota rules allow.
def _preemption_objects(ns1: tuple[int, int], ns2: tuple[int, int], p2_priority: int) -> list[dict]:
    def eq(ns: str, low: int, high: int) -> dict:
        return quota(ns, {"cpu": "100", "memory": str(low)}, {"cpu": "100", "memory": str(high)})

    return [node("node-a", allocatable={"cpu": "100", "memory": "150", "pods": "110"}),
            eq("ns1", *ns1), eq("ns2", *ns2),
            pod("t1-p1", "ns1", node="node-a", requests={"memory": "50"}, priority=10),
            pod("t1-p2", "ns2", node="node-a", requests={"memory": "50"}, priority=p2_priority),
            pod("t1-p3", "ns2", node="node-a", requests={"memory": "50"}, priority=10)]


def _preempt(client: TestClient, proposed: list[str]) -> dict:
    preemptor = pod("t1-p", "ns1", requests={"memory": "50"}, priority=100)
    body = {"Pod": preemptor, "NodeNameToMetaVictims": {
        "node-a": {"Pods": [{"UID": f"uid-{uid}"} for uid in proposed], "NumPDBViolations": 0}}}
    return client.post("/preempt", content=json.dumps(body)).json()


def test_preempt_keeps_own_namespace_victims_when_over_min() -> None:
    objects = _preemption_objects((50, 200), (200, 200), 10)
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"], "CapacityScheduling") as client:
        reply = _preempt(client, ["ns1-t1-p1", "ns2-t1-p2", "ns2-t1-p3"])
    assert reply["NodeNameToMetaVictims"] == {
        "node-a": {"Pods": [{"UID": "uid-ns1-t1-p1"}], "NumPDBViolations": 0}}


def test_preempt_takes_borrowers_when_within_min() -> None:
    objects = _preemption_objects((150, 200), (50, 200), 1000)
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"], "CapacityScheduling") as client:
        # kube-scheduler proposes the lower-priority pods; ns1 is within its min, so only
        # ns2's pods (borrowing beyond its min) may go, and one of them is enough.
        reply = _preempt(client, ["ns1-t1-p1", "ns2-t1-p3"])
    assert reply["NodeNameToMetaVictims"] == {
        "node-a": {"Pods": [{"UID": "uid-ns2-t1-p3"}], "NumPDBViolations": 0}}


def test_preempt_replaces_a_disallowed_proposal_with_an_allowed_victim() -> None:
    objects = _preemption_objects((150, 200), (50, 200), 10)
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"], "CapacityScheduling") as client:
        # Only the preemptor's own-namespace pod is proposed, which a namespace within its
        # min may not evict; the borrower t1-p3 may go, and is enough.
        reply = _preempt(client, ["ns1-t1-p1"])
    assert reply["NodeNameToMetaVictims"] == {
        "node-a": {"Pods": [{"UID": "uid-ns2-t1-p3"}], "NumPDBViolations": 0}}


def test_preempt_drops_a_node_without_an_allowed_victim() -> None:
    # ns1 is within its min and ns2 is not borrowing (used 100 ≤ min 200): nobody may go.
    objects = _preemption_objects((150, 200), (200, 200), 10)
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"], "CapacityScheduling") as client:
        reply = _preempt(client, ["ns1-t1-p1", "ns2-t1-p3"])
    assert not reply["NodeNameToMetaVictims"]


def test_preempt_reclaims_for_a_pod_the_quota_prefilter_rejected() -> None:
    # Σ min is 150 and 150 is used, so CapacityScheduling's PreFilter rejects the preemptor
    # ("total ElasticQuota used is more than min"); ns1 is within its min, so the pods ns2
    # borrows beyond its min may be evicted, and evicting one makes room in node and quota.
    objects = _preemption_objects((100, 200), (50, 200), 10)
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"], "CapacityScheduling") as client:
        preemptor = pod("t1-p", "ns1", requests={"memory": "50"}, priority=100)
        reply = client.post("/filter", json=filter_args(preemptor, ["node-a"])).json()
        assert reply["FailedNodes"] == {"node-a": "Pod ns1/t1-p is rejected in PreFilter because "
                                                  "total ElasticQuota used is more than min"}
        reply = _preempt(client, ["ns2-t1-p3"])
    assert reply["NodeNameToMetaVictims"] == {
        "node-a": {"Pods": [{"UID": "uid-ns2-t1-p3"}], "NumPDBViolations": 0}}


def test_the_readme_walk_through_prints_what_the_readme_shows() -> None:
    # config/examples/gang-quota-{cluster,policy}.yaml and requests/*.json, as the README's
    # "gang scheduling and quotas" section runs them with curl.
    from pathlib import Path

    from extender.engine.policy import load_policy
    from extender.state.snapshot import load_snapshot

    examples = Path(__file__).resolve().parents[2] / "config" / "examples"
    state = load_snapshot(examples / "gang-quota-cluster.yaml")
    runtime = Runtime(build_profile(load_policy(examples / "gang-quota-policy.yaml")), state,
                      SnapshotBinder(state, 30.0))
    runtime.quota_reservation_ttl = 30.0

    def post(name: str) -> dict:
        return client.post("/filter", content=(examples / "requests" / f"{name}.json").read_bytes()).json()

    with TestClient(create_app(runtime)) as client:
        assert post("quota-web-1") == {"Nodes": None, "NodeNames": ["worker-1", "worker-2"],
                                       "FailedNodes": {}, "FailedAndUnresolvableNodes": {},
                                       "Error": ""}
        etl = "Pod team-a/etl-1 is rejected in PreFilter because total ElasticQuota used is more than min"
        assert post("quota-etl-1") == {"Nodes": None, "NodeNames": [],
                                       "FailedNodes": {"worker-1": etl, "worker-2": etl},
                                       "FailedAndUnresolvableNodes": {}, "Error": ""}
        train = ("pre-filter pod train-0 cannot find enough sibling pods, current pods number: 2, "
                 "minMember of group: 3")
        assert post("gang-train-0") == {"Nodes": None, "NodeNames": [], "FailedNodes": {},
                                        "FailedAndUnresolvableNodes": {"worker-1": train,
                                                                       "worker-2": train},
                                        "Error": ""}


def test_preempt_leaves_a_borrowing_namespace_its_min() -> None:
    # ns2 (min 50) uses 100 on node-a (t1-p2, t1-p3); ns1 is within its min. kube-scheduler
    # proposes both ns2 pods. CapacityScheduling asks pod by pod, least important first,
    # whether ns2 is still over its min with the ones before it gone: t1-p3 yes (100 > 50),
    # t1-p2 no (50): ns2 keeps its min. A preemptor of 100 then does not fit with t1-p3 alone
    # (the node has 150, t1-p1 keeps 50): the node is dropped, where taking both would fit.
    objects = _preemption_objects((150, 200), (50, 200), 1000)
    with client_for(objects, ["NodeResourcesFit", "CapacityScheduling"], "CapacityScheduling") as client:
        preemptor = pod("t1-p", "ns1", requests={"memory": "100"}, priority=2000)
        body = {"Pod": preemptor, "NodeNameToMetaVictims": {"node-a": {
            "Pods": [{"UID": "uid-ns2-t1-p2"}, {"UID": "uid-ns2-t1-p3"}], "NumPDBViolations": 0}}}
        reply = client.post("/preempt", content=json.dumps(body)).json()
    assert not reply["NodeNameToMetaVictims"]
