"""kubectl's kubeconfig resolution ($KUBECONFIG merged, else ~/.kube/config), legacy
auth-provider entries, and how `serve` chooses between the demo snapshot and a live cluster."""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from extender.kube.config import ConfigError, kubeconfig_paths, load_kubeconfig


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def _env(*paths: Path) -> dict[str, str]:
    return {"KUBECONFIG": os.pathsep.join(map(str, paths))}


def test_paths_follow_kubectl(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert kubeconfig_paths({"KUBECONFIG": f"{a}{os.pathsep}{os.pathsep}{b}{os.pathsep}{a}"}) == [a, b]
    assert kubeconfig_paths({}, home=tmp_path) == [tmp_path / ".kube" / "config"]
    assert kubeconfig_paths({"KUBECONFIG": ""}, home=tmp_path) == [tmp_path / ".kube" / "config"]


def test_merge_first_definition_and_first_current_context_win(tmp_path: Path) -> None:
    first = _write(tmp_path / "one" / "config", {
        # no current-context here: the second file's decides
        "clusters": [{"name": "shared", "cluster": {"server": "https://first:6443",
                                                   "certificate-authority": "ca.pem"}}],
        "users": [{"name": "me", "user": {"tokenFile": "token"}}],
    })
    second = _write(tmp_path / "two" / "config", {
        "current-context": "work",
        "clusters": [{"name": "shared", "cluster": {"server": "https://second:6443"}}],
        "users": [{"name": "me", "user": {"token": "second-token"}}],
        "contexts": [{"name": "work", "context": {"cluster": "shared", "user": "me",
                                                  "namespace": "team"}}],
    })
    third = _write(tmp_path / "three" / "config", {"current-context": "ignored"})
    (tmp_path / "one" / "token").write_text("first-token\n")
    cfg = load_kubeconfig(env=_env(first, second, third))
    assert cfg.server == "https://first:6443"  # the first file to define "shared"
    assert cfg.token_source().get() == "first-token"  # and "me", relative to its own file
    assert cfg.ca_file == str(tmp_path / "one" / "ca.pem")
    assert cfg.namespace == "team"
    assert "context work" in cfg.source
    # An explicit --context picks from the merged contexts too.
    with pytest.raises(ConfigError, match="no context named 'ignored'"):
        load_kubeconfig(env=_env(first, second, third), context="ignored")


def test_missing_files_in_the_list_are_skipped(tmp_path: Path) -> None:
    real = _write(tmp_path / "config", {
        "current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "k"}}],
        "clusters": [{"name": "k", "cluster": {"server": "http://127.0.0.1:1"}}]})
    cfg = load_kubeconfig(env=_env(tmp_path / "gone", real))
    assert cfg.server == "http://127.0.0.1:1"
    with pytest.raises(ConfigError, match=r"no kubeconfig found: \$KUBECONFIG"):
        load_kubeconfig(env=_env(tmp_path / "gone", tmp_path / "also-gone"))
    with pytest.raises(ConfigError, match=r"no kubeconfig found: .*\.kube/config does not exist"):
        load_kubeconfig(env={}, home=tmp_path / "home")
    # Named explicitly, a missing file is an error, as with kubectl --kubeconfig.
    with pytest.raises(ConfigError, match="No such file"):
        load_kubeconfig(tmp_path / "gone")


def test_home_config_is_the_default(tmp_path: Path) -> None:
    _write(tmp_path / ".kube" / "config", {
        "current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "k"}}],
        "clusters": [{"name": "k", "cluster": {"server": "https://home:6443"}}]})
    assert load_kubeconfig(env={}, home=tmp_path).server == "https://home:6443"


# ---- auth-provider -------------------------------------------------------------------------

def _provider_doc(provider: dict[str, Any]) -> dict[str, Any]:
    return {"current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            "clusters": [{"name": "k", "cluster": {"server": "https://x"}}],
            "users": [{"name": "u", "user": {"auth-provider": provider}}]}


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _jwt(claims: dict[str, Any]) -> str:
    part = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"e30.{part}.sig"


@pytest.mark.parametrize(("provider", "token"), [
    ({"name": "gcp", "config": {"access-token": "ya29.x", "expiry": _stamp(time.time() + 3600)}},
     "ya29.x"),
    ({"name": "azure", "config": {"access-token": "az", "expires-on": str(int(time.time()) + 3600)}},
     "az"),
    ({"name": "oidc", "config": {"id-token": _jwt({"exp": int(time.time()) + 3600})}},
     _jwt({"exp": int(time.time()) + 3600})),
], ids=["gcp", "azure", "oidc"])  # ids without the clock: every xdist worker collects the same
def test_a_valid_cached_auth_provider_token_is_used(tmp_path: Path, provider: dict,
                                                   token: str) -> None:
    cfg = load_kubeconfig(_write(tmp_path / "kc", _provider_doc(provider)))
    assert cfg.token_source().get() == token


@pytest.mark.parametrize(("provider", "message"), [
    ({"name": "gcp", "config": {"access-token": "ya29.x", "expiry": _stamp(time.time() - 60)}},
     r"expired at .*client-go removed the gcp and azure auth-provider plugins in v1\.26.*"
     r"gke-gcloud-auth-plugin"),
    ({"name": "azure", "config": {}}, "no cached token.*kubelogin"),
    ({"name": "oidc", "config": {"id-token": _jwt({"exp": time.time() - 60}),
                                 "refresh-token": "r"}}, "expired at .*exec plugin"),
], ids=["gcp", "azure", "oidc"])
def test_an_unusable_auth_provider_says_what_to_use_instead(tmp_path: Path, provider: dict,
                                                            message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_kubeconfig(_write(tmp_path / "kc", _provider_doc(provider)))


# ---- serve ---------------------------------------------------------------------------------

def _serve_args(*argv: str) -> Any:
    from extender.cli import build_parser

    return build_parser("serve").parse_args(["serve", *argv])


def test_serve_without_a_source_keeps_the_demo_snapshot(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from extender.serve import build_runtime
    from extender.state.events import NULL_RECORDER, events_of

    # Even with a kubeconfig in the environment: live mode is asked for, never implied.
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kc"))
    runtime = build_runtime(_serve_args())
    assert runtime.source.startswith("snapshot ")
    assert events_of(runtime) is NULL_RECORDER  # no API server: no events client


def test_serve_kubeconfig_without_a_file_uses_kubectls_resolution(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from extender.serve import build_runtime
    from extender.state.events import EventRecorder, events_of

    a = _write(tmp_path / "a", {"current-context": "c",
                               "clusters": [{"name": "k", "cluster": {"server": "http://127.0.0.1:9"}}]})
    b = _write(tmp_path / "b", {"contexts": [{"name": "c", "context": {"cluster": "k"}},
                                            {"name": "d", "context": {"cluster": "k"}}]})
    monkeypatch.setenv("KUBECONFIG", f"{a}{os.pathsep}{b}")
    runtime = build_runtime(_serve_args("--kubeconfig"))
    assert runtime.source == f"kubeconfig {a}{os.pathsep}{b} (context c)"
    assert isinstance(events_of(runtime), EventRecorder)
    # --context alone means the same resolution.
    assert build_runtime(_serve_args("--context", "d")).source.endswith(f"{b} (context d)")
    # An explicit file still works as before, whatever $KUBECONFIG says.
    single = _write(tmp_path / "single", {
        "current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "k"}}],
        "clusters": [{"name": "k", "cluster": {"server": "http://127.0.0.1:9"}}]})
    assert build_runtime(_serve_args("--kubeconfig", str(single))).source == f"kubeconfig {single}"
