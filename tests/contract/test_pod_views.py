"""A workload's replica takes a recent replica's view, rebound to its identity
(`PodView.rebound`, `api.reading.pod_from_raw`): it must be the view built from scratch."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from bench.generate import make_pod
from conformance.generate import case
from extender import wire
from extender.api import reading
from extender.model.pod import PodView


def _canon(value: Any, depth: int = 0) -> Any:
    """A value as plain data, so views holding objects without `__eq__` compare by content."""
    if depth > 8 or value is None or isinstance(value, str | bytes | int | float | bool):
        return value
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    if isinstance(value, list | tuple):
        return tuple(_canon(v, depth + 1) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return tuple(sorted((k, repr(_canon(v, depth + 1))) for k, v in value.items()))
    names = [n for cls in type(value).__mro__ for n in getattr(cls, "__slots__", ())]
    names += list(getattr(value, "__dict__", {}))
    return (type(value).__name__,
            tuple((n, _canon(getattr(value, n, None), depth + 1)) for n in names))


def _slots(view: PodView) -> dict[str, Any]:
    out = {slot: _canon(getattr(view, slot)) for slot in PodView.__slots__}
    out["_load"] = _canon(view.load)  # built on first read: compared as read
    return out


def _replicas(seed: int) -> list[dict[str, Any]]:
    """Two pods of one spec, each with its own name, uid, version and creation time."""
    rng = random.Random(seed)
    if seed % 2:
        pod = make_pod(seed, cpu_m=rng.choice([100, 500]), memory_mi=rng.choice([128, 1024]))
    else:
        _, pod = case(rng, 4)
    replicas = [msgspec.json.decode(msgspec.json.encode(pod)) for _ in range(2)]
    for i, replica in enumerate(replicas):
        meta = replica["metadata"]
        meta.update(name=f"{meta['name']}-{i}", uid=f"uid-{seed}-{i}",
                    resourceVersion=str(100 + i), creationTimestamp=f"2026-11-2{i}T10:00:0{i}Z")
    return replicas


@pytest.mark.parametrize("seed", range(40))
def test_a_rebound_view_is_the_view_built_afresh(seed: int) -> None:
    first, second = (wire.decode_pod(msgspec.json.encode(p)) for p in _replicas(seed))
    assert reading.pod_signature(first) == reading.pod_signature(second)
    fresh = PodView.from_k8s(second)
    rebound = PodView.from_k8s(first).rebound(second.metadata)
    assert _slots(rebound) == _slots(fresh)
    assert _slots(rebound) != _slots(PodView.from_k8s(first))  # identity does differ
    assert (rebound.uid, rebound.name) == (second.metadata.uid, second.metadata.name)


def test_the_second_replica_takes_the_first_ones_view() -> None:
    reading._recent_pods.clear()
    reading._views_by_spec.clear()
    first, second = (msgspec.json.encode(p) for p in _replicas(1))
    view1, sig1 = reading.pod_from_raw(msgspec.Raw(first), b"{}")
    view2, sig2 = reading.pod_from_raw(msgspec.Raw(second), b"{}")
    assert sig1 == sig2 and len(reading._views_by_spec) == 1
    assert view2.uid != view1.uid and view2.requests is view1.requests  # shared, not rebuilt
    assert _slots(view2) == _slots(PodView.from_k8s(wire.decode_pod(second)))
