"""Prometheus metrics, served at `/metrics`.

Every label takes its values from a small fixed set (verbs, outcomes, plugin names, status
codes, resource kinds, cache names), never from free text such as a node's taint value, so the
number of series does not grow with the cluster. The `_created` series that prometheus_client
adds to every counter and histogram are turned off: they doubled the series and nothing reads
them.
"""

from __future__ import annotations

import platform
from typing import Any

import prometheus_client
from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

from extender import __version__

prometheus_client.disable_created_metrics()

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

BUILD_INFO = Gauge("extender_build_info",
                   "Always 1; the labels give the extender's version and the Python running it.",
                   ["version", "python_version"])
BUILD_INFO.labels(__version__, platform.python_version()).set(1)

REQUEST_DURATION = Histogram(
    "extender_request_duration_seconds", "Time to answer a scheduler request, by verb.",
    ["verb"], buckets=_BUCKETS)
REQUESTS = Counter("extender_requests_total", "Scheduler requests, by verb and outcome.",
                   ["verb", "outcome"])
FILTER_REJECTIONS = Counter(
    "extender_filter_rejections_total",
    "Nodes rejected by filter, by the plugin that rejected them and its status code "
    "(Unschedulable, UnschedulableAndUnresolvable, Error).", ["plugin", "code"])
PREEMPT_NODE_DROPS = Counter("extender_preempt_node_drops_total",
                             "Candidate nodes dropped from a preempt reply, by reason.", ["reason"])
BIND = Counter("extender_bind_total", "Bind calls, by outcome.", ["outcome"])
ANTICIPATED = Counter(
    "extender_prioritize_anticipated_total",
    "Prioritize replies prepared as soon as the pod's filter was answered, by outcome "
    "(prepared; used: a prioritize was answered with one; failed: a scorer erred, the "
    "prioritize itself will say so).", ["outcome"])
EVENTS = Counter("extender_events_total",
                 "FailedScheduling Events, by outcome (posted, patched, deduplicated, "
                 "rate_limited, dropped, failed, queued).", ["outcome"])
BIND_RETRIES = Counter("extender_bind_retries_total", "Retried Kubernetes API calls while binding.")
API_CONNECTIONS_RECLAIMED = Counter(
    "extender_api_connections_reclaimed_total",
    "Connections to the API server taken back from the HTTP client's pool after a failed call "
    "(httpcore left them unusable: encode/httpcore#1093).")
INFORMER_SYNCED = Gauge("extender_informer_synced",
                        "1 once the informer for a resource has listed, else 0.", ["resource"])
INFORMER_EVENTS = Counter("extender_informer_events_total", "Watch events applied.",
                          ["resource", "type"])
INFORMER_LISTS = Counter("extender_informer_lists_total",
                         "Complete lists of a resource (the first one and every relist).",
                         ["resource"])
INFORMER_RELISTS = Counter(
    "extender_informer_relists_total",
    "Lists after the first one (the watch's version expired: 410 Gone, or it was ahead of the "
    "server's).", ["resource"])
INFORMER_WATCHES = Counter("extender_informer_watches_total", "Watch requests started.",
                           ["resource"])
INFORMER_ERRORS = Counter("extender_informer_errors_total",
                          "Failed list or watch requests (each is retried with backoff).",
                          ["resource"])
INFORMER_SYNC_AGE = Gauge(
    "extender_informer_last_sync_age_seconds",
    "Seconds since the informer's last successful list or watch event (bookmarks included); "
    "+Inf before its first list.", ["resource"])
STATE_NODES = Gauge("extender_state_nodes", "Nodes in the extender's cluster state.")
STATE_PODS = Gauge("extender_state_pods", "Pods in the extender's cluster state.")
INFORMER_STALE_EVENTS = Counter(
    "extender_informer_stale_events_total",
    "Watch events ignored because their resourceVersion was not newer than the informer's.",
    ["resource"])
LATE_POD_EVENTS = Counter(
    "extender_informer_late_pod_events_total",
    "Pod watch events older than this extender's bind of the pod (its watch behind "
    "kube-scheduler's); the bind's assumption stood through them.")
PODS_GONE_BEFORE_WATCH = Counter(
    "extender_informer_pods_gone_before_watch_total",
    "Pods a filter, prioritize or preempt call found gone from the API server before the "
    "watch delivered their deletion (their node listed afresh); deleted from the state then.")
PODS_SEEN_BEFORE_WATCH = Counter(
    "extender_informer_pods_seen_before_watch_total",
    "Pods a filter, prioritize or preempt call found bound at the API server before the "
    "watch delivered them (their node listed afresh); added to the state then.")
NODES_SEEN_BEFORE_WATCH = Counter(
    "extender_informer_nodes_seen_before_watch_total",
    "Nodes a filter, prioritize or preempt call named that the API server had, or had newer, "
    "before the watch delivered them (read afresh); added or updated in the state then.")
NRT_CACHE_RESYNCS = Counter(
    "extender_nrt_cache_resyncs_total",
    "Rounds of the NodeResourceTopology overreserve cache's resync (one every "
    "cacheResyncPeriodSeconds).")
NRT_CACHE_FLUSHES = Counter(
    "extender_nrt_cache_flushed_nodes_total",
    "Nodes whose NodeResourceTopology the overreserve cache took afresh at a resync (their "
    "reservations dropped): a matching pod fingerprint, or a changed Topology Manager.")
