"""kube-scheduler's node-local Filter tables, transcribed (data only) and run through `evaluate`.

Plugins: NodeUnschedulable, NodeName, NodePorts, TaintToleration, NodeAffinity. (NodeResourcesFit's
filter tables are in `test_upstream_noderesources_fit.py`.) Sources, all in kubernetes/kubernetes
`pkg/scheduler/framework/plugins/`, the newest stored version of each file:

* `nodeunschedulable/node_unschedulable_test.go` TestNodeUnschedulable (3 rows);
* `nodename/node_name_test.go` TestNodeName (3 rows), commit 96a58e4b8a59;
* `nodeports/node_ports_test.go` TestNodePorts (15 rows), the `fwk` era (v1.34+) version with the
  sidecar init-container rows;
* `tainttoleration/taint_toleration_test.go` TestTaintTolerationFilter (9 rows), commit cb6ff2d8ce35,
  and TestTaintTolerationFilterWithFeatureGate (v1.37.2; the 3 rows whose answer holds with the
  `TaintTolerationComparisonOperators` gate on, as the engine has it: see
  `test_taint_toleration_filter_comparison_operators`);
* `nodeaffinity/node_affinity_test.go` TestNodeAffinity (31 rows), commit 17bae91f207a.

Every row cites its test function and case `name` (the pytest id is the case name).

Mapping. Upstream builds one NodeInfo (the node plus the pods of `NewNodeInfo(...)`), runs the
plugin's PreFilter and then Filter on that node. Here the node and the existing pods (bound via
`spec.nodeName`) are the cluster, `policy(filters=[<Plugin>], scores=[])`, and the row asserts
`ev.filter[node]`: None for a nil/Success (or PreFilter Skip) status, else
`{"plugin", "code", "reasons"}`. Nodes upstream leaves unnamed get the name "node".

Pipeline answers where upstream calls Filter on its own (TestNodeAffinity):
* a row whose `wantPreFilterResult` leaves the node out: kube-scheduler never runs Filter on that
  node; it gets the framework's status `node(s) didn't satisfy plugin(s) [NodeAffinity]`
  (UnschedulableAndUnresolvable) — asserted here instead of the Filter's own status;
* a row whose PreFilter rejects the pod ("Pod with two conflicting mach field requirements"):
  `ev.prefilter` and `ev.filter[node]` carry the PreFilter status `pod affinity terms conflict`
  (the PreFilter rejects the pod on every node);
* rows with `runPreFilter: false`: the pipeline always runs PreFilter; their Filter answer is the
  same either way.

Reason wording: TaintToleration's Filter message changed in the newest release from
`node(s) had untolerated taint {<key>: <value>}` (what the stored test table, commit cb6ff2d8ce35,
asserts) to the constant `node(s) had untolerated taint(s)` (`taint_toleration.go`, `fwk` era).
The rows assert the NEWEST wording (see `TAINT_REASON`); the three rejecting rows are also run
with the stored table's own wording under `kubernetesVersion: "1.33"`
(`test_taint_toleration_filter_stored_wording`).

Upstream's NodePorts `newPod(host, ...)` also sets `spec.nodeName = "m1"` on the incoming pod; that
field is not read by NodePorts (only NodeName reads it), so the incoming pod here is left unbound.

Not transcribed:
* `TestIsSchedulableAfterNodeChange`, `TestIsSchedulableAfterPodTolerationChange`,
  `Test_isSchedulableAfterPodChange`, `Test_isSchedulableAfterPodDeleted`,
  `Test_isSchedulableAfterNodeChange` (every file): queueing hints, not a Filter verdict.
* `TestPreFilterDisabled` (nodeports): Filter without PreFilter (an internal ErrNotFound status).
* `TestGetContainerPorts` (older nodeports versions): an internal helper.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from extender.engine import evaluate
from tests.engine.upstream.builders import node, pod, policy, taint

Obj = dict[str, Any]

U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"

NODE = "node"  # upstream's unnamed node

# Reason strings (the plugins' ErrReason constants).
UNSCHEDULABLE_REASON = "node(s) were unschedulable"  # nodeunschedulable.ErrReasonUnschedulable
NODE_NAME_REASON = "node(s) didn't match the requested node name"  # nodename.ErrReason
PORTS_REASON = "node(s) didn't have free ports for the requested pod ports"  # nodeports.ErrReason
TAINT_REASON = "node(s) had untolerated taint(s)"  # taint_toleration.go Filter, newest release
AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"  # nodeaffinity.ErrReasonPod
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"  # errReasonEnforced
CONFLICT_REASON = "pod affinity terms conflict"  # errReasonConflict
PREFILTER_RESULT_REASON = "node(s) didn't satisfy plugin(s) [NodeAffinity]"  # schedule_one.go

def status(plugin: str, code: str, *reasons: str) -> Obj:
    return {"plugin": plugin, "code": code, "reasons": list(reasons)}


def run(plugin: str, node_obj: Obj, incoming: Obj, existing: list[Obj] = (),  # type: ignore[assignment]
        args: Obj | None = None, version: str | None = None):
    objects = [node_obj, *existing]
    return evaluate(objects, incoming, policy=policy(filters=[plugin], scores=[], args=args,
                                                     kubernetes_version=version))


def bare_pod(name: str = "p", **spec: Any) -> Obj:
    """`&v1.Pod{Spec: ...}`: no containers unless given, plus the spec fields."""
    out = pod(name, containers=spec.pop("containers", []))
    for key, value in spec.items():
        if value is not None:
            out["spec"][key] = value
    return out


# =============================================================================================
# NodeUnschedulable — node_unschedulable_test.go, TestNodeUnschedulable
# =============================================================================================
UNSCHED = "NodeUnschedulable"

NODE_UNSCHEDULABLE_ROWS = [
    # (name, node unschedulable, pod tolerations, want)
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
     True, None, status(UNSCHED, UU, UNSCHEDULABLE_REASON)),
    ("Schedule pod to normal node", False, None, None),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
     True, [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], None),
]


@pytest.mark.parametrize(("unschedulable", "tolerations", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in NODE_UNSCHEDULABLE_ROWS])
def test_node_unschedulable(unschedulable: bool, tolerations: list[Obj] | None, want: Obj | None):
    # node_unschedulable_test.go TestNodeUnschedulable, case `name` = the test id.
    ev = run(UNSCHED, node(NODE, unschedulable=unschedulable), bare_pod(tolerations=tolerations))
    assert ev.filter[NODE] == want


# =============================================================================================
# NodeName — node_name_test.go, TestNodeName
# =============================================================================================
NODE_NAME = "NodeName"

NODE_NAME_ROWS = [
    # (name, pod spec.nodeName, node name, want)
    ("no host specified", "", NODE, None),
    ("host matches", "foo", "foo", None),
    ("host doesn't match", "bar", "foo", status(NODE_NAME, UU, NODE_NAME_REASON)),
]


@pytest.mark.parametrize(("pod_node", "node_name", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in NODE_NAME_ROWS])
def test_node_name(pod_node: str, node_name: str, want: Obj | None):
    # node_name_test.go TestNodeName, case `name` = the test id.
    incoming = bare_pod(nodeName=pod_node or None)
    ev = run(NODE_NAME, node(node_name), incoming)
    assert ev.filter[node_name] == want


# =============================================================================================
# NodePorts — node_ports_test.go, TestNodePorts
# =============================================================================================
PORTS = "NodePorts"


def ports(*infos: str) -> list[Obj]:
    """upstream newPod's "PROTOCOL/hostIP/hostPort" strings as container ports."""
    out = []
    for info in infos:
        protocol, host_ip, host_port = info.split("/")
        out.append({"hostIP": host_ip, "hostPort": int(host_port), "protocol": protocol})
    return out


