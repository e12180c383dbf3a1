"""`extender simulate --agreement` and `--follow`: a simulated run against a real one, pod by
pod (pairing by name or owner, the real node among the simulator's tied best agrees, victims
by identity, attempts within a tolerance) and ties broken toward the real run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from extender.cli import main
from extender.model import k8s
from extender.model.pod import PodView
from extender.simulator.agreement import (
    agreement,
    attempt_tolerance,
    format_agreement,
    pair_pods,
)
from extender.simulator.follow import identity, workload_owner
from tests.simulator.helpers import LEAST_ALLOCATED_ONLY, by_name, node, pod, simulate, write


def _pod(name: str, status: str = "Scheduled", node: str | None = "n1", *, at: float | None = 1.0,
         owner: str | None = None, tied: list[str] | None = None, attempts: int = 1,
         preempted: list[str] | None = None, message: str | None = None) -> dict:
    out = {"namespace": "default", "name": name, "status": status, "node": node,
           "scheduledAtSeconds": at if node else None, "attempts": attempts,
           "preempted": preempted or [], "message": message}
    if owner:
        out["owner"] = owner
    if tied:
        out["tiedNodes"] = tied
    return out


def _report(*pods: dict) -> dict:
    return {"kind": "SimulationReport", "pods": list(pods),
            "totals": {"pods": len(pods), "scheduled": sum(p["status"] == "Scheduled" for p in pods)}}


def test_the_owner_of_a_deployments_pods_is_the_deployment():
    labels = {"pod-template-hash": "5d7c9f"}
    assert workload_owner("ReplicaSet", "web-5d7c9f", labels) == "Deployment/web"
    assert workload_owner("ReplicaSet", "web-5d7c9f", {}) == "ReplicaSet/web-5d7c9f"
    assert workload_owner("Job", "etl", labels) == "Job/etl"
    # Random names pair by owner; StatefulSet and bare pods by name.
    assert identity("ns", "web-5d7c9f-x8k2p", "Deployment/web") == "ns/Deployment/web"
    assert identity("ns", "db-0", "StatefulSet/db") == "ns/db-0"
    assert identity("ns", "solo", None) == "ns/solo"


def test_pods_of_one_owner_pair_in_bind_order():
    sim = [_pod("web-aaaaa", node="n2", at=2.0, owner="Deployment/web"),
           _pod("web-bbbbb", node="n1", at=1.0, owner="Deployment/web"),
           _pod("solo", node="n3")]
    real = [_pod("web-zzzzz", node="n1", at=1.5, owner="Deployment/web"),
            _pod("web-yyyyy", "Pending", None, owner="Deployment/web"),
            _pod("solo", node="n3")]
    pairs = [(s and s["name"], r and r["name"]) for s, r in pair_pods(sim, real)]
    assert pairs == [("web-bbbbb", "web-zzzzz"), ("web-aaaaa", "web-yyyyy"), ("solo", "solo")]
    result = agreement(_report(*sim), _report(*real))
    assert result["agree"] == 2 and result["pods"] == 3
    (d,) = result["divergences"]
    assert d["differs"] == ["outcome", "node"]
    assert (d["simulated"]["pod"], d["real"]["pod"]) == ("default/web-aaaaa", "default/web-yyyyy")


def test_a_real_node_among_the_simulators_tied_best_agrees():
    sim = _report(_pod("a", node="n1", tied=["n1", "n2", "n3"]), _pod("b", node="n1"))
    real = _report(_pod("a", node="n3"), _pod("b", node="n2"))
    result = agreement(sim, real)
    assert result["aspects"]["node"] == 1
    assert result["tiedPlacementsOnOtherNodes"] == 1
    assert [d["real"]["pod"] for d in result["divergences"]] == ["default/b"]
    text = format_agreement(result)
    assert text.splitlines()[-1] == "agreement: 1/2 pods"
    assert "default/b [node]" in text and "simulated: Scheduled on n1" in text


def test_a_divergence_says_when_each_side_placed_its_pod_and_which_pod_it_was(tmp_path):
    # Pods a controller named pair by owner: each side's own pod is named where it is not
    # the one the divergence is listed under, and each placement carries its moment.
    sim = _report(_pod("web-aaaaa", node="n1", at=120.44, owner="Deployment/web"))
    real = _report(_pod("web-zzzzz", node="n2", at=122.61, owner="Deployment/web"),)
    result = agreement(sim, real)
    (d,) = result["divergences"]
    assert (d["simulated"]["scheduledAtSeconds"], d["real"]["scheduledAtSeconds"]) == (120.44, 122.61)
    lines = format_agreement(result).splitlines()
    assert lines[lines.index("  default/web-zzzzz [node]") + 1:][:2] == [
        "    simulated: Scheduled on n1 at 120.4 s [default/web-aaaaa]",
        "    real:      Scheduled on n2 at 122.6 s"]
    pending = agreement(_report(_pod("solo", "Pending", None, message="0/2 nodes")),
                        _report(_pod("solo", node="n1", at=3.0)))
    assert "    simulated: Pending on -: 0/2 nodes" in format_agreement(pending).splitlines()
    from extender.simulator.agreementhtml import agreement_html

    html = agreement_html(result, ["simulated", "real"])
    assert "Scheduled · n1 at 120.4 s<br>as default/web-aaaaa" in html
    assert "Scheduled · n2 at 122.6 s<br>1 attempt(s)" in html


def test_victims_compare_by_identity_and_attempts_within_the_tolerance():
    sim = _report(_pod("urgent", preempted=["default/low-abcde"], attempts=2),
                  _pod("low-abcde", "Preempted", owner="Deployment/low"))
    real = _report(_pod("urgent", preempted=["default/low-vwxyz"], attempts=3),
                   _pod("low-vwxyz", "Preempted", owner="Deployment/low"))
    result = agreement(sim, real)
    assert (result["agree"], result["preemptions"], result["preemptionsAgree"]) == (2, 1, 1)
    assert result["aspects"]["attempts"] == 2
    other = _report(_pod("urgent", preempted=["default/solo"], attempts=9),
                    _pod("solo", "Preempted"))
    result = agreement(sim, other)
    assert result["preemptionsAgree"] == 0
    assert result["attemptsApart"] == [{"pod": "default/urgent", "simulated": 2, "real": 9}]
    assert [attempt_tolerance(a, b) for a, b in ((1, 1), (2, 3), (8, 10), (40, 30))] == [1, 1, 2, 10]


def _three_nodes() -> list[dict]:
    return [node(f"n{i}", "4", "8Gi") for i in (1, 2, 3)]


def test_the_report_names_the_tied_nodes_and_follow_takes_the_real_one(tmp_path):
    pods = [pod("p", "1")]
    _, plain = simulate(tmp_path, _three_nodes(), pods, seed=0)
    (p,) = plain["pods"]
    assert p["tiedNodes"] == ["n1", "n2", "n3"]
    real = {"kind": "SimulationReport", "pods": [_pod("p", node=next(
        n for n in ("n3", "n2", "n1") if n != p["node"]))]}
    from extender.simulator.follow import Follow

    follow = Follow(real)
    _, followed = simulate(tmp_path, _three_nodes(), pods, seed=0, follow=follow)
    assert by_name(followed)["p"]["node"] == real["pods"][0]["node"] != p["node"]
    assert follow.taken == 1
    # A real node that is not tied for the top score is not taken.
    busy = [node("n1", "4", "8Gi"), node("n2", "4", "8Gi"), pod("x", "2", node_name="n2")]
    follow = Follow({"pods": [_pod("p", node="n2")]})
    _, kept = simulate(tmp_path, busy, pods, seed=0, follow=follow)
    assert by_name(kept)["p"]["node"] == "n1" and "tiedNodes" not in by_name(kept)["p"]
    assert follow.taken == 0


def _replica(name: str) -> PodView:
    raw = pod(name, "1")
    raw["metadata"]["labels"] = {"pod-template-hash": "5d7c9f"}
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                           "name": "web-5d7c9f", "uid": "rs", "controller": True}]
    return PodView.from_k8s(k8s.convert(raw, k8s.Pod))


def test_follow_takes_the_real_node_bound_closest_in_time():
    # A Deployment's first pod went to n2 at 1 s; the replacement of a preempted one went to
    # n1 at 100 s. Both pods share one identity: at 1 s the tie goes to n2 (not to the
    # replacement's n1, even where n1 is the simulator's own pick), and n1 is left for the
    # replacement.
    from extender.simulator.follow import Follow

    real = {"pods": [_pod("web-aaaaa", node="n2", at=1.0, owner="Deployment/web"),
                     _pod("web-bbbbb", node="n1", at=100.0, owner="Deployment/web")]}
    follow = Follow(real)
    assert follow.choose(_replica("web-xxxxx"), ["n1", "n2", "n3"], "n1", 1.2) == "n2"
    assert follow.choose(_replica("web-yyyyy"), ["n1", "n3"], "n1", 100.4) is None  # its own
    assert follow.taken == 1
    assert follow.choose(_replica("web-zzzzz"), ["n1", "n2"], "n1", 101.0) is None  # used up
    # Where the own pick is as close as another tied node, the own pick stays.
    follow = Follow({"pods": [_pod("web-aaaaa", node="n2", at=5.0, owner="Deployment/web"),
                              _pod("web-bbbbb", node="n1", at=5.0, owner="Deployment/web")]})
    assert follow.choose(_replica("web-xxxxx"), ["n1", "n2"], "n1", 4.0) is None
    assert follow.choose(_replica("web-yyyyy"), ["n1", "n2"], "n1", 4.0) == "n2"


def test_follow_counts_each_node_a_pod_preempted_on():
    # The real web pod preempted on n1, lost that node before its victim left, and preempted
    # again on n2: its victims lie on two nodes, two preemptions to follow (only the first
    # was kept, so the simulation's second one went where it chose itself).
    from extender.simulator.follow import Follow

    real = {"pods": [_pod("web-aaaaa", node="n2", at=30.0, owner="Deployment/web",
                          preempted=["default/low-1", "default/low-2", "default/low-3"]),
                     _pod("low-1", "Preempted", node="n1"), _pod("low-2", "Preempted", node="n2"),
                     _pod("low-3", "Preempted", node="n2")]}
    follow = Follow(real)
    assert dict(follow.preemptions["default/Deployment/web"]) == {"n1": 1, "n2": 1}
    first = follow.choose_preemption(_replica("web-xxxxx"), "n3", lambda n: f"victims on {n}")
    second = follow.choose_preemption(_replica("web-xxxxx"), "n3", lambda n: f"victims on {n}")
    assert (first, second) == (("n1", "victims on n1"), ("n2", "victims on n2"))
    assert follow.choose_preemption(_replica("web-xxxxx"), "n3", lambda n: "v") is None
    assert follow.preemptions_taken == 2


def test_follow_preempts_where_the_real_run_did(tmp_path):
    cluster = [node("n1", "2", "8Gi"), node("n2", "2", "8Gi"),
               pod("low-1", "2", priority=1, node_name="n1"),
               pod("low-2", "2", priority=1, node_name="n2")]
    urgent = [pod("urgent", "2", priority=100)]
    _, plain = simulate(tmp_path, cluster, urgent, seed=0)
    own = by_name(plain)["urgent"]["preempted"]
    other = "default/low-2" if own == ["default/low-1"] else "default/low-1"
    real = {"pods": [_pod("urgent", node="n2" if other.endswith("2") else "n1",
                          preempted=[other]),
                     _pod(other.split("/")[1], "Preempted", node="n2" if other.endswith("2")
                          else "n1")]}
    from extender.simulator.follow import Follow

    follow = Follow(real)
    _, followed = simulate(tmp_path, cluster, urgent, seed=0, follow=follow)
    assert by_name(followed)["urgent"]["preempted"] == [other]
    assert follow.preemptions_taken == 1
    result = agreement(followed, {"kind": "SimulationReport", **real,
                                  "totals": {}})
    assert result["preemptionsAgree"] == 1


def _files(tmp_path: Path) -> tuple[Path, Path]:
    sim = tmp_path / "sim.json"
    real = tmp_path / "real.json"
    sim.write_text(json.dumps(_report(_pod("a", node="n1", tied=["n1", "n2"]), _pod("b"))))
    real.write_text(json.dumps(_report(_pod("a", node="n2"), _pod("b", "Pending", None,
                                                                   message="0/2 nodes are available: 2 Insufficient cpu."))))
    return sim, real


def test_simulate_agreement_prints_report_and_page(tmp_path, capsys):
    sim, real = _files(tmp_path)
    out = tmp_path / "agreement.json"
    html = tmp_path / "agreement.html"
    assert main(["simulate", "--agreement", str(sim), str(real), "--report", str(out),
                 "--html", str(html)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[-1] == "agreement: 1/2 pods"
    assert "real:      Pending on -: 0/2 nodes are available: 2 Insufficient cpu." in text
    doc = json.loads(out.read_text())
    assert doc["kind"] == "SimulationAgreement" and (doc["agree"], doc["pods"]) == (1, 2)
    page = html.read_text()
    # The divergences come first, before the two runs.
    assert page.index('id="agreement-pods"') < page.index('id="timelines"')
    assert 'data-pod="default/b"' in page and "agreement: 1/2 pods" in page


def test_the_agreement_page_draws_both_runs_from_their_events(tmp_path, capsys):
    sim, real = _files(tmp_path)
    logs = []
    for side, node_name in (("sim", "n1"), ("real", "n2")):
        log = tmp_path / f"{side}.jsonl"
        log.write_text("\n".join(json.dumps(e) for e in (
            {"t": 0, "action": "arrive", "pod": "default/a", "priority": 0},
            {"t": 0.5, "action": "bind", "pod": "default/a", "node": node_name},
            {"t": 1, "action": "end", "reason": "settled"})) + "\n")
        logs.append(str(log))
    page = tmp_path / "page.html"
    assert main(["simulate", "--agreement", str(sim), str(real), "--agreement-events", *logs,
                 "--html", str(page)]) == 0
    html = page.read_text()
    assert "Rendered from the report alone" not in html
    assert html.count('data-pod="default/a"') >= 2  # a placement mark in each timeline
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["simulate", "--agreement", str(sim), str(real), "--agreement-events",
                 logs[0], str(bad), "--html", str(page)]) == 2
    assert "--agreement-events: " in capsys.readouterr().err
    missing = tmp_path / "nope.jsonl"
    assert main(["simulate", "--agreement", str(sim), str(real), "--agreement-events",
                 logs[0], str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"extender simulate: --agreement-events: {missing}: No such file or directory\n")
    # The simulator samples its queues, a real run does not: the logs given the other way
    # round are refused, where each timeline was drawn from the other run's log.
    sampled = tmp_path / "sampled.jsonl"
    sampled.write_text(Path(logs[0]).read_text() + json.dumps(
        {"t": 0.2, "action": "queues", "active": 1, "backoff": 0, "unschedulable": 0,
         "pending": 1}) + "\n")
    assert main(["simulate", "--agreement", str(sim), str(real), "--agreement-events",
                 logs[1], str(sampled)]) == 2
    assert "the first log is a real run's and the second a simulated one's" in \
        capsys.readouterr().err
    assert main(["simulate", "--agreement", str(sim), str(real), "--agreement-events",
                 str(sampled), logs[1]]) == 0


def test_simulate_agreement_refuses_what_is_not_a_report(tmp_path, capsys):
    sim, _ = _files(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "SimulationComparison"}')
    assert main(["simulate", "--agreement", str(sim), str(bad)]) == 2
    assert "bad.json: not a SimulationReport" in capsys.readouterr().err
    assert main(["simulate", "--agreement", str(sim), str(tmp_path / "none.json")]) == 2
    assert "none.json: No such file or directory" in capsys.readouterr().err


def test_simulate_still_requires_its_inputs(tmp_path, capsys):
    policy = write(tmp_path / "p.json", [])
    assert main(["simulate", "--policy", str(policy)]) == 2
    assert "the following arguments are required: --cluster, --workload" in capsys.readouterr().err


def test_follow_refuses_a_file_that_is_not_a_report(tmp_path, capsys):
    cluster = write(tmp_path / "c.json", _three_nodes())
    workload = write(tmp_path / "w.json", [pod("p", "1")])
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(LEAST_ALLOCATED_ONLY))
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--policy", str(policy), "--follow", str(bad)]) == 2
    assert f"extender simulate: --follow: {bad}: not a SimulationReport" in capsys.readouterr().err
    # A simulated run's report is no real run to follow.
    simulated = tmp_path / "sim.json"
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--policy", str(policy), "--report", str(simulated)]) == 0
    capsys.readouterr()
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--policy", str(policy), "--follow", str(simulated)]) == 2
    assert capsys.readouterr().err == (
        f"extender simulate: --follow: {simulated} is a simulated run's report: --follow takes "
        "a real run's (extender simulate --on-sandbox --report)\n")


def _followed_inputs(tmp_path: Path, cycle_seconds: dict[str, float], *extra: str) -> dict[str, Any]:
    """The simulation's `inputs` following a real report whose replay measured
    `cycle_seconds` (`inputs.onSandbox.cycleSeconds`), with `extra` flags."""
    cluster = write(tmp_path / "c.json", _three_nodes())
    workload = write(tmp_path / "w.json", [pod("p", "1")])
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(LEAST_ALLOCATED_ONLY))
    real = _report(_pod("p", node="n1"))
    real["inputs"] = {"onSandbox": {"cycleSeconds": cycle_seconds}}
    real_path = tmp_path / "real.json"
    real_path.write_text(json.dumps(real))
    out = tmp_path / "sim.json"
    assert main(["simulate", "--cluster", str(cluster), "--workload", str(workload),
                 "--policy", str(policy), "--follow", str(real_path), "--report", str(out),
                 *extra]) == 0
    return json.loads(out.read_text())["inputs"]


def test_follow_takes_the_real_runs_cycle_durations(tmp_path):
    # The replay measures how long the real scheduler's failed and preempting cycles took
    # (`inputs.onSandbox.cycleSeconds`); --follow runs the simulation's cycles of those kinds
    # as long, unless given; a cycle that places its pod keeps --cycle-cost.
    def inputs(measured: dict[str, float], *extra: str) -> tuple[float, float, float]:
        got = _followed_inputs(tmp_path, measured, *extra)
        return got["cycleCostSeconds"], got["failureCostSeconds"], got["preemptionCostSeconds"]

    measured = {"failure": 0.0093, "preemption": 0.0423}
    assert inputs(measured) == (0.001, 0.0093, 0.0423)
    assert inputs(measured, "--failure-cost", "5ms") == (0.001, 0.005, 0.0423)
    assert inputs({"failure": 0.0093}) == (0.001, 0.0093, 0.0093)  # too few preemptions


def test_follow_takes_how_the_real_preemption_cycles_grew(tmp_path):
    # Where the replay drew a line through its preemption cycles against the pods nominated
    # (`preemptionBase`, `preemptionPerNominated`), --follow runs them on that line, not at
    # the median; --preemption-cost or --preemption-cost-per-nominated given, as given.
    measured = {"failure": 0.0093, "preemption": 0.0423, "preemptionBase": 0.0187,
                "preemptionPerNominated": 0.0003521}

    def inputs(*extra: str) -> tuple[float, float | None]:
        got = _followed_inputs(tmp_path, measured, *extra)
        return got["preemptionCostSeconds"], got.get("preemptionCostPerNominatedSeconds")

    assert inputs() == (0.0187, 0.0003521)
    assert inputs("--preemption-cost", "40ms") == (0.04, None)
    assert inputs("--preemption-cost-per-nominated", "1ms") == (0.0423, 0.001)
    assert inputs("--preemption-cost", "40ms", "--preemption-cost-per-nominated", "1ms") == (
        0.04, 0.001)
    # The failed cycles' line likewise.
    measured.update({"failureBase": 0.0043, "failurePerNominated": 0.0001249})
    got = _followed_inputs(tmp_path, measured)
    assert (got["failureCostSeconds"], got["failureCostPerNominatedSeconds"],
            got["preemptionCostSeconds"], got["preemptionCostPerNominatedSeconds"]) == (
        0.0043, 0.0001249, 0.0187, 0.0003521)
    got = _followed_inputs(tmp_path, measured, "--failure-cost", "5ms")
    assert (got["failureCostSeconds"], got.get("failureCostPerNominatedSeconds")) == (0.005, None)


def test_follow_stops_where_the_real_run_stopped_watching(tmp_path, capsys):
    # big (3 cpu) fits nowhere until node m joins at 400 s; the real run stopped watching at
    # 120 s, with big pending. Followed, the simulation stops there too (big pending, compared
    # on the same time), unless --max-time says otherwise.
    cluster = write(tmp_path / "c.json", _three_nodes()[:1])
    workload = write(tmp_path / "w.json", [
        pod("big", "6"), {"kind": "SimulationEvent", "at": "400s", "addNode": node("m", "8", "8Gi")}])
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(LEAST_ALLOCATED_ONLY))
    real = _report(_pod("big", "Pending", None))
    real["totals"]["virtualTimeSeconds"] = 120.5
    real_path = tmp_path / "real.json"
    real_path.write_text(json.dumps(real))
    common = ["simulate", "--cluster", str(cluster), "--workload", str(workload),
              "--policy", str(policy), "--follow", str(real_path), "--no-progress", "--report"]
    out = tmp_path / "sim.json"
    assert main([*common, str(out)]) == 0
    report = json.loads(out.read_text())
    assert by_name(report)["big"]["status"] == "Pending"
    assert (report["totals"]["virtualTimeSeconds"], report["totals"]["endReason"]) == (
        120.5, "horizon")
    assert "(horizon: truncated where the followed run ended)" in capsys.readouterr().out
    assert main([*common, str(out), "--max-time", "0"]) == 0
    report = json.loads(out.read_text())
    assert (by_name(report)["big"]["status"], by_name(report)["big"]["node"]) == ("Scheduled", "m")
    assert "(settled)" in capsys.readouterr().out


def _recorded(report: dict, on_sandbox: bool) -> dict:
    report["inputs"] = {"onSandbox": {"kubeScheduler": "1.37.2"}} if on_sandbox else {"profile": {}}
    return report


def test_two_real_runs_compare_with_each_other_node_for_node(tmp_path, capsys):
    # The real scheduler against itself: a real report names no tied best, so only the same
    # node agrees; the text and the page name each side for what it is.
    first = tmp_path / "real-1.json"
    second = tmp_path / "real-2.json"
    first.write_text(json.dumps(_recorded(_report(_pod("a", node="n1"), _pod("b", node="n2")), True)))
    second.write_text(json.dumps(_recorded(_report(_pod("a", node="n1"), _pod("b", node="n3")), True)))
    page = tmp_path / "page.html"
    assert main(["simulate", "--agreement", str(first), str(second), "--html", str(page)]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0] == "pods compared: 2 (first real run 2, second real run 2)"
    assert "a node agrees only where it is the same node" in lines[1]
    assert "    first real run:  Scheduled on n2 at 1.0 s" in lines
    assert "    second real run: Scheduled on n3 at 1.0 s" in lines
    assert lines[-1] == "agreement: 1/2 pods"
    html = page.read_text()
    assert "first real run: real-1.json" in html and "a real kube-scheduler&#x27;s run against another" in html
    # Two runs' reports of one name are told apart by their paths, as --compare tells policies.
    for run in ("run-a", "run-b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "real.json").write_text(first.read_text())
    run_a, run_b = tmp_path / "run-a" / "real.json", tmp_path / "run-b" / "real.json"
    assert main(["simulate", "--agreement", str(run_a), str(run_b), "--html", str(page)]) == 0
    html = page.read_text()
    assert f"first real run: {run_a}" in html and f"second real run: {run_b}" in html


def test_a_simulation_and_a_real_run_in_either_order_are_named_as_they_are():
    sim = _recorded(_report(_pod("a", node="n1", tied=["n1", "n2"])), False)
    real = _recorded(_report(_pod("a", node="n2")), True)
    assert agreement(sim, real)["sides"] == ["simulated", "real"]
    assert agreement(sim, real)["agree"] == 1  # the real node is among the tied best
    swapped = agreement(real, sim)
    assert swapped["sides"] == ["real", "simulated"] and swapped["agree"] == 0
    text = format_agreement(swapped)
    assert "the first report is a real run" in text and "    simulated: Scheduled on n1" in text
    assert format_agreement(agreement(sim, sim)).startswith(
        "pods compared: 1 (first simulation 1, second simulation 1)")
