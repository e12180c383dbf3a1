"""`extender certs`: the two Secrets of manifests/components/tls, which a real `extender serve`
then serves mutual TLS with, to a client holding kube-scheduler's certificate only."""

from __future__ import annotations

import base64
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from extender.cli import main
from tests.conftest import ROOT
from tests.e2e.test_serve import free_port
from tests.polling import stop_process, until

SERVICE_NAME = "scheduler-extender.scheduler-extender.svc"


def _certs(capsys: pytest.CaptureFixture, *argv: str) -> dict[str, dict[str, bytes]]:
    assert main(["certs", *argv]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    return {d["metadata"]["name"]: {k: base64.b64decode(v) for k, v in d["data"].items()}
            for d in docs if d["kind"] == "Secret"}


def test_the_manifests_namespace_comes_first(capsys) -> None:
    """One `kubectl apply -f -` works on a fresh cluster, and re-applying it (renewal) keeps
    the labels manifests/base gives the Namespace: the two documents are the same."""
    assert main(["certs"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in docs] == ["Namespace", "Secret", "Secret"]
    manifests = yaml.safe_load((ROOT / "manifests" / "base" / "namespace.yaml").read_text())
    assert docs[0] == manifests
    assert all(d["metadata"]["namespace"] == "scheduler-extender" for d in docs[1:])
    # Another namespace is the user's: it is not created (nor relabelled).
    assert main(["certs", "--namespace", "kube-system"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in docs] == ["Secret", "Secret"]
    assert all(d["metadata"]["namespace"] == "kube-system" for d in docs)


def test_the_secrets_are_the_ones_the_tls_component_mounts(capsys, tmp_path: Path) -> None:
    secrets = _certs(capsys, "--dir", str(tmp_path / "pki"), "--metrics-client")
    assert {name: sorted(files) for name, files in secrets.items()} == {
        "scheduler-extender-tls": ["client-ca.crt", "tls.crt", "tls.key"],
        "extender-scheduler-client-tls": ["ca.crt", "tls.crt", "tls.key"],
        "scheduler-extender-metrics-client-tls": ["ca.crt", "tls.crt", "tls.key"]}
    # The component mounts exactly these names (tls/kustomization.yaml, extender-tls.yaml).
    component = (ROOT / "manifests" / "components" / "tls").glob("*.yaml")
    text = "".join(p.read_text() for p in component)
    for name in secrets:
        assert name in text
    # Renewal with the same --dir keeps the CA, renews the leaves.
    again = _certs(capsys, "--dir", str(tmp_path / "pki"))
    assert again["extender-scheduler-client-tls"]["ca.crt"] == \
        secrets["extender-scheduler-client-tls"]["ca.crt"]
    assert again["scheduler-extender-tls"]["tls.crt"] != secrets["scheduler-extender-tls"]["tls.crt"]


def test_serve_speaks_mutual_tls_with_them(capsys, tmp_path: Path) -> None:
    secrets = _certs(capsys)
    files: dict[str, Path] = {}
    for name, content in secrets.items():
        for key, data in content.items():
            path = tmp_path / name / key
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
            files[f"{name}/{key}"] = path
    port, health = free_port(), free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "extender", "serve", "--bind-address", "127.0.0.1",
         "--secure-port", str(port), "--health-port", str(health),
         "--tls-cert-file", str(files["scheduler-extender-tls/tls.crt"]),
         "--tls-private-key-file", str(files["scheduler-extender-tls/tls.key"]),
         "--client-ca-file", str(files["scheduler-extender-tls/client-ca.crt"])],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def ready() -> bool:
            assert server.poll() is None, "serve exited"
            try:
                return httpx.get(f"http://127.0.0.1:{health}/readyz").status_code == 200
            except httpx.HTTPError:
                return False
        until(ready, "serve ready", 30)
        # As kube-scheduler: trusting ca.crt, checking the Service's name, presenting its cert.
        ctx = ssl.create_default_context(cafile=str(files["extender-scheduler-client-tls/ca.crt"]))
        ctx.load_cert_chain(files["extender-scheduler-client-tls/tls.crt"],
                            files["extender-scheduler-client-tls/tls.key"])
        with httpx.Client(verify=ctx, timeout=10) as client:
            reply = client.get(f"https://127.0.0.1:{port}/version",
                               extensions={"sni_hostname": SERVICE_NAME})
        assert reply.status_code == 200
        # Without a client certificate the handshake is refused.
        bare = ssl.create_default_context(cafile=str(files["extender-scheduler-client-tls/ca.crt"]))
        with pytest.raises(httpx.HTTPError), httpx.Client(verify=bare, timeout=10) as client:
            client.get(f"https://127.0.0.1:{port}/version",
                       extensions={"sni_hostname": SERVICE_NAME})
    finally:
        stop_process(server)


def test_bad_days_is_a_clear_error(capsys) -> None:
    assert main(["certs", "--days", "0"]) == 2
    assert capsys.readouterr().err.strip() == "certs: --days 0: must be positive"


def test_output_is_the_owners_alone_and_an_unwritable_one_is_a_clear_error(
        capsys, tmp_path: Path) -> None:
    out = tmp_path / "secrets.yaml"
    out.write_text("old")
    out.chmod(0o644)  # an earlier file, readable by all: its new keys must not be
    assert main(["certs", "-o", str(out)]) == 0
    assert out.stat().st_mode & 0o777 == 0o600
    assert [d["kind"] for d in yaml.safe_load_all(out.read_text())].count("Secret") == 2
    capsys.readouterr()
    missing = tmp_path / "no-such-dir" / "secrets.yaml"
    assert main(["certs", "-o", str(missing)]) == 2  # once a traceback
    assert capsys.readouterr().err.strip() == (
        f"certs: cannot write {missing}: No such file or directory")
