"""`python -m bench.traffic`: kube-scheduler's windows, and a short run end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import traffic
from bench.traffic import chunk_size_for, num_feasible_nodes_to_find, pending_pods, windows

ROOT = Path(__file__).resolve().parents[2]


def _in_chunk_order(window: list[str], names: list[str], start: int, chunk: int) -> bool:
    """Each chunk's nodes (counted from `start`) in node order within `window`."""
    last: dict[int, int] = {}
    for name in window:
        offset = (names.index(name) - start) % len(names)
        if last.get(offset // chunk, -1) >= offset:
            return False
        last[offset // chunk] = offset
    return True


def test_windows_are_kube_schedulers() -> None:
    # schedule_one.go's numFeasibleNodesToFind with percentageOfNodesToScore unset (adaptive),
    # and framework/parallelize's chunkSizeFor with its default 16 goroutines.
    assert [num_feasible_nodes_to_find(n) for n in (50, 100, 500, 1000, 5000, 6000)] == [
        50, 100, 230, 420, 500, 300]
    assert [chunk_size_for(n) for n in (1, 10, 100, 500, 5000)] == [1, 1, 7, 22, 70]
    names = [f"n{i}" for i in range(5000)]
    plan = windows(names, 40, seed=3)
    assert all(len(w) == 500 for w in plan)
    # Each window starts as many nodes on as the last one looked at, skipping what
    # kube-scheduler's own filters rejected: no two windows are the same list (a remembered
    # list cannot flatter). Two in a row share at most what the last one's unfinished chunks
    # had looked at past that count (kube-scheduler's own overlap).
    assert len({tuple(w) for w in plan}) == 40
    assert len(set(plan[0]) & set(plan[1])) < 2 * 70
    # Listed as the goroutines found them: each chunk in node order, the chunks interleaved.
    assert _in_chunk_order(plan[0], names, 0, 70)
    assert plan[0] != sorted(plan[0], key=names.index)
    small = windows(names[:100], 3, seed=3)
    # Below 100 nodes kube-scheduler sends every node, in the order found: never the same twice.
    assert all(sorted(w, key=names.index) == names[:100] for w in small)
    assert len({tuple(w) for w in small}) == 3
    assert _in_chunk_order(small[0], names[:100], 0, 7)
    every = windows(names[:500], 2, seed=3, percentage=100)
    assert all(sorted(w, key=names.index) == names[:500] for w in every) and every[0] != every[1]


def test_pods_are_distinct() -> None:
    pods = pending_pods(7, 50)
    assert len({p["metadata"]["uid"] for p in pods}) == 50
    assert len({p["metadata"]["name"] for p in pods}) == 50


@pytest.mark.slow
def test_a_short_run_prints_every_verb_and_the_targets(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.traffic", "--nodes", "40", "--cycles", "5", "--warmup", "2",
         "--no-go", "--out-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(next(tmp_path.glob("traffic-*.json")).read_text())
    window = report["rows"][0]["window"]  # the nodes of 40 kube-scheduler's filters pass
    assert 0 < window < 40
    for verb in ("filter", "prioritize", "bind", "cycle (mean)"):
        assert f"| 40 | {window} | {verb} |" in done.stdout
    assert "default policy cycle ≤ 2× the 4-filter policy" in done.stdout
    ours = report["rows"][0]["servers"]["ours"]
    assert ours["filter"]["n"] == ours["prioritize"]["n"] == ours["bind"]["n"] == 5
    assert ours["preempt"]["n"] == 100  # the default count, each found by the dry run
    proposed = report["rows"][0]["preempt_candidates"]
    assert 0 < proposed <= 40 and f"| 40 | {proposed} | preempt |" in done.stdout
    assert set(report["rows"][0]["servers"]) == {"ours", "ours-plain", "ours-default", "floor"}
    assert ours["filter (full list)"]["n"] == 0  # 40 nodes: the window names every node already
    assert "every node named" not in done.stdout


@pytest.mark.slow
def test_every_node_named_where_the_window_is_smaller(tmp_path: Path) -> None:
    """Past 100 nodes kube-scheduler's window is a share of them; the full-list cycles then
    name every node, for distinct pods of their own, each server in turn, a bind each."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.traffic", "--nodes", "130", "--cycles", "3", "--warmup", "1",
         "--full-cycles", "4", "--preempts", "0", "--no-go", "--out-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    row = json.loads(next(tmp_path.glob("traffic-*.json")).read_text())["rows"][0]
    # A window of at most 100 (numFeasibleNodesToFind(130)): fewer where fewer of the 130
    # nodes pass kube-scheduler's filters for its pod; the full list names all 130.
    assert 0 < row["window"] <= 100 and row["windows"] == "feasible"
    assert f"| 130 | {row['window']} | filter |" in done.stdout
    assert "| 130 | 130 | filter, every node named |" in done.stdout
    assert "| 130 | 130 | cycle (mean), every node named |" in done.stdout
    assert row["full_cycles"] == 4
    for name in ("ours", "ours-plain", "ours-default"):
        times = row["servers"][name]
        assert times["filter (full list)"]["n"] == times["bind (full list)"]["n"] == 4
        assert times["filter"]["n"] == 3  # the windowed cycles' own, apart
    assert row["servers"]["floor"]["filter (full list)"]["n"] == 4


def test_blocks_send_every_server_the_same_cycles_in_turns(monkeypatch) -> None:
    """`--block N`: after the warm-up (cycle by cycle), each server answers N measured cycles
    back to back, the same N and in the same order as the others, the first server of each
    turn the next one; times from the warm-up are dropped."""
    calls: list[tuple[str, int]] = []

    def fake_cycle(target, pod, window, suffix=""):  # type: ignore[no-untyped-def]
        calls.append((target.name, pod["i"]))
        target.times["filter" + suffix].append(pod["i"])

    monkeypatch.setattr(traffic, "cycle", fake_cycle)
    servers = [SimpleNamespace(name=n, times={"filter": []}) for n in ("a", "b", "c")]
    pods = [{"i": i} for i in range(6)]
    traffic._interleaved(servers, pods, [["n"]] * 6, 1, "", block=2)  # type: ignore[arg-type]
    assert calls[:3] == [("a", 0), ("b", 0), ("c", 0)]  # the warm-up
    assert calls[3:] == [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("c", 1), ("c", 2),
                         ("b", 3), ("b", 4), ("c", 3), ("c", 4), ("a", 3), ("a", 4),
                         ("c", 5), ("a", 5), ("b", 5)]
    assert all(s.times["filter"] == [1, 2, 3, 4, 5] for s in servers)
    calls.clear()
    traffic._interleaved(servers, pods, [["n"]] * 6, 0, "")  # type: ignore[arg-type]
    assert calls[:6] == [("a", 0), ("b", 0), ("c", 0), ("b", 1), ("c", 1), ("a", 1)]


def test_a_gap_holds_each_request_back_after_the_last_reply() -> None:
    """`--gap`: a server's next request leaves at least the gap after its last reply (as
    kube-scheduler's own plugins run between its calls); the wait is not in the times."""
    import itertools
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    arrivals: list[float] = []

    class Answer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            arrivals.append(time.perf_counter())
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        target = traffic.Target("x", SimpleNamespace(port=server.server_address[1]),  # type: ignore[arg-type]
                                binds=False, gap=0.2)
        elapsed = [target.post("/filter", b"{}")[0] for _ in range(3)]
        target.conn.close()
    finally:
        server.shutdown()
    assert len(arrivals) == 3
    assert all(later - earlier >= 0.2 for earlier, later in itertools.pairwise(arrivals))
    assert all(e < 0.2 for e in elapsed)  # each time is the request's alone, not the wait


def test_a_window_holds_only_the_nodes_kube_schedulers_filters_pass(tmp_path: Path) -> None:
    """kube-scheduler sends an extender only the nodes its own filters passed: a window is
    `numFeasibleNodesToFind` of them, found from where the last cycle stopped looking, which
    moves on past the nodes they rejected too."""
    from bench import generate

    names = [f"n{i}" for i in range(1000)]
    rng = __import__("random").Random(5)
    masks = [[rng.random() < 0.6 for _ in names] for _ in range(6)]
    plan = windows(names, 6, seed=3, feasible=masks)
    assert all(len(w) == 420 for w in plan)  # numFeasibleNodesToFind(1000)
    for mask, window in zip(masks, plan, strict=True):
        assert all(mask[names.index(name)] for name in window)
    # The second window starts past every node the first looked at, passing or not (about
    # 420 / 0.6 of them), give or take the chunks still running when it had enough.
    first = max(names.index(name) for name in plan[0])
    assert 600 < first < 800 and abs(names.index(plan[1][0]) - first) < 2 * 32

    # On a generated cluster: the nodes the default filters pass for each pod, by the engine's
    # row path; a tainted GPU node or a cordoned one is never among them for these pods.
    spec = generate.ClusterSpec(60, 600, generate.DEFAULT_SEED)
    snapshot = tmp_path / "cluster.json"
    generate.write_cluster(snapshot, spec)
    nodes = [generate.node_name(i) for i in range(60)]
    pods = pending_pods(9, 8)
    feasible = traffic.feasible_nodes(snapshot, pods, nodes)
    cluster = json.loads(snapshot.read_text())["items"]
    closed = {o["metadata"]["name"] for o in cluster if o.get("kind") == "Node" and (
        o["spec"].get("unschedulable") or any(
            t.get("effect") == "NoSchedule" and t.get("key") == "nvidia.com/gpu"
            for t in o["spec"].get("taints") or ()))}
    assert closed and all(not mask[nodes.index(name)] for mask in feasible for name in closed)
    assert all(0 < sum(mask) < len(nodes) for mask in feasible)
