"""The minimiser keeps exactly what a disagreement needs (a stand-in disagreement, no Go)."""

from __future__ import annotations

import random

from conformance.generate import case
from conformance.minimise import minimise


def test_only_what_the_disagreement_needs_is_kept() -> None:
    objects, pod = case(random.Random(11), max_nodes=8)
    pod["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    keep = next(o["metadata"]["name"] for o in objects if o["kind"] == "Node")

    def disagreement(objs: list, p: dict) -> frozenset[str]:
        # "Disagrees" while the kept node and the pod's tolerations are both there.
        has_node = any(o["kind"] == "Node" and o["metadata"]["name"] == keep for o in objs)
        return frozenset({"filter"}) if has_node and "tolerations" in p["spec"] else frozenset()

    small_objects, small_pod = minimise(objects, pod, disagreement)
    assert [(o["kind"], o["metadata"]["name"]) for o in small_objects] == [("Node", keep)]
    assert set(small_pod["spec"]) == {"containers", "priority", "tolerations"}
    assert disagreement(small_objects, small_pod) == {"filter"}
