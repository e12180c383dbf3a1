"""What the conformance oracle found when it came to run scheduler-plugins' Coscheduling,
CapacityScheduling and NodeResourceTopologyMatch (v0.34.7 in kube-scheduler 1.34.4's
framework, their objects served by the oracle's own API): each expected answer below is the
oracle's, on the same objects.

- The pod being scheduled is one of its group's pods: kube-scheduler's pod informer holds it,
  so Coscheduling's sibling count includes it (`evaluate` counted only the objects).
- Coscheduling's "resource gap" is `%v` of a ResourceList: Go prints each Quantity struct.
- CapacityScheduling's PostFilter reads the state its PreFilter wrote; when an earlier PreFilter
  answered UnschedulableAndUnresolvable, that never ran: "not eligible due to failed to read
  from cycleState".
- After a PreFilter rejection every node is potential, those a PreFilterResult left out too;
  the dry run runs the Filters alone on them.
- NodeResourceTopologyMatch names an init container it cannot align by its kind: a sidecar
  (`restartPolicy: Always`) is "cannot align sidecar container"; and its pod's effective
  request (`util.GetPodEffectiveRequest`) includes the pod's overhead.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from extender.engine import evaluate
from extender.engine.evaluate import evaluation_inputs
from extender.engine.registry import DEFAULT_FILTERS
from extender.engine.runner import run_filters
from extender.model.goquantity import GoQuantity, parse_go_quantity

Obj = dict[str, Any]
CUSTOM = "scheduling.x-k8s.io/v1alpha1"


def node(name: str, cpu: str = "4", memory: str = "8Gi", unschedulable: bool = False) -> Obj:
    amounts = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"unschedulable": True} if unschedulable else {},
            "status": {"allocatable": amounts, "capacity": dict(amounts)}}


def pod(name: str, *, requests: Obj | None = None, group: str | None = None,
        node_name: str | None = None, priority: int = 0, only_on: str | None = None,
        namespace: str = "default") -> Obj:
    container: Obj = {"name": "c", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests}
    out: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                             "labels": {"scheduling.x-k8s.io/pod-group": group} if group else {}},
                "spec": {"containers": [container], "priority": priority},
                "status": {"phase": "Pending"}}
    if node_name:
        out["spec"]["nodeName"] = node_name
        out["status"] = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
    if only_on:
        out["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [only_on]}]}]}}}
    return out


def pod_group(name: str, min_member: int, min_resources: Obj | None = None) -> Obj:
    spec: Obj = {"minMember": min_member}
    if min_resources:
        spec["minResources"] = min_resources
    return {"apiVersion": CUSTOM, "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def quota(namespace: str, min_: Obj, max_: Obj) -> Obj:
    return {"apiVersion": CUSTOM, "kind": "ElasticQuota",
            "metadata": {"name": "quota", "namespace": namespace},
            "spec": {"min": min_, "max": max_}}


def policy(*pre_filters: str, quota_post_filter: bool = False) -> Obj:
    plugins: Obj = {"filter": {"enabled": [{"name": n} for n in (*DEFAULT_FILTERS, *pre_filters)]}}
    if quota_post_filter:
        plugins["postFilter"] = {"enabled": [{"name": "CapacityScheduling"}]}
    return {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
            "kubernetesVersion": "1.34", "plugins": plugins}


def post_filter_reasons(objects: list[Obj], pending: Obj, policy: Obj) -> tuple[str, ...]:
    profile, state, view, infos = evaluation_inputs(objects, pending, policy)
    statuses = run_filters(profile, view, infos, state).statuses
    assert profile.post_filter is not None
    result = profile.post_filter.post_filter(profile, view, statuses, state, 0.0, random.Random(0))
    return result.status.reasons


def gap_of(objects: list[Obj], pending: Obj) -> list[str]:
    prefilter = evaluate(objects, pending, policy("Coscheduling")).prefilter
    assert prefilter is not None and prefilter["plugin"] == "Coscheduling"
    return prefilter["reasons"]


def test_the_pod_itself_counts_among_its_groups_pods() -> None:
    pending = pod("pending", group="g")
    alone = evaluate([node("n1"), pod_group("g", 2)], pending, policy("Coscheduling"))
    assert alone.prefilter is not None
    assert alone.prefilter["reasons"] == [
        "pre-filter pod pending cannot find enough sibling pods, current pods number: 1, "
        "minMember of group: 2"]
    enough = evaluate([node("n1"), pod_group("g", 1)], pending, policy("Coscheduling"))
    assert enough.prefilter is None and enough.filter == {"n1": None}


@pytest.mark.parametrize(("nodes", "min_resources", "words"), [
    ([node("n1", cpu="1", memory="2Gi")], {"cpu": "16", "memory": "16Gi"},
     "resource gap: map[cpu:{{15000 -3} {<nil>}  DecimalSI} "
     "memory:{{15032385536 0} {<nil>}  BinarySI}]"),
    ([node("n1", cpu="1", memory="2Gi")], {"cpu": "1.5"},
     "resource gap: map[cpu:{{500 -3} {<nil>}  DecimalSI}]"),
    ([node("n1", cpu="100m"), node("n2", cpu="200m")], {"cpu": "500m"},
     "resource gap: map[cpu:{{200 -3} {<nil>}  DecimalSI}]"),
], ids=["whole cores and Gi", "a fraction", "millicores over two nodes"])
def test_the_resource_gap_is_worded_as_go_prints_its_quantities(
        nodes: list[Obj], min_resources: Obj, words: str) -> None:
    objects = [*nodes, pod_group("g", 1, min_resources)]
    assert gap_of(objects, pod("pending", group="g")) == [words]


def test_go_quantities_parse_and_subtract_as_apimachinery_does() -> None:
    # ParseQuantity keeps a canonical text until arithmetic clears it.
    assert parse_go_quantity("16") == GoQuantity(16, 0, "DecimalSI", "16")
    assert parse_go_quantity("16Gi") == GoQuantity(16 << 30, 0, "BinarySI", "")
    assert parse_go_quantity("500m") == GoQuantity(500, -3, "DecimalSI", "500m")
    assert parse_go_quantity("1.5") == GoQuantity(15, -1, "DecimalSI", "")
    assert parse_go_quantity("2000") == GoQuantity(2000, 0, "DecimalSI", "")
    # Sub aligns to the finer scale; zero leaves the amount and its scale as they were.
    assert parse_go_quantity("16").sub(1000, -3, "DecimalSI") == GoQuantity(15000, -3, "DecimalSI")
    assert parse_go_quantity("16").sub(0, 0, "") == GoQuantity(16, 0, "DecimalSI")
    # A zero amount takes the other's format.
    assert parse_go_quantity("0").sub(-5, 0, "BinarySI") == GoQuantity(5, 0, "BinarySI")


def test_capacity_scheduling_is_not_eligible_when_its_prefilter_did_not_run() -> None:
    objects = [node("n1", cpu="1"), pod("big", requests={"cpu": "1"}, node_name="n1",
                                         namespace="team-a"),
               pod_group("g", 3), quota("default", {"cpu": "4"}, {"cpu": "8"}),
               quota("team-a", {"cpu": "0"}, {"cpu": "8"})]
    pending = pod("pending", requests={"cpu": "1"}, group="g", priority=100)
    both = policy("Coscheduling", "CapacityScheduling", quota_post_filter=True)
    assert evaluate(objects, pending, both).prefilter["plugin"] == "Coscheduling"  # type: ignore[index]
    assert post_filter_reasons(objects, pending, both) == (
        "not eligible due to failed to read from cycleState",)


def test_the_dry_run_after_a_prefilter_rejection_runs_the_filters_alone() -> None:
    # CapacityScheduling rejects the pod (its namespace would pass its max), so every node is
    # potential, n1 too, which NodeAffinity's PreFilterResult (metadata.name) left out.
    objects = [node("n1", cpu="1", unschedulable=True),
               pod("running", requests={"cpu": "1", "memory": "1Gi"}, node_name="n1"),
               quota("default", {"cpu": "16", "memory": "0"}, {"cpu": "2"})]
    pending = pod("pending", requests={"cpu": "2"}, priority=1000, only_on="gone-node")
    assert post_filter_reasons(objects, pending, policy("CapacityScheduling",
                                                        quota_post_filter=True)) == (
        "0/1 nodes are available: 1 node(s) were unschedulable.",)


def topology(scope: str, cpu: str, memory: str) -> Obj:
    """n1's NodeResourceTopology: two NUMA zones, each with `cpu` and `memory` available."""
    def zone(name: str) -> Obj:
        return {"name": name, "type": "Node", "resources": [
            {"name": "cpu", "capacity": "2", "allocatable": "2", "available": cpu},
            {"name": "memory", "capacity": "4Gi", "allocatable": "4Gi", "available": memory}]}
    return {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
            "metadata": {"name": "n1"}, "zones": [zone("node-0"), zone("node-1")],
            "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                           {"name": "topologyManagerScope", "value": scope}]}


def guaranteed(cpu: str, memory: str = "256Mi") -> Obj:
    amounts = {"cpu": cpu, "memory": memory}
    return {"requests": amounts, "limits": dict(amounts)}


def numa_verdict(objects: list[Obj], pending: Obj) -> Obj | None:
    nrt = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
           "kubernetesVersion": "1.34", "plugins": {"filter": {"enabled": [
               {"name": n} for n in (*DEFAULT_FILTERS, "NodeResourceTopologyMatch")]}}}
    return evaluate(objects, pending, nrt).filter["n1"]


