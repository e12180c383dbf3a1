"""`render-config --policy`: with Coscheduling, kube-scheduler's httpTimeout leaves room for a
bind held at Permit, the same figure `serve` assumes by default (one fact: state.permit)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from extender.cli import main
from extender.state.permit import hold_limit, http_timeout_for


def _policy(tmp_path: Path, wait: int | None) -> Path:
    document: dict = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
                      "plugins": {"filter": {"enabled": [{"name": "Coscheduling"}]}}}
    if wait is not None:
        document["pluginConfig"] = [{"name": "Coscheduling",
                                     "args": {"permitWaitingTimeSeconds": wait}}]
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(document))
    return path


def _timeout(capsys, *argv: str) -> str:  # type: ignore[no-untyped-def]
    assert main(["render-config", "--url", "http://127.0.0.1:8888", *argv]) == 0
    config = yaml.safe_load(capsys.readouterr().out)
    return config["extenders"][0]["httpTimeout"]


def test_coscheduling_policy_sets_a_timeout_that_fits_the_permit_wait(tmp_path, capsys) -> None:
    assert _timeout(capsys, "--policy", str(_policy(tmp_path, None))) == "1m6s"  # 60 + 4 + 2
    assert _timeout(capsys, "--policy", str(_policy(tmp_path, 20)), "--bind-deadline", "3") == "25s"
    # 0 is no wait of its own: a group without scheduleTimeoutSeconds waits the default 60 s
    # (scheduler-plugins' util.GetWaitTimeDuration), so kube-scheduler must wait as long.
    assert _timeout(capsys, "--policy", str(_policy(tmp_path, 0))) == "1m6s"
    # serve's default hold bound for that httpTimeout is the whole permit wait.
    assert hold_limit(http_timeout_for(20, 3), 3) == 21.0


def test_without_coscheduling_or_with_an_explicit_timeout_nothing_changes(tmp_path, capsys) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy"}))
    assert _timeout(capsys, "--policy", str(plain)) == "5s"
    assert _timeout(capsys) == "5s"
    assert _timeout(capsys, "--policy", str(_policy(tmp_path, None)), "--http-timeout", "90s") == "90s"


def test_an_invalid_policy_is_a_clear_error(tmp_path, capsys) -> None:
    bad = _policy(tmp_path, -1)
    assert main(["render-config", "--url", "http://x:1", "--policy", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "pluginConfig[0].args.permitWaitingTimeSeconds" in err
