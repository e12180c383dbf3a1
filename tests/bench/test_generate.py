"""The payload generator: deterministic, realistic sizes, consistent with its own snapshot."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bench import generate as g

SPEC = g.ClusterSpec(40, 400, seed=7)


@pytest.fixture(scope="module")
def cluster() -> dict[str, Any]:
    return g.make_cluster(SPEC.n_nodes, SPEC.n_pods, SPEC.seed)


def _by_kind(cluster: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in cluster["items"] if i["kind"] == kind]


def _milli(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(q) * 1000


def _bytes(q: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    return int(q[:-2]) * units[q[-2:]] if q[-2:] in units else int(q)


def test_deterministic_and_streamed_equals_built(tmp_path: Path, cluster: dict[str, Any]) -> None:
    assert g.make_cluster(SPEC.n_nodes, SPEC.n_pods, SPEC.seed) == cluster
    path = tmp_path / "c.json"
    g.write_cluster(path, SPEC)
    assert msgspec.json.decode(path.read_bytes()) == cluster
    assert g.make_filter_body(SPEC, 10, "nodes") == g.make_filter_body(SPEC, 10, "nodes")
    assert g.make_cluster(SPEC.n_nodes, SPEC.n_pods, SPEC.seed + 1) != cluster


def test_list_shape_and_counts(cluster: dict[str, Any]) -> None:
    assert (cluster["apiVersion"], cluster["kind"]) == ("v1", "List")
    assert len(_by_kind(cluster, "Node")) == SPEC.n_nodes
    assert len(_by_kind(cluster, "Pod")) == SPEC.n_pods
    assert _by_kind(cluster, "PriorityClass") and _by_kind(cluster, "PodDisruptionBudget")
    names = [p["metadata"]["namespace"] + "/" + p["metadata"]["name"] for p in _by_kind(cluster, "Pod")]
    assert len(set(names)) == len(names)


def test_node_sizes_and_variety() -> None:
    sizes = [len(g.encode(g.make_node(1, i))) for i in range(300)]
    assert 5_000 <= min(sizes) and max(sizes) <= 15_000
    traits = [g.node_traits(1, i) for i in range(2000)]
    assert any(t.gpu for t in traits) and any(t.spot_tainted for t in traits)
    assert any(t.cordoned for t in traits) and len({t.zone for t in traits}) == 3
    node = g.make_node(1, 0)
    assert "kind" not in node and len(node["status"]["conditions"]) >= 5
    assert 20 <= len(node["status"]["images"]) <= 50


def test_pending_pod_shape() -> None:
    pod = g.make_pod()
    assert 3_000 <= len(g.encode(pod)) <= 6_000
    spec = pod["spec"]
    assert "kind" not in pod and "nodeName" not in spec
    assert any(c.get("restartPolicy") == "Always" for c in spec["initContainers"])  # native sidecar
    affinity = spec["affinity"]["nodeAffinity"]
    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    assert affinity["preferredDuringSchedulingIgnoredDuringExecution"]
    assert spec["tolerations"] and spec["priority"] > 0


def test_running_pods_fit_their_nodes(cluster: dict[str, Any]) -> None:
    nodes = {n["metadata"]["name"]: n for n in _by_kind(cluster, "Node")}
    cpu: dict[str, int] = defaultdict(int)
    mem: dict[str, int] = defaultdict(int)
    count: dict[str, int] = defaultdict(int)
    for pod in _by_kind(cluster, "Pod"):
        node = pod["spec"]["nodeName"]
        assert node in nodes
        count[node] += 1
        for c in pod["spec"]["containers"]:
            req = c["resources"]["requests"]
            cpu[node] += _milli(req.get("cpu", "0"))
            mem[node] += _bytes(req.get("memory", "0"))
    for name, node in nodes.items():
        alloc = node["status"]["allocatable"]
        assert cpu[name] <= _milli(alloc["cpu"]) and mem[name] <= _bytes(alloc["memory"]), name
        assert count[name] <= int(alloc["pods"])


def test_request_bodies_refer_to_the_snapshot(cluster: dict[str, Any]) -> None:
    nodes = {n["metadata"]["name"]: n for n in _by_kind(cluster, "Node")}
    pods = {p["metadata"]["uid"]: p for p in _by_kind(cluster, "Pod")}
    names = msgspec.json.decode(g.make_filter_body(SPEC, 25, "names"))
    assert names["Nodes"] is None and len(set(names["NodeNames"])) == 25
    assert set(names["NodeNames"]) <= set(nodes)
    full = msgspec.json.decode(g.make_filter_body(SPEC, 25, "nodes"))
    assert full["NodeNames"] is None
    for item in full["Nodes"]["items"]:
        expected = {k: v for k, v in nodes[item["metadata"]["name"]].items() if k not in ("kind", "apiVersion")}
        assert item == expected
    meta = msgspec.json.decode(g.make_preempt_body(SPEC, 25, "names"))
    assert meta["NodeNameToVictims"] is None and meta["NodeNameToMetaVictims"]
    prio = meta["Pod"]["spec"]["priority"]
    several = 0
    for node, victims in meta["NodeNameToMetaVictims"].items():
        for v in victims["Pods"]:
            assert pods[v["UID"]]["spec"]["nodeName"] == node
            assert pods[v["UID"]]["spec"]["priority"] < prio
        # Most important first, as kube-scheduler's SelectVictimsOnNode lists them.
        keys = [(-pods[v["UID"]]["spec"]["priority"], pods[v["UID"]]["status"]["startTime"])
                for v in victims["Pods"]]
        assert keys == sorted(keys)
        several += len(set(keys)) > 1
    assert several  # some node's order is not decided by equal keys alone
    binds = [msgspec.json.decode(b) for b in g.make_bind_bodies(SPEC, 5)]
    assert len({b["PodName"] for b in binds}) == 5 and all(b["Node"] in nodes for b in binds)


def test_cold_nodes_body_is_the_same_nodes_one_version_ahead(cluster: dict[str, Any]) -> None:
    """The cold Nodes-form body: the warm body's nodes, each at a resourceVersion the
    snapshot does not hold, and nothing else changed."""
    nodes = {n["metadata"]["name"]: n for n in _by_kind(cluster, "Node")}
    warm = msgspec.json.decode(g.make_filter_body(SPEC, 25, "nodes"))
    cold = msgspec.json.decode(g.make_filter_body(SPEC, 25, "nodes", cold=True))
    assert cold["Pod"] == warm["Pod"] and len(cold["Nodes"]["items"]) == 25
    for w, c in zip(warm["Nodes"]["items"], cold["Nodes"]["items"], strict=True):
        held = nodes[c["metadata"]["name"]]["metadata"]["resourceVersion"]
        assert int(c["metadata"]["resourceVersion"]) == int(held) + 1
        c["metadata"]["resourceVersion"] = held
        assert c == w


def test_written_files_include_the_cold_variant(tmp_path: Path) -> None:
    gen = g.write_bench_files(tmp_path, SPEC, [10], ["nodes"], n_bind=2)
    assert {"filter-nodes-10", "filter-nodes-10-cold"} <= set(gen.bodies)
    warm, cold = (gen.bodies[k].read_bytes() for k in ("filter-nodes-10", "filter-nodes-10-cold"))
    assert warm != cold and abs(len(warm) - len(cold)) <= 10
