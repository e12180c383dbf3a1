"""Which pod of one run is which pod of another, and `--follow REAL.json`.

A real cluster names a Deployment's, ReplicaSet's or Job's pods with random suffixes, so a
simulated run and a real one share only the names of bare pods and StatefulSet pods. Both
reports say who owns each pod (`owner`: the workload, `Deployment/web` for the pods of
Deployment web's ReplicaSet); the pods of one owner are interchangeable (`identity`), so the
real run's nodes are kept per identity as a multiset.

`Follow` breaks the simulator's ties toward a real run: where kube-scheduler picked the node
at random among equal top scores, any of them was as right as another; taking the real one
keeps the two clusters alike pod after pod, so each later decision is compared on the same
state. A real node that is not among the simulator's tied best is never taken: that pod is
reported as a divergence. Preemption is followed too: kube-scheduler looks for candidates from
a random offset and breaks their last ties in Go's map order, so where the real run preempted
on another node and preempting there makes the pod fit in the simulation as well, the
simulator preempts there, with the victims its own dry run picks on that node (the victims
are then compared).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from extender.model.pod import PodView
from extender.simulator.clock import seconds

#: The label a Deployment's ReplicaSet and its pods carry (their name ends with it).
POD_TEMPLATE_HASH = "pod-template-hash"
#: Owners whose pods have stable names (`<set>-<ordinal>`): those pods pair by name.
NAMED_OWNERS = ("StatefulSet",)


def workload_owner(kind: str, name: str, labels: Mapping[str, str] | None) -> str:
    """`<kind>/<name>` of a pod's controller; a Deployment's ReplicaSet (its name ends with
    the pods' `pod-template-hash`) stands for its Deployment."""
    template_hash = (labels or {}).get(POD_TEMPLATE_HASH)
    if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
        return f"Deployment/{name[:-len(template_hash) - 1]}"
    return f"{kind}/{name}"


def identity(namespace: str, name: str, owner: str | None) -> str:
    """What pairs a pod with its counterpart in another run: its name, or its owner when the
    owner names its pods at random."""
    if owner and owner.split("/", 1)[0] not in NAMED_OWNERS:
        return f"{namespace}/{owner}"
    return f"{namespace}/{name}"


def report_identity(pod: Mapping[str, Any]) -> str:
    return identity(pod["namespace"], pod["name"], pod.get("owner"))


def bind_order(pods: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The report's pods that were bound, in the order they were (ties by name)."""
    bound = [p for p in pods if p.get("scheduledAtSeconds") is not None and p.get("node")]
    return sorted(bound, key=lambda p: (p["scheduledAtSeconds"], p["namespace"], p["name"]))


class Follow:
    """A real run's bindings per pod identity, node and time (matched by nearness in time,
    not order: kube-scheduler binds asynchronously, so the API server need not see a
    controller's pods bound in the order they were decided), its preemptions, and how long
    its cycles took."""

    def __init__(self, report: Mapping[str, Any]) -> None:
        #: Per identity, per node, when the real run bound its pods there (seconds, ascending).
        self.nodes: dict[str, dict[str, list[float]]] = {}
        pods = report.get("pods") or []
        for pod in bind_order(pods):
            self.nodes.setdefault(report_identity(pod), {}).setdefault(pod["node"], []).append(
                float(pod["scheduledAtSeconds"]))
        #: Per identity, the nodes its pods preempted on (their victims' nodes): a pod whose
        #: nominated node was taken preempts again elsewhere, so one pod's victims may lie on
        #: several nodes, each a preemption of its own.
        self.preemptions: dict[str, Counter[str]] = {}
        by_key = {f"{p['namespace']}/{p['name']}": p for p in pods}
        for pod in pods:
            victims = [by_key[k] for k in pod.get("preempted") or () if k in by_key]
            nodes = dict.fromkeys(v["node"] for v in victims if v.get("node"))
            if nodes:
                self.preemptions.setdefault(report_identity(pod), Counter()).update(list(nodes))
        #: How long the real scheduler's cycles took, by kind ("failure", "preemption"), as
        #: the replay measured them (`sandbox.observed.cycle_seconds`).
        self.cycle_seconds: dict[str, float] = dict(
            ((report.get("inputs") or {}).get("onSandbox") or {}).get("cycleSeconds") or {})
        #: When the real run stopped watching (virtual ns; None: the report does not say).
        end = (report.get("totals") or {}).get("virtualTimeSeconds")
        self.end: int | None = seconds(float(end)) if end is not None else None
        self.taken = 0  # ties broken toward the real node
        self.preemptions_taken = 0  # preemptions moved to the real node

    def _identity(self, pod: PodView) -> str:
        ref = pod.controller_ref
        owner = workload_owner(ref[1], ref[2], pod.labels) if ref is not None else None
        return identity(pod.namespace, pod.name, owner)

    def _other_than_own(self, table: dict[str, Counter[str]], pod: PodView,
                        own: str) -> Counter[str] | None:
        """The nodes left for `pod`'s counterparts, when its own pick is not one of them (one
        that is, is used up); None when there is nothing to choose."""
        left = table.get(self._identity(pod))
        if not left:
            return None
        if left[own] > 0:
            left[own] -= 1
            return None
        return left

    def choose_preemption(self, pod: PodView, own: str,
                          victims_on: Callable[[str], Any]) -> tuple[str, Any] | None:
        """(node, victims) where a counterpart of `pod` preempted, when that is not `own` and
        preempting there makes the pod fit (`victims_on(node)` not None); else None."""
        left = self._other_than_own(self.preemptions, pod, own)
        if left is None:
            return None
        for node in [n for n, count in left.items() if count > 0]:
            victims = victims_on(node)
            if victims is not None:
                left[node] -= 1
                self.preemptions_taken += 1
                return node, victims
        return None

    def choose(self, pod: PodView, tied: list[str], own: str, now: float) -> str | None:
        """Where this pod goes, `now` seconds into the run: of `own` (the simulator's pick)
        and the nodes tied with it, the one a counterpart was bound to closest in time to
        `now` (`own` on equal terms); None when the real run bound none of them there (a
        divergence). That real binding is used up.

        Closest in time, because a controller's pods are interchangeable: a Deployment's
        first pods and the replacements of its preempted ones, minutes later, share one
        identity, and a tie broken toward a replacement's node would take that node from
        the replacement."""
        left = self.nodes.get(self._identity(pod))
        if not left:
            return None
        best: tuple[float, int, str, float] | None = None  # gap, rank, node, binding time
        for rank, node in enumerate([own, *(n for n in tied if n != own)]):
            times = left.get(node)
            if times:
                nearest = min(times, key=lambda t: abs(t - now))
                if best is None or (abs(nearest - now), rank) < best[:2]:
                    best = (abs(nearest - now), rank, node, nearest)
        if best is None:
            return None
        _, _, node, nearest = best
        left[node].remove(nearest)
        if node == own:
            return None
        self.taken += 1
        return node
