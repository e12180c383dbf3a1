"""`extender sandbox up` refusals that need no control plane: a sandbox already running in
the state directory is left running (the refusal once went through the failure path, which
stops what the state directory records: the running sandbox), and a rate or heartbeat that
is not positive is refused before anything starts."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from extender.cli import main
from extender.sandbox import commands
from extender.sandbox.processes import Registry


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> None:
    """The release counts as built: these refusals come before any program starts."""
    monkeypatch.setattr(commands, "binaries",
                        lambda version: SimpleNamespace(version=version, present=lambda: True))


def test_up_beside_a_running_sandbox_refuses_and_leaves_it_running(
        built: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = Registry(tmp_path)
    # Stands for the other sandbox's API server: a process the state directory records.
    other = registry.spawn("kube-apiserver", [sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        assert main(["sandbox", "up", "--state-dir", str(tmp_path), "--no-extender"]) == 1
        err = capsys.readouterr().err
        assert f"a sandbox is already running in {tmp_path}: kube-apiserver ({other.pid})" in err
        assert "stopped" not in err
        assert [p.pid for p in registry.running()] == [other.pid]
    finally:
        registry.stop_all(timeout=5)
    assert registry.running() == []


@pytest.mark.parametrize(("flag", "value"), [("--scheduler-qps", "0"), ("--heartbeat", "-1")])
def test_up_refuses_a_rate_that_is_not_positive(built: None, tmp_path: Path, flag: str,
                                                value: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "up", "--state-dir", str(tmp_path), flag, value]) == 1
    assert capsys.readouterr().err.strip() == f"sandbox up: {flag} {float(value):g}: must be positive"
    assert not (tmp_path / "processes.json").exists()  # nothing started


def test_up_refuses_a_policy_the_extender_would_refuse_before_anything_starts(
        built: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Two load-aware plugins naming different metrics sources: serve refuses the pair at its
    # start, which came after the control plane and the nodes (about 5 s, then torn down).
    policy = tmp_path / "two-sources.yaml"
    policy.write_text("""
apiVersion: scheduler-extender/v1
kind: ExtenderPolicy
plugins:
  score:
    enabled: [{name: TargetLoadPacking, weight: 1}, {name: LowRiskOverCommitment, weight: 1}]
pluginConfig:
- name: LowRiskOverCommitment
  args: {watcherAddress: "http://load-watcher.monitoring:2020"}
""")
    state = tmp_path / "state"
    assert main(["sandbox", "up", "--state-dir", str(state), "--policy", str(policy)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"sandbox up: --policy {policy}: the plugins that read node metrics "
                          "name different sources"), err
    assert not (state / "processes.json").exists()  # nothing started
    assert main(["sandbox", "up", "--state-dir", str(state), "--policy", str(tmp_path / "nope")]) == 1
    assert capsys.readouterr().err.strip() == f"sandbox up: --policy {tmp_path / 'nope'}: no such file"
