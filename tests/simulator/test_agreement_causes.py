"""Divergences a real run's log shows a race inside the real scheduler caused: found in the log
(`agreementcauses`), named beside each divergence, still counted as divergences.

The runs are real ones (`tests/fixtures/stale-quota/README.md`): CapacityScheduling's quota
still counted a victim when its preemptor was retried on the victim's end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from extender.cli import main
from extender.simulator.agreement import agreement, format_agreement, load_report
from extender.simulator.agreementcauses import STALE_QUOTA, explain, stale_quota_preemptions
from extender.simulator.runview import read_events

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "stale-quota"


def _run(name: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    run = RUNS / name
    return (load_report(run / "sim.json"), load_report(run / "real.json"),
            list(read_events(run / "real.jsonl")))


def _explained(result: dict[str, Any]) -> dict[str, str]:
    return {(d["real"] or d["simulated"])["pod"]: d.get("explained", "")
            for d in result["divergences"]}


def test_each_retry_on_a_stale_quota_is_found_in_the_log() -> None:
    _, _, events = _run("four-divergences")
    found = [(p.preemptor, p.victims, p.ended, round(p.after * 1000))
             for p in stale_quota_preemptions(events)]
    assert found == [("team-b/api-0", ("team-a/analytics-2",), "team-a/analytics-3", 12),
                     ("team-b/api-2", ("team-a/analytics-0",), "team-a/analytics-1", 15)]


def test_every_divergence_of_the_two_runs_is_explained_and_still_counted() -> None:
    sim, real, events = _run("four-divergences")
    result = agreement(sim, real, events)
    assert (result["agree"], result["pods"], result["explained"]) == (3, 7, 4)
    assert _explained(result) == {
        "team-a/analytics-0": "preempted in the real run by team-b/api-2's retry on it",
        "team-b/api-0": ("the real retry 12 ms after team-a/analytics-3 ended was refused by the "
                         "quota, which still counted it, and preempted team-a/analytics-2 as "
                         "well"),
        "team-b/api-1": ("team-a/analytics-2 had already gone in the real run, preempted by "
                         "team-b/api-0's retry on it"),
        "team-b/api-2": ("the real retry 15 ms after team-a/analytics-1 ended was refused by the "
                         "quota, which still counted it, and preempted team-a/analytics-0 as "
                         "well"),
    }
    assert {d["cause"] for d in result["divergences"]} == {STALE_QUOTA}
    text = format_agreement(result).splitlines()
    assert "divergences: 4 (4 explained by a race inside the real scheduler)" in text
    assert text[-2].startswith("stale quota: a race inside the real scheduler: ")
    assert text[-1] == "agreement: 3/7 pods"

    sim, real, events = _run("a-pending-prediction")
    result = agreement(sim, real, events)
    assert (result["agree"], result["explained"]) == (5, 2)
    assert _explained(result)["team-b/api-2"] == (
        "team-a/analytics-1 had already gone in the real run, preempted by team-b/api-1's "
        "retry on it")


def test_without_the_log_nothing_is_explained() -> None:
    sim, real, _ = _run("four-divergences")
    result = agreement(sim, real)
    assert result["explained"] == 0 and not any("cause" in d for d in result["divergences"])
    assert "stale quota" not in format_agreement(result)


def test_only_a_quota_refusal_right_after_the_victims_end_counts() -> None:
    _, _, events = _run("four-divergences")
    # The same retries a second later than the victims' ends: other events may have moved
    # them, and nothing says the quota was stale.
    later = [{**e, "t": e["t"] + 2} if e["action"] in ("attempt", "preempt") and e["t"] > 61
             else e for e in events]
    assert stale_quota_preemptions(later) == []
    # Refused by another plugin: no quota at stake.
    other = [{**e, "message": "0/6 nodes are available: 6 Insufficient cpu."}
             if e["action"] == "attempt" else e for e in events]
    assert stale_quota_preemptions(other) == []


def test_simulate_agreement_with_the_logs_says_why(tmp_path: Path, capsys: Any) -> None:
    run = RUNS / "four-divergences"
    out, page = tmp_path / "agreement.json", tmp_path / "agreement.html"
    assert main(["simulate", "--agreement", str(run / "sim.json"), str(run / "real.json"),
                 "--agreement-events", str(run / "sim.jsonl"), str(run / "real.jsonl"),
                 "--report", str(out), "--html", str(page)]) == 0
    text = capsys.readouterr().out
    assert ("    stale quota: the real retry 12 ms after team-a/analytics-3 ended was refused by "
            "the quota, which still counted it, and preempted team-a/analytics-2 as well") in text
    doc = json.loads(out.read_text())
    assert doc["explained"] == 4 and all(d["cause"] == STALE_QUOTA for d in doc["divergences"])
    html = page.read_text()
    assert "4 explained by a race inside the real scheduler" in html
    assert html.count('class="explained"') == 4 and 'class="cause"' in html


def test_a_pod_preempting_on_a_stale_quota_twice_has_both_explained() -> None:
    def attempt(t: float) -> dict[str, Any]:
        return {"t": t, "action": "attempt", "pod": "b/p", "result": "unschedulable",
                "message": "0/2 nodes are available: Pod b/p is rejected in PreFilter because "
                           "total ElasticQuota used is more than min."}

    events = [attempt(10.0), {"t": 10.001, "action": "preempt", "pod": "b/p", "victims": ["a/x"]},
              {"t": 40.0, "action": "evict", "pod": "a/x", "by": "b/p", "terminated": True},
              attempt(40.012), {"t": 40.013, "action": "preempt", "pod": "b/p", "victims": ["a/y"]},
              {"t": 70.0, "action": "evict", "pod": "a/y", "by": "b/p", "terminated": True},
              {"t": 70.021, "action": "preempt", "pod": "b/p", "victims": ["a/z"]},
              attempt(70.02)]  # logged after its preemption, as the real logs may
    found = stale_quota_preemptions(events)
    assert [(p.victims, p.ended, round(p.after * 1000)) for p in found] == [
        (("a/y",), "a/x", 13), (("a/z",), "a/y", 21)]

    def side(victims: list[str]) -> dict[str, Any]:
        return {"pod": "b/p", "status": "Scheduled", "node": "n", "tiedNodes": [],
                "attempts": 2, "message": None, "victims": victims}

    divergences = [{"differs": ["victims"], "simulated": side(["a/x"]),
                    "real": side(["a/x", "a/y", "a/z"])}]
    assert explain(divergences, found) == 1
    assert divergences[0]["explained"] == (
        "the real retry 13 ms after a/x ended was refused by the quota, which still counted it, "
        "and preempted a/y as well; the real retry 21 ms after a/y ended was refused by the "
        "quota, which still counted it, and preempted a/z as well")
