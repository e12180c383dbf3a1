"""`extender explain` run as a user runs it: both output modes, --node, a snapshot, a live
cluster (the fake API server), and its error messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from extender.api.app import create_app
from extender.api.runtime import Runtime
from extender.cli import main
from extender.engine.policy import load_policy
from extender.engine.profile import build_profile
from extender.state.binder import SnapshotBinder
from extender.state.snapshot import load_snapshot
from tests.engine.upstream import builders as b

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
REQUEST = FIXTURES / "filter-names.request.json"


@pytest.fixture(autouse=True)
def _repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    # The defaults (demo snapshot, default policy) are found as serve finds them. A wide
    # terminal keeps table rows on one line.
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "200")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def pod_file(tmp_path: Path) -> Path:
    """The fixture's pending pod alone, as `kubectl get pod -o yaml` would give it."""
    pod = json.loads(REQUEST.read_text())["Pod"]
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", **pod}))
    return path


def http_explain(names: list[str], policy: Path) -> dict[str, Any]:
    """What POST /explain answers for the same pod, nodes and policy on the demo snapshot."""
    state = load_snapshot(ROOT / "config" / "examples" / "cluster.json")
    runtime = Runtime(build_profile(load_policy(policy)), state, SnapshotBinder(state, 30.0))
    body = json.loads(REQUEST.read_text())
    body["NodeNames"] = names
    with TestClient(create_app(runtime)) as client:
        return client.post("/explain", json=body).json()


def test_table_on_the_default_snapshot_and_policy(capsys, tmp_path):
    code, out, err = run(capsys, "--pod", str(pod_file(tmp_path)))
    assert (code, err) == (0, "")
    assert "Pod default/api-7d9f: 2 of 6 nodes feasible" in out
    from extender.ops.explain import _shown
    from extender.serve import DEFAULT_SNAPSHOT, resolve_policy

    policy, snapshot = _shown(resolve_policy(None)[1]), _shown(str(DEFAULT_SNAPSHOT))
    assert f"policy {policy}; snapshot {snapshot}" in out
    assert not snapshot.startswith("/")  # shown relative to the working directory
    assert "Filters with nothing to check for this pod: NodeName, NodePorts, PodTopologySpread, " \
           "InterPodAffinity" in out
    assert "Scorer PodTopologySpread skipped" in out
    lines = out.splitlines()
    # Every failing plugin of a node, one per line: cordoned-c1 fails three.
    start = next(i for i, line in enumerate(lines) if "cordoned-c1" in line)
    block = "\n".join(lines[start:start + 3])
    for failure in ("NodeUnschedulable: node(s) were unschedulable",
                    "TaintToleration: node(s) had untolerated taint(s)",
                    "NodeAffinity: node(s) didn't match Pod's node affinity/selector"):
        assert failure in block
    worker_b2 = next(line for line in lines if "worker-b2" in line)
    assert "no*" in worker_b2 and "NodeResourcesFit: Insufficient cpu" in worker_b2
    # The score breakdown: raw 50 normalised to 100, times 2; totals 612 → 8 and 461 → 6.
    affinity = next(line for line in lines if "NodeAffinity" in line and "│  50 │" in line)
    assert [cell.strip() for cell in affinity.split("│")[2:7]] == [
        "NodeAffinity", "50", "100", "2", "200"]
    totals = [[cell.strip() for cell in line.split("│")[1:8]] for line in lines
              if "│ total" in line]
    assert totals == [["", "total", "", "", "", "603", "8"], ["", "total", "", "", "", "443", "6"]]


