"""`/metrics`: bounded label sets, no `_created` series, build info, the informers' counters
and sync age (against the loopback fake API server), and the Grafana dashboard's queries."""

from __future__ import annotations

import copy
import json
import math
import platform
import re
from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from extender import __version__, serve
from extender.api import metrics
from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.cli import build_parser
from extender.engine.policy import parse_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from extender.state.snapshot import load_snapshot
from tests.conftest import DEMO_CLUSTER, FIXTURES, ROOT, fixture_json
from tests.kube.fake_apiserver import FakeApiServer, Fault
from tests.polling import until

DASHBOARD = ROOT / "manifests" / "grafana" / "extender-dashboard.json"
RESOURCES = ("nodes", "pods", "poddisruptionbudgets", "priorityclasses", "namespaces",
             "services", "replicasets", "statefulsets", "replicationcontrollers")


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Sample name -> [(labels, value)] from an exposition."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((sample.labels, sample.value))
    return out


def value(text: str, name: str, **labels: str) -> float | None:
    for found, number in samples(text).get(name, []):
        if all(found.get(k) == v for k, v in labels.items()):
            return number
    return None




# ---- the snapshot app: label sets ---------------------------------------------------------
@pytest.fixture
def old_wording_client() -> Iterator[TestClient]:
    """kubernetesVersion 1.33: TaintToleration's reason names the taint, value included."""
    state = load_snapshot(DEMO_CLUSTER)
    policy = parse_policy({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                           "kubernetesVersion": "1.33"}, "<test>")
    runtime = Runtime(build_profile(policy), state, SnapshotBinder(state, 30.0))
    with TestClient(create_app(runtime)) as client:
        yield client


def tainted_nodes(count: int) -> list[dict]:
    template = fixture_json("filter-nodes.request.json")["Nodes"]["items"][0]
    nodes = []
    for i in range(count):
        node = copy.deepcopy(template)
        node["metadata"].update(name=f"tainted-{i}", uid=f"uid-tainted-{i}")
        node["metadata"]["labels"]["kubernetes.io/hostname"] = f"tainted-{i}"
        node["spec"]["taints"] = [{"key": "dedicated", "value": f"team-{i}",
                                   "effect": "NoSchedule"}]
        nodes.append(node)
    return nodes


def test_rejections_by_distinct_taints_make_a_bounded_number_of_series(old_wording_client):
    def rejection_series() -> dict[tuple[str, str], float]:
        text = old_wording_client.get("/metrics").text
        return {(labels["plugin"], labels["code"]): number for labels, number
                in samples(text).get("extender_filter_rejections_total", [])}

    before = rejection_series()
    request = fixture_json("filter-nodes.request.json")
    request["Nodes"]["items"] = tainted_nodes(200)
    reply = old_wording_client.post("/filter", json=request).json()
    reasons = set(reply["FailedAndUnresolvableNodes"].values())
    assert len(reasons) == 200  # 200 distinct reason texts: a reason label made 200 series
    after = rejection_series()
    assert set(after) - set(before) <= {("TaintToleration", "UnschedulableAndUnresolvable")}
    key = ("TaintToleration", "UnschedulableAndUnresolvable")
    assert after[key] - before.get(key, 0.0) == 200
    # Nodes the extender does not know: its own plugin label, not the reason text.
    old_wording_client.post("/filter", json={**fixture_json("filter-names.request.json"),
                                             "NodeNames": [f"ghost-{i}" for i in range(50)]})
    final = rejection_series()
    assert final[("Extender", "Unschedulable")] >= 50
    # Every label value comes from a fixed set: plugin names and status codes.
    assert {code for _, code in final} <= {"Unschedulable", "UnschedulableAndUnresolvable",
                                           "Error"}
    assert not any("team-" in plugin or " " in plugin for plugin, _ in final)
    assert len(final) <= 3 * 12


def test_no_created_series_and_build_info(client):
    client.post("/filter", content=(FIXTURES / "filter-names.request.json").read_bytes())
    text = client.get("/metrics").text
    assert "_created" not in text
    assert not any(name.endswith("_created") for name in samples(text))
    assert value(text, "extender_build_info", version=__version__,
                 python_version=platform.python_version()) == 1.0
    assert 'extender_requests_total{outcome="ok",verb="filter"}' in text


# ---- a live extender against the fake API server -----------------------------------------
@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeApiServer, TestClient]]:
    """`serve --kubeconfig` wired exactly as the command wires it, on a TestClient."""
    with FakeApiServer(bookmark_interval=0.2) as server:
        server.load(json.loads((FIXTURES / "cluster.json").read_text())["items"])
        server.put({**fixture_json("filter-names.request.json")["Pod"], "kind": "Pod"})
        kubeconfig = server.write_kubeconfig(tmp_path_factory.mktemp("live") / "kubeconfig")
        args = build_parser("serve").parse_args(
            ["serve", "--kubeconfig", str(kubeconfig), "--policy",
             str(FIXTURES / "policy-leastallocated.json"), "--bind-deadline", "3"])
        runtime = serve.build_runtime(args)
        with TestClient(create_app(runtime)) as client:
            until(lambda: client.get("/readyz").status_code == 200, "/readyz 200")
            client.runtime = runtime  # type: ignore[attr-defined]  # for the wiring's tests
            yield server, client


