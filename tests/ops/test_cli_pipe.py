"""A reader that goes away early (`| head`) ends the command quietly, as `cat` would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_explain_json_into_a_closed_pipe_prints_no_traceback(tmp_path: Path) -> None:
    # 400 nodes make a reply far larger than a pipe's buffer, so the command is still writing
    # when the reader goes away.
    nodes = [{"kind": "Node", "metadata": {"name": f"node-{i}"},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
             for i in range(400)]
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(json.dumps({"kind": "List", "items": nodes}))
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                               "spec": {"containers": [{"name": "c"}]}}))
    command = [sys.executable, "-m", "extender", "explain", "--pod", str(pod), "--snapshot",
               str(snapshot), "-o", "json"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does once it has its line
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 141
    assert first.startswith(b"{")
    assert "Traceback" not in err and "BrokenPipeError" not in err
