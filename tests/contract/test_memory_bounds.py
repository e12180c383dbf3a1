"""Every cache that outlives a request stays within its bound under churn, and `/metrics`
exports its size."""

from __future__ import annotations

import re

from extender.model import k8s
from extender.model.node import NodeView, interned_sizes, signature
from extender.model.pod import PodView, shared_sizes
from tests.conftest import fixture_bytes

CACHES = {"node_memos", "node_row_memos", "candidate_lists", "kept_replies", "recent_pod_views", "pod_views_by_spec", "assumed_pods", "remembered_pending_pods", "node_set_memos",
          "pod_selector_matches",
          "pdb_selector_answers", "preempt_exposures", "preempt_node_plans", "preempt_pod_columns",
          "deferred_state_changes", "binds_in_flight", "binds_held_at_permit",
          "quota_reservations", "event_series", "quantity_nanos", "pod_assignment_times",
          "shared_pod_loads", "load_quantities",
          "pod_signatures", "taint_sets", "image_names", "node_resource_lists", "shared_labels", "shared_requests", "shared_pod_values", "quantity_texts",
          "timestamps", "qualified_names", "label_values", "extended_resource_names",
          "scalar_resource_names"}


def _exported(client) -> dict[str, float]:
    text = client.get("/metrics").text
    return {m[0]: float(m[1]) for m in
            re.findall(r'^extender_cache_entries\{cache="([^"]+)"\} (\S+)$', text, re.M)}


def test_metrics_export_every_cache_size(client) -> None:
    assert client.post("/filter", content=fixture_bytes("filter-names.request.json")).status_code == 200
    sizes = _exported(client)
    assert set(sizes) == CACHES
    assert sizes["node_row_memos"] > 0  # the filter memoised node-only verdicts per row
    # The request's list, and the nodes that passed (the prioritize to come names them).
    assert sizes["candidate_lists"] == 2 and sizes["kept_replies"] == 1
    assert sizes["remembered_pending_pods"] == 1  # its pod, for the bind to come
    assert client.post("/bind", content=fixture_bytes("bind.request.json")).json() == {"Error": ""}
    sizes = _exported(client)
    assert sizes["assumed_pods"] == 1 and sizes["remembered_pending_pods"] == 0
    assert client.post("/preempt", content=fixture_bytes("preempt-meta.request.json")).status_code == 200
    assert _exported(client)["preempt_pod_columns"] > 0  # one per bound pod, built by preempt


def test_pod_signatures_and_taint_sets_stay_bounded_under_churn() -> None:
    for i in range(70_000):
        signature("churn", i)
    assert interned_sizes()["pod_signatures"] <= 65_537


def test_a_node_views_memo_stays_bounded() -> None:
    view = NodeView.from_k8s(k8s.convert({"metadata": {"name": "n"}}, k8s.Node))
    for i in range(1_000):
        view.remember(signature("memo", i), i)
    assert len(view.memo) <= 64


def test_shared_label_maps_stay_bounded_under_churn() -> None:
    for i in range(101_000):
        PodView.from_k8s(k8s.convert({"metadata": {"name": "p", "uid": f"u{i}",
                                                   "labels": {"pod-template-hash": str(i)}}},
                                     k8s.Pod), slim=True)
    assert shared_sizes()["shared_labels"] <= 100_000


def test_remembered_pending_pods_stay_bounded(client, runtime) -> None:
    for i in range(5_000):
        pod = k8s.convert({"metadata": {"name": f"p{i}", "namespace": "d", "uid": f"uid-{i}"}},
                          k8s.Pod)
        runtime.state.remember_pending(PodView.from_k8s(pod))
    assert _exported(client)["remembered_pending_pods"] == 4_096


def test_a_bounded_cache_evicts_by_bytes_and_keeps_nothing_too_large() -> None:
    from extender.api.bounded import BoundedCache

    cache: BoundedCache[str, str] = BoundedCache(max_entries=100, max_bytes=1600)
    assert cache.put("a", "A", 100) and cache.put("b", "B", 100)
    # Past a sixteenth of the budget an entry is not kept (it would evict everything).
    assert not cache.put("huge", "H", 101) and cache.get("huge") is None
    for i in range(20):
        cache.put(f"k{i}", "v", 100)
    assert cache.nbytes <= 1600 and len(cache) == 16
    assert cache.get("a") is None and cache.get("k19") == "v"  # oldest out first
    cache.set_budget(320)
    assert cache.nbytes <= 320 and len(cache) == 3


def test_metrics_export_the_bytes_of_the_caches_requests_fill(client) -> None:
    assert client.post("/filter", content=fixture_bytes("filter-names.request.json")).status_code == 200
    text = client.get("/metrics").text
    held = {m[0]: float(m[1]) for m in
            re.findall(r'^extender_cache_bytes\{cache="([^"]+)"\} (\S+)$', text, re.M)}
    assert set(held) == {"recent_pod_views", "pod_views_by_spec", "candidate_lists",
                         "node_row_memos"}
    assert held["recent_pod_views"] > 1000 and held["candidate_lists"] > 0
    assert held["pod_views_by_spec"] > 100


def test_the_candidate_lists_bytes_are_counted_as_they_change() -> None:
    """`RowReplies` keeps the lists' bytes as a running total (summing them on every insert
    cost a tenth of a filter): after churn — new lists, replies kept and dropped, last replies
    replaced, lists evicted by count and by bytes — it is what counting afresh gives."""
    import json
    import random

    from starlette.testclient import TestClient

    from extender.api import rowreply
    from extender.api.app import create_app
    from extender.api.runtime import Runtime
    from extender.engine.evaluate import DEFAULT_POLICY, cluster_from_objects
    from extender.engine.policy import parse_policy
    from extender.engine.profile import build_profile
    from extender.state.binder import SnapshotBinder
    from tests.contract.test_anticipate import settled
    from tests.contract.test_reply_reuse import NAMES, cluster_objects, pending_pod

    def exact(replies: rowreply.RowReplies) -> int:
        total = 0
        for entry in replies._lists.values():
            total += len(entry.raw) + entry.rows.nbytes
            total += sum(len(e.reply) for e in entry.replies.values())
            if entry.last_filter is not None:
                total += (entry.last_filter[0].nbytes + len(entry.last_filter[2])
                          + len(entry.last_filter[3]))
            if entry.last_scores is not None:
                total += entry.last_scores[0].nbytes + len(entry.last_scores[1])
        return total

    rng = random.Random(5)
    state = cluster_from_objects(cluster_objects(rng))
    runtime = Runtime(build_profile(parse_policy(DEFAULT_POLICY)), state,
                      SnapshotBinder(state, 30.0))
    budget = rowreply.BUDGET["bytes"]
    try:
        rowreply.BUDGET["bytes"] = 6_000  # small: evictions by bytes happen too
        with TestClient(create_app(runtime)) as client:
            replies = rowreply.replies_for(state.table)
            for i in range(300):
                names = rng.sample(NAMES, rng.randint(1, len(NAMES)))
                body = json.dumps({"Pod": pending_pod(rng.randrange(3), rng.randrange(4)),
                                   "Nodes": None, "NodeNames": names}).encode()
                assert client.post(rng.choice(["/filter", "/prioritize"]),
                                   content=body).status_code == 200
                if i % 25 == 0:
                    settled(client)
                    assert replies.nbytes() == exact(replies)
            settled(client)
            assert replies.nbytes() == exact(replies) > 0
            assert 1 < len(replies._lists) <= rowreply.NAMES_CACHE_SIZE
    finally:
        rowreply.BUDGET["bytes"] = budget
