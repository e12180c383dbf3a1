"""`extender explain` with a load-aware policy reads the policy's metrics source once, so its
TargetLoadPacking scores follow the nodes' load as the server's would."""

from __future__ import annotations

import json
import time
from pathlib import Path

from extender.cli import main
from tests.loadmetrics.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "tests" / "fixtures" / "filter-names.request.json"


def _policy(tmp_path: Path, address: str) -> Path:
    policy = {"apiVersion": "scheduler-extender/v1", "kind": "ExtenderPolicy",
              "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking", "weight": 1}]}},
              "pluginConfig": [{"name": "TargetLoadPacking", "args": {"watcherAddress": address}}]}
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(policy))
    return path


def _metrics(cpu: dict[str, float]) -> str:
    now = int(time.time())
    return json.dumps({"timestamp": now, "window": {"duration": "15m", "start": now - 900, "end": now},
                       "source": "test", "data": {"NodeMetricsMap": {
                           node: {"metrics": [{"name": "cpu", "type": "CPU", "operator": "AVG",
                                               "rollup": "15m", "value": value}]}
                           for node, value in cpu.items()}}})


def _scores(capsys, *argv: str) -> tuple[dict[str, int | None], list[str]]:  # type: ignore[no-untyped-def]
    assert main(["explain", "--pod", str(POD), "-o", "json", *argv]) == 0
    captured = capsys.readouterr()
    reply = json.loads(captured.out)
    scores = {name: next((s["raw"] for s in node["scores"] if s["plugin"] == "TargetLoadPacking"),
                         None)
              for name, node in reply["nodes"].items() if node["feasible"]}
    return scores, captured.err.splitlines()


def test_explain_scores_the_load_the_source_reports(tmp_path, capsys) -> None:
    with LoopbackServer() as watcher:
        # worker-a1 idle, worker-a2 busy: the idle one is packed towards the 40 % target.
        watcher.answer("/watcher", 200, _metrics({"worker-a1": 0.0, "worker-a2": 90.0}))
        scores, _ = _scores(capsys, "--policy", str(_policy(tmp_path, watcher.url)))
    assert scores["worker-a1"] > 40 > scores["worker-a2"] == 0
    assert all(value == 0 for name, value in scores.items()
               if name not in ("worker-a1", "worker-a2"))  # no metrics: MinNodeScore


def test_an_unreachable_source_is_a_note_not_a_failure(tmp_path, capsys) -> None:
    scores, _ = _scores(capsys, "--policy", str(_policy(tmp_path, "http://127.0.0.1:9")))
    assert scores and set(scores.values()) == {0}


def test_stale_data_is_taken_as_the_server_takes_it(tmp_path, capsys) -> None:
    """A watcher's data older than staleAfterSeconds: the server scores every node 0 for lack of
    data, and says so; explain, reading the same source through the same refresher, too (it
    scored the old load before)."""
    stale = json.loads(_metrics({"worker-a1": 0.0, "worker-a2": 90.0}))
    stale["timestamp"] -= 1000  # the default staleAfterSeconds is 300
    with LoopbackServer() as watcher:
        watcher.answer("/watcher", 200, json.dumps(stale))
        policy = str(_policy(tmp_path, watcher.url))
        scores, _ = _scores(capsys, "--policy", policy)
        assert scores and set(scores.values()) == {0}
        assert main(["explain", "--pod", str(POD), "--policy", policy]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"node metrics read once from watcherAddress {watcher.url}, refreshSeconds 30, "
            "staleAfterSeconds 300: 6 of 6 node(s) without fresh metrics (scored 0 by "
            "TargetLoadPacking)") in out, out


def test_the_refresher_log_is_given_back_as_it_was(tmp_path, capsys) -> None:
    """explain quiets the refresher's log while it reads; a process that goes on (a test
    worker) logs with it as before (its refresher tests found it silenced)."""
    import logging

    log = logging.getLogger("extender.state.loadmetrics")
    before = log.level
    _scores(capsys, "--policy", str(_policy(tmp_path, "http://127.0.0.1:9")))
    assert log.level == before
