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


def test_flags_that_break_the_permit_are_refused_as_check_config_would(tmp_path, capsys) -> None:
    # render-config's promise: its output passes check-config, here against the policy too.
    policy = str(_policy(tmp_path, None))
    out = tmp_path / "config.yaml"
    assert main(["render-config", "--policy", policy, "--verbs", "filter", "prioritize",
                 "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        "render-config: extenders: the extender's policy enables Coscheduling, whose Permit runs "
        "in the bind verb: register bindVerb, or the gang's binds are never held\n")
    assert main(["render-config", "--policy", policy, "--http-timeout", "5s", "-o", str(out)]) == 2
    assert capsys.readouterr().err.startswith(
        "render-config: extenders[0].httpTimeout: 5s is shorter than a bind held at "
        "Coscheduling's Permit can take: at least 1m6s")
    assert not out.exists()  # nothing written
    assert main(["render-config", "--policy", policy, "-o", str(out)]) == 0
    assert main(["check-config", str(out), policy]) == 0


def test_an_ignorable_extender_is_refused_with_a_gang_and_warned_with_a_bind(tmp_path, capsys):
    gang = str(_policy(tmp_path, None))
    assert main(["render-config", "--policy", gang, "--ignorable"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("render-config: extenders[0].ignorable: the extender's policy enables "
                          "Coscheduling, whose gangs, quotas and reservations only the extender "
                          "keeps: kube-scheduler skips an ignorable extender")
    # Without a gang it renders, and check-config says what an ignorable binder means.
    out = tmp_path / "config.yaml"
    assert main(["render-config", "--ignorable", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["check-config", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"{out}: extenders[0].ignorable: warning: with bindVerb: kube-scheduler "
                        "1.30 and later skips this extender's failed bind and binds the pod "
                        "itself (before 1.30 the bind fails), so what the extender's bind does "
                        "is then left undone")
    assert main(["check-config", "--strict", str(out)]) == 1
    # Beside the gang's policy the same field is an error, and said once: not also warned.
    capsys.readouterr()
    assert main(["check-config", str(out), gang]) == 1
    printed = capsys.readouterr()
    said = [line for line in (printed.out + printed.err).splitlines()
            if "extenders[0].ignorable" in line]
    assert len(said) == 1 and "warning" not in said[0], said


def test_replicas_without_election_are_refused_unless_each_serves_its_own_pod(tmp_path) -> None:
    # The sidecar layout runs one extender per kube-scheduler replica on loopback, and only
    # the leading kube-scheduler calls its own: nothing is split (it was refused, rendered or
    # at serve's start). An extender other pods reach is refused as before.
    from extender.engine.policy import load_policy
    from extender.ops.crosscheck import check_replicas
    from extender.ops.problems import Collector

    gang = load_policy(_policy(tmp_path, None))
    for host in ("127.0.0.1", "localhost", "::1"):
        out = Collector("-")
        check_replicas("extender-scheduler", 2, ["extender", "serve", "--bind-address", host],
                       gang, out)
        assert out.problems == [], host
    out = Collector("-")
    check_replicas("scheduler-extender", 2, ["extender", "serve", "--host", "0.0.0.0"], gang, out)
    assert [p.path for p in out.problems] == ["Deployment/scheduler-extender.spec.replicas"]
