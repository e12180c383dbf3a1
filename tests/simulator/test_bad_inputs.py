"""Inputs the API server would refuse are refused, with one line naming the file and the
field: negative resource amounts (a negative request freed room on its node) and malformed
times (a malformed creationTimestamp made its object arrive at time 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extender.cli import main
from extender.simulator.clock import SECOND
from extender.simulator.workload import WorkloadError, load_workload
from extender.state.snapshot import SnapshotError, load_snapshot

from .helpers import DEFAULTS, at, by_name, node, pod, simulate, write

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, creationTimestamp: "2024-01-01T00:00:00Z"}}
spec:
  containers: [{{name: c, image: i, resources: {resources}}}]
"""


def _simulate(tmp_path: Path, workload: str, cluster: list[dict] | None = None) -> list[str]:
    (tmp_path / "w.yaml").write_text(workload)
    (tmp_path / "policy.json").write_text(json.dumps(DEFAULTS))
    return ["simulate", "--cluster",
            str(write(tmp_path / "c.json", cluster or [node("n1", "4", "8Gi")])),
            "--workload", str(tmp_path / "w.yaml"), "--policy", str(tmp_path / "policy.json"),
            "--report", str(tmp_path / "r.json"), "--no-progress"]


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one line `extender simulate` refuses the run with (no report written)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()
    return err.removeprefix("extender simulate: ").rstrip("\n")


# ---- negative amounts ----------------------------------------------------------------------

def test_a_negative_request_of_a_workload_pod_is_refused(tmp_path, capsys):
    # It was scheduled, and its node's cpu in use went down by one.
    workload = POD.format(name="ok", resources="{requests: {cpu: 1}}") + "---\n" + POD.format(
        name="neg", resources='{requests: {cpu: "-1", memory: 100Mi}}')
    got = _refused(tmp_path, capsys, _simulate(tmp_path, workload))
    assert got == (f"{tmp_path}/w.yaml: [1].spec.containers[0].resources.requests.cpu: "
                   "must be greater than or equal to 0, got -1")


@pytest.mark.parametrize(("spec", "field", "value"), [
    ({"containers": [{"name": "c", "resources": {"limits": {"memory": "-1Gi"}}}]},
     "spec.containers[0].resources.limits.memory", "-1Gi"),
    ({"containers": [{"name": "c"}, {"name": "d", "resources": {"requests": {"cpu": -2}}}]},
     "spec.containers[1].resources.requests.cpu", "-2"),
    ({"containers": [{"name": "c"}],
      "initContainers": [{"name": "i", "resources": {"requests": {"example.com/fpga": "-1"}}}]},
     "spec.initContainers[0].resources.requests.example.com/fpga", "-1"),
    ({"containers": [{"name": "c"}], "overhead": {"cpu": "-250m"}}, "spec.overhead.cpu", "-250m"),
    ({"containers": [{"name": "c"}], "resources": {"requests": {"cpu": "-1m"}}},
     "spec.resources.requests.cpu", "-1m"),
])
def test_every_resource_list_of_a_pod_is_checked(tmp_path, spec, field, value):
    path = write(tmp_path / "w.json", [{"kind": "Pod", "metadata": {"name": "p"}, "spec": spec}])
    with pytest.raises(WorkloadError) as refused:
        load_workload(path)
    assert str(refused.value) == (f"{path}: items[0].{field}: must be greater than or equal to "
                                  f"0, got {value}")


def test_zero_is_an_amount(tmp_path):
    path = write(tmp_path / "w.json", [pod("zero", "0", "-0"), pod("also", "0m", "0Gi")])
    assert [a.pod.name for a in load_workload(path).arrivals] == ["zero", "also"]


def test_a_negative_amount_in_a_controllers_template_is_refused(tmp_path, capsys):
    workload = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: i, resources: {limits: {cpu: "-500m"}}}]}
"""
    got = _refused(tmp_path, capsys, _simulate(tmp_path, workload))
    assert got.startswith(f"{tmp_path}/w.yaml: (root) (Deployment default/web)")
    # The limit written, not the request the API server defaults from it.
    assert got.endswith(": spec.template.spec.containers[0].resources.limits.cpu: must be "
                        "greater than or equal to 0, got -500m")


def test_a_node_added_with_a_negative_allocatable_is_refused(tmp_path, capsys):
    workload = POD.format(name="p", resources="{}") + """---