def port_pod(name: str, *infos: str, node_name: str = "") -> Obj:
    """newPod(host, hostPortInfos...): one container with those ports (st.ContainerPort)."""
    return pod(name, node=node_name, containers=[{"name": "c", "image": "img", "ports": ports(*infos)}])


def init_port_pod(name: str, sidecar: bool, container_ports: list[Obj]) -> Obj:
    """st.MakePod().InitContainerPort(sidecar, ports): an init container with those ports,
    restartPolicy Always when `sidecar`."""
    init: Obj = {"name": "init", "image": "img", "ports": container_ports}
    if sidecar:
        init["restartPolicy"] = "Always"
    return bare_pod(name, initContainers=[init])


NODE_PORTS_ROWS = [
    # (name, incoming pod, existing pod's port infos or None, want)
    ("skip filter", bare_pod("p"), None, None),  # PreFilter Skip
    ("other port", port_pod("p", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], None),
    ("same udp port", port_pod("p", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"],
     status(PORTS, U, PORTS_REASON)),
    ("same tcp port", port_pod("p", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"],
     status(PORTS, U, PORTS_REASON)),
    ("different host ip", port_pod("p", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.2/8080"], None),
    ("different protocol", port_pod("p", "UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], None),
    ("second udp port conflict", port_pod("p", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     ["UDP/127.0.0.1/8080"], status(PORTS, U, PORTS_REASON)),
    ("first tcp port conflict", port_pod("p", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], status(PORTS, U, PORTS_REASON)),
    ("first tcp port conflict due to 0.0.0.0 hostIP", port_pod("p", "TCP/0.0.0.0/8001"),
     ["TCP/127.0.0.1/8001"], status(PORTS, U, PORTS_REASON)),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP",
     port_pod("p", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"), ["TCP/127.0.0.1/8001"],
     status(PORTS, U, PORTS_REASON)),
    ("second tcp port conflict to 0.0.0.0 hostIP", port_pod("p", "TCP/127.0.0.1/8001"),
     ["TCP/0.0.0.0/8001"], status(PORTS, U, PORTS_REASON)),
    ("second different protocol", port_pod("p", "UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], None),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", port_pod("p", "UDP/127.0.0.1/8001"),
     ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], status(PORTS, U, PORTS_REASON)),
    ("non-sidecar initContainer using hostPort",  # PreFilter Skip
     init_port_pod("p", False, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]),
     ["TCP/0.0.0.0/8001"], None),
    ("TCP hostPort conflict from sidecar initContainer",
     init_port_pod("p", True, [{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}]),
     ["TCP/0.0.0.0/8001"], status(PORTS, U, PORTS_REASON)),
]


@pytest.mark.parametrize(("incoming", "existing_ports", "want"),
                         [pytest.param(*r[1:], id=r[0]) for r in NODE_PORTS_ROWS])
def test_node_ports(incoming: Obj, existing_ports: list[str] | None, want: Obj | None):
    # node_ports_test.go TestNodePorts, case `name` = the test id. The node is "m1" (newPod("m1")).
    existing = [] if existing_ports is None else [port_pod("existing", *existing_ports, node_name="m1")]
    ev = run(PORTS, node("m1"), incoming, existing)
    assert ev.filter["m1"] == want


# =============================================================================================
# TaintToleration — taint_toleration_test.go, TestTaintTolerationFilter
# =============================================================================================
TAINTS = "TaintToleration"


def tol(key: str, value: str = "", effect: str = "", operator: str | None = None) -> Obj:
    """A v1.Toleration literal; an operator left out upstream stays out (it means Equal)."""
    out: Obj = {"key": key}
    if operator is not None:
        out["operator"] = operator
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    return out


TAINT_FILTER_ROWS = [
    # (name, pod tolerations, node taints, want, marks)
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints",
     [], [taint("dedicated", "user1", "NoSchedule")], status(TAINTS, UU, TAINT_REASON),
     []),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     [tol("dedicated", "user1", "NoSchedule")], [taint("dedicated", "user1", "NoSchedule")], None, []),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     [tol("dedicated", "user2", "NoSchedule", "Equal")], [taint("dedicated", "user1", "NoSchedule")],
     status(TAINTS, UU, TAINT_REASON), []),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates "
     "the taints on the node",
     [tol("foo", "", "NoSchedule", "Exists")], [taint("foo", "bar", "NoSchedule")], None, []),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod "
     "can be scheduled onto the node",
     [tol("dedicated", "user2", "NoSchedule", "Equal"), tol("foo", "", "NoSchedule", "Exists")],
     [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")], None, []),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
     "effect doesn't match, can't be scheduled onto the node",
     [tol("foo", "bar", "PreferNoSchedule", "Equal")], [taint("foo", "bar", "NoSchedule")],
     status(TAINTS, UU, TAINT_REASON), []),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of "
     "toleration is empty, and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
     [tol("foo", "bar", "", "Equal")], [taint("foo", "bar", "NoSchedule")], None, []),
    ("The pod has a toleration that key and value don't match the taint on the node, but the effect "
     "of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
     [tol("dedicated", "user2", "NoSchedule", "Equal")],
     [taint("dedicated", "user1", "PreferNoSchedule")], None, []),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be "
     "scheduled onto the node",
     [], [taint("dedicated", "user1", "PreferNoSchedule")], None, []),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"),
                         [pytest.param(*r[1:4], id=r[0], marks=r[4]) for r in TAINT_FILTER_ROWS])