def test_a_narrow_terminal_cuts_no_name_or_figure_short(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "--pod", str(pod_file(tmp_path)))
    assert code == 0
    assert "…" not in out
    lines = out.splitlines()
    assert not [line for line in lines if line.endswith(" ")]  # no padding to the width
    # The score table is as wide as its cells (a terminal wraps it); the filters' reasons wrap.
    assert any("worker-a1" in line and "│" in line and len(line) > 80 for line in lines)
    assert any("NodeResourcesBalancedAllocation" in line for line in lines)
    assert any("┃ Raw ┃ Normalized ┃ Weight ┃ Weighted ┃ 0..10 ┃" in line for line in lines)
    assert all(len(line) <= 80 for line in lines[:lines.index(next(
        line for line in lines if line.startswith("Scores")))])


def test_the_no_star_legend_only_when_a_row_has_it(capsys):
    legend = "no*: every failure is Unschedulable, which preemption may resolve"
    _, out, _ = run(capsys, "--pod", str(REQUEST))
    assert legend in out  # worker-b2 lacks only cpu
    _, out, _ = run(capsys, "--pod", str(REQUEST), "--node", "gpu-b1", "--node", "worker-a1")
    assert "no*" not in out and "no " in out  # gpu-b1's taint: preemption cannot help


def test_json_with_node_filter_is_what_the_http_verb_answers(capsys):
    policy = FIXTURES / "policy-leastallocated.json"
    code, out, err = run(capsys, "--pod", str(REQUEST), "--policy", str(policy), "-o", "json",
                         "--node", "gpu-b1", "--node", "worker-a1")
    assert (code, err) == (0, "")
    explained = json.loads(out)
    assert list(explained["nodes"]) == ["gpu-b1", "worker-a1"]
    assert explained["feasible"] == ["worker-a1"]
    assert explained["nodes"]["gpu-b1"]["verdict"]["reasons"] == ["node(s) had untolerated taint(s)"]
    assert explained == http_explain(["gpu-b1", "worker-a1"], policy)


def test_a_request_body_gives_its_node_names(capsys):
    code, out, _ = run(capsys, "--pod", str(FIXTURES / "prioritize-names.request.json"),
                       "--policy", str(FIXTURES / "policy-leastallocated.json"), "-o", "json")
    assert code == 0
    explained = json.loads(out)
    assert list(explained["nodes"]) == ["worker-a1", "worker-a2"]
    # The prioritize fixture's expected reply under this policy.
    assert [explained["nodes"][n]["extenderScore"] for n in explained["feasible"]] == [3, 7]


def _http_explain_body(body: dict[str, Any], policy: Path) -> dict[str, Any]:
    state = load_snapshot(ROOT / "config" / "examples" / "cluster.json")
    runtime = Runtime(build_profile(load_policy(policy)), state, SnapshotBinder(state, 30.0))
    with TestClient(create_app(runtime)) as client:
        return client.post("/explain", json=body).json()


def test_a_request_body_is_explained_as_post_explain_explains_it(capsys, tmp_path):
    """A name the cluster lacks gets the filter verb's reason, not a refusal; Node objects
    in the body are judged as the body has them."""
    policy = FIXTURES / "policy-leastallocated.json"
    body = json.loads(REQUEST.read_text())
    body["NodeNames"] = ["worker-a1", "ghost"]
    path = tmp_path / "names.json"
    path.write_text(json.dumps(body))
    code, out, err = run(capsys, "--pod", str(path), "--policy", str(policy), "-o", "json")
    assert (code, err) == (0, "")
    explained = json.loads(out)
    assert explained["nodes"]["ghost"]["verdict"]["reasons"] == [
        "node(s) were not found in the extender's cluster state"]
    assert explained == _http_explain_body(body, policy)

    nodes = json.loads((FIXTURES / "filter-nodes.request.json").read_text())
    renamed = nodes["Nodes"]["items"][0]
    renamed["metadata"] = {**renamed["metadata"], "name": "only-in-body", "uid": "only-in-body"}
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(nodes))
    code, out, err = run(capsys, "--pod", str(path), "--policy", str(policy), "-o", "json")
    assert (code, err) == (0, "")
    explained = json.loads(out)
    assert "only-in-body" in explained["nodes"]
    assert explained == _http_explain_body(nodes, policy)


