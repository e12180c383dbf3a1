"""kube-scheduler's PodTopologySpread Filter tables, transcribed (data only) and run through `evaluate`.

Source: kubernetes/kubernetes `pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go`
at commit 01c2588bf4a3eb6bb3524b1e2bd60efb38a4b577 (the `fwk` era, v1.34+, where minDomains,
nodeAffinityPolicy/nodeTaintsPolicy are GA). Every row cites its test function and case `name`.

Mapping: upstream builds a snapshot of `nodes` + `existingPods`, runs PreFilter over all nodes, then
Filter on each node with `PodTopologySpreadArgs{DefaultingType: List}` and no other plugin. Here:
every node is a candidate, `policy(filters=["PodTopologySpread"], scores=[])`, and per node
`ev.filter[node]` is None (Success) or PodTopologySpread's status. Upstream asserts only the status
*code*; the reason strings are the plugin's two constants (plugin.go):
`ErrReasonConstraintsNotMatch` for Unschedulable and `ErrReasonNodeLabelNotMatch` for
UnschedulableAndUnresolvable — the Filter returns exactly one reason.

Pods built with `st.MakePod()` without `.Namespace(...)` have the empty namespace upstream; here
they are all in "default" (only equality between namespaces matters).

Rows whose struct field `enableNodeInclusionPolicy` is left false upstream (TestSingleConstraint
rows before "NodeAffinityPolicy honored with labelSelectors", most TestMultipleConstraints rows)
are transcribed: they use no nodeAffinityPolicy/nodeTaintsPolicy field, and with the gate off the
plugin skips nodes failing the pod's required node affinity and ignores taints — the same as the
GA defaults (Honor / Ignore), so the expectations hold with the gate on.

Not transcribed:
* `TestPreFilterState`, `TestPreFilterStateAddPod`, `TestPreFilterStateRemovePod`: they assert
  the internal preFilterState (constraints, critical paths, per-domain counts) after PreFilter /
  AddPod / RemovePod, never a Filter status; not observable through `evaluate`. (Two
  TestPreFilterState rows expect a PreFilter Skip — "default constraints and a service that
  doesn't match", "default soft constraints and a service" — but have no nodes, so there is no
  per-node verdict to check.) Their "feature gate disabled with NodeAffinityPolicy" and
  "... with NodeInclusionPolicy disabled" rows also test a disabled gate.
* `TestPreFilterDisabled`: Filter called without PreFilter (an internal ErrNotFound status).
* `TestPodTopoSignatures`: the pod-signature (batching) API, not a Filter verdict.
* `BenchmarkFilter`: a benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from extender.engine import evaluate
from tests.engine.upstream.builders import (
    exists,
    in_,
    node,
    not_in,
    pod,
    policy,
    required_affinity,
    selector,
    spread,
    taint,
)

Obj = dict[str, Any]

PLUGIN = "PodTopologySpread"

# plugin.go
ERR_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_NODE_LABEL_NOT_MATCH = ERR_CONSTRAINTS_NOT_MATCH + " (missing required label)"

S = "Success"
U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"

DNS = "DoNotSchedule"
SA = "ScheduleAnyway"

FOO = selector(None, exists("foo"))  # fooSelector
BAR = selector(None, exists("bar"))  # barSelector
# `taints` in filtering_test.go: v1.TaintNodeUnschedulable, NoSchedule.
TAINTS = [taint("node.kubernetes.io/unschedulable", "", "NoSchedule")]




def incoming(*label_keys: str, spreads: list[Obj], affinity: Obj | None = None,
             node_selector: dict[str, str] | None = None) -> Obj:
    """The pod to schedule: `st.MakePod().Name("p").Label(k, "")...`."""
    return pod("p", labels={k: "" for k in label_keys}, spread=spreads, affinity=affinity,
               node_selector=node_selector)


def on(name: str, node_name: str, *label_keys: str, ns: str = "default",
       terminating: bool = False) -> Obj:
    """An existing pod: `st.MakePod().Name(name).Node(node).Label(k, "")...`."""
    return pod(name, ns, labels={k: "" for k in label_keys}, node=node_name, terminating=terminating)


def zn(name: str, zone: str, **extra: str) -> Obj:
    """`st.MakeNode().Name(name).Label("zone", zone).Label("node", name)` (+ extra labels)."""
    return node(name, {"zone": zone, "node": name, **extra})


def std_nodes() -> list[Obj]:
    """node-a, node-b in zone1; node-x, node-y in zone2 — the most common upstream node set."""
    return [zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")]


@dataclass(frozen=True)
class Case:
    test: str
    name: str
    pod: Obj
    nodes: list[Obj]
    existing: list[Obj]
    want: dict[str, str]  # node -> upstream wantStatusCode
    note: str = field(default="", compare=False)

    @property
    def id(self) -> str:
        return f"{self.test}: {self.name}{self.note}"


# =============================================================================================
# TestSingleConstraint
# =============================================================================================
T1 = "TestSingleConstraint"
SINGLE: list[Case] = [
    # filtering_test.go TestSingleConstraint: "no existing pods"
    Case(T1, "no existing pods",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO)]),
         std_nodes(), [],
         {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "no existing pods, incoming pod doesn't match itself"
    Case(T1, "no existing pods, incoming pod doesn't match itself",
         incoming("foo", spreads=[spread(1, "zone", DNS, BAR)]),
         std_nodes(), [],
         {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "existing pods in a different namespace do not count"
    Case(T1, "existing pods in a different namespace do not count",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo", ns="ns1"), on("p-b1", "node-a", "foo", ns="ns2"),
          on("p-x1", "node-x", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    # filtering_test.go TestSingleConstraint: "existing pods do not match null selector"
    Case(T1, "existing pods do not match null selector",
         incoming("foo", spreads=[spread(1, "zone", DNS, None)]),
         std_nodes(),
         [on("p-x1", "node-x", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "pods spread across zones as 3/3, all nodes fit"
    Case(T1, "pods spread across zones as 3/3, all nodes fit",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo")],
         {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint:
    #   "pods spread across zones as 1/2 due to absence of label 'zone' on node-b"
    Case(T1, "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO)]),
         [zn("node-a", "zone1"), node("node-b", {"zon": "zone1", "node": "node-b"}),
          zn("node-x", "zone2"), zn("node-y", "zone2")],
         [on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo"), on("p-x1", "node-x", "foo"),
          on("p-y1", "node-y", "foo")],
         {"node-a": S, "node-b": UU, "node-x": U, "node-y": U}),
    # filtering_test.go TestSingleConstraint: "pod cannot be scheduled as all nodes don't have label 'rack'"
    Case(T1, "pod cannot be scheduled as all nodes don't have label 'rack'",
         incoming("foo", spreads=[spread(1, "rack", DNS, FOO)]),
         [zn("node-a", "zone1"), zn("node-x", "zone2")], [],
         {"node-a": UU, "node-x": UU}),
    # filtering_test.go TestSingleConstraint: "pods spread across nodes as 2/1/0/3, only node-x fits"
    Case(T1, "pods spread across nodes as 2/1/0/3, only node-x fits",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    # filtering_test.go TestSingleConstraint:
    #   "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"
    Case(T1, "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
         incoming("foo", spreads=[spread(2, "node", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo")],
         {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    # filtering_test.go TestSingleConstraint: "pods spread across nodes as 2/1/0/3, but pod doesn't match itself"
    Case(T1, "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
         incoming("bar", spreads=[spread(1, "node", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo")],
         {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    # filtering_test.go TestSingleConstraint:
    #   "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits"
    # (upstream: node-b and node-x pass because only this plugin runs; NodeAffinity is off here too)
    Case(T1, "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO)],
                  affinity=required_affinity(in_("node", "node-a", "node-y"))),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo")],
         {"node-a": S, "node-b": S, "node-x": S, "node-y": U}),
    # filtering_test.go TestSingleConstraint: "terminating Pods should be excluded"
    Case(T1, "terminating Pods should be excluded",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO)]),
         [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"})],
         [on("p-a", "node-a", "foo", terminating=True), on("p-b", "node-b", "foo")],
         {"node-a": S, "node-b": U}),
    # filtering_test.go TestSingleConstraint:
    #   "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits"
    Case(T1, "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO)],
                  affinity=required_affinity(not_in("node", "node-b"))),
         std_nodes(),
         [on("p-b1", "node-b", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    # filtering_test.go TestSingleConstraint: "pods spread across nodes as 2/2/1, maxSkew is 2,
    #   and the number of domains < minDomains, then the third node fits"
    Case(T1, "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
             "then the third node fits",
         incoming("foo", spreads=[spread(2, "node", DNS, FOO, min_domains=4)]),
         [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}),
          node("node-c", {"node": "node-c"})],
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-b2", "node-b", "foo"), on("p-c1", "node-c", "foo")],
         {"node-a": U, "node-b": U, "node-c": S}),
    # filtering_test.go TestSingleConstraint: "pods spread across nodes as 2/2/1, maxSkew is 2,
    #   and the number of domains > minDomains, then the all nodes fit"
    Case(T1, "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
             "then the all nodes fit",
         incoming("foo", spreads=[spread(2, "node", DNS, FOO, min_domains=2)]),
         [node("node-a", {"node": "node-a"}), node("node-b", {"node": "node-b"}),
          node("node-c", {"node": "node-c"})],
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-b2", "node-b", "foo"), on("p-c1", "node-c", "foo")],
         {"node-a": S, "node-b": S, "node-c": S}),
    # filtering_test.go TestSingleConstraint: "pods spread across zone as 2/1, maxSkew is 2 and
    #   the number of domains < minDomains, then the third and fourth nodes fit"
    Case(T1, "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
             "then the third and fourth nodes fit",
         incoming("foo", spreads=[spread(2, "zone", DNS, FOO, min_domains=3)]),
         std_nodes(),
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "pods spread across zone as 2/1, maxSkew is 2 and
    #   the number of domains > minDomains, then the all nodes fit"
    Case(T1, "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
             "then the all nodes fit",
         incoming("foo", spreads=[spread(2, "zone", DNS, FOO, min_domains=1)]),
         std_nodes(),
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": S, "node-b": S, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "NodeAffinityPolicy honored with labelSelectors"
    Case(T1, "NodeAffinityPolicy honored with labelSelectors",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO)], node_selector={"foo": ""}),
         [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
          node("node-x", {"node": "node-x", "foo": ""}), node("node-y", {"node": "node-y"})],
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "NodeAffinityPolicy ignored with labelSelectors"
    Case(T1, "NodeAffinityPolicy ignored with labelSelectors",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO, affinity_policy="Ignore")],
                  node_selector={"foo": ""}),
         [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
          node("node-x", {"node": "node-x", "foo": ""}), node("node-y", {"node": "node-y"})],
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    # filtering_test.go TestSingleConstraint: "NodeAffinityPolicy honored with nodeAffinity"
    Case(T1, "NodeAffinityPolicy honored with nodeAffinity",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO)],
                  affinity=required_affinity(in_("foo", ""))),
         [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
          node("node-x", {"node": "node-x", "foo": ""}), node("node-y", {"node": "node-y"})],
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "NodeAffinityPolicy ignored with labelSelectors"
    # (the second row of that name upstream; it uses nodeAffinity, not a nodeSelector)
    Case(T1, "NodeAffinityPolicy ignored with labelSelectors",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO, affinity_policy="Ignore")],
                  affinity=required_affinity(in_("foo", ""))),
         [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
          node("node-x", {"node": "node-x", "foo": ""}), node("node-y", {"node": "node-y"})],
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
         note=" (2nd row of this name: nodeAffinity)"),
    # filtering_test.go TestSingleConstraint: "NodeTaintsPolicy honored"
    Case(T1, "NodeTaintsPolicy honored",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO, taints_policy="Honor")]),
         [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
          node("node-x", {"node": "node-x", "foo": ""}), node("node-y", {"node": "node-y"}, taints=TAINTS)],
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    # filtering_test.go TestSingleConstraint: "NodeTaintsPolicy ignored"
    Case(T1, "NodeTaintsPolicy ignored",
         incoming("foo", spreads=[spread(1, "node", DNS, FOO)]),
         [node("node-a", {"node": "node-a", "foo": ""}), node("node-b", {"node": "node-b", "foo": ""}),
          node("node-x", {"node": "node-x", "foo": ""}), node("node-y", {"node": "node-y"}, taints=TAINTS)],
         [on("p-b1", "node-a", "foo"), on("p-b2", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
]


# =============================================================================================
# TestMultipleConstraints
# =============================================================================================
T2 = "TestMultipleConstraints"
MULTIPLE: list[Case] = [
    # filtering_test.go TestMultipleConstraints: "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]"
    Case(T2, "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    # filtering_test.go TestMultipleConstraints: "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]"
    Case(T2, "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo"), on("p-b1", "node-b", "foo"),
          on("p-y1", "node-y", "foo"), on("p-y2", "node-y", "foo"), on("p-y3", "node-y", "foo"),
          on("p-y4", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    # filtering_test.go TestMultipleConstraints: "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]"
    Case(T2, "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
         incoming("foo", "bar", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-y1", "node-y", "bar")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    # filtering_test.go TestMultipleConstraints: "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]"
    Case(T2, "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
         incoming("foo", "bar", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-x1", "node-x", "bar"), on("p-y1", "node-y", "bar")],
         {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
    # filtering_test.go TestMultipleConstraints: "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]"
    Case(T2, "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
         incoming("foo", "bar", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-a2", "node-a", "foo", "bar"), on("p-y1", "node-y", "foo"),
          on("p-y2", "node-y", "foo", "bar"), on("p-y3", "node-y", "foo")],
         {"node-a": U, "node-b": S, "node-x": U, "node-y": U}),
    # filtering_test.go TestMultipleConstraints:
    #   "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint"
    Case(T2, "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
         incoming("bar", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo"), on("p-x1", "node-x", "bar"), on("p-y1", "node-y", "bar")],
         {"node-a": S, "node-b": S, "node-x": U, "node-y": U}),
    # filtering_test.go TestMultipleConstraints:
    #   "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]"
    Case(T2, "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
         [zn("node-a", "zone1"), zn("node-b", "zone1"), node("node-x", {"zone": "zone2"}),
          zn("node-y", "zone2")],
         [on("p-a1", "node-a", "foo"), on("p-y3", "node-y", "foo")],
         {"node-a": U, "node-b": S, "node-x": UU, "node-y": U}),
    # filtering_test.go TestMultipleConstraints:
    #   "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore"
    Case(T2, "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO),
                                  spread(1, "node", DNS, FOO, affinity_policy="Ignore")],
                  node_selector={"foo": ""}),
         [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
          zn("node-y", "zone2")],
         [on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    # filtering_test.go TestMultipleConstraints:
    #   "two node inclusion Constraints, zone: honor/honor, node: honor/ignore"
    Case(T2, "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO, taints_policy="Honor"),
                                  spread(1, "node", DNS, FOO)]),
         [zn("node-a", "zone1", foo=""), zn("node-b", "zone1", foo=""), zn("node-x", "zone2", foo=""),
          node("node-y", {"zone": "zone2", "node": "node-y"}, taints=TAINTS)],
         [on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    # filtering_test.go TestMultipleConstraints:
    #   "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore"
    Case(T2, "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)],
                  node_selector={"foo": ""}),
         [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
          node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, taints=TAINTS)],
         [on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": S, "node-x": S, "node-y": U}),
    # filtering_test.go TestMultipleConstraints:
    #   "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore"
    Case(T2, "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
         incoming("foo", spreads=[spread(1, "zone", DNS, FOO, taints_policy="Honor"),
                                  spread(1, "node", DNS, FOO, affinity_policy="Ignore")],
                  node_selector={"foo": ""}),
         [zn("node-a", "zone1", foo=""), zn("node-b", "zone1"), zn("node-x", "zone2", foo=""),
          node("node-y", {"zone": "zone2", "node": "node-y", "foo": ""}, taints=TAINTS)],
         [on("p-a1", "node-a", "foo"), on("p-b1", "node-b", "foo"), on("p-y1", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": U}),
    # filtering_test.go TestMultipleConstraints: "two Constraints on zone, spreads = [3/3, 2/1]"
    Case(T2, "two Constraints on zone, spreads = [3/3, 2/1]",
         incoming("foo", "bar", spreads=[spread(1, "zone", DNS, BAR), spread(1, "zone", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo", "bar"), on("p-a2", "node-a", "foo"),
          on("p-b1", "node-b", "foo", "bar"), on("p-y1", "node-y", "foo"),
          on("p-y2", "node-y", "foo", "bar"), on("p-y3", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": S, "node-y": S}),
    # filtering_test.go TestMultipleConstraints: "two Constraints on zone, spreads = [3/4, 2/1]"
    Case(T2, "two Constraints on zone, spreads = [3/4, 2/1]",
         incoming("foo", "bar", spreads=[spread(1, "zone", DNS, BAR), spread(1, "zone", DNS, FOO)]),
         std_nodes(),
         [on("p-a1", "node-a", "foo", "bar"), on("p-a2", "node-a", "foo"),
          on("p-b1", "node-b", "foo", "bar"), on("p-y1", "node-y", "foo"),
          on("p-y2", "node-y", "foo", "bar"), on("p-y3", "node-y", "foo"), on("p-y4", "node-y", "foo")],
         {"node-a": U, "node-b": U, "node-x": U, "node-y": U}),
]

CASES = SINGLE + MULTIPLE


# ---- running a row ------------------------------------------------------------------------
def expected_status(code: str) -> Obj | None:
    """Upstream's status code for one node, as `ev.filter[node]` shows it."""
    if code == S:
        return None
    reason = ERR_CONSTRAINTS_NOT_MATCH if code == U else ERR_NODE_LABEL_NOT_MATCH
    return {"plugin": PLUGIN, "code": code, "reasons": [reason]}


FILTER_POLICY = policy(filters=[PLUGIN], scores=[], args={PLUGIN: {"defaultingType": "List"}})


def run(case: Case) -> Any:
    """Every node is a candidate (upstream runs Filter on all of `nodes`)."""
    return evaluate(case.nodes + case.existing, case.pod, policy=FILTER_POLICY)


def test_row_count() -> None:
    assert (len(SINGLE), len(MULTIPLE)) == (23, 13)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_filter(case: Case) -> None:
    ev = run(case)
    got = {n: ev.filter[n] for n in case.want}
    want = {n: expected_status(code) for n, code in case.want.items()}
    assert got == want
