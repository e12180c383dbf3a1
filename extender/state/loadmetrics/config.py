"""Which node-metrics source the policy asks for, and the refresher that reads it.

Every plugin whose arguments are a `TrimaranSpec` (TargetLoadPacking,
LoadVariationRiskBalancing, LowRiskOverCommitment) names a source: `watcherAddress` (a
load-watcher service) when set, else `metricProvider` (`KubernetesMetricsServer`, the
default, or `Prometheus`), with `metricProvider.refreshSeconds` and `staleAfterSeconds`.
Plugins with the same source share one refresher. The extender keeps one snapshot
(`TrimaranStore.metrics`, which every such plugin reads), so plugins naming *different*
sources are a configuration error, reported at start-up with each plugin's source;
upstream recommends against enabling several Trimaran plugins together anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from extender.engine import registry
from extender.engine.args import TrimaranSpec
from extender.engine.cluster import ClusterState
from extender.kube.client import KubeClient
from extender.state.loadmetrics.metricsserver import CapacityOf, MetricsServerSource
from extender.state.loadmetrics.refresher import FetchCallback, LoadMetricsRefresher
from extender.state.loadmetrics.source import WINDOW, LoadSource, prometheus_address


class LoadSourceConfigError(ValueError):
    """The policy's metrics source cannot be used as configured (a start-up error)."""


def trimaran_specs(profile: Any) -> list[tuple[str, TrimaranSpec]]:
    """(plugin name, its TrimaranSpec arguments) for each enabled plugin that reads node metrics."""
    configs = getattr(profile.policy, "plugin_config", None) or ()
    seen: list[tuple[str, TrimaranSpec]] = []
    for plugin in profile.plugins:
        record = registry.PLUGINS.get(plugin.name)
        if record is None or not issubclass(record.args_model, TrimaranSpec):
            continue
        if any(name == plugin.name for name, _ in seen):
            continue
        raw: dict[str, Any] = next((c.args for c in configs if c.name == plugin.name), {})
        spec = record.args_model.model_validate(raw)
        assert isinstance(spec, TrimaranSpec)
        seen.append((plugin.name, spec))
    return seen


def describe(spec: TrimaranSpec) -> str:
    provider = spec.metric_provider
    if spec.watcher_address:
        where = f"watcherAddress {spec.watcher_address}"
    elif provider.type == "KubernetesMetricsServer":
        where = "metricProvider KubernetesMetricsServer"
    else:
        where = f"metricProvider {provider.type} {provider.address or '(default address)'}"
    return (f"{where}, refreshSeconds {provider.refresh_seconds:g}, "
            f"staleAfterSeconds {provider.stale_after_seconds:g}")


def source_key(spec: TrimaranSpec) -> tuple[object, ...]:
    """Equal for arguments that name the same source with the same timing. Compared as
    `build_source` reads them, so that spellings of one source are one: an address without
    its trailing `/` (Prometheus' default filled in), queries with `{window}` filled in, and
    without the fields the source ignores (metrics-server reads no address, token or query)."""
    provider = spec.metric_provider
    timing = (provider.refresh_seconds, provider.stale_after_seconds)
    if spec.watcher_address:
        return ("load-watcher", spec.watcher_address.rstrip("/"), *timing)
    if provider.type == "Prometheus":
        q = provider.prometheus_queries
        queries = tuple(text.replace("{window}", WINDOW).strip() for text in (
            q.cpu_average, q.cpu_std, q.memory_average, q.memory_std))
        return ("Prometheus", prometheus_address(provider.address), provider.token,
                provider.insecure_skip_verify, queries, q.node_label, *timing)
    if provider.type == "KubernetesMetricsServer":
        return ("KubernetesMetricsServer", *timing)
    return ("provider", provider.model_dump_json())


def _check_url(who: str, field: str, address: str) -> None:
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise LoadSourceConfigError(f"{who}: {field} {address!r} is not an http:// or https:// URL")


def state_capacity(state: ClusterState) -> CapacityOf:
    """A node's capacity (cpu millicores, memory bytes) from the cluster state."""

    def capacity(name: str) -> tuple[int, int] | None:
        info = state.nodes.get(name)
        if info is None:
            return None
        return info.node.capacity.milli_cpu, info.node.capacity.memory

    return capacity


def build_source(spec: TrimaranSpec, state: ClusterState, kube_client: KubeClient | None,
                 who: str) -> LoadSource:
    # The HTTP sources' modules import httpx: only a server that reads them pays for it.
    if spec.watcher_address:
        from extender.state.loadmetrics.watcher import LoadWatcherSource

        _check_url(who, "watcherAddress", spec.watcher_address)
        return LoadWatcherSource(spec.watcher_address)
    provider = spec.metric_provider
    if provider.type == "Prometheus":
        if provider.address:
            _check_url(who, "metricProvider.address", provider.address)
        from extender.state.loadmetrics.prometheus import PrometheusSource

        return PrometheusSource(provider)
    if provider.type == "KubernetesMetricsServer":
        if kube_client is None:
            raise LoadSourceConfigError(
                f"{who}: metricProvider type KubernetesMetricsServer (the default when "
                "watcherAddress is empty) reads metrics.k8s.io through the Kubernetes API: "
                "start the extender with --kubeconfig or --in-cluster, or set watcherAddress "
                "(a load-watcher service) or metricProvider {type: Prometheus, address: URL}")
        return MetricsServerSource(kube_client, state_capacity(state))
    raise LoadSourceConfigError(
        f"{who}: metricProvider type {provider.type} is not read by the extender itself: run "
        f"load-watcher with METRICS_PROVIDER_NAME={provider.type} and set watcherAddress to it")


def one_source(profile: Any) -> tuple[TrimaranSpec, list[str]] | None:
    """The one metrics source the profile's plugins read and their names (None when no enabled
    plugin reads node metrics); `LoadSourceConfigError` when they name different sources."""
    uses = trimaran_specs(profile)
    if not uses:
        return None
    groups: dict[tuple[object, ...], list[str]] = {}
    specs: dict[tuple[object, ...], TrimaranSpec] = {}
    for name, spec in uses:
        key = source_key(spec)
        groups.setdefault(key, []).append(name)
        specs.setdefault(key, spec)
    if len(groups) > 1:
        lines = "; ".join(f"{', '.join(names)}: {describe(specs[key])}"
                          for key, names in groups.items())
        raise LoadSourceConfigError(
            "the plugins that read node metrics name different sources, but the extender "
            f"keeps one metrics snapshot: give them the same watcherAddress/metricProvider ({lines})")
    (key, names), = groups.items()
    return specs[key], names


def build_refresher(profile: Any, state: ClusterState, *, kube_client: KubeClient | None = None,
                    on_fetch: FetchCallback | None = None,
                    clock: Callable[[], float] | None = None) -> LoadMetricsRefresher | None:
    """The refresher the profile needs (None when no enabled plugin reads node metrics)."""
    found = one_source(profile)
    if found is None:
        return None
    spec, names = found
    who = "/".join(names)
    source = build_source(spec, state, kube_client, who)
    provider = spec.metric_provider
    extra: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return LoadMetricsRefresher(source, state, refresh_seconds=provider.refresh_seconds,
                                stale_after_seconds=provider.stale_after_seconds,
                                on_fetch=on_fetch, plugins=tuple(names), **extra)