def _snapshot(tmp_path: Path) -> Path:
    zone = "topology.kubernetes.io/zone"
    objects = [
        b.node("n1", {zone: "z1"}, allocatable={"cpu": "2", "memory": "4Gi", "pods": "110"}),
        b.node("n2", {zone: "z2"}, allocatable={"cpu": "2", "memory": "4Gi", "pods": "110"},
               taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]),
        b.node("n3", {zone: "z2"}, allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"}),
        b.pod("busy", node="n1", requests={"cpu": "1500m", "memory": "1Gi"}),
        b.pod("db-0", node="n2", requests={"cpu": "1", "memory": "1Gi"}),
    ]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    return path


def test_snapshot_in_both_modes(capsys, tmp_path):
    snapshot = _snapshot(tmp_path)
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump(b.pod("app", requests={"cpu": "1", "memory": "1Gi"})))
    policy = FIXTURES / "policy-leastallocated.json"
    code, out, err = run(capsys, "--pod", str(pod), "--snapshot", str(snapshot), "--policy",
                         str(policy), "-o", "json")
    assert (code, err) == (0, "")
    explained = json.loads(out)
    assert explained["feasible"] == ["n3"]
    failing = {name: {v["plugin"]: v["reasons"] for v in node["filters"]
                      if v["code"] not in ("Success", "Skip")}
               for name, node in explained["nodes"].items()}
    # n2 fails on its taint only (1 cpu of 2 is free): every plugin ran.
    assert failing == {"n1": {"NodeResourcesFit": ["Insufficient cpu"]},
                       "n2": {"TaintToleration": ["node(s) had untolerated taint(s)"]},
                       "n3": {}}
    # LeastAllocated on n3: cpu (8000-1000)*100/8000 = 87, memory (16-1)/16 → 93; mean 90.
    assert explained["nodes"]["n3"]["scores"] == [
        {"plugin": "NodeResourcesFit", "raw": 90, "normalized": 90, "weight": 1, "weighted": 90}]
    assert (explained["nodes"]["n3"]["total"], explained["nodes"]["n3"]["extenderScore"]) == (90, 9)

    code, out, err = run(capsys, "--pod", str(pod), "--snapshot", str(snapshot), "--policy",
                         str(policy), "--node", "n1", "n3")
    assert (code, err) == (0, "")
    assert "Pod default/app: 1 of 2 nodes feasible" in out
    assert f"snapshot {snapshot}" in out
    assert "n2" not in out.replace(str(snapshot), "")
    assert "NodeResourcesFit: Insufficient cpu" in next(
        line for line in out.splitlines() if "│ n1" in line)


def test_a_running_pod_is_explained_as_if_pending(capsys, tmp_path):
    snapshot = _snapshot(tmp_path)
    pod = tmp_path / "busy.json"
    pod.write_text(json.dumps(b.pod("busy", node="n1", requests={"cpu": "1500m", "memory": "1Gi"})))
    code, out, _ = run(capsys, "--pod", str(pod), "--snapshot", str(snapshot), "-o", "json")
    assert code == 0
    explained = json.loads(out)
    # Its own 1.5 cpu no longer counts on n1, and its nodeName no longer pins it there.
    assert explained["feasible"] == ["n1", "n3"]
    code, out, _ = run(capsys, "--pod", str(pod), "--snapshot", str(snapshot))
    assert "the pod runs on n1: explained as if pending" in out


def test_live_cluster_is_listed_once(capsys, tmp_path):
    from tests.kube.fake_apiserver import FakeApiServer

    policy = FIXTURES / "policy-leastallocated.json"
    with FakeApiServer() as server:
        server.load(json.loads((FIXTURES / "cluster.json").read_text())["items"])
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        code, out, err = run(capsys, "--pod", str(REQUEST), "--kubeconfig", str(kubeconfig),
                             "--policy", str(policy), "-o", "json")
        methods = {(r.method, r.path.split("?")[0]) for r in server.requests}
    assert (code, err) == (0, "")
    assert {method for method, _ in methods} == {"GET"}  # read-only
    names = json.loads(REQUEST.read_text())["NodeNames"]
    assert json.loads(out) == http_explain(names, policy)