def test_taint_toleration_filter(tolerations: list[Obj], taints: list[Obj], want: Obj | None):
    # taint_toleration_test.go TestTaintTolerationFilter, case `name` = the test id; node "nodeA",
    # pod "pod1" (podWithTolerations / nodeWithTaints).
    ev = run(TAINTS, node("nodeA", taints=taints), bare_pod("pod1", tolerations=tolerations or None))
    assert ev.filter["nodeA"] == want


# taint_toleration_test.go (v1.37.2) TestTaintTolerationFilterWithFeatureGate: the rows of the
# gate on (`enableTaintTolerationComparisonOps: true`), and the one whose answer is the same either
# way. The engine compares `Gt`/`Lt` as the gate on does (alpha since 1.35, off by default): a pod
# with such a toleration exists only where the API server runs with the gate
# (`AllowTaintTolerationComparisonOperators`, else `Unsupported value`), so in a cluster where the
# extender can be asked about one, kube-scheduler compares them too. The three rows of the gate
# off, where kube-scheduler tolerates nothing by them, are left out for that reason.
COMPARISON_ROWS = [
    ("Pod with Gt toleration can be scheduled when feature gate is enabled and taint value is higher",
     [tol("node.kubernetes.io/sla", "750", "NoSchedule", "Gt")],
     [taint("node.kubernetes.io/sla", "950", "NoSchedule")], None),
    ("Pod with Lt toleration can be scheduled when feature gate is enabled and taint value is lower",
     [tol("node.kubernetes.io/sla", "950", "NoSchedule", "Lt")],
     [taint("node.kubernetes.io/sla", "800", "NoSchedule")], None),
    ("Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored",
     [tol("dedicated", "user1", "NoSchedule", "Equal"),
      tol("node.kubernetes.io/sla", "750", "NoSchedule", "Gt")],
     [taint("dedicated", "user1", "NoSchedule")], None),
]


