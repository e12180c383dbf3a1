"""A request's Node objects (`Nodes` form) decoded slim (`k8s.RequestNode`,
`NodeView.from_request`) give the view the full decode gives (`NodeView.from_k8s`): every
field the engine reads, images included (decoded on first read)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import generate as g
from extender import wire
from extender.api.candidates import from_nodes
from extender.engine.cluster import ClusterState
from extender.model.node import InvalidNodeImages, NodeView


def _fields(view: NodeView) -> dict[str, Any]:
    return {"name": view.name, "uid": view.uid, "resource_version": view.resource_version,
            "labels": dict(view.labels), "taints": view.taints,
            "unschedulable": view.unschedulable, "allocatable": view.allocatable,
            "allocatable_scalar": view.allocatable.scalar, "capacity": view.capacity,
            "capacity_scalar": view.capacity.scalar, "allocatable_pods": view.allocatable.allowed_pods,
            "images": dict(view.images), "memo": view.memo}


def _both(raw: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    full = NodeView.from_k8s(wire.decode_node(raw))
    slim = NodeView.from_request(wire.decode_request_node(raw))
    assert slim.taints is full.taints  # interned alike: a taint set's verdicts are shared
    return _fields(slim), _fields(full)


def test_bench_nodes_read_the_same_slim_and_full() -> None:
    for i in range(300):
        raw = msgspec.json.encode(g.make_node(42, i))
        slim, full = _both(raw)
        assert slim == full
        assert full["images"]  # the bench's nodes list images: the lazy path is exercised


names = st.sampled_from(["nginx", "nginx:1.25", "registry.local:5000/app", "a/b@sha256:00",
                         "registry.local:5000/app:v1", "busybox:latest", ""])
amounts = st.one_of(st.sampled_from(["4", "3800m", "16Gi", "110", "0", "1.5", "100Ki"]),
                    st.integers(0, 2**40))
resource_lists = st.one_of(st.none(), st.dictionaries(
    st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu",
                     "hugepages-2Mi", "attachable-volumes-aws-ebs", "foo"]), amounts, max_size=6))


@st.composite
def nodes(draw: st.DrawFn) -> dict[str, Any]:
    node: dict[str, Any] = {"metadata": {"name": draw(st.sampled_from(["n1", "n2"]))}}
    meta = node["metadata"]
    for key, value in (("uid", "u-1"), ("resourceVersion", "42"), ("namespace", ""),
                       ("creationTimestamp", "2026-11-09T09:49:30Z")):
        if draw(st.booleans()):
            meta[key] = value
    if draw(st.booleans()):
        meta["labels"] = draw(st.dictionaries(st.sampled_from(["zone", "kubernetes.io/hostname",
                                                                "gpu"]), st.sampled_from(["a", "b", ""]),
                                              max_size=3))
    if draw(st.booleans()):
        meta["annotations"] = {"x": "y"}
        meta["ownerReferences"] = [{"kind": "Machine", "name": "m", "controller": True}]
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["unschedulable"] = draw(st.booleans())
    if draw(st.booleans()):
        spec["taints"] = draw(st.lists(st.fixed_dictionaries(
            {"key": st.sampled_from(["gpu", "spot"]), "effect": st.sampled_from(["NoSchedule", "NoExecute"])},
            optional={"value": st.sampled_from(["true", ""]), "timeAdded": st.just("2026-11-09T09:49:30Z")}),
            max_size=3))
    node["spec"] = spec
    status: dict[str, Any] = {}
    for key in ("allocatable", "capacity"):
        found = draw(resource_lists)
        if found is not None or draw(st.booleans()):
            status[key] = found
    images = draw(st.one_of(st.none(), st.lists(st.fixed_dictionaries(
        {}, optional={"names": st.one_of(st.none(), st.lists(names, max_size=3)),
                      "sizeBytes": st.integers(0, 2**33)}), max_size=4)))
    if images is not None or draw(st.booleans()):
        status["images"] = images
    status["conditions"] = [{"type": "Ready", "status": "True"}]
    node["status"] = status
    return node


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(nodes())
def test_random_nodes_read_the_same_slim_and_full(node: dict[str, Any]) -> None:
    slim, full = _both(msgspec.json.encode(node))
    assert slim == full


def test_images_are_decoded_on_first_read_only() -> None:
    node = g.make_node(42, 0)
    view = NodeView.from_request(wire.decode_request_node(msgspec.json.encode(node)))
    assert isinstance(view._images, msgspec.Raw)
    first = view.images
    assert view.images is first  # decoded once, then kept
    for status in ({}, {"images": None}, {"images": []}):
        empty = NodeView.from_request(wire.decode_request_node(msgspec.json.encode(
            {"metadata": {"name": "n"}, "status": status})))
        assert dict(empty.images) == {}


def test_a_bad_image_list_is_reported_when_read() -> None:
    raw = msgspec.json.encode({"metadata": {"name": "n"},
                               "status": {"images": [{"names": ["a"], "sizeBytes": "big"}]}})
    with pytest.raises(msgspec.ValidationError):
        wire.decode_node(raw)  # the full decode refuses it up front
    view = NodeView.from_request(wire.decode_request_node(raw))
    assert view.name == "n"  # filters never read images
    with pytest.raises(InvalidNodeImages, match=r"node 'n': status.images: .*sizeBytes"):
        view.images  # noqa: B018


def test_cold_request_nodes_keep_the_states_pods() -> None:
    """A request's node at another resourceVersion than the state's: its view is built from the
    request, its pods and totals are the state's (and the reply echoes its exact bytes)."""
    state = ClusterState()
    node = g.make_node(42, 3)
    state.apply_node(wire.decode_node(msgspec.json.encode(node)))
    raw = g.bump_version(msgspec.json.encode(node))
    candidates = from_nodes([msgspec.Raw(raw)], state)
    (info,) = candidates.infos
    assert info.node is not state.nodes[info.name].node
    assert info.pods is state.nodes[info.name].pods
    assert _fields(info.node) | {"resource_version": ""} == (
        _fields(state.nodes[info.name].node) | {"resource_version": ""})
    assert bytes(candidates.raw[info.name]) == raw
