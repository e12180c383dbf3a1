"""Loading a cluster from `kubectl get ... -o json|yaml` output, in every shape kubectl writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from extender.state.snapshot import SnapshotError, load_snapshot
from tests.conftest import DEMO_CLUSTER

DEMO = json.loads(DEMO_CLUSTER.read_bytes())


def totals(path: Path) -> tuple[int, int, int, int]:
    state = load_snapshot(path)
    return (len(state.nodes), len(state.pods), len(state.pdbs),
            state.nodes["worker-b2"].requested.milli_cpu)


EXPECTED = (6, 8, 1, 1900)


def test_json_list_as_kubectl_writes_it():
    assert totals(DEMO_CLUSTER) == EXPECTED


def test_json_array_of_objects(tmp_path):
    path = tmp_path / "array.json"
    path.write_text(json.dumps(DEMO["items"]))
    assert totals(path) == EXPECTED


def test_yaml_list_and_multi_document_yaml(tmp_path):
    single = tmp_path / "list.yaml"
    single.write_text(yaml.safe_dump(DEMO))
    multi = tmp_path / "multi.yaml"
    multi.write_text(yaml.safe_dump_all(DEMO["items"]))
    assert totals(single) == EXPECTED
    assert totals(multi) == EXPECTED


def test_nested_lists_and_other_kinds_are_handled(tmp_path):
    nodes = {"kind": "NodeList", "items": [i for i in DEMO["items"] if i["kind"] == "Node"]}
    rest = [i for i in DEMO["items"] if i["kind"] != "Node"]
    service = {"kind": "Service", "metadata": {"name": "ignored"}}
    path = tmp_path / "nested.json"
    path.write_text(json.dumps({"kind": "List", "items": [nodes, *rest, service]}))
    assert totals(path) == EXPECTED


def test_priority_classes_are_kept(tmp_path):
    pc = {"kind": "PriorityClass", "metadata": {"name": "high", "annotations": {"a": "b"}},
          "value": 1000}
    path = tmp_path / "pc.json"
    path.write_text(json.dumps({"kind": "List", "items": [*DEMO["items"], pc]}))
    state = load_snapshot(path)
    assert state.priority_class("high").value == 1000


@pytest.mark.parametrize(("content", "message"), [
    ('{"kind": "List", "items": [', "invalid JSON"),
    ("kind: [unclosed", "invalid YAML"),
    ('{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n"}, '
     '"spec": {"taints": "none"}}]}', "Node"),
    ('{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "bad-node"}, '
     '"status": {"allocatable": {"cpu": "four"}}}]}', "Node 'bad-node'"),
])
def test_bad_snapshots_are_clear_errors(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SnapshotError, match=message):
        load_snapshot(path)


def test_missing_file(tmp_path):
    with pytest.raises(SnapshotError, match="No such file"):
        load_snapshot(tmp_path / "nope.json")


def test_a_bad_amount_in_a_topology_report_names_its_entry(tmp_path):
    report = {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
              "metadata": {"name": "b1"}, "zones": [
                  {"name": "node-0", "type": "Node", "resources": [
                      {"name": "cpu", "capacity": "2", "allocatable": "2", "available": "2"}]},
                  {"name": "node-1", "type": "Node", "resources": [
                      {"name": "memory", "capacity": "4Gi", "allocatable": "4Gi",
                       "available": "4Gi"},
                      {"name": "cpu", "capacity": "2", "allocatable": "2", "available": "abc"}]}]}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [report]}))
    with pytest.raises(SnapshotError, match=r"NodeResourceTopology 'b1': zones\[1\]\.resources\[1\]"
                                            r"\.available: invalid quantity 'abc'"):
        load_snapshot(path)