@pytest.mark.parametrize(("tolerations", "taints", "want"),
                         [pytest.param(*r[1:4], id=r[0]) for r in COMPARISON_ROWS])
def test_taint_toleration_filter_comparison_operators(tolerations: list[Obj], taints: list[Obj],
                                                      want: Obj | None):
    # taint_toleration_test.go (v1.37.2) TestTaintTolerationFilterWithFeatureGate, case `name` =
    # the test id; node "nodeA", pod "pod1".
    ev = run(TAINTS, node("nodeA", taints=taints), bare_pod("pod1", tolerations=tolerations))
    assert ev.filter["nodeA"] == want


# The stored table's own wantStatus for its three rejecting rows: the wording of the releases
# before the reason stopped naming the taint (the engine's kubernetesVersion "1.33").
TAINT_FILTER_STORED_WORDING = {
    "A pod having no tolerations can't be scheduled onto a node with nonempty taints":
        "node(s) had untolerated taint {dedicated: user1}",
    "A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule":
        "node(s) had untolerated taint {dedicated: user1}",
    "A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
    "effect doesn't match, can't be scheduled onto the node":
        "node(s) had untolerated taint {foo: bar}",
}


@pytest.mark.parametrize(("tolerations", "taints", "reason"),
                         [pytest.param(r[1], r[2], TAINT_FILTER_STORED_WORDING[r[0]], id=r[0])
                          for r in TAINT_FILTER_ROWS if r[0] in TAINT_FILTER_STORED_WORDING])