@pytest.mark.parametrize("flags", [["--context", "fake"], ["--kubeconfig"]])
def test_kubectls_kubeconfig_as_serve_takes_it(capsys, tmp_path, monkeypatch, flags):
    # `--context` alone, or `--kubeconfig` without FILE: $KUBECONFIG, as `serve` reads them
    # (explain once took the demo snapshot for `--context` alone, and refused a bare flag).
    from tests.kube.fake_apiserver import FakeApiServer

    policy = FIXTURES / "policy-leastallocated.json"
    with FakeApiServer() as server:
        server.load(json.loads((FIXTURES / "cluster.json").read_text())["items"])
        monkeypatch.setenv("KUBECONFIG", str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        code, out, err = run(capsys, "--pod", str(REQUEST), *flags, "--policy", str(policy),
                             "-o", "json")
        listed = len(server.requests)
    assert (code, err, listed > 0) == (0, "", True)
    assert json.loads(out) == http_explain(json.loads(REQUEST.read_text())["NodeNames"], policy)


@pytest.mark.parametrize(("argv", "message"), [
    (["--node", "ghost"], "unknown node(s): ghost (the cluster has cordoned-c1, gpu-b1, "),
    (["--snapshot", "nope.json"], "snapshot nope.json not found\n"),  # not "pass --snapshot"
    (["--policy", "tests/fixtures/cluster.json"], "invalid policy"),
])
def test_errors_are_messages_not_traces(capsys, argv, message):
    code, out, err = run(capsys, "--pod", str(REQUEST), *argv)
    assert code == 2 and out == ""
    assert err.startswith("explain: ") and message in err
    assert "Traceback" not in err


def test_an_invalid_pod_file(capsys, tmp_path):
    bad = tmp_path / "pod.yaml"
    bad.write_text("kind: Pod\nspec:\n  containers:\n  - resources: {requests: {cpu: lots}}\n")
    code, _, err = run(capsys, "--pod", str(bad))
    assert code == 2 and "invalid Pod" in err and "lots" in err
    two = tmp_path / "two.yaml"
    two.write_text("kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n")
    code, _, err = run(capsys, "--pod", str(two))
    assert code == 2 and "expected one Pod, or a filter request body, found 2" in err
    deployment = tmp_path / "deploy.yaml"
    deployment.write_text("kind: Deployment\nmetadata: {name: web}\n")
    code, _, err = run(capsys, "--pod", str(deployment))
    assert (code, err) == (2, f"explain: {deployment}: expected one Pod, or a filter request "
                              "body, found 0 (and Deployment)\n")


def test_malformed_yaml_is_one_line_with_where(capsys, tmp_path):
    bad = tmp_path / "pod.yaml"
    bad.write_text("kind: Pod\nmetadata: {name: a\nspec: [\n")
    for flag in ("--pod", "--snapshot"):
        argv = [flag, str(bad)] if flag == "--pod" else ["--pod", str(REQUEST), flag, str(bad)]
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1, err
        assert "line 3, column 5: did not find expected ',' or '}' (while parsing a flow mapping)" in err


def test_a_broken_exec_plugin_is_named_before_any_request(capsys, tmp_path):
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": "no-such-plugin",
            "installHint": "install no-such-plugin from example.com",
            "interactiveMode": "Never"}}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}]}))
    code, out, err = run(capsys, "--pod", str(REQUEST), "--kubeconfig", str(kubeconfig))
    assert (code, out) == (2, "")
    assert err == (f"explain: cannot use the cluster credentials: {kubeconfig} (context x): exec: "
                   "executable no-such-plugin not found\n\ninstall no-such-plugin from "
                   "example.com\n")
