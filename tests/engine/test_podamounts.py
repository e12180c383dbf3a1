"""`pod_amounts` (one pass over the containers) against the five reference arithmetics, and
the pod views and snapshot loads built on it against the same references; the NodeAffinity
parts views share against parsing each pod's own."""

from __future__ import annotations

import json
import mmap
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import generate as g
from extender.engine import registry
from extender.engine.cluster import ClusterState
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.engine.plugins.coscheduling.store import PodGroupStore
from extender.model import k8s, podamounts
from extender.model import pod as pod_module
from extender.model.pod import (
    PodView,
    _affinity_node_names,
    _host_ports,
    preferred_terms,
    preferred_terms_error,
)
from extender.model.podamounts import PodAmounts, _reference, derived_load, pod_amounts
from extender.model.podload import PodLoad, pod_load
from extender.model.quantity import QuantityError
from extender.model.resources import (
    pod_non_zero_requests,
    pod_requests,
    pod_scoring_non_zero_requests,
)
from extender.model.scheduling import pod_group_name, quota_requests
from extender.model.selectors import NodeSelectorMatcher
from extender.model.timeparse import parse_time
from extender.state import snapshot
from extender.state.snapshot import SnapshotError, load_snapshot

NAMES = ["cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu", "hugepages-2Mi",
         "example.com/foo", "foo", "kubernetes.io/batch"]
AMOUNTS = ["0", "1", "2", "100m", "250m", "0.5m", "1.5", "1.5m", "1Ki", "1.1Ki", "1077Mi", "3Gi",
           "1e3", "0.1", "7n", "9223372036854775807", "9e18", "12345678901234567890", 0, 3, 0.5,
           1.25, 1073741824, 2**62]


def _resolved(amounts: PodAmounts) -> PodAmounts:
    load = amounts.load
    if not isinstance(load, PodLoad):
        load = derived_load(amounts.requests, load)
    return amounts._replace(load=load)


def _same(got: PodAmounts, want: PodAmounts) -> None:
    got, want = _resolved(got), _resolved(want)
    assert got == want
    # The scalar maps in the same order too (what an explanation lists).
    assert list(got.requests.scalar.items()) == list(want.requests.scalar.items())
    if want.quota is not None:
        assert got.quota is not None
        assert list(got.quota.scalar.items()) == list(want.quota.scalar.items())
        assert got.quota.allowed_pods == want.quota.allowed_pods


resource_lists = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(NAMES), st.sampled_from(AMOUNTS), max_size=4))


@st.composite
def containers(draw: st.DrawFn, init: bool = False) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(0, 3))):
        container: dict[str, Any] = {"name": f"c{i}", "image": draw(st.sampled_from(["a", "b:1"]))}
        requests, limits = draw(resource_lists), draw(resource_lists)
        if draw(st.booleans()):
            container["resources"] = {k: v for k, v in (("requests", requests),
                                                        ("limits", limits)) if v is not None}
        if init and draw(st.booleans()):
            container["restartPolicy"] = "Always"
        if draw(st.integers(0, 4)) == 0:
            container["ports"] = [{"containerPort": 80, "hostPort": draw(st.integers(0, 2))}]
        out.append(container)
    return out


@st.composite
def specs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": draw(containers())}
    if draw(st.integers(0, 3)) == 0:
        spec["initContainers"] = draw(containers(init=True))
    if draw(st.integers(0, 4)) == 0:
        spec["overhead"] = draw(resource_lists)
    if draw(st.integers(0, 4)) == 0:
        spec["resources"] = {"requests": draw(resource_lists)}
    return spec


def _checked(spec: k8s.PodSpec) -> PodAmounts | None:
    """`pod_amounts(spec)`, held to the reference arithmetics: their figures, or (None) the
    error they raise first."""
    try:
        want = _reference(spec)
    except QuantityError as exc:
        with pytest.raises(QuantityError, match=str(exc)):
            pod_amounts(spec)
        return None
    got = pod_amounts(spec)
    _same(got, want)
    return got


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(specs())
def test_pod_amounts_are_the_reference_arithmetics(raw: dict[str, Any]) -> None:
    _checked(k8s.convert(raw, k8s.PodSpec))


