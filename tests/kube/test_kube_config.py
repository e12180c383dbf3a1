"""Kubeconfig and in-cluster credentials."""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from pathlib import Path

import pytest
import trustme
import yaml

from extender.kube.config import ConfigError, TokenSource, in_cluster_config, load_kubeconfig


def _write(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def _doc(cluster: dict, user: dict, *, current: str | None = "main", extra_contexts=()) -> dict:
    doc = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "c1", "cluster": cluster}],
        "users": [{"name": "u1", "user": user}],
        "contexts": [{"name": "main", "context": {"cluster": "c1", "user": "u1", "namespace": "team"}},
                     *extra_contexts],
    }
    if current:
        doc["current-context"] = current
    return doc


def test_token_and_current_context(tmp_path: Path) -> None:
    path = _write(tmp_path / "kc", _doc({"server": "https://api.example:6443/"}, {"token": "abc"}))
    cfg = load_kubeconfig(path)
    assert cfg.server == "https://api.example:6443"
    assert cfg.token_source().get() == "abc"
    assert cfg.namespace == "team"
    assert "context main" in cfg.source


def test_explicit_context_wins(tmp_path: Path) -> None:
    other = {"name": "other", "context": {"cluster": "c2", "user": "u2"}}
    doc = _doc({"server": "https://one:6443"}, {"token": "one"}, extra_contexts=[other])
    doc["clusters"].append({"name": "c2", "cluster": {"server": "http://two:8080"}})
    doc["users"].append({"name": "u2", "user": {"token": "two"}})
    cfg = load_kubeconfig(_write(tmp_path / "kc", doc), context="other")
    assert cfg.server == "http://two:8080"
    assert cfg.token == "two"
    assert cfg.namespace == "default"
    assert cfg.ssl_context() is None  # plain http


def test_relative_paths_resolve_against_the_kubeconfig_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "token").write_text("from-file\n")
    path = _write(tmp_path / "sub" / "kc", _doc({"server": "https://x", "certificate-authority": "ca.pem"},
                                                {"tokenFile": "token"}))
    cfg = load_kubeconfig(path)
    assert cfg.ca_file == str(tmp_path / "sub" / "ca.pem")
    assert cfg.token_source().get() == "from-file"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (_doc({"server": "https://x"}, {"token": "t"}, current=None), "no current-context"),
        (_doc({"server": "https://x"}, {"exec": {"command": "aws"}}),
         "apiVersion must be specified for u1 to use exec authentication plugin"),
        (_doc({"server": "https://x"}, {"username": "a", "password": "b"}), "basic auth"),
        (_doc({"server": "ftp://x"}, {"token": "t"}), "no http(s) server"),
        (_doc({"server": "https://x", "certificate-authority-data": "%%%"}, {}), "not valid base64"),
    ],
)
def test_unusable_kubeconfigs_say_why(tmp_path: Path, doc: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_kubeconfig(_write(tmp_path / "kc", doc))


def test_missing_kubeconfig_and_unknown_context(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="No such file"):
        load_kubeconfig(tmp_path / "nope")
    path = _write(tmp_path / "kc", _doc({"server": "https://x"}, {"token": "t"}))
    with pytest.raises(ConfigError, match="no context named 'ghost'"):
        load_kubeconfig(path, context="ghost")


def test_data_fields_load_into_the_ssl_context_and_leave_no_file(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ca = trustme.CA()
    client = ca.issue_cert("me@example.test")
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    path = _write(tmp_path / "kc", _doc(
        {"server": "https://x", "certificate-authority-data": b64(ca.cert_pem.bytes())},
        {"client-certificate-data": b64(client.cert_chain_pems[0].bytes()),
         "client-key-data": b64(client.private_key_pem.bytes())}))
    cfg = load_kubeconfig(path)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    ctx = cfg.ssl_context()
    assert isinstance(ctx, ssl.SSLContext)
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert len(ctx.get_ca_certs()) == 1  # our CA only, not the system roots
    assert list(private_tmp.iterdir()) == []  # the key never stays on disk


def test_client_cert_without_key_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "kc", _doc({"server": "https://x"}, {"client-certificate": "c.pem"}))
    with pytest.raises(ConfigError, match="both a certificate and a key"):
        load_kubeconfig(path).ssl_context()


def test_insecure_skip_verify(tmp_path: Path) -> None:
    path = _write(tmp_path / "kc", _doc({"server": "https://x", "insecure-skip-tls-verify": True},
                                        {"token": "t"}))
    ctx = load_kubeconfig(path).ssl_context()
    assert ctx is not None and ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname
    assert ctx.cert_store_stats()["x509_ca"] == 0  # nothing verified: no roots read


def test_without_a_ca_the_system_roots_verify(tmp_path: Path) -> None:
    path = _write(tmp_path / "kc", _doc({"server": "https://x"}, {"token": "t"}))
    ctx = load_kubeconfig(path).ssl_context()
    assert ctx is not None and ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    system = ssl.create_default_context()
    assert ctx.cert_store_stats() == system.cert_store_stats()


def test_token_file_is_reread_when_rotated(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first")
    source = TokenSource(token_file=str(token))
    assert source.get() == "first"
    # kubelet swaps the file atomically; a new inode (and mtime) marks the rotation.
    fresh = tmp_path / "token.new"
    fresh.write_text("second")
    os.replace(fresh, token)
    assert source.get() == "second"
    token.unlink()
    assert source.get() == "second"  # a missing file keeps the last good token


def test_in_cluster_config(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_text("pem")
    (tmp_path / "namespace").write_text("kube-system")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    cfg = in_cluster_config(env, str(tmp_path))
    assert cfg.server == "https://10.0.0.1:443"
    assert cfg.ca_file == str(tmp_path / "ca.crt")
    assert cfg.token_file == str(tmp_path / "token")
    assert cfg.token_source().get() == "sa-token"
    assert cfg.namespace == "kube-system"
    v6 = in_cluster_config({**env, "KUBERNETES_SERVICE_HOST": "fd00::1"}, str(tmp_path))
    assert v6.server == "https://[fd00::1]:443"


def test_in_cluster_config_outside_a_cluster(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not running in a cluster"):
        in_cluster_config({}, str(tmp_path))
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(ConfigError, match="token .* is missing"):
        in_cluster_config(env, str(tmp_path))