def test_informer_metrics_after_a_live_run(live):
    server, client = live
    text = client.get("/metrics").text
    for resource in RESOURCES:
        assert value(text, "extender_informer_synced", resource=resource) == 1.0
        assert value(text, "extender_informer_lists_total", resource=resource) >= 1
        assert value(text, "extender_informer_watches_total", resource=resource) >= 1
        assert value(text, "extender_informer_relists_total", resource=resource) is not None
        assert value(text, "extender_informer_errors_total", resource=resource) is not None
        # Present from the start as the docs say, though no stale event came (it had none).
        assert value(text, "extender_informer_stale_events_total", resource=resource) is not None
        age = value(text, "extender_informer_last_sync_age_seconds", resource=resource)
        assert age is not None and 0 <= age < 10  # bookmarks every 0.2 s keep it low
    relists = value(text, "extender_informer_relists_total", resource="pods")
    errors = value(text, "extender_informer_errors_total", resource="pods")

    # The pods watch is cut (an error), and the version it resumes from is gone (a relist).
    server.inject(Fault("gone", path="/api/v1/pods", watch=True))
    server.drop_watches("pods")

    def counted() -> bool:
        now = client.get("/metrics").text
        return (value(now, "extender_informer_relists_total", resource="pods") > relists
                and value(now, "extender_informer_errors_total", resource="pods") > errors)

    until(counted, "the pods relist and error to be counted")
    text = client.get("/metrics").text
    assert value(text, "extender_informer_relists_total", resource="nodes") == 0
    assert value(text, "extender_informer_lists_total", resource="pods") >= 2


def test_connections_the_api_client_takes_back_are_counted(live):
    """`serve` tells `extender_api_connections_reclaimed_total` what its `KubeClient` takes
    back from the pool (`kube.pool.reclaim_orphans`; tests/kube/test_kube_client.py makes it
    happen)."""
    _, client = live
    kube = client.runtime.live.client
    name = "extender_api_connections_reclaimed_total"
    before = value(client.get("/metrics").text, name)
    assert before is not None
    assert kube.on_reclaim is not None
    kube.on_reclaim(2)  # what `_reclaim` reports for two connections taken back
    assert value(client.get("/metrics").text, name) == before + 2


def test_sync_age_is_infinite_before_the_first_list_and_grows_without_events():
    from extender.engine.cluster import ClusterState
    from extender.state.informer import NODES, Informer

    now = [100.0]
    informer = Informer(None, ClusterState(), NODES, clock=lambda: now[0])  # type: ignore[arg-type]
    assert math.isinf(informer.sync_age_seconds)
    informer.last_ok = 100.0
    now[0] = 130.0
    assert informer.sync_age_seconds == 30.0


def dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [target["expr"] for panel in dashboard["panels"]
               for target in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        queries.append(query["query"] if isinstance(query, dict) else str(query))
    return queries


def test_every_metric_the_dashboard_queries_is_exported(live):
    server, client = live
    # Exercise what only appears once used: a filter rejection, a request, a bind.
    client.post("/filter", content=(FIXTURES / "filter-names.request.json").read_bytes())
    client.post("/prioritize", content=(FIXTURES / "prioritize-names.request.json").read_bytes())
    assert client.post("/bind", content=(FIXTURES / "bind.request.json").read_bytes()
                       ).json() == {"Error": ""}
    # The bind's watch event reaches the informer a moment later (the events counter's first
    # sample): read once it has, not racing it (a slow VM's run lost that race).
    until(lambda: "extender_informer_events_total" in samples(client.get("/metrics").text),
          "the bind's watch event to be counted")
    exported = set(samples(client.get("/metrics").text))
    queries = dashboard_queries()
    referenced = {name for query in queries for name in re.findall(r"\bextender_\w+", query)}
    assert {"extender_requests_total", "extender_request_duration_seconds_bucket",
            "extender_filter_rejections_total", "extender_informer_last_sync_age_seconds",
            "extender_informer_relists_total", "extender_informer_errors_total",
            "extender_bind_total"} <= referenced
    assert referenced <= exported, referenced - exported
    # Rejections are shown by plugin and code, the labels the metric has.
    assert any("by (plugin, code)" in query for query in queries)


def test_dashboard_is_importable_grafana_json():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] and dashboard["title"] and dashboard["schemaVersion"] >= 30
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == "${datasource}"
            assert target["expr"].count("(") == target["expr"].count(")")



def test_a_count_kept_elsewhere_only_ever_raises_its_counter():
    registry = CollectorRegistry()
    counter = Counter("test_kept_elsewhere_total", "A count the state keeps.", registry=registry)
    for total, shown in ((3, 3.0), (2, 3.0), (3, 3.0), (5, 5.0)):
        metrics.raise_to(counter, total)
        assert registry.get_sample_value("test_kept_elsewhere_total") == shown


def test_the_operations_guide_lists_every_metric_it_names_and_no_other() -> None:
    # extender_leader, extender_binds_held and extender_cache_bytes were exposed and in no
    # table row (the cache's only in the Limits section).
    from pathlib import Path

    from prometheus_client import REGISTRY

    assert metrics.LEADER is not None  # importing the module registered every metric
    exposed = {m.name for m in REGISTRY.collect() if m.name.startswith("extender_")}
    guide = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    cells = re.findall(r"^\| (`extender_[^|]+)\|", guide, re.M)
    documented = {re.sub(r"_total$", "", name) for cell in cells
                  for name in re.findall(r"`(extender_[a-z_]+)`", cell)}
    assert sorted(exposed - documented) == [] and sorted(documented - exposed) == []
