"""The manifests as a real API server takes them: every overlay applied (server-side dry run:
schemas, defaulting, admission, RBAC escalation checks) to the sandbox's kube-apiserver, with
the TLS Secrets `extender certs` makes applied for real."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e
MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
OVERLAYS = ("gang-quota", "second-scheduler", "extender-service", "sidecar")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_overlay_applies_to_a_real_api_server(sandbox, overlay: str) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed (Debian package kubectl)")
    env = {**os.environ, "KUBECONFIG": str(sandbox.kubeconfig)}
    certs = subprocess.run([sys.executable, "-m", "extender", "certs"], capture_output=True,
                           text=True, check=True)
    applied = subprocess.run(["kubectl", "apply", "-f", "-"], input=certs.stdout, env=env,
                             capture_output=True, text=True, timeout=60)
    assert applied.returncode == 0, applied.stderr
    assert "secret/scheduler-extender-tls" in applied.stdout
    result = subprocess.run(
        ["kubectl", "apply", "--dry-run=server", "-k", str(MANIFESTS / "overlays" / overlay)],
        env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "deployment.apps/" in result.stdout and "(server dry run)" in result.stdout
    # The Namespace and CRDs the sandbox made are updated as kubectl's own, without a warning.
    assert "last-applied-configuration" not in applied.stderr + result.stderr


def test_the_manifests_rbac_applied_onto_the_sandbox_leaves_its_extender_its_rights(
        sandbox) -> None:
    """`kubectl apply -k manifests/overlays/gang-quota` onto a running sandbox, as an operator
    tries a deployment there: its RBAC objects sit beside the sandbox's own (named apart), so
    the sandbox's extender (user `scheduler-extender`) keeps the right to bind, where once the
    same names rebound them to the manifests' ServiceAccount and every bind failed."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed (Debian package kubectl)")
    import yaml

    env = {**os.environ, "KUBECONFIG": str(sandbox.kubeconfig)}
    rendered = subprocess.run(["kubectl", "kustomize", str(MANIFESTS / "overlays" / "gang-quota")],
                              capture_output=True, text=True, check=True, timeout=60).stdout
    rbac = yaml.safe_dump_all([d for d in yaml.safe_load_all(rendered) if d and d["kind"] in (
        "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ServiceAccount")])

    def kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["kubectl", *args], input=stdin, env=env, capture_output=True,
                              text=True, timeout=60)

    applied = kubectl("apply", "-f", "-", stdin=rbac)
    assert applied.returncode == 0, applied.stderr
    try:
        account = "system:serviceaccount:scheduler-extender:scheduler-extender"
        for who in ("scheduler-extender", account):  # the sandbox's user, the manifests' account
            answer = kubectl("auth", "can-i", "create", "pods", "--subresource", "binding",
                             "--as", who)
            assert answer.stdout.strip() == "yes", (who, answer.stdout, answer.stderr)
            lease = kubectl("auth", "can-i", "update", "leases/scheduler-extender",
                            "-n", "scheduler-extender", "--as", who)
            assert lease.stdout.strip() == "yes", (who, lease.stdout, lease.stderr)
    finally:
        kubectl("delete", "--ignore-not-found", "-f", "-", stdin=rbac)
