"""The size of every cache and table that lives across requests, for `extender_cache_entries`.

Each has a bound or an eviction rule (docs/operations.md lists them); the metric shows where
each one sits. Collected when `/metrics` is scraped: a few dictionary lengths and one pass
over the nodes (their memos), nothing that grows with the pods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from extender.api import reading, rowreply
from extender.api.rowreply import replies_for
from extender.engine.plugins.capacity_scheduling.store import QuotaStore
from extender.model import names, quantity, resources, timeparse
from extender.model.node import interned_sizes
from extender.model.pod import shared_sizes
from extender.model.podload import load_sizes

#: lru_cache'd parsers of the model: bounded by their maxsize.
_LRU: dict[str, Any] = {
    "quantity_texts": getattr(quantity, "_parse", None),
    "timestamps": timeparse.parse_time,
    "qualified_names": names.is_qualified_name,
    "label_values": names.is_label_value,
    "extended_resource_names": resources.is_extended_resource,
    "scalar_resource_names": resources.is_scalar_resource,
}


def configure_cache_bytes(total: int) -> None:
    """Share `serve --cache-bytes` among the caches that keep what requests bring: half for
    the candidate lists with their replies, a sixteenth each for recent pods' views by their
    bytes and by their spec."""
    rowreply.BUDGET["bytes"] = total // 2
    reading._recent_pods.set_budget(total // 16)
    reading._views_by_spec.set_budget(total // 16)


def cache_bytes(runtime: Any) -> dict[str, int]:
    """cache name -> bytes held now (roughly: payload bytes and arrays, not object headers),
    for `extender_cache_bytes`."""
    table = runtime.state.table
    return {
        "recent_pod_views": reading._recent_pods.nbytes,
        "pod_views_by_spec": reading._views_by_spec.nbytes,
        **replies_for(table).byte_sizes(),
        # each row memo: 16 bytes per row of the table's capacity (int64 values and generations).
        "node_row_memos": table.memo_count * 16 * table.capacity,
    }


def _lru_size(fn: Any) -> int:
    return fn.cache_info().currsize if hasattr(fn, "cache_info") else 0


def cache_sizes(runtime: Any, extra: dict[str, Callable[[], int]] | None = None) -> dict[str, int]:
    """cache name -> entries now."""
    state = runtime.state
    sizes = {
        # per node view: at most 64 memo entries (NodeView.remember); dropped with the view.
        "node_memos": sum(len(info.node.memo) for info in state.nodes.values()),
        # per plugin and pod signature, one value per node row (NodeTable): at most 256, least
        # recently used first.
        "node_row_memos": state.table.memo_count,
        # candidate NodeNames lists resolved to rows: at most 64; each keeps at most
        # --reply-cache replies (api.rowreply).
        **replies_for(state.table).sizes(),
        # views of the pods of recent filter/prioritize requests: at most 256 (api.reading).
        "recent_pod_views": len(reading._recent_pods),
        # the same pods' views by their content without identity: at most 256 (api.reading).
        "pod_views_by_spec": len(reading._views_by_spec),
        # until confirmed by the watch or --assume-ttl seconds.
        "assumed_pods": len(state.assumed),
        # remembered_pending_pods: the last 4 096 pending pods seen in filter/prioritize (for
        # bind), FIFO; node_set_memos: cleared on every node change and past 1 024 entries;
        # pod_selector_matches: label-selector matches over the pod index, cleared past 4 096.
        **state.cache_sizes(),
        # PDB selector answers across preempt requests: cleared past 16 384.
        "pdb_selector_answers": _selector_answers(),
        # the preempt verb's PDB exposures (cleared past 131 072), node plans (cleared past
        # 65 536) and pod columns (one per bound pod, once a preempt request came).
        **_preempt_memo_sizes(),
        # state changes waiting for a large request to finish (api.offload, state.gate).
        "deferred_state_changes": runtime.gate.pending,
        # binds being performed (one entry per pod and node while its call runs).
        "binds_in_flight": getattr(runtime.binder, "in_flight", 0),
        # binds held at Coscheduling's Permit: each ends within the hold bound.
        "binds_held_at_permit": runtime.binder.held_count() if hasattr(runtime.binder, "held_count") else 0,
        # pods counted against their ElasticQuota until bound: each expires.
        "quota_reservations": len(state.store(QuotaStore).reservations),
        # Event series and per-pod rate buckets: at most 4 096 (oldest first).
        "event_series": runtime.events.entries if runtime.events is not None else 0,
        "quantity_nanos": len(getattr(quantity, "_TEXT_NANOS", ())),  # cleared past 65 536
        **interned_sizes(),
        **shared_sizes(),
        **load_sizes(),
    }
    sizes.update({name: _lru_size(fn) for name, fn in _LRU.items()})
    for name, size in (extra or {}).items():
        sizes[name] = size()
    return sizes


def _selector_answers() -> int:
    from extender.api import preempt  # the route module owns the cross-request cache

    return len(getattr(preempt, "_selector_matches", ()))


def _preempt_memo_sizes() -> dict[str, int]:
    from extender.api import preempt  # the route module owns the cross-request cache

    return preempt._memo.sizes()
