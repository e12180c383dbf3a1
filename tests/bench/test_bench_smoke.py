"""The benchmark runner works end to end on a tiny size against the real `extender serve`.

Only the shape of the result is checked: every case present, positive latencies, req/s and
ratios, 200 replies. No time is ever asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIZES = (5, 20)
FORMS = ("names", "nodes")
VERBS = ("filter", "prioritize", "preempt")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    tmp = tmp_path_factory.mktemp("bench")
    out = tmp / "out"
    cmd = [
        sys.executable, "-m", "bench.run",
        "--sizes", ",".join(map(str, SIZES)), "--nodes", "20", "--pods", "100",
        "--state-nodes", "20", "--state-pods", "100",
        "--max-requests", "6", "--max-seconds", "2", "--min-requests", "2", "--warmup", "1",
        "--concurrency", "1,4", "--decode-runs", "3", "--decode-seconds", "0.2",
        "--ready-timeout", "120", "--out-dir", str(out), "--workdir", str(tmp / "work"),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = sorted(out.glob("*.json"))
    assert len(results) == 1, results
    return json.loads(results[0].read_text()), proc.stdout, results[0]


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0


def test_every_case_is_measured(run: tuple[dict[str, Any], str, Path]) -> None:
    result, _, _ = run
    ids = [c["id"] for c in result["cases"]]
    expected = [f"{v}-{f}-{s}" for f in FORMS for s in SIZES for v in VERBS] + ["bind"]
    # The same filter and prioritize requests for a pod with spread and anti-affinity.
    expected += [f"{v}-names-{s}-spread" for s in SIZES for v in VERBS
                 if v in ("filter", "prioritize") and "names" in FORMS]
    # The load-aware rows: the largest NodeNames prioritize body (no 500 here) against a
    # LeastAllocated-only server and a TargetLoadPacking one reading a loopback load-watcher.
    expected += [f"prioritize-names-{max(SIZES)}-{v}" for v in ("leastallocated", "targetloadpacking")]
    assert sorted(ids) == sorted(expected)
    for case in result["cases"]:
        assert case["reply"]["status"] == 200, (case["id"], case["reply"])
        for conns in ("c1", "c4"):
            server = case["server"][conns]
            assert server["requests"] > 0 and server["errors"] == 0, (case["id"], server)
            assert set(server["statuses"]) == {"200"}, (case["id"], server["statuses"])
            assert _positive(server["rps"]), case["id"]
            for q in ("p50_ms", "p90_ms", "p99_ms"):
                assert _positive(server[q]), (case["id"], conns, q)
        assert _positive(case["peak_rss_kib"]), case["id"]
        for key, ratio in case["ratios"].items():
            assert _positive(ratio), (case["id"], key, ratio)
        assert set(case["ratios"]) >= {"p50_http", "p90_http", "p99_http", "p50_decode",
                                       "rps_c1_http", "rps_c4_http"}


def test_floors_and_state(run: tuple[dict[str, Any], str, Path]) -> None:
    result, _, _ = run
    assert set(result["floors"]) == {c["floor_key"] for c in result["cases"]}
    for key, floor in result["floors"].items():
        assert _positive(floor["decode"]["ms"]), key
        assert floor["decode"]["decoder"] in {"msgspec", "orjson"}
        for conns in ("c1", "c4"):
            assert _positive(floor["http"][conns]["p50_ms"]), (key, conns)
            assert _positive(floor["http"][conns]["rps"]), (key, conns)
    state = result["state"]
    assert (state["nodes"], state["pods"]) == (20, 100)
    assert _positive(state["load_seconds"]) and _positive(state["rss_kib"])
    assert result["machine"]["cpu_model"] and result["machine"]["python"]


def test_names_form_names_only_known_nodes(run: tuple[dict[str, Any], str, Path]) -> None:
    """Every candidate the server was asked about got a verdict or a score."""
    result, _, _ = run
    for case in result["cases"]:
        reply = case["reply"]
        if case["verb"] == "filter":
            assert reply["passed"] + reply["failed"] + reply["unresolvable"] == case["size"], case["id"]
            assert reply["error"] == ""
        elif case["verb"] == "prioritize":
            assert reply["scored"] == case["size"], case["id"]


def test_markdown_table_is_printed_and_written(run: tuple[dict[str, Any], str, Path]) -> None:
    result, stdout, path = run
    table = path.with_suffix(".md").read_text()
    assert table.strip() == stdout.strip()
    assert "| filter | names | 5 |" in table and "| bind |" in table
    assert "| prioritize | names, TargetLoadPacking | 20 |" in table
    assert result["load_aware"]["fetches"] > 0
    assert any(t["target"].startswith("NodeNames 20 prioritize, TargetLoadPacking")
               and t["value"] is not None for t in result["targets"])
    assert result["machine"]["cpu_model"] in table
