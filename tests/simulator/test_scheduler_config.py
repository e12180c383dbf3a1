"""`extender simulate --config`: a KubeSchedulerConfiguration mapped to the simulator's
profile, percentage, backoff and extenders, checked with check-config's rules."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from extender.cli import main
from extender.engine import registry
from extender.engine.profile import build_profile
from extender.simulator.clock import SECOND
from extender.simulator.schedulerconfig import (
    SchedulerConfigError,
    load_scheduler_config,
    scheduler_setup,
)

from .helpers import at, node, pod, write

API = "kubescheduler.config.k8s.io/v1"


def config(tmp_path: Path, **fields: Any) -> Path:
    path = tmp_path / "scheduler.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": API, "kind": "KubeSchedulerConfiguration",
                                    **fields}))
    return path


def plugins(policy: dict[str, Any]) -> dict[str, Any]:
    """point -> names (score: (name, weight))."""
    out: dict[str, Any] = {}
    for point, plugin_set in policy["plugins"].items():
        out[point] = [(p["name"], p["weight"]) if point == "score" else p["name"]
                      for p in plugin_set["enabled"]]
    return out


# -- mapping ----------------------------------------------------------------------------------


def test_an_empty_configuration_is_kube_schedulers_defaults(tmp_path):
    setup = load_scheduler_config(config(tmp_path))
    [profile] = setup.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert setup.profile_for("") is profile and setup.profile_for("other") is None
    mapped = plugins(profile.policy)
    assert mapped["filter"] == list(registry.DEFAULT_FILTERS)  # the same order
    assert dict(mapped["score"]) == dict(registry.DEFAULT_SCORES)  # multiPoint's order
    assert mapped["postFilter"] == ["DefaultPreemption"]
    assert "queueSort" not in mapped  # PrioritySort: the policy's default
    assert profile.percentage_of_nodes_to_score == 0  # adaptive
    assert (setup.pod_initial_backoff, setup.pod_max_backoff) == (1 * SECOND, 10 * SECOND)
    assert setup.extenders == () and setup.warnings == ()
    built = build_profile(profile.extender_policy())
    assert list(built.filter_names) == list(registry.DEFAULT_FILTERS)


def test_plugins_merge_and_multi_point_expand_as_kube_scheduler_does(tmp_path):
    setup = load_scheduler_config(config(tmp_path, profiles=[{
        "schedulerName": "gang",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 4},  # in place
                                       {"name": "Coscheduling"}, {"name": "VolumeBinding"}],
                           "disabled": [{"name": "ImageLocality"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
            "filter": {"disabled": [{"name": "NodePorts"}]},
            "score": {"enabled": [{"name": "PodTopologySpread", "weight": 5}]},  # point first
        },
        "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {
                "apiVersion": API, "kind": "NodeResourcesFitArgs",
                "scoringStrategy": {"type": "MostAllocated"}}},
            {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 30}},
            {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 60}},
        ]}]))
    [profile] = setup.profiles
    assert plugins(profile.policy) == {
        # Coscheduling's PreFilter is the engine's filter; NodePorts disabled at filter only.
        "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                   "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity", "Coscheduling"],
        "score": [("PodTopologySpread", 5), ("TaintToleration", 3), ("NodeAffinity", 2),
                  ("NodeResourcesFit", 4), ("InterPodAffinity", 2),
                  ("NodeResourcesBalancedAllocation", 1)],
        "postFilter": ["DefaultPreemption"],  # Coscheduling's PostFilter comes with its filter
    }
    assert profile.policy["pluginConfig"] == [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
        {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 30}}]
    assert setup.warnings == (
        f"{tmp_path / 'scheduler.yaml'}: profiles[0].plugins.multiPoint.enabled[2]: plugin "
        "VolumeBinding is not simulated (volumes are not modelled); the simulation runs "
        "without it",)
    built = build_profile(profile.extender_policy())
    assert [s.name for s, _ in built.scorers][0] == "PodTopologySpread"


def test_disabling_everything_then_enabling(tmp_path):
    setup = load_scheduler_config(config(tmp_path, profiles=[{"plugins": {
        "multiPoint": {"disabled": [{"name": "*"}],
                       "enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit"},
                                   {"name": "CapacityScheduling"}]},
        "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 0}]}}}]))
    assert plugins(setup.profiles[0].policy) == {
        "filter": ["NodeResourcesFit", "CapacityScheduling"],
        "score": [("NodeResourcesFit", 1)],  # a zero weight is 1
        "postFilter": ["CapacityScheduling"]}


@pytest.mark.parametrize(("top", "profile", "expected"), [
    ({}, {}, 0), ({"percentageOfNodesToScore": 30}, {}, 30),
    ({"percentageOfNodesToScore": 30}, {"percentageOfNodesToScore": 0}, 0),
    ({}, {"percentageOfNodesToScore": 70}, 70),
])
def test_percentage_of_nodes_to_score_profile_over_global(top, profile, expected):
    setup = scheduler_setup({"apiVersion": API, "kind": "KubeSchedulerConfiguration",
                             **top, "profiles": [profile]})
    assert setup.profiles[0].percentage_of_nodes_to_score == expected


def test_backoff_and_extenders(tmp_path):
    setup = load_scheduler_config(config(
        tmp_path, podInitialBackoffSeconds=2, podMaxBackoffSeconds=20,
        extenders=[
            {"urlPrefix": "http://a.test/x", "filterVerb": "filter", "preemptVerb": "preempt",
             "bindVerb": "bind", "httpTimeout": "2s", "ignorable": True,
             "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True},
                                  {"name": "example.com/fpga"}]},
            {"urlPrefix": "http://b.test", "prioritizeVerb": "prioritize", "weight": 3,
             "nodeCacheCapable": True, "httpTimeout": "0s"},
        ]))
    assert (setup.pod_initial_backoff, setup.pod_max_backoff) == (2 * SECOND, 20 * SECOND)
    a, b = setup.extenders
    assert (a.url_prefix, a.filter_verb, a.prioritize_verb, a.preempt_verb, a.bind_verb) == (
        "http://a.test/x", "filter", "", "preempt", "bind")
    assert (a.managed_resources, a.ignored_by_scheduler) == (
        ("example.com/gpu", "example.com/fpga"), ("example.com/gpu",))
    assert (a.ignorable, a.node_cache_capable, a.http_timeout) == (True, False, 2 * SECOND)
    assert (b.weight, b.node_cache_capable, b.http_timeout) == (3, True, 5 * SECOND)
    assert setup.extender_bind
    # kube-scheduler adds ignoredByScheduler resources to NodeResourcesFit's ignoredResources.
    assert setup.profiles[0].policy["pluginConfig"] == [
        {"name": "NodeResourcesFit", "args": {"ignoredResources": ["example.com/gpu"]}}]
    client = a.build()
    try:
        assert (client.url_prefix, client.bind_verb, client.managed_resources) == (
            "http://a.test/x", "bind", frozenset({"example.com/gpu", "example.com/fpga"}))
    finally:
        client.close()


def test_several_profiles_are_mapped_each(tmp_path):
    setup = load_scheduler_config(config(tmp_path, profiles=[
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "batch", "plugins": {"score": {
            "disabled": [{"name": "*"}],
            "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}},
         "pluginConfig": [{"name": "NodeResourcesFit", "args": {
             "scoringStrategy": {"type": "MostAllocated"}}}]}]))
    assert setup.scheduler_names == ["default-scheduler", "batch"]
    assert plugins(setup.profile_for("batch").policy)["score"] == [("NodeResourcesFit", 1)]
    assert setup.profile_for("").policy["plugins"]["score"]["enabled"][0]["name"] == \
        "TaintToleration"


# -- errors, with paths -------------------------------------------------------------------------


@pytest.mark.parametrize(("fields", "error"), [
    ({"profiles": [{"percentageOfNodesToScore": 120}]},
     r"profiles\[0\].percentageOfNodesToScore: not in valid range \[0-100\]"),
    ({"podInitialBackoffSeconds": 20, "podMaxBackoffSeconds": 10},
     "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds"),
    ({"extenders": [{"urlPrefix": "http://x", "prioritizeVerb": "p", "weight": 0}]},
     r"extenders\[0\].weight: must have a positive weight"),
    ({"extenders": [{"urlPrefix": "http://x", "bindVerb": "b"},
                    {"urlPrefix": "http://y", "bindVerb": "b"}]}, "only one extender can implement bind"),
    ({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]},
     r"profiles\[0\].plugins.filter.enabled\[0\].name: unknown plugin 'NoSuchPlugin'"),
    ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
     r"profiles\[1\].schedulerName: duplicate"),
    ({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}]}}}]},
     r"profiles\[0\]: kube-scheduler refuses the profile: only one queue sort plugin can be "
     r"enabled, multiPoint and queueSort give PrioritySort, Coscheduling"),
    ({"profiles": [{"plugins": {"postFilter": {"enabled": [{"name": "CapacityScheduling"}]}}}]},
     r"profiles\[0\] \(default-scheduler\), as the simulator's policy: "
     r"plugins.postFilter.enabled: at most one of"),
    ({"extenders": [{"urlPrefix": "https://x", "tlsConfig": {"caData": "Zm9v"}}]},
     r"extenders\[0\].tlsConfig.caData: not supported by the simulator yet"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "Nope"}}}]}]},
     r"profiles\[0\].pluginConfig\[0\].args.scoringStrategy.type"),
])
def test_invalid_configurations_name_the_path(tmp_path, fields, error):
    with pytest.raises(SchedulerConfigError, match=error) as info:
        load_scheduler_config(config(tmp_path, **fields))
    assert all(line.startswith(str(tmp_path / "scheduler.yaml")) for line in info.value.problems)


def test_an_extender_policy_is_not_a_scheduler_configuration(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("apiVersion: scheduler-extender/v1\nkind: ExtenderPolicy\n")
    with pytest.raises(SchedulerConfigError, match="--config needs a KubeSchedulerConfiguration, "
                                                   "got 'ExtenderPolicy'; give an ExtenderPolicy "
                                                   "with --policy"):
        load_scheduler_config(path)


def test_scheduler_plugins_are_known_to_the_simulator_not_to_stock_check_config(tmp_path):
    from extender.ops.schedconfig import check_config

    path = config(tmp_path, profiles=[{"plugins": {
        "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
        "postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}])
    assert any("scheduler-plugins plugin" in p.message for p in check_config(path))
    assert not [p for p in check_config(path, scheduler_plugins=True) if p.severity == "error"]
    assert plugins(load_scheduler_config(path).profiles[0].policy)["postFilter"] == [
        "CapacityScheduling"]


# -- the command line ---------------------------------------------------------------------------


class _Extender(BaseHTTPRequestHandler):
    """Rejects n3 (filter), prefers n2 (prioritize); remembers every request."""

    requests: list[tuple[str, dict[str, Any]]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        verb = self.path.rsplit("/", 1)[1]
        type(self).requests.append((self.path, body))
        names = body.get("NodeNames") or [n["metadata"]["name"]
                                           for n in (body.get("Nodes") or {}).get("items", [])]
        if verb == "filter":
            reply: Any = {"NodeNames": [n for n in names if n != "n3"],
                          "FailedNodes": {"n3": "n3 is reserved"}, "Error": ""}
            if body.get("Nodes") is not None:  # nodeCacheCapable: false: full nodes back
                reply = {"Nodes": {"items": [n for n in body["Nodes"]["items"]
                                             if n["metadata"]["name"] != "n3"]},
                         "FailedNodes": {"n3": "n3 is reserved"}, "Error": ""}
        else:
            reply = [{"Host": n, "Score": 10 if n == "n2" else 0} for n in names]
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def extender_url() -> Iterator[str]:
    _Extender.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Extender)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_cli_config_with_one_profile_and_two_extenders(tmp_path, capsys, extender_url):
    path = config(
        tmp_path, percentageOfNodesToScore=50, podInitialBackoffSeconds=2,
        profiles=[{"schedulerName": "default-scheduler", "plugins": {"score": {
            "disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}}}],
        extenders=[
            {"urlPrefix": f"{extender_url}/a", "filterVerb": "filter"},  # full Nodes
            {"urlPrefix": f"{extender_url}/b", "prioritizeVerb": "prioritize", "weight": 3,
             "nodeCacheCapable": True}])
    cluster = write(tmp_path / "cluster.json", [node(f"n{i}", "4", "8Gi") for i in (1, 2, 3)])
    workload = write(tmp_path / "workload.json", [pod("web-1", "1", created=at(0)),
                                                  pod("web-2", "1", created=at(1))])
    report_path = tmp_path / "report.json"
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--config", str(path), "--report", str(report_path), "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("2 scheduled, 0 pending")
    report = json.loads(report_path.read_text())
    # LeastAllocated alone would put web-2 on n1; extender b's 10 × 3 × 10 keeps it on n2.
    assert {p["name"]: p["node"] for p in report["pods"]} == {"web-1": "n2", "web-2": "n2"}
    inputs = report["inputs"]
    assert (inputs["nodeSearch"], inputs["podInitialBackoffSeconds"],
            inputs["podMaxBackoffSeconds"]) == ("50%", 2.0, 10.0)
    assert inputs["profile"]["scores"] == [{"name": "NodeResourcesFit", "weight": 1}]
    assert [(e["urlPrefix"], e["weight"], e["nodeCacheCapable"]) for e in inputs["extenders"]] == [
        (f"{extender_url}/a", 1, False), (f"{extender_url}/b", 3, True)]
    seen = [(path_, "Nodes" if body.get("Nodes") is not None else "NodeNames")
            for path_, body in _Extender.requests]
    assert seen == [("/a/filter", "Nodes"), ("/b/prioritize", "NodeNames")] * 2
    assert _Extender.requests[1][1]["NodeNames"] == ["n1", "n2"]  # n3 filtered out by a


def test_cli_config_errors_exit_2(tmp_path, capsys):
    cluster = write(tmp_path / "cluster.json", [node("n1", "4", "8Gi")])
    workload = write(tmp_path / "workload.json", [pod("web", "1")])
    base = ["simulate", "--cluster", str(cluster), "--workload", str(workload), "--no-progress"]
    # Several profiles run (test_profiles.py); one queue still needs one QueueSort.
    two = config(tmp_path, profiles=[{"schedulerName": "default-scheduler"},
                                     {"schedulerName": "batch", "plugins": {"queueSort": {
                                         "enabled": [{"name": "TopologicalSort"}],
                                         "disabled": [{"name": "*"}]}}}])
    assert main([*base, "--config", str(two)]) == 2
    assert "profiles[1].plugins.queueSort: must be the same for all profiles" in (
        capsys.readouterr().err)
    bad = config(tmp_path, profiles=[{"percentageOfNodesToScore": 101}])
    assert main([*base, "--config", str(bad)]) == 2
    assert "profiles[0].percentageOfNodesToScore: not in valid range" in capsys.readouterr().err
    one = config(tmp_path)
    assert main([*base, "--config", str(one), "--extender", "http://x"]) == 2
    assert "--extender cannot be combined with --config" in capsys.readouterr().err
    (tmp_path / "p.json").write_text('{"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}')
    with pytest.raises(SystemExit):
        main([*base, "--config", str(one), "--policy", str(tmp_path / "p.json")])


def test_cli_config_warns_of_pods_for_another_scheduler(tmp_path, capsys):
    path = config(tmp_path, profiles=[{"schedulerName": "extender-scheduler"}])
    cluster = write(tmp_path / "cluster.json", [node("n1", "4", "8Gi")])
    workload = write(tmp_path / "workload.json", [pod("a", "1"), pod("b", "1"),
                                                  pod("c", "1", schedulerName="extender-scheduler")])
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--config", str(path), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert ("2 workload pod(s) name schedulerName 'default-scheduler', which no profile of "
            f"{path} has (extender-scheduler)") in err