@pytest.mark.parametrize(("restart_policy", "words"), [
    ("Always", "cannot align sidecar container"), (None, "cannot align init container")])
def test_an_init_container_that_cannot_be_aligned_is_named_by_its_kind(
        restart_policy: str | None, words: str) -> None:
    init: Obj = {"name": "side", "image": "busybox", "resources": guaranteed("1")}
    if restart_policy:
        init["restartPolicy"] = restart_policy
    pending = pod("pending")
    pending["spec"]["containers"][0]["resources"] = guaranteed("100m")
    pending["spec"]["initContainers"] = [init]
    objects = [node("n1", cpu="4", memory="8Gi"), topology("container", "500m", "2Gi")]
    verdict = numa_verdict(objects, pending)
    assert verdict is not None and verdict["plugin"] == "NodeResourceTopologyMatch"
    assert verdict["reasons"] == [words]


@pytest.mark.parametrize(("overhead", "words"), [
    ({"cpu": "100m", "memory": "64Mi"}, ["cannot align pod"]), (None, None)])
def test_the_pod_overhead_counts_in_its_numa_request(overhead: Obj | None,
                                                      words: list[str] | None) -> None:
    pending = pod("pending")
    pending["spec"]["containers"][0]["resources"] = guaranteed("1", "2Gi")
    if overhead:
        pending["spec"]["overhead"] = overhead
    verdict = numa_verdict([node("n1", cpu="4", memory="8Gi"), topology("pod", "2", "2Gi")],
                           pending)
    assert (verdict and verdict["reasons"]) == words
