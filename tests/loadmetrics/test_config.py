"""Which source the policy names, and `extender serve`'s start-up with it: one refresher per
source, clear start-up errors, and the in-process wiring (lifespan, readiness line, metrics)."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from extender import serve
from extender.api.app import create_app
from extender.api.health import DetailedReadiness
from extender.cli import build_parser
from extender.engine.cluster import ClusterState
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.loadmetrics import (
    LoadMetricsRefresher,
    LoadSourceConfigError,
    build_refresher,
    trimaran_specs,
)
from extender.state.loadmetrics.metricsserver import MetricsServerSource
from extender.state.loadmetrics.prometheus import PrometheusSource
from extender.state.loadmetrics.watcher import LoadWatcherSource
from tests.loadmetrics.cluster import (
    NODES,
    metric,
    prioritize_body,
    prometheus_args,
    trimaran_policy,
    write_cluster,
    write_policy,
)
from tests.polling import free_port, until

TRIMARAN = ("TargetLoadPacking", "LoadVariationRiskBalancing", "LowRiskOverCommitment")


def profile(policy: dict):
    return build_profile(parse_policy(policy, "<test>"))


def test_no_trimaran_plugin_no_refresher() -> None:
    policy = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}
    assert trimaran_specs(profile(policy)) == []
    assert build_refresher(profile(policy), ClusterState()) is None


def test_one_refresher_for_plugins_sharing_a_source() -> None:
    args = prometheus_args("http://prom:9090", refresh=10, stale=100)
    refresher = build_refresher(profile(trimaran_policy(args, TRIMARAN)), ClusterState())
    assert refresher is not None
    assert refresher.plugins == TRIMARAN
    assert isinstance(refresher.source, PrometheusSource)
    assert refresher.source.url == "http://prom:9090/api/v1/query"
    assert (refresher.refresh_seconds, refresher.stale_after_seconds) == (10, 100)
    assert refresher.fetch_timeout == 10


def test_watcher_address_wins_over_the_provider() -> None:
    args = {"watcherAddress": "http://load-watcher:2020", **prometheus_args("http://prom:9090")}
    refresher = build_refresher(profile(trimaran_policy(args)), ClusterState())
    assert isinstance(refresher.source, LoadWatcherSource)
    assert refresher.source.url == "http://load-watcher:2020/watcher"
    assert (refresher.refresh_seconds, refresher.stale_after_seconds) == (30, 300)  # defaults


def test_metrics_server_needs_the_kubernetes_api() -> None:
    with pytest.raises(LoadSourceConfigError, match="--kubeconfig or --in-cluster"):
        build_refresher(profile(trimaran_policy({})), ClusterState())

    class Client:
        class config:  # noqa: N801 - KubeClient's attribute
            server = "https://api:6443"

    refresher = build_refresher(profile(trimaran_policy({})), ClusterState(),
                                kube_client=Client())  # type: ignore[arg-type]
    assert isinstance(refresher.source, MetricsServerSource)
    assert refresher.source.description == "metrics.k8s.io at https://api:6443"


@pytest.mark.parametrize(("args", "words"), [
    ({"metricProvider": {"type": "SignalFx", "address": "https://sfx"}},
     "METRICS_PROVIDER_NAME=SignalFx and set watcherAddress"),
    ({"watcherAddress": "load-watcher:2020"}, "watcherAddress 'load-watcher:2020' is not an http"),
    ({"metricProvider": {"type": "Prometheus", "address": "prom"}},
     "metricProvider.address 'prom' is not an http"),
])
def test_unusable_sources(args: dict, words: str) -> None:
    with pytest.raises(LoadSourceConfigError, match=words.replace("(", r"\(")):
        build_refresher(profile(trimaran_policy(args)), ClusterState())


def test_plugins_naming_different_sources_are_refused() -> None:
    policy = trimaran_policy({}, ("TargetLoadPacking", "LoadVariationRiskBalancing"), per_plugin={
        "TargetLoadPacking": prometheus_args("http://prom:9090"),
        "LoadVariationRiskBalancing": {"watcherAddress": "http://lw:2020"}})
    with pytest.raises(LoadSourceConfigError) as caught:
        build_refresher(profile(policy), ClusterState())
    text = str(caught.value)
    assert "name different sources" in text
    assert "TargetLoadPacking: metricProvider Prometheus http://prom:9090" in text
    assert "LoadVariationRiskBalancing: watcherAddress http://lw:2020" in text


class StubClient:
    class config:  # noqa: N801 - KubeClient's attribute
        server = "https://api:6443"


def prometheus(**fields: object) -> dict:
    return {"metricProvider": {"type": "Prometheus", **fields}}


@pytest.mark.parametrize(("first", "second"), [
    # The same Prometheus, with and without a trailing slash (refused as different sources).
    (prometheus(address="http://prom:9090/"), prometheus(address="http://prom:9090")),
    # Unset is load-watcher's default address.
    (prometheus(), prometheus(address="http://prometheus-k8s:9090/")),
    (prometheus(prometheusQueries={"cpuStd": "stddev_over_time(instance:node_cpu:ratio[15m])"}),
     prometheus()),
    # metrics-server reads neither address nor token.
    ({"metricProvider": {"type": "KubernetesMetricsServer", "address": "http://x"}}, {}),
    ({"watcherAddress": "http://lw:2020/"}, {"watcherAddress": "http://lw:2020"}),
])
def test_one_source_spelled_two_ways_is_shared(first: dict, second: dict) -> None:
    policy = trimaran_policy({}, ("TargetLoadPacking", "LoadVariationRiskBalancing"), per_plugin={
        "TargetLoadPacking": first, "LoadVariationRiskBalancing": second})
    refresher = build_refresher(profile(policy), ClusterState(),
                                kube_client=StubClient())  # type: ignore[arg-type]
    assert refresher is not None
    assert refresher.plugins == ("TargetLoadPacking", "LoadVariationRiskBalancing")


@pytest.mark.parametrize(("first", "second"), [
    (prometheus(address="http://prom:9090"), prometheus(address="http://prom:9091")),
    (prometheus(address="http://prom:9090", token="a"), prometheus(address="http://prom:9090")),
    (prometheus(prometheusQueries={"nodeLabel": "node"}), prometheus()),
    (prometheus(refreshSeconds=10), prometheus()),
])
def test_sources_that_differ_are_still_refused(first: dict, second: dict) -> None:
    policy = trimaran_policy({}, ("TargetLoadPacking", "LoadVariationRiskBalancing"), per_plugin={
        "TargetLoadPacking": first, "LoadVariationRiskBalancing": second})
    with pytest.raises(LoadSourceConfigError, match="name different sources"):
        build_refresher(profile(policy), ClusterState())


def serve_args(tmp_path: Path, policy: dict, *extra: str):
    cluster = write_cluster(tmp_path / "cluster.json")
    policy_file = write_policy(tmp_path / "policy.json", policy)
    return build_parser("serve").parse_args(
        ["serve", "--snapshot", str(cluster), "--policy", str(policy_file), *extra])


def test_snapshot_mode_with_metrics_server_is_a_clear_start_up_error(tmp_path: Path) -> None:
    with pytest.raises(serve.StartupError) as caught:
        serve.build_runtime(serve_args(tmp_path, trimaran_policy({})))
    assert str(caught.value).startswith("node load metrics: TargetLoadPacking: metricProvider "
                                        "type KubernetesMetricsServer")
    assert "--kubeconfig" in str(caught.value)


def test_serve_wires_the_refresher_into_the_lifespan(tmp_path: Path) -> None:
    # Prometheus is not there: the extender starts, stays ready, and says why scores are 0.
    address = f"http://127.0.0.1:{free_port()}"
    args = serve_args(tmp_path, trimaran_policy(prometheus_args(address, refresh=0.2)))
    runtime = serve.build_runtime(args)
    assert isinstance(runtime.readiness, DetailedReadiness)
    with TestClient(create_app(runtime)) as client:
        until(lambda: (metric(client.get("/metrics").text, "extender_load_metrics_fetch_total",
                              source="prometheus", outcome="unreachable") or 0) >= 2,
              "two failed fetches")
        ready = client.get("/readyz?verbose")
        assert ready.status_code == 200
        lines = ready.text.splitlines()
        assert lines[:2] == ["[+]ping ok", "[+]cluster-state ok"]
        assert lines[2].startswith(f"[!]load-metrics warning: Prometheus at {address}: ")
        assert "4 of 4 node(s) without fresh metrics (scored 0 by TargetLoadPacking)" in lines[2]
        assert lines[3] == "readyz check passed"
        assert client.get("/readyz").text == "ok"
        reply = client.post("/prioritize", json=prioritize_body())
        assert reply.status_code == 200
        assert {e["Host"]: e["Score"] for e in reply.json()} == dict.fromkeys(NODES, 0)
        text = client.get("/metrics").text
        assert "extender_load_metrics_nodes_without_data 4.0" in text
        assert 'extender_load_metrics_fetch_total{outcome="ok",source="prometheus"} 0.0' in text
        assert 'extender_load_metrics_age_seconds{source="prometheus"} +Inf' in text
    # The lifespan started the refresher and its shutdown stopped it.
    refreshers = [getattr(start, "__self__", None) for start in runtime.startup]
    refresher = next(r for r in refreshers if isinstance(r, LoadMetricsRefresher))
    assert refresher.consecutive_failures >= 2 and refresher._task is None
