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