kind: SimulationEvent
at: 10s
addNode: {metadata: {name: n2}, status: {allocatable: {cpu: "4", memory: "-8Gi"}}}
"""
    got = _refused(tmp_path, capsys, _simulate(tmp_path, workload))
    assert got == (f"{tmp_path}/w.yaml: [1].addNode.status.allocatable.memory: must be greater "
                   "than or equal to 0, got -8Gi")


def test_negative_amounts_in_a_snapshot_are_refused(tmp_path):
    bad_node = node("a1", "-4", "8Gi")
    path = write(tmp_path / "c.json", [bad_node])
    with pytest.raises(SnapshotError) as refused:
        load_snapshot(path)
    # It was taken: pods were placed on the other nodes as if a1 held less than nothing.
    assert str(refused.value) == (f"{path}: Node 'a1': status.allocatable.cpu: must be greater "
                                  "than or equal to 0, got -4")
    bad_node["status"] = {"capacity": {"pods": "-1"}, "allocatable": {"cpu": "4"}}
    with pytest.raises(SnapshotError, match=r"Node 'a1': status\.capacity\.pods: must be greater "
                                            r"than or equal to 0, got -1$"):
        load_snapshot(write(path, [bad_node]))
    path = write(tmp_path / "c.json", [node("a1", "4", "8Gi"),
                                       pod("db", "1", "-512Mi", node_name="a1")])
    with pytest.raises(SnapshotError) as refused:
        load_snapshot(path)
    assert str(refused.value) == (f"{path}: Pod 'db': spec.containers[0].resources.requests."
                                  "memory: must be greater than or equal to 0, got -512Mi")


def test_a_snapshots_invalid_quantity_names_its_field(tmp_path):
    path = write(tmp_path / "c.json", [node("a1", "4", "lots")])
    with pytest.raises(SnapshotError, match=r"Node 'a1': status\.allocatable\.memory: invalid "
                                            r"quantity 'lots'"):
        load_snapshot(path)


# ---- malformed times -----------------------------------------------------------------------

@pytest.mark.parametrize("stamp", ["garbage", "yesterday", "2026-11-20 10:00:00",
                                   "2026-11-20T10:00:00", "2026-02-30T10:00:00Z", 12345])
def test_a_malformed_creation_timestamp_is_refused(tmp_path, stamp):
    # It arrived at time 0, as a pod without one does.
    path = write(tmp_path / "w.json", [pod("early", "1", created=at(0)),
                                       pod("bad", "1", created=at(60))])
    items = json.loads(path.read_text())
    items["items"][1]["metadata"]["creationTimestamp"] = stamp
    path.write_text(json.dumps(items))
    with pytest.raises(WorkloadError) as refused:
        load_workload(path)
    assert str(refused.value).startswith(
        f"{path}: items[1].metadata.creationTimestamp: invalid time {stamp!r}: ")


@pytest.mark.parametrize(("doc", "where"), [
    ("""apiVersion: apps/v1
kind: Deployment
metadata: {name: web, creationTimestamp: yesterday}
spec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}
""", "[1] (Deployment default/web): metadata.creationTimestamp"),
    ("""apiVersion: batch/v1
kind: Job
metadata: {name: j, creationTimestamp: yesterday}
spec:
  template:
    metadata: {annotations: {simulator.extender/run-for: 1m}}
    spec: {containers: [{name: c, image: i}]}
""", "[1] (Job default/j): metadata.creationTimestamp"),
    ("""apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high, creationTimestamp: yesterday}
value: 1000
""", "[1].metadata.creationTimestamp"),
    ("""apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, creationTimestamp: "2026-11-20T10:00:00"}