def test_taint_toleration_filter_stored_wording(tolerations: list[Obj], taints: list[Obj], reason: str):
    # taint_toleration_test.go TestTaintTolerationFilter (commit cb6ff2d8ce35), case `name` = the
    # test id, with the wantStatus message as that table states it; policy kubernetesVersion 1.33.
    ev = run(TAINTS, node("nodeA", taints=taints), bare_pod("pod1", tolerations=tolerations or None),
             version="1.33")
    assert ev.filter["nodeA"] == status(TAINTS, UU, reason)


# =============================================================================================
# NodeAffinity — node_affinity_test.go, TestNodeAffinity
# =============================================================================================
AFFINITY = "NodeAffinity"


def req(key: str, operator: str, *values: str) -> Obj:
    """A v1.NodeSelectorRequirement (values left out when there are none)."""
    out: Obj = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(exprs: list[Obj] | None = None, fields: list[Obj] | None = None) -> Obj:
    out: Obj = {}
    if exprs is not None:
        out["matchExpressions"] = exprs
    if fields is not None:
        out["matchFields"] = fields
    return out


def required(*terms: Obj) -> Obj:
    """Affinity{NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution{terms}}}."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                             {"nodeSelectorTerms": list(terms)}}}


def name_in(*names: str) -> Obj:
    return req("metadata.name", "In", *names)


def added(*terms: Obj) -> Obj:
    """NodeAffinityArgs{AddedAffinity: required terms} (v1 argument name `addedAffinity`)."""
    return {AFFINITY: {"addedAffinity": required(*terms)["nodeAffinity"]}}


def aff_pod(affinity: Obj | None = None, selector: dict[str, str] | None = None) -> Obj:
    return bare_pod(affinity=affinity, nodeSelector=selector)


NOT_MATCH = status(AFFINITY, UU, AFFINITY_REASON)
OUTSIDE = status(AFFINITY, UU, PREFILTER_RESULT_REASON)

NODE_AFFINITY_ROWS = [
    # (name, pod, node labels, node name, args, want, want prefilter, marks)
    ("missing labels", aff_pod(selector={"foo": "bar"}), None, "", None, NOT_MATCH, None, []),
    ("same labels", aff_pod(selector={"foo": "bar"}), {"foo": "bar"}, "", None, None, None, []),
    ("node labels are superset", aff_pod(selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"},
     "", None, None, None, []),
    ("node labels are subset", aff_pod(selector={"foo": "bar", "baz": "blah"}), {"foo": "bar"},
     "", None, NOT_MATCH, None, []),
    ("Pod with matchExpressions using In operator that matches the existing node",
     aff_pod(required(term([req("foo", "In", "bar", "value2")]))), {"foo": "bar"},
     "", None, None, None, []),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     aff_pod(required(term([req("kernel-version", "Gt", "0204")]))), {"kernel-version": "0206"},
     "", None, None, None, []),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     aff_pod(required(term([req("mem-type", "NotIn", "DDR", "DDR2")]))), {"mem-type": "DDR3"},
     "", None, None, None, []),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     aff_pod(required(term([req("GPU", "Exists")]))), {"GPU": "NVIDIA-GRID-K1"},
     "", None, None, None, []),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     aff_pod(required(term([req("foo", "In", "value1", "value2")]))), {"foo": "bar"},
     "", None, NOT_MATCH, None, []),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't "
     "schedule onto the node",
     aff_pod(required(term([]))), {"foo": "bar"}, "", None, NOT_MATCH, None, []),
    ("Pod with no Affinity will schedule onto a node",  # PreFilter Skip
     aff_pod(), {"foo": "bar"}, "", None, None, None, []),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node",  # PreFilter Skip
     aff_pod({"nodeAffinity": {}}), {"foo": "bar"}, "", None, None, None, []),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     aff_pod(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, []),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     aff_pod(required(term([req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]))),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, NOT_MATCH, None, []),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will "
     "schedule onto the node",
     aff_pod(required(term([req("foo", "In", "bar", "value2")]),
                      term([req("diffkey", "In", "wrong", "value2")]))),
     {"foo": "bar"}, "", None, None, None, []),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both "
     "are satisfied, will schedule onto the node",
     aff_pod(required(term([req("foo", "Exists")])), {"foo": "bar"}), {"foo": "bar"},
     "", None, None, None, []),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we "
     "are deprecating) is not satisfied, won't schedule onto the node",
     aff_pod(required(term([req("foo", "Exists")])), {"foo": "bar"}), {"foo": "barrrrrr"},
     "", None, NOT_MATCH, None, []),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     aff_pod(required(term([req("foo", "NotIn", "invalid value: ___@#$%^")]))), {"foo": "bar"},
     "", None, NOT_MATCH, None, []),
    ("Pod with matchFields using In operator that matches the existing node",
     aff_pod(required(term(fields=[name_in("node1")]))), None, "node1", None, None, None, []),
    # wantPreFilterResult {node1} leaves node2 out: the framework's status, not Filter's.
    ("Pod with matchFields using In operator that does not match the existing node",
     aff_pod(required(term(fields=[name_in("node1")]))), None, "node2", None, OUTSIDE, None, []),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     aff_pod(required(term(fields=[name_in("node1"), name_in("node2")]),
                      term([req("foo", "In", "bar")]))),
     {"foo": "bar"}, "node2", None, None, None, []),
    # wantPreFilterResult {node1} leaves node2 out: the framework's status, not Filter's.
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     aff_pod(required(term([req("foo", "In", "bar")], [name_in("node1")]))),
     {"foo": "bar"}, "node2", None, OUTSIDE, None, []),
    ("Pod with one term: both matchFields and matchExpressions match",
     aff_pod(required(term([req("foo", "In", "bar")], [name_in("node1")]))),
     {"foo": "bar"}, "node1", None, None, None, []),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     aff_pod(required(term(fields=[name_in("node1")]),
                      term([req("foo", "In", "not-match-to-bar")]))),
     {"foo": "bar"}, "node2", None, NOT_MATCH, None, []),
    ("Pod with two terms of node.Name affinity",
     aff_pod(required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")]))),
     None, "node2", None, None, None, []),
    # PreFilter rejects the pod (wantPreFilterStatus); Filter is never reached.
    ("Pod with two conflicting mach field requirements",
     aff_pod(required(term(fields=[name_in("node1"), name_in("node2")]))),
     {"foo": "bar"}, "node2", None, status(AFFINITY, UU, CONFLICT_REASON),
     status(AFFINITY, UU, CONFLICT_REASON), []),
    ("Matches added affinity and Pod's node affinity",
     aff_pod(required(term([req("zone", "In", "foo")]))), {"zone": "foo"}, "node2",
     added(term(fields=[name_in("node2")])), None, None, []),
    ("Matches added affinity but not Pod's node affinity",
     aff_pod(required(term([req("zone", "In", "bar")]))), {"zone": "foo"}, "node2",
     added(term(fields=[name_in("node2")])), NOT_MATCH, None, []),
    ("Doesn't match added affinity",
     aff_pod(), {"zone": "foo"}, "node2", added(term([req("zone", "In", "bar")])),
     status(AFFINITY, UU, ENFORCED_REASON), None, []),
    ("Matches node selector correctly even if PreFilter is not called",
     aff_pod(selector={"foo": "bar"}), {"foo": "bar", "baz": "blah"}, "", None, None, None, []),
    ("Matches node affinity correctly even if PreFilter is not called",
     aff_pod(required(term([req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]))),
     {"GPU": "NVIDIA-GRID-K1"}, "", None, None, None, []),
]


@pytest.mark.parametrize(("incoming", "labels", "node_name", "args", "want", "want_prefilter"),
                         [pytest.param(*r[1:7], id=r[0], marks=r[7]) for r in NODE_AFFINITY_ROWS])
def test_node_affinity_filter(incoming: Obj, labels: dict[str, str] | None, node_name: str,
                              args: Obj | None, want: Obj | None, want_prefilter: Obj | None):
    # node_affinity_test.go TestNodeAffinity, case `name` = the test id.
    name = node_name or NODE
    ev = run(AFFINITY, node(name, labels), copy.deepcopy(incoming), args=args)
    assert ev.filter[name] == want
    assert ev.prefilter == want_prefilter
