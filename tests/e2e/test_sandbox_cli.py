"""`extender sandbox up|status|down` as a user runs them (the README's "Try it against a real
kube-scheduler"): a working KUBECONFIG, kubectl against it, and nothing left running after
`down`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from extender.sandbox.processes import Registry
from tests.e2e.realcluster import Kube, fit_error, wait_until

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def extender(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "extender", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_up_kubectl_down(sandbox, tmp_path: Path) -> None:  # the session sandbox: built
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed (Debian package kubectl)")
    state = tmp_path / "state"
    up = extender("sandbox", "up", "--nodes", "20", "--state-dir", str(state),
                  "--kubernetes-version", sandbox.binaries.version)
    try:
        assert up.returncode == 0, up.stderr
        # stdout is the one line to export; progress went to stderr.
        assert up.stdout.splitlines() == [f"KUBECONFIG={state / 'kubeconfig'}"]
        assert "kube-scheduler" in up.stderr and "20 node(s) ready" in up.stderr
        env = {**os.environ, "KUBECONFIG": str(state / "kubeconfig")}

        def kubectl(*args: str) -> str:
            done = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env,
                                  timeout=60, cwd=ROOT)
            assert done.returncode == 0, done.stderr
            return done.stdout

        assert len(kubectl("get", "nodes", "-o", "name").split()) == 20
        kubectl("apply", "-f", "config/examples/sandbox/web.yaml")
        kube = Kube(state / "kubeconfig")
        try:
            def spread() -> dict[str, int] | None:
                pods = [p for p in kube.pods("default", labelSelector="app=web")
                        if p["status"].get("phase") == "Running"]
                if len(pods) != 6:
                    return None
                zones = {n["metadata"]["name"]: n["metadata"]["labels"]
                         ["topology.kubernetes.io/zone"] for n in kube.list("Node")}
                counts: dict[str, int] = {}
                for p in pods:
                    zone = zones[p["spec"]["nodeName"]]
                    counts[zone] = counts.get(zone, 0) + 1
                return counts
            assert wait_until(spread, timeout=60, what="six web pods Running") == {
                "zone-a": 2, "zone-b": 2, "zone-c": 2}
            message = wait_until(
                lambda: kube.scheduler_messages("default", "big", "default-scheduler"),
                timeout=60, what="big's FailedScheduling event")[0]
            assert message == fit_error(
                sandbox.binaries.version, "0/20 nodes are available: 20 Insufficient cpu",
                "0/20 nodes are available: 20 Preemption is not helpful for scheduling.")
            # Each web pod went through the extender (filter, prioritize, bind).
            settings = json.loads((state / "sandbox.json").read_text())
            assert settings["extender"]["url"].startswith("http://127.0.0.1:")
        finally:
            kube.close()

        pod_yaml = tmp_path / "big.yaml"
        pod_yaml.write_text(kubectl("get", "pod", "big", "-o", "yaml"))
        explained = extender("explain", "--kubeconfig", str(state / "kubeconfig"), "--pod",
                             str(pod_yaml), "--node", "node-01", "-o", "json")
        assert explained.returncode == 0, explained.stderr
        verdict = json.loads(explained.stdout)["nodes"]["node-01"]["verdict"]
        # More than the node's whole allocatable: preemption cannot help, as kube-scheduler's
        # "Preemption is not helpful for scheduling" above says too.
        assert verdict == {"plugin": "NodeResourcesFit", "code": "UnschedulableAndUnresolvable",
                           "reasons": ["Insufficient cpu"]}

        status = extender("sandbox", "status", "--state-dir", str(state))
        assert status.returncode == 0 and status.stdout.count("running") == 6, status.stdout
    finally:
        processes = Registry(state).load()
        down = extender("sandbox", "down", "--state-dir", str(state))
    assert down.returncode == 0, down.stderr
    assert down.stdout.startswith("stopped kube-scheduler, extender, node-agent")
    assert processes and not any(p.alive() for p in processes)
    assert extender("sandbox", "status", "--state-dir", str(state)).returncode == 1
