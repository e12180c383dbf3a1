"""The soak script works end to end for a few seconds: live mode against the loopback API,
all four verbs, pod churn, RSS and cache sizes sampled. No figure is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_soak_runs_briefly_and_reports(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "bench.soak", "--duration", "3", "--warmup", "1",
           "--sample-interval", "0.5", "--nodes", "30", "--pods-per-node", "2", "--candidates", "20",
           "--live-pods", "40", "--out-dir", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (report,) = tmp_path.glob("soak-*.json")
    result = json.loads(report.read_text())
    assert set(result["requests"]) == {"filter", "prioritize", "preempt", "bind"}
    assert all(n > 0 for n in result["requests"].values())
    assert result["failures"] == {}
    assert len(result["samples"]) >= 4 and all(s["rss_mib"] > 0 for s in result["samples"])
    assert result["growth"]["warmup_rss_mib"] > 0
    caches = result["caches_end"]
    assert {"node_memos", "pod_signatures", "remembered_pending_pods", "assumed_pods",
            "binds_in_flight", "deferred_state_changes"} <= set(caches)
    assert "RSS after warm-up" in (tmp_path / report.name).with_suffix(".md").read_text()
