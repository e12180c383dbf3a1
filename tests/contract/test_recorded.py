"""What the real kube-scheduler sent in the e2e scenarios, replayed through the HTTP app: every
reply must be the recorded one, byte for byte (tests/fixtures/recorded/<kubernetes version>/
<scenario>/, written by `python -m tests.e2e.record`; no Go, no sandbox needed here)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from extender.api.replay import replay_file
from extender.state import recording
from tests.conftest import FIXTURES

RECORDED = FIXTURES / "recorded"
MANIFESTS = sorted(RECORDED.glob("*/*/manifest.json"))
RECORDINGS = [(m.parent / r["file"], r) for m in MANIFESTS
              for r in json.loads(m.read_text())["recordings"]]


def _id(path: Path) -> str:
    return str(path.relative_to(RECORDED))


def test_the_recorded_scenarios_are_there() -> None:
    scenarios = {str(m.parent.relative_to(RECORDED)) for m in MANIFESTS}
    assert {"1.37.2/extender-decides-placement-names", "1.37.2/extender-decides-placement-nodes",
            "1.37.2/extender-reasons-in-failed-scheduling",
            "1.37.2/a-bind-counts-until-the-report-that-counts-its-pod"} <= scenarios
    total = sum(p.stat().st_size for p in RECORDED.rglob("*") if p.is_file())
    assert total < 1_000_000, f"the committed recordings take {total} bytes"


@pytest.mark.parametrize("manifest", MANIFESTS, ids=[_id(m.parent) for m in MANIFESTS])
def test_manifest_describes_its_recordings(manifest: Path) -> None:
    data = json.loads(manifest.read_text())
    version, scenario = manifest.parent.parent.name, manifest.parent.name
    assert (data["kubernetes"], data["scenario"]) == (version, scenario)
    assert data["kubeScheduler"]["version"] == f"Kubernetes v{version}"
    assert data["test"].startswith("tests/e2e/test_real_") and "::test_" in data["test"]
    for config in data["kubeScheduler"]["configurations"]:
        assert config["kind"] == "KubeSchedulerConfiguration"
        assert config["extenders"][0]["urlPrefix"].startswith("http")
    names = sorted(p.name for p in manifest.parent.glob("recording-*"))
    assert names == sorted(r["file"] for r in data["recordings"])
    for entry in data["recordings"]:
        rec = recording.read(manifest.parent / entry["file"])
        assert rec.header.policy == data["extenderPolicy"]["text"]
        assert msgspec.to_builtins(rec.header.flags) == entry["flags"]


@pytest.mark.parametrize(("path", "entry"), RECORDINGS, ids=[_id(p) for p, _ in RECORDINGS])
def test_recorded_replies_replay_byte_for_byte(path: Path, entry: dict[str, Any]) -> None:
    report = replay_file(path)
    assert report.ok, report.summary()
    # Every exchange compared, but those the recording itself could not have asked again
    # (listed when it was kept: a reply before the body was read, one the recording ends
    # before).
    assert report.skipped == entry["skipped"]
    assert report.compared == entry["compared"] > 0
    assert report.compared + len(entry["skipped"]) >= sum(entry["exchanges"].values())


# ---- the replay of a real recording notices a changed state --------------------------------------
def _rewrite(source: Path, target: Path, change: Any) -> Path:
    rec = recording.read(source)
    entries = [change(e) for e in rec.entries]
    target.write_bytes(b"".join(map(recording.encode, [rec.header, *entries])))
    return target


def test_a_node_changed_in_the_watched_state_changes_the_replies(tmp_path: Path) -> None:
    source = RECORDED / "1.37.2" / "extender-decides-placement-names" / "recording-1.jsonl.gz"

    def bigger_small_node(entry: recording.Entry) -> recording.Entry:
        if isinstance(entry, recording.RelistPage) and entry.resource == "nodes":
            items = []
            for item in entry.items:
                node = msgspec.json.decode(item)
                if node["metadata"]["name"].endswith("-small"):
                    node["status"]["allocatable"].update(cpu="64", memory="1Ti")
                items.append(msgspec.Raw(msgspec.json.encode(node)))
            return msgspec.structs.replace(entry, items=items)
        return entry

    report = replay_file(_rewrite(source, tmp_path / "recording-1.jsonl", bigger_small_node))
    # The policy prefers the node with the least allocatable: now the other one.
    prioritize = [m for m in report.mismatches if "POST /prioritize" in str(m)]
    assert len(prioritize) == 3 and len(report.mismatches) == 3
    assert '"Score":10}' in str(prioritize[0]) and "-big" in str(prioritize[0])


def test_fixture_recordings_are_gzipped_jsonl(tmp_path: Path) -> None:
    for path, _ in RECORDINGS:
        lines = gzip.decompress(path.read_bytes()).splitlines()
        assert json.loads(lines[0])["record"] == "header"
        assert all(json.loads(line)["record"] != "header" for line in lines[1:])


@pytest.mark.parametrize(("test_id", "name"), [
    ("tests/e2e/test_real_placement.py::test_extender_decides_placement[names]",
     "extender-decides-placement-names"),
    # `--dist loadgroup` appends the test's group: not part of the scenario's name.
    ("tests/e2e/test_real_numa.py::test_a_bind_counts_until_the_report_that_counts_its_pod@sandbox",
     "a-bind-counts-until-the-report-that-counts-its-pod"),
])
def test_a_scenario_is_named_after_its_test(test_id: str, name: str) -> None:
    from tests.e2e.realcluster import scenario_dir_name

    assert scenario_dir_name(test_id) == name