spec: {minMember: 1}
""", "[1].metadata.creationTimestamp"),
])
def test_a_malformed_creation_timestamp_of_a_controller_or_object_is_refused(tmp_path, capsys,
                                                                            doc, where):
    workload = POD.format(name="p", resources="{}") + "---\n" + doc
    got = _refused(tmp_path, capsys, _simulate(tmp_path, workload))
    assert got.startswith(f"{tmp_path}/w.yaml: {where}: invalid time ")


def test_an_unquoted_time_is_read_as_kubernetes_reads_it(tmp_path):
    """sigs.k8s.io/yaml keeps an unquoted time the string written (PyYAML's default made it a
    datetime, and the file was refused)."""
    (tmp_path / "w.yaml").write_text("""apiVersion: v1
kind: Pod
metadata: {name: first, creationTimestamp: 2024-01-01T00:00:00Z}
spec: {containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: later, creationTimestamp: 2024-01-01T00:00:02Z}
spec: {containers: [{name: c, image: i}]}
""")
    assert [(a.pod.name, a.time) for a in load_workload(tmp_path / "w.yaml").arrivals] == [
        ("first", 0), ("later", 2 * SECOND)]


def test_well_formed_times_missing_ones_and_offsets(tmp_path):
    path = write(tmp_path / "w.json", [
        pod("first", "1", created="2024-01-01T01:00:00+01:00"),  # 00:00 UTC
        pod("untimed", "1"),
        pod("later", "1", created="2024-01-01T00:00:01.5Z"),
    ])
    assert [(a.pod.name, a.time) for a in load_workload(path).arrivals] == [
        ("first", 0), ("untimed", 0), ("later", 1500 * SECOND // 1000)]


@pytest.mark.parametrize(("at", "words"), [
    ("5 minutes", "[1].at: invalid duration '5 minutes'"),
    ("2026-13-01T00:00:00Z", "[1].at: invalid time '2026-13-01T00:00:00Z': month must be in "
                             "1..12"),
    ("2026-11-20 10:00", "[1].at: invalid time '2026-11-20 10:00': expected an RFC 3339 time"),
])
def test_an_events_bad_time_names_the_field(tmp_path, capsys, at, words):
    workload = POD.format(name="p", resources="{}") + f"---\nkind: SimulationEvent\nat: " \
        f"{json.dumps(at)}\ndeletePod: default/p\n"
    assert _refused(tmp_path, capsys, _simulate(tmp_path, workload)).startswith(
        f"{tmp_path}/w.yaml: {words}")


def test_an_unquoted_time_that_is_none_names_the_field(tmp_path, capsys):
    workload = POD.format(name="p", resources="{}") + "---\nkind: SimulationEvent\n" \
        "at: 2026-13-01T00:00:00Z\ndeletePod: default/p\n"
    # The message was YAML's alone: `month must be in 1..12`.
    assert _refused(tmp_path, capsys, _simulate(tmp_path, workload)).startswith(
        f"{tmp_path}/w.yaml: [1].at: invalid time '2026-13-01T00:00:00Z': month must be in 1..12")


# ---- a pod bound to a node the cluster does not have ---------------------------------------

def test_a_workload_pod_bound_to_a_missing_node_is_warned_about(tmp_path):
    result, report = simulate(tmp_path, [node("n1", "4", "8Gi")], [
        pod("ghost", "1", created=at(5), nodeName="nosuch"),
        pod("here", "1", created=at(0), nodeName="n1")])
    assert by_name(report)["ghost"]["node"] == "nosuch"
    assert report["warnings"] == [
        "pod default/ghost arrived at 5.0s with spec.nodeName nosuch, a node the cluster does "
        "not have: kube-scheduler never sees such a pod and no kubelet runs it; reported "
        "Scheduled there"]


def test_a_cluster_pod_bound_to_a_missing_node_is_warned_about(tmp_path):
    cluster = [node("n1", "4", "8Gi"), pod("old-1", "1", nodeName="gone"),
               pod("old-2", "1", nodeName="gone"), pod("kept", "1", nodeName="n1")]
    _, report = simulate(tmp_path, cluster, [pod("new", "1", created=at(0))])
    assert report["warnings"] == [
        "2 cluster pod(s) bound to gone, a node the cluster does not have (default/old-1, "
        "default/old-2)"]
    assert by_name(report)["new"]["node"] == "n1"
