"""End to end: our extender in `--kubeconfig` mode against the simulator's API (`--serve-api`).

As a user runs it: `extender simulate --serve-api KUBECONFIG --extender URL …` starts the API
and writes the kubeconfig, then `extender serve --kubeconfig KUBECONFIG` is started and the
simulation proceeds once the extender has observed the cluster, cycle after cycle. The result
must be the in-process run's (same policy, seed and workload): same placements, same
preemptions. The workload has both things an extender told only of binds gets wrong: an
eviction (preemption, with its victim terminating for its grace period) and node events (a
node added, a node cordoned), plus a pod deletion.

The first two tests reproduce the issue's wrong answers with an extender serving a snapshot
(what `--extender` gave before `--serve-api`); the last ones show them gone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from extender.cli import main
from tests.polling import free_port, stop_process, until

from .helpers import DEFAULTS, at, node, pod, write

ROOT = Path(__file__).resolve().parents[2]


def cluster() -> list[dict]:
    # Two full-ish nodes: each runs a 3-cpu low-priority pod.
    return [node("n1", "4", "8Gi"), node("n2", "4", "8Gi"),
            pod("low-1", "3", node_name="n1"), pod("low-2", "3", node_name="n2")]


def workload() -> list[dict]:
    cordoned = node("n1", "4", "8Gi", unschedulable=True)
    return [
        pod("web-1", "1", created=at(0)), pod("web-2", "1", created=at(0)),
        # No room anywhere: preempts a low pod, which terminates for 30 s (its grace period).
        pod("critical", "3", priority=1000, created=at(10)),
        {"kind": "SimulationEvent", "at": "20s", "addNode": node("n3", "4", "8Gi")},
        pod("batch-1", "2", created=at(30)), pod("batch-2", "2", created=at(30)),
        {"kind": "SimulationEvent", "at": "50s", "updateNode": cordoned},
        {"kind": "SimulationEvent", "at": "50s", "deletePod": "default/low-2"},
        pod("late", "1", created=at(60)),
    ]


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    return {"cluster": write(tmp_path / "cluster.json", cluster()),
            "workload": write(tmp_path / "workload.json", workload()),
            "policy": _policy(tmp_path)}


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(DEFAULTS))  # kube-scheduler's default plugins
    return path


def simulate_args(inputs: dict[str, Path], report: Path, *extra: str) -> list[str]:
    return ["simulate", "--cluster", str(inputs["cluster"]), "--workload", str(inputs["workload"]),
            "--policy", str(inputs["policy"]), "--seed", "7", "--report", str(report), *extra]


def in_process(inputs: dict[str, Path], tmp_path: Path) -> dict:
    report = tmp_path / "in-process.json"
    assert main(simulate_args(inputs, report)) == 0
    return json.loads(report.read_text())


def placements(report: dict) -> dict[str, tuple[str, str | None]]:
    return {f"{p['namespace']}/{p['name']}": (p["status"], p["node"]) for p in report["pods"]}


def preemptions(report: dict) -> list[tuple[str, list[str]]]:
    return sorted((f"{p['namespace']}/{p['name']}", p["preempted"])
                  for p in report["pods"] if p["preempted"])


class Extender:
    """`extender serve` as a subprocess on a free loopback port; stopped by its own pid."""

    def __init__(self, tmp_path: Path, *args: str, name: str = "extender",
                 port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"{name}.log"
        self._log = self.log_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "extender", "serve", *args, "--port", str(self.port)],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT)

    def wait_listening(self) -> None:
        import httpx

        def listening() -> bool:
            assert self.proc.poll() is None, self.log_path.read_text()
            try:
                httpx.get(self.url + "/livez", timeout=1)
                return True
            except httpx.TransportError:
                return False

        until(listening, "the extender to listen", 30)

    def stop(self) -> None:
        stop_process(self.proc)
        self._log.close()


@pytest.fixture
def extenders() -> Iterator[list[Extender]]:
    started: list[Extender] = []
    yield started
    for ext in started:
        ext.stop()


def served_run(inputs: dict[str, Path], tmp_path: Path, extenders: list[Extender],
               *flags: str, nodes_form: bool = False) -> tuple[dict, str]:
    """The user's flow: the simulator first (it serves the API and writes the kubeconfig),
    then the extender against that kubeconfig; the simulation waits for it."""
    kubeconfig = tmp_path / "simulator.kubeconfig"
    report = tmp_path / "served.json"
    port = free_port()
    sim_log = (tmp_path / "simulate.log").open("w+")
    sim = subprocess.Popen(
        [sys.executable, "-m", "extender",
         *simulate_args(inputs, report, "--serve-api", str(kubeconfig),
                        "--extender", f"http://127.0.0.1:{port}", *flags)],
        cwd=ROOT, stdout=sim_log, stderr=subprocess.STDOUT)
    try:
        until(lambda: kubeconfig.exists() or sim.poll() is not None, "the kubeconfig", 30)
        assert sim.poll() is None, (tmp_path / "simulate.log").read_text()
        ext = Extender(tmp_path, "--kubeconfig", str(kubeconfig), "--policy", str(inputs["policy"]),
                       *(["--nodes-form"] if nodes_form else []), name="served", port=port)
        extenders.append(ext)
        assert sim.wait(90) == 0, (tmp_path / "simulate.log").read_text() + ext.log_path.read_text()
    finally:
        if sim.poll() is None:
            sim.kill()
            sim.wait(5)
    sim_log.seek(0)
    return json.loads(report.read_text()), sim_log.read()


# ---- the wrong answers, reproduced (an extender that serves a snapshot) -------------------

@pytest.mark.slow
def test_an_extender_told_only_of_binds_disagrees_with_the_cluster(inputs, tmp_path, extenders):
    expected = in_process(inputs, tmp_path)
    offline = Extender(tmp_path, "--snapshot", str(inputs["cluster"]),
                       "--policy", str(inputs["policy"]), name="offline")
    extenders.append(offline)
    offline.wait_listening()
    report = tmp_path / "offline.json"
    assert main(simulate_args(inputs, report, "--extender", offline.url, "--extender-bind")) == 0
    got = json.loads(report.read_text())
    # It still counts the evicted pod and knows nothing of n3: pods the cluster has room for
    # stay pending.
    assert got["totals"]["scheduled"] < expected["totals"]["scheduled"]
    assert placements(got) != placements(expected)
    assert any("told only of binds" in w and "--serve-api" in w for w in got["warnings"])


@pytest.mark.slow
def test_with_whole_nodes_an_unsynced_extender_fails_binds_for_ever(inputs, tmp_path, extenders):
    offline = Extender(tmp_path, "--snapshot", str(inputs["cluster"]), "--nodes-form",
                       "--policy", str(inputs["policy"]), name="offline-nodes")
    extenders.append(offline)
    offline.wait_listening()
    report = tmp_path / "offline-nodes.json"
    # The node added at 20 s passes its filter (the Node comes in the request), but its bind
    # cannot find it: retried at every backoff until the horizon (7 800+ times over 24 h).
    assert main(simulate_args(inputs, report, "--extender", offline.url, "--extender-bind",
                              "--extender-nodes", "--max-time", "30m")) == 0
    got = json.loads(report.read_text())
    stuck = [p for p in got["pods"] if p["message"] == 'node "n3" not found']
    assert stuck and max(p["attempts"] for p in stuck) > 150
    assert got["totals"]["endReason"] == "horizon"


# ---- fixed: the extender watches the simulated cluster --------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("mode", ["node-names", "whole-nodes-and-bind"])
def test_an_extender_in_sync_gives_the_in_process_result(inputs, tmp_path, extenders, mode):
    expected = in_process(inputs, tmp_path)
    flags = ("--extender-nodes", "--extender-bind") if mode == "whole-nodes-and-bind" else ()
    started = time.monotonic()
    got, log = served_run(inputs, tmp_path, extenders, *flags,
                          nodes_form=mode == "whole-nodes-and-bind")
    assert time.monotonic() - started < 60
    # The scenario did what it is for: an eviction, a pod on the node added later, a cordon.
    where = placements(expected)
    assert preemptions(expected) == [("default/critical", ["default/low-1"])]
    assert where["default/critical"] == ("Scheduled", "n3")  # n3 came while low-1 terminated
    assert where["default/batch-2"] == ("Scheduled", "n2")  # in low-2's room, once deleted
    assert where["default/late"][0] == "Scheduled" and where["default/late"][1] != "n1"
    # Same placements, same preemptions; in fact the same report but for the extender calls.
    assert placements(got) == placements(expected)
    assert preemptions(got) == preemptions(expected)
    assert got["pods"] == expected["pods"]
    assert got["totals"] == expected["totals"]
    assert got["warnings"] == expected["warnings"]
    calls = got["extenderCalls"]
    assert calls[f"{extenders[-1].url}/filter"] >= 5 and calls[f"{extenders[-1].url}/preempt"] >= 1
    if mode == "whole-nodes-and-bind":  # every bind went through the extender and the API
        assert calls[f"{extenders[-1].url}/bind"] == expected["totals"]["scheduled"]
    assert "serving the simulated cluster at http://127.0.0.1:" in log


@pytest.mark.slow
def test_a_snapshot_without_uids_gives_the_in_process_result(tmp_path, extenders):
    # A hand-written snapshot has no uids: its pods were served without their spec, so `api`,
    # which must run beside `db`, stayed Pending with the extender in the loop.
    db = pod("db", "1", node_name="n1")
    db["metadata"]["labels"] = {"app": "db"}
    affine = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchLabels": {"app": "db"}}}]}}
    queued = pod("queued", "500m")  # pending in the snapshot: sent to the extender as written
    for raw in (db, queued):
        del raw["metadata"]["uid"]
    inputs = {"cluster": write(tmp_path / "cluster.json", [node("n1", "4", "8Gi"),
                                                           node("n2", "4", "8Gi"), db, queued]),
              "workload": write(tmp_path / "workload.json",
                                [pod("api", "100m", created=at(0), affinity=affine)]),
              "policy": _policy(tmp_path)}
    expected = in_process(inputs, tmp_path)
    where = placements(expected)
    assert where["default/api"] == ("Scheduled", "n1") and where["default/queued"][0] == "Scheduled"
    got, _ = served_run(inputs, tmp_path, extenders, "--extender-nodes")
    assert got["pods"] == expected["pods"]
    assert got["warnings"] == expected["warnings"] == []


def test_an_extender_that_never_starts_stops_the_run_with_a_clear_error(inputs, tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}"
    code = main(simulate_args(inputs, tmp_path / "r.json", "--serve-api",
                              str(tmp_path / "kc.yaml"), "--extender", url,
                              "--extender-start-timeout", "1s"))
    assert code == 3
    err = capsys.readouterr().err
    assert f"the extender at {url} did not observe the simulated cluster's resourceVersion" in err
    assert "within 1s" in err and "--kubeconfig" in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.slow
def test_a_snapshot_extender_is_refused_at_once(inputs, tmp_path, extenders, capsys):
    offline = Extender(tmp_path, "--snapshot", str(inputs["cluster"]),
                       "--policy", str(inputs["policy"]), name="offline")
    extenders.append(offline)
    offline.wait_listening()
    started = time.monotonic()
    code = main(simulate_args(inputs, tmp_path / "r.json", "--serve-api",
                              str(tmp_path / "kc.yaml"), "--extender", offline.url))
    assert code == 3 and time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert "cannot follow the simulated cluster" in err
    assert "answered 400: the sync query needs a watched cluster (--kubeconfig or --in-cluster)" in err
