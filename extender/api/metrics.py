"""Prometheus metrics, served at `/metrics`."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Gauge, Histogram, generate_latest

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

REQUEST_DURATION = Histogram(
    "extender_request_duration_seconds", "Time to answer a scheduler request, by verb.",
    ["verb"], buckets=_BUCKETS)
REQUESTS = Counter("extender_requests_total", "Scheduler requests, by verb and outcome.",
                   ["verb", "outcome"])
FILTER_REJECTIONS = Counter("extender_filter_rejections_total",
                            "Nodes rejected by filter, by reason.", ["reason"])
PREEMPT_NODE_DROPS = Counter("extender_preempt_node_drops_total",
                             "Candidate nodes dropped from a preempt reply, by reason.", ["reason"])
BIND = Counter("extender_bind_total", "Bind calls, by outcome.", ["outcome"])
BIND_RETRIES = Counter("extender_bind_retries_total", "Retried Kubernetes API calls while binding.")
INFORMER_SYNCED = Gauge("extender_informer_synced",
                        "1 once the informer for a resource has listed, else 0.", ["resource"])
INFORMER_EVENTS = Counter("extender_informer_events_total", "Watch events applied.",
                          ["resource", "type"])
STATE_NODES = Gauge("extender_state_nodes", "Nodes in the extender's cluster state.")
STATE_PODS = Gauge("extender_state_pods", "Pods in the extender's cluster state.")
INFORMER_STALE_EVENTS = Counter(
    "extender_informer_stale_events_total",
    "Watch events ignored because their resourceVersion was not newer than the informer's.",
    ["resource"])
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
LARGE_REQUESTS = Gauge("extender_large_requests",
                       "Large requests running off the event loop or waiting for their turn.",
                       ["state"])


def exposition() -> tuple[bytes, str]:
    return generate_latest(), CONTENT_TYPE_LATEST