def _unread_changes(raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` with every field `pod_amounts` does not read changed: names, images, ports."""
    def changed(container: dict[str, Any]) -> dict[str, Any]:
        return {**container, "name": container.get("name", "") + "-x", "image": "other:2",
                "ports": [{"containerPort": 81, "hostPort": 9}]}
    out = {**raw, "containers": [changed(c) for c in raw["containers"]]}
    if "initContainers" in raw:
        out["initContainers"] = [changed(c) for c in raw["initContainers"]]
    return out


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(specs(), st.data())
def test_kept_amounts_answer_only_specs_that_read_alike(raw: dict[str, Any], data: st.DataObject) -> None:
    """The reference path's answers are kept by the fields the five arithmetics read: after
    one spec's, a spec that differs only elsewhere gets the same answer, and one that differs
    in a read field (a container's resources, an init container's restart policy, the
    overhead, the pod-level requests) gets its own, the reference's."""
    raw = {**raw, "initContainers": raw.get("initContainers") or [{"name": "i"}]}  # the kept path
    other = _unread_changes(raw)
    change = data.draw(st.sampled_from(["none", "resources", "restart", "overhead", "pod"]))
    if change == "resources":
        where = data.draw(st.sampled_from(["containers", "initContainers"]))
        if other[where]:
            other[where] = [{**other[where][0], "resources": {"requests": data.draw(resource_lists) or {}}},
                            *other[where][1:]]
    elif change == "restart":
        first = other["initContainers"][0]
        other["initContainers"] = [{**first, "restartPolicy": None if first.get("restartPolicy") else "Always"},
                                   *other["initContainers"][1:]]
    elif change == "overhead":
        other["overhead"] = data.draw(resource_lists)
    elif change == "pod":
        other["resources"] = {"requests": data.draw(resource_lists)}
    spec, other_spec = k8s.convert(raw, k8s.PodSpec), k8s.convert(other, k8s.PodSpec)
    podamounts._REFERENCE_MEMO.clear()
    try:
        first = pod_amounts(spec)
    except QuantityError:
        assert not podamounts._REFERENCE_MEMO  # nothing kept from a spec that does not read
        return
    got = _checked(other_spec)
    if got is not None and change == "none":
        assert got is first  # kept, not worked out again


def test_the_kept_amounts_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(podamounts, "REFERENCE_MEMO_LIMIT", 3)
    podamounts._REFERENCE_MEMO.clear()
    for cpu in range(1, 8):
        spec = k8s.convert({"initContainers": [{}], "containers": [
            {"resources": {"requests": {"cpu": f"{cpu}"}}}]}, k8s.PodSpec)
        assert pod_amounts(spec).requests.milli_cpu == 1000 * cpu
        assert 1 <= len(podamounts._REFERENCE_MEMO) <= 3


def test_the_regular_containers_path_itself() -> None:
    """Specs that take the one-pass path (no init containers, overhead or pod-level requests),
    including the rounding cases where the five arithmetics disagree."""
    cases = [
        [],
        [{}],
        [{"resources": {}}],
        [{"resources": {"requests": {}}}],
        [{"resources": {"requests": {"cpu": "100m", "memory": "1077Mi"}}}],
        [{"resources": {"requests": {"cpu": "0.5m"}}}, {"resources": {"requests": {"cpu": "0.5m"}}}],
        [{"resources": {"requests": {"memory": "1.1Ki", "pods": "2"}}}],
        [{"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}}}],
        [{"resources": {"limits": {"cpu": "2"}}}, {"resources": {"requests": {"cpu": "300m"}}}],
        [{"resources": {"requests": {"nvidia.com/gpu": "1", "foo": "3", "hugepages-2Mi": "0"}}}],
        [{"resources": {"requests": {"cpu": "0"}, "limits": {"ephemeral-storage": "1Gi"}}}],
        [{"resources": {"requests": {"cpu": "9223372036854775807"}}},
         {"resources": {"requests": {"cpu": "9223372036854775807"}}}],
    ]
    for case in cases:
        spec = k8s.convert({"containers": case}, k8s.PodSpec)
        _same(pod_amounts(spec), _reference(spec))


def test_bad_amounts_raise_the_reference_error() -> None:
    spec = k8s.convert({"containers": [{"resources": {"limits": {"memory": "lots"}}},
                                       {"resources": {"requests": {"cpu": "many"}}}]}, k8s.PodSpec)
    with pytest.raises(QuantityError, match="many"):  # pod_requests reads requests first
        _reference(spec)
    with pytest.raises(QuantityError, match="many"):
        pod_amounts(spec)


def _expected_view(pod: k8s.Pod) -> dict[str, Any]:
    """What `PodView.from_k8s` read before `pod_amounts`, straight from the references."""
    spec, meta, status = pod.spec, pod.metadata, pod.status
    non_zero = pod_non_zero_requests(spec)
    scoring = (pod_scoring_non_zero_requests(spec)
               if spec.resources is not None and spec.resources.requests else non_zero)
    preempted, scheduled = False, None
    for cond in status.conditions or ():
        if cond.type == "DisruptionTarget" and cond.status == "True" and cond.reason == "PreemptionByScheduler":
            preempted = True
        elif cond.type == "PodScheduled" and cond.status == "True":
            scheduled = parse_time(cond.last_transition_time)
    containers = [*(spec.init_containers or ()), *(spec.containers or ())]
    return {
        "requests": pod_requests(spec), "quota_requests": quota_requests(spec),
        "load": pod_load(spec), "non_zero": non_zero, "scoring_non_zero": scoring,
        "priority": spec.priority or 0, "images": tuple(c.image for c in containers),
        "num_containers": len(containers), "host_ports": _host_ports(spec),
        "preempted_by_scheduler": preempted, "scheduled_time": scheduled,
        "pod_group": pod_group_name(meta.labels or {}), "labels": meta.labels or {},
        "start_time": parse_time(status.start_time),
        "creation_time": parse_time(meta.creation_timestamp),
    }


def _view_fields(view: PodView) -> dict[str, Any]:
    return {
        "requests": view.requests, "quota_requests": view.quota_requests, "load": view.load,
        "non_zero": (view.non_zero_cpu, view.non_zero_memory),
        "scoring_non_zero": (view.scoring_non_zero_cpu, view.scoring_non_zero_memory),
        "priority": view.priority, "images": view.images, "num_containers": view.num_containers,
        "host_ports": view.host_ports, "preempted_by_scheduler": view.preempted_by_scheduler,
        "scheduled_time": view.scheduled_time, "pod_group": view.pod_group,
        "labels": dict(view.labels), "start_time": view.start_time,
        "creation_time": view.creation_time,
    }


CONDITIONS = [
    {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-19T09:40:27Z"},
    {"type": "PodScheduled", "status": "False", "lastTransitionTime": "2026-11-19T09:41:27Z"},
    {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"},
    {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"},
    {"type": "Ready", "status": "True"},
]


@settings(max_examples=300, deadline=None)
@given(specs(), st.lists(st.sampled_from(CONDITIONS), max_size=3), st.booleans(),
       st.sampled_from([None, 0, 1000, 2000001000]))
def test_pod_views_read_what_the_references_give(raw: dict[str, Any], conditions, slim: bool,
                                                  priority) -> None:
    raw = {**raw, "priority": priority} if priority is not None else raw
    pod = k8s.convert({"metadata": {"name": "p", "uid": "u", "namespace": "ns",
                                    "labels": {"scheduling.x-k8s.io/pod-group": "g"}},
                       "spec": raw, "status": {"conditions": conditions}}, k8s.Pod)
    try:
        expected = _expected_view(pod)
    except QuantityError:
        with pytest.raises(QuantityError):
            PodView.from_k8s(pod, slim=slim)
        return
    view = PodView.from_k8s(pod, slim=slim)
    assert _view_fields(view) == expected
    # A copy (an assumed bind, the simulator's patches) reads the same figures.
    assert _view_fields(view.bound_to("n")) == expected


def _req(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


ZONE = "topology.kubernetes.io/zone"
NODE_AFFINITIES: list[dict[str, Any] | None] = [
    None,
    {},
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [_req(ZONE, "In", "z1")]}]}},
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [_req(ZONE, "In", "z2")]}]}},
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [_req("metadata.name", "In", "n1", "n2")]},
        {"matchFields": [_req("metadata.name", "In", "n3")]}]}},
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [_req("metadata.name", "In", "n1")]},
        {"matchExpressions": [_req("disk", "Exists")]}]}},
    {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [_req(ZONE, "In", "z1")]}}]},
    {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 7, "preference": {"matchExpressions": [_req(ZONE, "In", "z1")]}}]},
    {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [_req(ZONE, "In", "z1")]}},
        {"weight": 3, "preference": {"matchExpressions": [_req("cpus", "Gt", "4")]}}]},
    {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 3, "preference": {"matchExpressions": [_req("cpus", "Gt", "four")]}},
        {"weight": 2, "preference": {"matchExpressions": [_req("bad key!", "Exists")]}}]},
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [_req(ZONE, "NotIn", "z1")]}]},
     "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchFields": [_req("metadata.name", "In", "n2")]}}]},
]
NODES = [({ZONE: "z1", "cpus": "8"}, "n1"), ({ZONE: "z2", "disk": "ssd"}, "n2"),
         ({"cpus": "2"}, "n3"), ({}, "n4")]


def _affinity_view(affinity: dict[str, Any] | None) -> PodView:
    spec: dict[str, Any] = {"containers": [{}]}
    if affinity is not None:
        spec["affinity"] = {"nodeAffinity": affinity}
    return PodView.from_k8s(k8s.convert({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec},
                                        k8s.Pod))


@pytest.mark.parametrize("first", range(len(NODE_AFFINITIES)))
def test_views_share_node_affinity_parts_only_when_the_affinity_is_the_same(first: int) -> None:
    """After one pod's NodeAffinity was parsed, every other pod's view reads its own terms
    (required matches and pinned names, preferred weights and matches, their parse error and
    key) as parsing them afresh gives; pods with the same affinity share one parse."""
    for second, affinity in enumerate(NODE_AFFINITIES):
        pod_module._node_affinity_table.clear()
        seen = _affinity_view(NODE_AFFINITIES[first])
        view = _affinity_view(affinity)
        parsed = k8s.convert(affinity, k8s.NodeAffinity) if affinity is not None else None
        required = parsed.required_during_scheduling_ignored_during_execution if parsed else None
        fresh = NodeSelectorMatcher(required) if required is not None else None
        assert view.affinity_node_names == _affinity_node_names(required)
        assert view.preferred_affinity_error == preferred_terms_error(parsed)
        for labels, name in NODES:
            assert (view.required_affinity.matches(labels, name) if view.required_affinity else None) == (
                fresh.matches(labels, name) if fresh else None)
            assert [(w, t.matches(labels, name)) for w, t in view.preferred_affinity] == [
                (w, t.matches(labels, name)) for w, t in preferred_terms(parsed)]
        same = first == second or {first, second} == {0, 1}  # no affinity and an empty one
        assert (view.preferred_affinity_key == seen.preferred_affinity_key) == (
            same or (NODE_AFFINITIES[first] or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
            == (affinity or {}).get("preferredDuringSchedulingIgnoredDuringExecution"))
        if first == second:
            assert view.required_affinity is seen.required_affinity
            assert view.preferred_affinity is seen.preferred_affinity


@pytest.fixture(scope="module")
def bench_cluster() -> dict[str, Any]:
    return g.make_cluster(40, 1200, 42)


def test_bench_pods_views_read_what_the_references_give(bench_cluster) -> None:
    pods = [k8s.convert(i, k8s.Pod) for i in bench_cluster["items"] if i["kind"] == "Pod"]
    assert len(pods) == 1200
    for pod in pods:
        view = PodView.from_k8s(pod, slim=bool(pod.spec.node_name))
        assert _view_fields(view) == _expected_view(pod)


def _state_totals(state: ClusterState) -> Any:
    return (
        {uid: (_view_fields(p), p.node_name, p.namespace, p.name) for uid, p in state.pods.items()},
        {name: (info.requested, info.non_zero_cpu, info.non_zero_memory, sorted(info.pods))
         for name, info in state.nodes.items()},
        {ns: used for ns, used in state.store(QuotaStore).namespace_used.items()},
        state.store(PodGroupStore).members,
    )


def test_a_snapshot_loads_as_each_object_applied_in_turn(tmp_path: Path, bench_cluster) -> None:
    """The load's one-pass pod decoding and mapped file give the state that applying each
    decoded object gives."""
    path = tmp_path / "c.json"
    path.write_bytes(msgspec.json.encode(bench_cluster))
    loaded = load_snapshot(path)
    applied = ClusterState()
    for item in bench_cluster["items"]:
        if item["kind"] in registry.KINDS:
            applied.apply(item["kind"], k8s.convert(item, registry.KINDS[item["kind"]]))
    assert _state_totals(loaded) == _state_totals(applied)
    # Leading blanks, and a top-level array, take the same path.
    path.write_bytes(b" \n\t" + msgspec.json.encode(bench_cluster["items"]))
    assert _state_totals(load_snapshot(path)) == _state_totals(applied)


def test_pages_behind_the_load_are_released(tmp_path: Path, bench_cluster, monkeypatch) -> None:
    """The mapped file's pages go as the load passes them (here every page): the objects
    read after that are intact."""
    released: list[tuple[int, int]] = []
    real = snapshot._Release.__call__

    def spy(self, size: int) -> None:
        before = self.released
        real(self, size)
        if self.released != before:
            released.append((before, self.released))

    monkeypatch.setattr(snapshot._Release, "STEP", mmap.PAGESIZE)
    monkeypatch.setattr(snapshot._Release, "__call__", spy)
    nested = {"kind": "List", "items": [
        {"kind": "NodeList", "items": [i for i in bench_cluster["items"] if i["kind"] == "Node"]},
        *[i for i in bench_cluster["items"] if i["kind"] != "Node"]]}
    path = tmp_path / "c.json"
    path.write_bytes(msgspec.json.encode(nested))
    applied = ClusterState()
    for item in bench_cluster["items"]:
        if item["kind"] in registry.KINDS:
            applied.apply(item["kind"], k8s.convert(item, registry.KINDS[item["kind"]]))
    assert _state_totals(load_snapshot(path)) == _state_totals(applied)
    assert len(released) > 100
    assert released[-1][1] <= path.stat().st_size


def _pod_item(**extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "u"},
            "spec": {"nodeName": "n", "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
            **extra}


def test_pod_items_the_envelope_reads_otherwise_keep_their_meaning(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    # A later "kind" wins, as the envelope reads it: this item is a Service.
    path.write_text('{"kind":"List","items":[' + json.dumps(_pod_item())[:-1]
                    + ',"kind":"Service"}]}')
    state = load_snapshot(path)
    assert not state.pods and ("", "p") in state.services
    # "items" of the wrong type is refused as it was.
    path.write_text(json.dumps({"kind": "List", "items": [_pod_item(items=5)]}))
    with pytest.raises(SnapshotError, match="invalid JSON"):
        load_snapshot(path)
    # A bad field is reported as it was, with its path.
    bad = _pod_item()
    bad["spec"]["priority"] = "high"
    path.write_text(json.dumps({"kind": "List", "items": [bad]}))
    with pytest.raises(SnapshotError, match=r"Pod '\?': Expected `int \| null`, got `str` - at `\$.spec.priority`"):
        load_snapshot(path)


@pytest.mark.parametrize(("content", "pods"), [
    (b"", 0),
    (b"   ", 0),
    (b"kind: Pod\nmetadata: {name: p, uid: u}\nspec: {nodeName: n}\n", 1),
])
def test_empty_and_yaml_files_still_load(tmp_path: Path, content: bytes, pods: int) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    assert len(load_snapshot(path).pods) == pods


@pytest.mark.parametrize(("content", "named"), [
    (b"apiVersion: scheduler-extender/v1\nkind: ExtenderPolicy\n", "ExtenderPolicy"),
    (b'[{"kind": "SimulationEvent", "at": "1m"}]', "SimulationEvent"),
    (b'{"kind": "List", "items": [{"kind": "NodeUtilization"}]}', "NodeUtilization"),
])
def test_a_file_of_other_kinds_is_no_empty_cluster(tmp_path: Path, content: bytes,
                                                   named: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    with pytest.raises(SnapshotError, match=f"^{path}: holds {named} but no object of the kinds "
                                            "a cluster snapshot holds \\(Node, Pod, "):
        load_snapshot(path)
