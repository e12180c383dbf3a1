"""check_config / render_config: the shipped files pass, every rule has a failing case."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from extender.engine import registry
from extender.ops.commands import add_commands
from extender.ops.schedconfig import ExtenderTLS, check_config, render_config

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config"

BASE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "extender-scheduler"}],
    "extenders": [{
        "urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter",
        "prioritizeVerb": "prioritize", "weight": 1, "preemptVerb": "preempt",
        "bindVerb": "bind", "enableHTTPS": False, "httpTimeout": "5s", "nodeCacheCapable": True,
    }],
}


def _write(tmp_path: Path, doc: Any, name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return path


def _errors(path: Path) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in check_config(path) if p.severity == "error"]


def _warnings(path: Path) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in check_config(path) if p.severity == "warning"]


# --- the shipped files ---------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "scheduler-config.yaml", "scheduler-config-tls.yaml", "scheduler-config-service.yaml",
    "scheduler-policy.json", "policy.yaml", "examples/binpacking.yaml",
    "examples/preemption-toleration.yaml"])
def test_shipped_config_files_are_clean(name: str) -> None:
    assert [str(p) for p in check_config(CONFIG / name)] == []


def test_shipped_scheduler_config_registers_all_verbs_with_node_cache() -> None:
    doc = yaml.safe_load((CONFIG / "scheduler-config.yaml").read_text())
    (extender,) = doc["extenders"]
    assert extender["urlPrefix"] == "http://127.0.0.1:8888"
    assert [extender[f"{v}Verb"] for v in ("filter", "prioritize", "preempt", "bind")] == [
        "filter", "prioritize", "preempt", "bind"]
    assert extender["nodeCacheCapable"] is True and extender["enableHTTPS"] is False
    assert doc["leaderElection"]["leaderElect"] is True
    assert doc["leaderElection"]["resourceName"] != "kube-scheduler"  # not the default's lease
    assert [p["schedulerName"] for p in doc["profiles"]] == [
        "extender-scheduler", "extender-scheduler-binpack"]


@pytest.mark.parametrize("name", ["scheduler-config-tls.yaml", "scheduler-config-service.yaml"])
def test_tls_variants_use_https_and_mutual_tls(name: str) -> None:
    (extender,) = yaml.safe_load((CONFIG / name).read_text())["extenders"]
    assert extender["urlPrefix"].startswith("https://") and extender["enableHTTPS"] is True
    assert set(extender["tlsConfig"]) == {"caFile", "certFile", "keyFile"}


def test_legacy_policy_uses_legacy_spelling_and_nanoseconds() -> None:
    (extender,) = json.loads((CONFIG / "scheduler-policy.json").read_text())["extenders"]
    assert extender["enableHttps"] is False and "enableHTTPS" not in extender
    assert extender["httpTimeout"] == 5_000_000_000


def test_default_policy_mirrors_kube_scheduler_defaults() -> None:
    doc = yaml.safe_load((CONFIG / "policy.yaml").read_text())
    assert [p["name"] for p in doc["plugins"]["filter"]["enabled"]] == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"]
    assert {p["name"]: p["weight"] for p in doc["plugins"]["score"]["enabled"]} == {
        "TaintToleration": 3, "NodeAffinity": 2, "PodTopologySpread": 2, "InterPodAffinity": 2,
        "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    # The engine's own defaults (an omitted phase) are the same plugins and weights.
    assert [p["name"] for p in doc["plugins"]["filter"]["enabled"]] == list(registry.DEFAULT_FILTERS)
    assert {p["name"]: p["weight"] for p in doc["plugins"]["score"]["enabled"]} == dict(
        registry.DEFAULT_SCORES)
    assert doc["plugins"]["postFilter"]["enabled"] == [{"name": "DefaultPreemption"}]


# --- KubeSchedulerConfiguration rules: one failing case each -------------------------------

def _mutated(change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    change(doc)
    return doc


def test_base_case_is_clean(tmp_path: Path) -> None:
    assert check_config(_write(tmp_path, BASE)) == []


def test_enable_https_in_v1_is_an_unknown_field(tmp_path: Path) -> None:
    def change(doc: dict) -> None:
        doc["extenders"][0]["enableHttps"] = doc["extenders"][0].pop("enableHTTPS")

    problems = check_config(_write(tmp_path, _mutated(change)))
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'config.yaml'}: extenders[0].enableHttps: unknown field "
        "(did you mean enableHTTPS?)"]


def _set(path: str, value: Any) -> Any:
    """A change that sets `extenders.0.weight`-style paths."""
    def change(doc: dict) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for part in parents:
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        target[last] = value
    return change


RULES = [
    # (case id, change, expected error path, message fragment)
    ("weight zero", _set("extenders.0.weight", 0), "extenders[0].weight", "positive weight"),
    ("weight negative", _set("extenders.0.weight", -2), "extenders[0].weight", "positive weight"),
    ("weight missing", lambda d: d["extenders"][0].pop("weight"), "extenders[0].weight",
     "positive weight"),
    ("two binders", lambda d: d["extenders"].append(
        {"urlPrefix": "http://other:9999", "bindVerb": "bind"}), "extenders",
     "only one extender can implement bind"),
    ("native resource", _set("extenders.0.managedResources", [{"name": "memory"}]),
     "extenders[0].managedResources[0].name", "not an extended resource name"),
    ("kubernetes.io domain", _set("extenders.0.managedResources",
                                  [{"name": "kubernetes.io/widget"}]),
     "extenders[0].managedResources[0].name", "reserved for native resources"),
    ("requests prefix", _set("extenders.0.managedResources",
                             [{"name": "requests.example.com/widget"}]),
     "extenders[0].managedResources[0].name", "reserved for quota"),
    ("not a qualified name", _set("extenders.0.managedResources",
                                  [{"name": "example.com/a/b"}]),
     "extenders[0].managedResources[0].name", "at most one '/'"),
    ("duplicate managed resource", lambda d: (
        d["extenders"][0].update(managedResources=[{"name": "example.com/gpu"}]),
        d["extenders"].append({"urlPrefix": "http://other:9999", "filterVerb": "filter",
                               "managedResources": [{"name": "example.com/gpu"}]})),
     "extenders[1].managedResources[0].name", "duplicate extender managed resource name"),
    ("unknown extender key", _set("extenders.0.filterverb", "filter"),
     "extenders[0].filterverb", "unknown field (did you mean filterVerb?)"),
    ("unknown top-level key", lambda d: d.update(extender=d.pop("extenders")), "extender",
     "unknown field (did you mean extenders?)"),
    ("unknown managed resource key", _set("extenders.0.managedResources",
                                          [{"name": "example.com/gpu", "ignored": True}]),
     "extenders[0].managedResources[0].ignored", "unknown field"),
    ("unknown tlsConfig key", _set("extenders.0.tlsConfig", {"caFiles": "/ca.crt"}),
     "extenders[0].tlsConfig.caFiles", "did you mean caFile?"),
    ("timeout integer", _set("extenders.0.httpTimeout", 5), "extenders[0].httpTimeout",
     "duration string"),
    ("timeout without unit", _set("extenders.0.httpTimeout", "5"), "extenders[0].httpTimeout",
     "missing unit"),
    ("timeout garbage", _set("extenders.0.httpTimeout", "five seconds"),
     "extenders[0].httpTimeout", "invalid duration"),
    ("timeout negative", _set("extenders.0.httpTimeout", "-1s"), "extenders[0].httpTimeout",
     "negative"),
    ("bool as string", _set("extenders.0.nodeCacheCapable", "true"),
     "extenders[0].nodeCacheCapable", "must be a boolean"),
    ("weight as string", _set("extenders.0.weight", "1"), "extenders[0].weight",
     "must be an integer"),
    ("weight fraction", _set("extenders.0.weight", 1.5), "extenders[0].weight",
     "must be an integer"),
    ("verb as number", _set("extenders.0.filterVerb", 7), "extenders[0].filterVerb",
     "must be a string"),
    ("ca data not base64", _set("extenders.0.tlsConfig", {"caData": "-----BEGIN"}),
     "extenders[0].tlsConfig.caData", "base64"),
    ("missing urlPrefix", lambda d: d["extenders"][0].pop("urlPrefix"), "extenders[0].urlPrefix",
     "required"),
    ("insecure with CA", _set("extenders.0.tlsConfig", {"insecure": True, "caFile": "/ca"}),
     "extenders[0].tlsConfig.insecure", "cannot be combined"),
    ("client cert without key", _set("extenders.0.tlsConfig", {"certFile": "/c.crt"}),
     "extenders[0].tlsConfig", "must be given together"),
    ("ignoredByScheduler without NodeResourcesFit", lambda d: (
        d["extenders"][0].update(managedResources=[{"name": "example.com/gpu",
                                                   "ignoredByScheduler": True}]),
        d["profiles"][0].update(plugins={"multiPoint": {"disabled": [{"name": "*"}]}})),
     "profiles[0]", "NodeResourcesFitArgs"),
    ("v1beta2", _set("apiVersion", "kubescheduler.config.k8s.io/v1beta2"), "apiVersion",
     "removed in Kubernetes 1.28"),
    ("v1alpha1", _set("apiVersion", "kubescheduler.config.k8s.io/v1alpha1"), "apiVersion",
     "no longer served"),
    ("unknown kind", _set("kind", "SchedulerConfig"), "kind", "unknown kind"),
    ("resource lock", _set("leaderElection", {"resourceLock": "endpoints"}),
     "leaderElection.resourceLock", '"leases"'),
    ("lease shorter than renew", _set("leaderElection", {"leaseDuration": "5s"}),
     "leaderElection.leaseDuration", "greater than renewDeadline"),
    ("duplicate profile", lambda d: d["profiles"].append({"schedulerName": "extender-scheduler"}),
     "profiles[1].schedulerName", "duplicate"),
    ("unnamed second profile", lambda d: d["profiles"].append({}), "profiles[1].schedulerName",
     "required"),
    ("percentage", _set("percentageOfNodesToScore", 101), "percentageOfNodesToScore",
     "[0-100]"),
    ("unknown extension point", _set("profiles.0.plugins", {"filters": {}}),
     "profiles[0].plugins.filters", "did you mean filter?"),
    ("plugin args strict", _set("profiles.0.pluginConfig", [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAlocated"}}}]),
     "profiles[0].pluginConfig[0].args.scoringStrategy.type", "did you mean MostAllocated?"),
    ("plugin args unknown key", _set("profiles.0.pluginConfig", [
        {"name": "DefaultPreemption", "args": {"minCandidateNodes": 1}}]),
     "profiles[0].pluginConfig[0].args.minCandidateNodes", "unknown field"),
    ("plugin args of another kind", _set("profiles.0.pluginConfig", [
        {"name": "NodeResourcesFit", "args": {"kind": "DefaultPreemptionArgs"}}]),
     "profiles[0].pluginConfig[0].args.kind", "NodeResourcesFitArgs"),
    ("duplicate plugin config", _set("profiles.0.pluginConfig", [
        {"name": "NodeResourcesFit"}, {"name": "NodeResourcesFit"}]),
     "profiles[0].pluginConfig[1].name", "duplicate"),
    ("removed plugin", _set("profiles.0.plugins", {"filter": {"enabled": [{"name": "EBSLimits"}]}}),
     "profiles[0].plugins.filter.enabled[0].name", "removed in Kubernetes 1.32"),
    ("queue sort differs", lambda d: d["profiles"].append({
        "schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "Custom"}]}}}),
     "profiles[1].plugins.queueSort", "same for all profiles"),
    ("backoff order", _set("podInitialBackoffSeconds", 20), "podMaxBackoffSeconds",
     "greater than or equal"),
]


@pytest.mark.parametrize(("change", "path", "fragment"), [r[1:] for r in RULES],
                         ids=[r[0] for r in RULES])
def test_rule_violation_is_reported(tmp_path: Path, change: Any, path: str, fragment: str) -> None:
    errors = _errors(_write(tmp_path, _mutated(change)))
    assert any(p == path and fragment in m for p, m in errors), errors


def test_ignored_by_scheduler_is_fine_when_profiles_keep_node_resources_fit(tmp_path: Path) -> None:
    def change(doc: dict) -> None:
        doc["extenders"][0]["managedResources"] = [{"name": "example.com/gpu",
                                                   "ignoredByScheduler": True}]
        doc["profiles"].append({"schedulerName": "explicit", "plugins": {
            "multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]}}})

    assert check_config(_write(tmp_path, _mutated(change))) == []


def test_duplicate_yaml_key_is_an_error_with_its_line(tmp_path: Path) -> None:
    text = yaml.safe_dump(BASE, sort_keys=False).replace(
        "  weight: 1\n", "  weight: 1\n  weight: 2\n")
    path = _write(tmp_path, text)
    line = text.splitlines().index("  weight: 2") + 1
    assert _errors(path) == [(f"line {line}", "duplicate key 'weight'")]


def test_v1beta3_is_tolerated_with_a_warning_where_it_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, _mutated(_set("apiVersion", "kubescheduler.config.k8s.io/v1beta3")))
    problems = check_config(path, (1, 28))
    assert [(p.severity, p.path) for p in problems] == [("warning", "apiVersion")]
    assert "deprecated since Kubernetes 1.26 and removed in 1.29" in problems[0].message
    assert check_config(path, (1, 25)) == []  # not yet deprecated in 1.25


@pytest.mark.parametrize(("change", "path"), [
    (_set("extenders.0.enableHTTPS", True), "extenders[0].enableHTTPS"),  # http:// stays http
    (lambda d: d["extenders"][0].update(urlPrefix="https://127.0.0.1:8888", enableHTTPS=True),
     "extenders[0].enableHTTPS"),  # no CA: verification off
    (_set("extenders.0.tlsConfig", {"caFile": "/ca.crt"}), "extenders[0].tlsConfig"),
    (_set("extenders.0.httpTimeout", "0s"), "extenders[0].httpTimeout"),
    (_set("extenders.0.filterVerb", "/filter"), "extenders[0].filterVerb"),
])
def test_suspicious_settings_are_warnings(tmp_path: Path, change: Any, path: str) -> None:
    problems = check_config(_write(tmp_path, _mutated(change)))
    assert [(p.severity, p.path) for p in problems] == [("warning", path)]
    assert str(problems[0]).startswith(f"{tmp_path / 'config.yaml'}: {path}: warning: ")


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    assert _errors(tmp_path / "missing.yaml")[0][1].startswith("cannot read")
    assert _errors(_write(tmp_path, "a: [1, 2\n"))[0][1].startswith("not valid YAML")
    assert _errors(_write(tmp_path, ""))[0][1] == "empty file"
    assert _errors(_write(tmp_path, "- 1\n"))[0][1].startswith("expected a mapping")


# --- legacy Policy -------------------------------------------------------------------------

LEGACY: dict[str, Any] = json.loads((CONFIG / "scheduler-policy.json").read_text())


@pytest.mark.parametrize(("change", "path", "fragment"), [
    (lambda d: d["extenders"][0].update(httpTimeout="5s"), "extenders[0].httpTimeout",
     "integer nanoseconds"),
    (lambda d: d["extenders"][0].update(weight=0), "extenders[0].weight", "positive weight"),
    (lambda d: d["extenders"].append({"urlPrefix": "http://x:1", "bindVerb": "bind"}),
     "extenders", "only one extender can implement bind"),
    (lambda d: d["extenders"][0].update(managedResources=[{"name": "cpu"}]),
     "extenders[0].managedResources[0].name", "not an extended resource name"),
    (lambda d: d["extenders"][0].update(filterVerbs="filter"), "extenders[0].filterVerbs",
     "unknown field"),
    (lambda d: d.update(apiVersion="kubescheduler.config.k8s.io/v1"), "apiVersion", "'v1'"),
    (lambda d: d.update(hardPodAffinitySymmetricWeight=101), "hardPodAffinitySymmetricWeight",
     "[0-100]"),
    (lambda d: d.update(priorities=[{"name": "LeastRequestedPriority", "weight": 0}]),
     "priorities[0].weight", "positive"),
])
def test_legacy_policy_rules(tmp_path: Path, change: Any, path: str, fragment: str) -> None:
    doc = copy.deepcopy(LEGACY)
    change(doc)
    errors = _errors(_write(tmp_path, json.dumps(doc), "policy.json"))
    assert any(p == path and fragment in m for p, m in errors), errors


def test_legacy_policy_decodes_case_insensitively(tmp_path: Path) -> None:
    doc = copy.deepcopy(LEGACY)
    doc["extenders"][0]["enableHTTPS"] = doc["extenders"][0].pop("enableHttps")
    path = _write(tmp_path, json.dumps(doc), "policy.json")
    assert _errors(path) == []
    assert _warnings(path) == [("extenders[0].enableHTTPS",
                                "decoded case-insensitively, but the documented key is enableHttps")]


def test_legacy_timeout_in_seconds_by_mistake_is_a_warning(tmp_path: Path) -> None:
    doc = copy.deepcopy(LEGACY)
    doc["extenders"][0]["httpTimeout"] = 5
    warnings = _warnings(_write(tmp_path, json.dumps(doc), "policy.json"))
    assert warnings and "5000000000" in warnings[0][1]


# --- ExtenderPolicy is delegated to the engine's loader -------------------------------------

@pytest.mark.parametrize(("change", "path"), [
    (lambda d: d["plugins"]["filter"]["enabled"][0].update(name="NodeUnschedulabel"),
     "plugins.filter.enabled[0].name"),
    (lambda d: d["plugins"]["score"]["enabled"][0].update(wieght=3),
     "plugins.score.enabled[0].wieght"),
])
def test_extender_policy_problems_come_from_the_policy_loader(tmp_path: Path, change: Any,
                                                              path: str) -> None:
    doc = yaml.safe_load((CONFIG / "policy.yaml").read_text())
    change(doc)
    problems = check_config(_write(tmp_path, doc, "policy.yaml"))
    assert [(p.file, p.path, p.severity) for p in problems] == [
        (str(tmp_path / "policy.yaml"), path, "error")]


# --- render_config -------------------------------------------------------------------------

def test_rendered_default_passes_and_matches_the_shipped_extender(tmp_path: Path) -> None:
    text = render_config()
    assert check_config(_write(tmp_path, text)) == []
    rendered = yaml.safe_load(text)
    shipped = yaml.safe_load((CONFIG / "scheduler-config.yaml").read_text())
    assert rendered["extenders"] == shipped["extenders"]
    assert rendered["leaderElection"] == shipped["leaderElection"]
    assert rendered["profiles"] == shipped["profiles"][:1]


def test_render_round_trips_every_option(tmp_path: Path) -> None:
    tls = ExtenderTLS(ca_file="/tls/ca.crt", cert_file="/tls/c.crt", key_file="/tls/c.key",
                      server_name="extender.example")
    text = render_config("https://extender.example:8443/", verbs=["filter", "prioritize"],
                         weight=7, node_cache=False, managed_resources=["example.com/gpu"],
                         ignored_by_scheduler=True, timeout=0.5, tls=tls, ignorable=True,
                         scheduler_name="gpu-scheduler", lease_namespace="gpu",
                         kubeconfig="/etc/kubernetes/scheduler.conf")
    assert check_config(_write(tmp_path, text)) == []
    doc = yaml.safe_load(text)
    assert doc["extenders"] == [{
        "urlPrefix": "https://extender.example:8443", "filterVerb": "filter",
        "prioritizeVerb": "prioritize", "weight": 7, "enableHTTPS": True,
        "tlsConfig": {"caFile": "/tls/ca.crt", "certFile": "/tls/c.crt", "keyFile": "/tls/c.key",
                      "serverName": "extender.example"},
        "httpTimeout": "500ms", "nodeCacheCapable": False,
        "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
        "ignorable": True}]
    assert doc["leaderElection"] == {"leaderElect": True, "resourceLock": "leases",
                                     "resourceNamespace": "gpu", "resourceName": "gpu-scheduler"}
    assert doc["clientConnection"] == {"kubeconfig": "/etc/kubernetes/scheduler.conf"}
    assert doc["profiles"] == [{"schedulerName": "gpu-scheduler"}]


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"managed_resources": ["memory"]}, "not an extended resource name"),
    ({"weight": 0}, "positive weight"),
    ({"verbs": ["filter", "score"]}, "unknown verb"),
    ({"timeout": "5"}, "missing unit"),
    ({"tls": ExtenderTLS(ca_file="/ca.crt")}, "https://"),
])
def test_render_refuses_invalid_input(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        render_config(**kwargs)


# --- command line --------------------------------------------------------------------------

def _cli() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="extender")
    add_commands(parser.add_subparsers(dest="command", required=True))
    return parser


def _run(*argv: str) -> int:
    args = _cli().parse_args(list(argv))
    return args.func(args)


def test_check_config_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert _run("check-config", str(CONFIG / "scheduler-config.yaml"),
                str(CONFIG / "scheduler-policy.json")) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"ok: {CONFIG / 'scheduler-config.yaml'} (KubeSchedulerConfiguration "
        "kubescheduler.config.k8s.io/v1 as kube-scheduler 1.37 reads it: 2 profile(s), "
        "1 extender(s))",
        f"ok: {CONFIG / 'scheduler-policy.json'} (legacy Policy, for kube-scheduler before 1.23)"]
    bad = _write(tmp_path, _mutated(_set("extenders.0.weight", 0)))
    assert _run("check-config", str(CONFIG / "policy.yaml"), str(bad)) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"ok: {CONFIG / 'policy.yaml'} (ExtenderPolicy: 8 filter(s), 7 scorer(s))",
        f"{bad}: extenders[0].weight: must have a positive weight applied to it "
        "(prioritizeVerb is set)"]


def test_check_config_reports_every_problem_even_past_a_bad_api_version(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    doc = _mutated(_set("apiVersion", "kubescheduler.config.k8s.io/v1beta9"))
    doc["extenders"][0].update({"httpTimeout": "5q", "urlPrefix": "ftp://x"})
    doc["extenders"][0]["enableHttps"] = True
    bad = _write(tmp_path, doc)
    assert _run("check-config", str(bad)) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{bad}: apiVersion: unknown apiVersion "
                               "kubescheduler.config.k8s.io/v1beta9: kube-scheduler never had it")
    assert sorted(line.split(": ")[1] for line in lines[1:]) == [
        "extenders[0].enableHttps", "extenders[0].httpTimeout", "extenders[0].urlPrefix"]
    # A version kube-scheduler once served is named as such.
    old = _write(tmp_path, _mutated(_set("apiVersion", "kubescheduler.config.k8s.io/v1alpha2")),
                 "old.yaml")
    assert _run("check-config", str(old)) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{old}: apiVersion: kubescheduler.config.k8s.io/v1alpha2 is no longer served by "
        "kube-scheduler; use kubescheduler.config.k8s.io/v1"]


def test_check_config_warnings_fail_only_with_strict(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    path = _write(tmp_path, _mutated(_set("extenders.0.httpTimeout", "0s")))
    assert _run("check-config", str(path)) == 0
    assert _run("check-config", "--strict", str(path)) == 1
    assert "warning:" in capsys.readouterr().out


def test_render_config_command(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "rendered.yaml"
    assert _run("render-config", "--url", "https://127.0.0.1:8888", "--verbs", "filter", "bind",
                "--no-node-cache", "--managed-resource", "example.com/a", "--managed-resource",
                "example.com/b", "--ignored-by-scheduler", "--http-timeout", "2s",
                "--tls-ca-file", "/ca.crt", "--tls-cert-file", "/c.crt", "--tls-key-file",
                "/c.key", "-o", str(out)) == 0
    assert check_config(out) == []
    (extender,) = yaml.safe_load(out.read_text())["extenders"]
    assert extender["filterVerb"] == "filter" and "prioritizeVerb" not in extender
    assert [m["name"] for m in extender["managedResources"]] == ["example.com/a", "example.com/b"]
    assert extender["nodeCacheCapable"] is False and extender["httpTimeout"] == "2s"
    assert _run("render-config", "--managed-resource", "memory") == 2
    assert "not an extended resource name" in capsys.readouterr().err
    unwritable = tmp_path / "no-such-dir" / "rendered.yaml"
    assert _run("render-config", "-o", str(unwritable)) == 2  # once a traceback
    assert capsys.readouterr().err.strip() == (
        f"render-config: cannot write {unwritable}: No such file or directory")


def test_every_flag_is_documented() -> None:
    parser = _cli()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("render-config", "check-config"):
        for action in subparsers.choices[name]._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


# --- check-config --kubernetes-version, through the CLI entry point --------------------------

def _main(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, list[str]]:
    from extender.cli import main

    code = main(["check-config", *argv])
    return code, capsys.readouterr().out.splitlines()


def test_v1beta3_is_refused_by_the_newest_release(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    path = _write(tmp_path, _mutated(_set("apiVersion", "kubescheduler.config.k8s.io/v1beta3")))
    code, out = _main(capsys, str(path))
    assert code == 1
    assert out == [f"{path}: apiVersion: kubescheduler.config.k8s.io/v1beta3 was removed in "
                   "Kubernetes 1.29: kube-scheduler 1.37 refuses this file; migrate it to "
                   "kubescheduler.config.k8s.io/v1"]
    # The same file is fine for a release that still reads v1beta3 (a deprecation warning).
    code, out = _main(capsys, "--kubernetes-version", "1.27", str(path))
    assert code == 0 and len(out) == 2 and ": apiVersion: warning: " in out[0]
    assert out[1] == (f"ok: {path} (KubeSchedulerConfiguration kubescheduler.config.k8s.io/"
                      "v1beta3 as kube-scheduler 1.27 reads it: 1 profile(s), 1 extender(s); "
                      "1 warning(s))")
    assert _main(capsys, "--kubernetes-version", "1.27", "--strict", str(path))[0] == 1
    # v1 is new in 1.25; v1beta2 is read until 1.27.
    v1beta2 = _write(tmp_path, _mutated(_set("apiVersion", "kubescheduler.config.k8s.io/v1beta2")),
                     "beta2.yaml")
    assert _main(capsys, "--kubernetes-version", "1.26", str(v1beta2))[0] == 0
    assert "removed in Kubernetes 1.28" in _main(capsys, "--kubernetes-version", "1.28",
                                                 str(v1beta2))[1][0]


def test_an_unsupported_kubernetes_version_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from extender.cli import main

    assert main(["check-config", "--kubernetes-version", "1.20", str(CONFIG / "policy.yaml")]) == 2
    err = capsys.readouterr().err
    assert "outside the supported 1.25..1.37" in err
    # A cluster that old takes the legacy Policy file, which needs no version: said so.
    assert "a legacy Policy file (kube-scheduler before 1.23, as config/scheduler-policy.json) " \
           "is checked without --kubernetes-version" in err
    assert main(["check-config", str(CONFIG / "scheduler-policy.json")]) == 0


def test_unknown_plugin_names_are_flagged_by_name_and_path(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    def change(doc: dict) -> None:
        doc["profiles"][0]["plugins"] = {
            "filter": {"enabled": [{"name": "NodeResourcesFit"}, {"name": "NodeResoucesFit"}],
                       "disabled": [{"name": "*"}, {"name": "TaintTolerations"}]},
            "score": {"enabled": [{"name": "Coscheduling"}, {"name": "GangScheduling"}]},
            "postFilter": {"enabled": [{"name": "CapacityScheduling"}]},
        }
        doc["profiles"][0]["pluginConfig"] = [{"name": "MyOwnPlugin", "args": {}}]

    path = _write(tmp_path, _mutated(change))
    code, out = _main(capsys, str(path))
    assert code == 1
    cosched = ("plugin {} is a scheduler-plugins plugin, not in kube-scheduler 1.37: enable it "
               "in the extender's ExtenderPolicy instead, which brings it to a stock "
               "kube-scheduler through the extender verbs")
    assert out == [
        f"{path}: profiles[0].plugins.filter.enabled[1].name: unknown plugin 'NodeResoucesFit': "
        "kube-scheduler 1.37 has no in-tree plugin of that name (did you mean NodeResourcesFit?)",
        f"{path}: profiles[0].plugins.filter.disabled[1].name: warning: unknown plugin "
        "'TaintTolerations': kube-scheduler 1.37 has no in-tree plugin of that name (did you "
        "mean TaintToleration?) (kube-scheduler ignores it)",
        f"{path}: profiles[0].plugins.score.enabled[0].name: " + cosched.format("Coscheduling"),
        f"{path}: profiles[0].plugins.postFilter.enabled[0].name: "
        + cosched.format("CapacityScheduling"),
        f"{path}: profiles[0].pluginConfig[0].name: warning: unknown plugin 'MyOwnPlugin': "
        "kube-scheduler 1.37 has no in-tree plugin of that name (kube-scheduler ignores its "
        "arguments)",
    ]
    # GangScheduling is in tree from 1.35 only.
    code, out = _main(capsys, "--kubernetes-version", "1.34", str(path))
    assert [line.split(": ")[1] for line in out if ": warning: " not in line] == [
        "profiles[0].plugins.filter.enabled[1].name",
        "profiles[0].plugins.score.enabled[0].name",
        "profiles[0].plugins.score.enabled[1].name",
        "profiles[0].plugins.postFilter.enabled[0].name"]
    assert any("score.enabled[1].name: plugin GangScheduling is new in Kubernetes 1.35" in line
               for line in out)


def test_known_plugins_follow_the_registry_and_the_release() -> None:
    from extender.ops import kubeversions

    assert set(registry.PLUGINS) <= kubeversions.known_plugins((1, 25))
    # scheduler-plugins' plugins are the registry's, but a stock kube-scheduler refuses them.
    # (Other scheduler-plugins plugins are registered too; these must be among them.)
    assert {"Coscheduling", "CapacityScheduling", "PreemptionToleration", "PodState",
            "NodeResourcesAllocatable", "NetworkOverhead", "TopologicalSort"} <= (
        kubeversions.out_of_tree_plugins())
    assert not kubeversions.out_of_tree_plugins() & set(kubeversions.IN_TREE_PLUGINS)
    assert "scheduler-plugins plugin" in kubeversions.plugin_problem(
        "Coscheduling", (1, 37), "kubescheduler.config.k8s.io/v1")
    assert "EBSLimits" in kubeversions.known_plugins((1, 31))
    assert "EBSLimits" not in kubeversions.known_plugins((1, 32))
    assert kubeversions.plugin_problem("EBSLimits", (1, 31), "kubescheduler.config.k8s.io/v1") is None
    # SelectorSpread: in the tree until 1.28, but never in the v1 API.
    assert "not available in kubescheduler.config.k8s.io/v1" in kubeversions.plugin_problem(
        "SelectorSpread", (1, 27), "kubescheduler.config.k8s.io/v1")
    assert kubeversions.plugin_problem(
        "SelectorSpread", (1, 27), "kubescheduler.config.k8s.io/v1beta3") is None


def test_a_policy_with_several_problems_reports_all_of_them(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    doc = yaml.safe_load((CONFIG / "policy.yaml").read_text())
    doc["plugins"]["filter"]["enabled"][0]["wieght"] = 3          # an unknown key
    doc["plugins"]["score"]["enabled"][0]["name"] = "ImageLocalty"  # an unknown plugin
    doc["pluginConfig"] = [{"name": "NodeResourcesFit",               # a bad value
                            "args": {"scoringStrategy": {"type": "Fastest"}}}]
    path = _write(tmp_path, doc, "policy.yaml")
    code, out = _main(capsys, str(path))
    assert code == 1
    assert [line.split(": ")[1] for line in out] == [
        "plugins.filter.enabled[0].wieght",
        "plugins.score.enabled[0].name",
        "pluginConfig[0].args.scoringStrategy.type",
    ], out


def test_a_queue_sort_of_scheduler_plugins_is_not_offered_through_the_verbs() -> None:
    from extender.ops import kubeversions

    message = kubeversions.plugin_problem("TopologicalSort", (1, 37), "kubescheduler.config.k8s.io/v1")
    assert message == ("plugin TopologicalSort is a scheduler-plugins queue sort, not in "
                       "kube-scheduler 1.37: no extender verb can order kube-scheduler's queue; "
                       "the extender's simulator runs it (plugins.queueSort in an ExtenderPolicy)")
    assert "through the extender verbs" in kubeversions.plugin_problem(
        "NetworkOverhead", (1, 37), "kubescheduler.config.k8s.io/v1")


def test_the_numa_cache_needs_the_bind_verb(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """check-config on kube-scheduler's configuration and the extender's policy together: the
    overreserve cache reserves in the bind verb."""
    policy = _write(tmp_path, {
        "apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
        "plugins": {"filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
        "pluginConfig": [{"name": "NodeResourceTopologyMatch",
                          "args": {"cacheResyncPeriodSeconds": 5}}]}, "policy.yaml")
    unbound = _write(tmp_path, _mutated(lambda d: d["extenders"][0].pop("bindVerb")))
    assert _run("check-config", str(unbound), str(policy)) == 1
    assert (f"{unbound}: extenders: the extender's policy enables NodeResourceTopologyMatch's "
            "overreserve cache (cacheResyncPeriodSeconds 5), which reserves in the bind verb: "
            "register bindVerb, or its copy of each node's report never counts the pods "
            "kube-scheduler binds") in capsys.readouterr().out.splitlines()
    assert _run("check-config", str(CONFIG / "scheduler-config.yaml"), str(policy)) == 0
    discarding = _write(tmp_path, {
        "apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
        "plugins": {"filter": {"enabled": [{"name": "NodeResourceTopologyMatch"}]}},
        "pluginConfig": [{"name": "NodeResourceTopologyMatch",
                          "args": {"discardReservedNodes": True}}]}, "discarding.yaml")
    assert _run("check-config", str(unbound), str(discarding)) == 1
    assert (f"{unbound}: extenders: the extender's policy enables NodeResourceTopologyMatch's "
            "discardReservedNodes, which learns of each bind from the bind verb: register "
            "bindVerb, or no node is ever discarded") in capsys.readouterr().out.splitlines()
    assert _run("check-config", str(CONFIG / "scheduler-config.yaml"), str(discarding)) == 0


def test_standard_input_is_summed_up_and_cross_checked_like_a_file(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO((CONFIG / "policy.yaml").read_text()))
    code, out = _main(capsys, "-", str(CONFIG / "scheduler-config.yaml"))
    assert code == 0
    assert out[0] == "ok: - (ExtenderPolicy: 8 filter(s), 7 scorer(s))"
    # A policy from standard input meets the configuration: Coscheduling's Permit wait does
    # not fit the configuration's 5 s httpTimeout (each file alone is fine).
    gang = (CONFIG / "examples" / "gang-quota-policy.yaml").read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(gang))
    code, out = _main(capsys, "-", str(CONFIG / "scheduler-config.yaml"))
    assert code == 1 and any("extenders[0].httpTimeout" in line for line in out), out


# --- files given together, and what the walk-through of 2026-12-03 found --------------------

def test_several_policies_are_not_paired_with_every_configuration(
        capsys: pytest.CaptureFixture) -> None:
    """Which configuration calls which policy's extender is not for the check to guess: the
    5s httpTimeout of one file against two unrelated gang policies was reported twice."""
    examples = CONFIG / "examples"
    assert _run("check-config", str(CONFIG / "scheduler-config.yaml"),
                str(examples / "gang-policy.yaml"), str(examples / "gang-quota-policy.yaml")) == 0
    printed = capsys.readouterr()
    assert all(line.startswith("ok: ") for line in printed.out.splitlines())
    assert printed.err == (
        f"check-config: 2 ExtenderPolicy files given ({examples / 'gang-policy.yaml'}, "
        f"{examples / 'gang-quota-policy.yaml'}): no KubeSchedulerConfiguration is checked "
        "against a policy; give one policy with the configurations that call its extender\n")
    # One policy: the pair is checked, and said once.
    assert _run("check-config", str(CONFIG / "scheduler-config.yaml"),
                str(examples / "gang-policy.yaml")) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ")[1] for line in lines if "httpTimeout" in line] == [
        "extenders[0].httpTimeout"]


def test_a_legacy_policy_is_refused_for_a_release_named(capsys: pytest.CaptureFixture) -> None:
    legacy = str(CONFIG / "scheduler-policy.json")
    assert _run("check-config", legacy) == 0
    capsys.readouterr()
    assert _run("check-config", "--kubernetes-version", "1.25", legacy) == 1
    assert capsys.readouterr().out == (
        f"{legacy}: kind: kube-scheduler 1.25 reads no legacy Policy file (--policy-config-file "
        "went in 1.23): migrate it to a KubeSchedulerConfiguration; without "
        "--kubernetes-version it is checked as the older release that reads it\n")


def test_a_legacy_duration_string_is_said_once(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"kind": "Policy", "apiVersion": "v1", "extenders": [
        {"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter", "httpTimeout": "5s"}]}))
    assert [(p.path, p.message) for p in check_config(path)] == [
        ("extenders[0].httpTimeout", "must be integer nanoseconds (a Go time.Duration), e.g. "
         "5000000000 for 5s; duration strings belong to KubeSchedulerConfiguration")]


def test_a_file_without_kind_says_so(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("apiVersion: v1\nfoo: 1\n")
    assert [p.message for p in check_config(path)] == [
        "no kind: expected KubeSchedulerConfiguration, Policy (legacy) or ExtenderPolicy"]


def test_render_config_refuses_what_its_output_could_not_mean(
        capsys: pytest.CaptureFixture) -> None:
    policy = str(CONFIG / "examples" / "gang-quota-policy.yaml")
    for deadline in ("-3", "0"):  # the output would then fail check-config with the policy
        with pytest.raises(SystemExit) as exited:
            _run("render-config", "--policy", policy, "--bind-deadline", deadline)
        assert exited.value.code == 2
        assert "--bind-deadline: must be above 0" in capsys.readouterr().err
    assert _run("render-config", "--ignored-by-scheduler") == 2
    assert capsys.readouterr().err == (
        "render-config: --ignored-by-scheduler marks the managed resources, and none is given "
        "(--managed-resource NAME, once per resource)\n")


def test_manifests_without_anything_of_the_extender_say_so(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "deploy.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment",
                                    "metadata": {"name": "web"}, "spec": {"template": {"spec": {
                                        "containers": [{"name": "c", "image": "nginx:1"}]}}}}))
    assert _run("check-config", str(path)) == 0
    assert capsys.readouterr().out == (
        f"ok: {path} (manifests: 1 object(s); no KubeSchedulerConfiguration, ExtenderPolicy or "
        "extender among them)\n")