CACHE_ENTRIES = Gauge("extender_cache_entries",
                      "Entries in each bounded cache or table (see docs/operations.md).", ["cache"])
CONNECTIONS_REFUSED = Counter("extender_connections_refused_total",
                              "Connections closed at once because the cap was reached.",
                              ["listener"])
REQUEST_HEADS_REFUSED = Counter(
    "extender_request_heads_refused_total",
    "Connections closed because a request head was too slow (timeout) or too large.", ["reason"])
OPEN_CONNECTIONS = Gauge("extender_open_connections", "Open HTTP connections, by listener.",
                         ["listener"])
OPEN_CONNECTIONS.labels("main")  # present at 0 before the first connection
CACHE_BYTES = Gauge("extender_cache_bytes",
                    "Bytes held by the caches that keep what requests bring (serve --cache-bytes "
                    "bounds them), by cache.", ["cache"])
LEADER = Gauge("extender_leader",
               "1 while this replica holds the leader election's Lease (serve --leader-elect).")
BINDS_HELD = Gauge("extender_binds_held",
                   "Binds held at Coscheduling's Permit now, each on its own connection.")
LARGE_REQUESTS = Gauge("extender_large_requests",
                       "Large requests running off the event loop or waiting for their turn.",
                       ["state"])

#: kube-scheduler's names for the framework's status codes (`framework.Code`'s values).
CODE_NAMES = {0: "Success", 1: "Error", 2: "Unschedulable", 3: "UnschedulableAndUnresolvable",
              4: "Wait", 5: "Skip"}
#: The `plugin` label of a node the extender itself rejected before any plugin ran (a name
#: it does not know, or a Node object it cannot read).
EXTENDER_PLUGIN = "Extender"


def count_filter_rejections(counts: dict[tuple[str, int], int]) -> None:
    """`counts`: (plugin, status code) -> rejected nodes, from one filter request."""
    for (plugin, code), count in counts.items():
        labelled(FILTER_REJECTIONS, plugin or EXTENDER_PLUGIN,
                 CODE_NAMES.get(int(code), "Error")).inc(count)


def labelled(metric: Any, *values: str) -> Any:
    """`metric.labels(*values)`, made once per values: `labels` validates and locks on every
    call, a few µs on each request (for series from small fixed sets: verbs, outcomes,
    plugins and codes)."""
    key = (id(metric), values)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*values)
    return child


_children: dict[tuple[int, tuple[str, ...]], Any] = {}


def raise_to(counter: Any, total: int) -> None:
    """Bring an unlabelled counter up to `total`, a count kept elsewhere and read when
    /metrics is scraped (a counter never goes down: a smaller total changes nothing)."""
    key = id(counter)
    if total > _totals.get(key, 0):
        counter.inc(total - _totals.get(key, 0))
        _totals[key] = total


_totals: dict[int, int] = {}


def exposition() -> tuple[bytes, str]:
    return generate_latest(), CONTENT_TYPE_LATEST


# ---- node load metrics (Trimaran's source; present only when a plugin reads them) ---------
LOAD_METRICS_FETCHES = Counter(
    "extender_load_metrics_fetch_total",
    "Fetches of node load metrics, by source (load-watcher, prometheus, metrics-server) and "
    "outcome (ok, unreachable, timeout, http_error, invalid, error).", ["source", "outcome"])
LOAD_METRICS_FETCH_DURATION = Histogram(
    "extender_load_metrics_fetch_duration_seconds",
    "Time a fetch of node load metrics took, by source (in the background, never in a request).",
    ["source"], buckets=(*_BUCKETS, 10.0, 30.0))
LOAD_METRICS_NODES = Gauge(
    "extender_load_metrics_nodes",
    "Nodes of the cluster state with the fresh load metrics every enabled Trimaran plugin reads.")
LOAD_METRICS_NODES_WITHOUT_DATA = Gauge(
    "extender_load_metrics_nodes_without_data",
    "Nodes of the cluster state without the fresh load metrics an enabled Trimaran plugin reads "
    "(never reported, older than staleAfterSeconds, or without its metric): that plugin gives "
    "them MinNodeScore (0).")
LOAD_METRICS_AGE = Gauge(
    "extender_load_metrics_age_seconds",
    "Seconds since the data of the newest successful fetch of load metrics, by source; +Inf "
    "before the first.", ["source"])


def count_load_fetch(source: str, outcome: str, seconds: float) -> None:
    """The refresher's `on_fetch`: one fetch of node load metrics."""
    LOAD_METRICS_FETCHES.labels(source, outcome).inc()
    LOAD_METRICS_FETCH_DURATION.labels(source).observe(seconds)


def export_load_metrics(refresher: Any) -> None:
    """Feed a `LoadMetricsRefresher`'s state to the gauges (read at each scrape)."""
    from extender.state.loadmetrics.source import OUTCOMES

    kind = refresher.source.kind
    for outcome in OUTCOMES:
        LOAD_METRICS_FETCHES.labels(kind, outcome)  # present at 0 from the start
    LOAD_METRICS_NODES.set_function(lambda: refresher.status().nodes_with_data)
    LOAD_METRICS_NODES_WITHOUT_DATA.set_function(lambda: refresher.status().nodes_without_data)
    LOAD_METRICS_AGE.labels(kind).set_function(lambda: refresher.status().age_seconds)
