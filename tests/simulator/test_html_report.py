"""The HTML report: one self-contained page, its timeline, rejection counts and drill-down,
from the demo run's report and the demo's event lines (tests/simulator/demo_events.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from extender.engine.policy import load_policy
from extender.engine.profile import build_profile
from extender.simulator.htmlchart import _step_series
from extender.simulator.htmlreport import (
    EventsError,
    collect,
    events_from_report,
    read_events,
    render_html,
    timeline_svg,
)
from extender.simulator.loop import Simulation, SimulationConfig
from extender.simulator.report import build_report
from extender.simulator.workload import load_workload
from extender.state.snapshot import load_snapshot

from .demo_events import BATCH_4_MESSAGE, demo_events, demo_events_jsonl
from .htmltree import parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "config" / "examples"
DEMO_PODS = ["default/batch-2", "default/batch-4", "default/critical-job", "default/web-3",
             "default/web-4", "default/web-5"]


def marks(svg, kind: str) -> list:
    """The timeline's marks of one kind (not the legend's swatches)."""
    return [m for m in svg.find_all(cls="mark") if kind in m.classes]


PLACED = {"default/web-3", "default/web-4", "default/web-5", "default/critical-job",
          "default/batch-4"}


@pytest.fixture(scope="module")
def demo_report() -> dict:
    profile = build_profile(load_policy(ROOT / "config" / "policy.yaml"))
    sim = Simulation(load_snapshot(EXAMPLES / "cluster.json"), profile,
                     load_workload(EXAMPLES / "workload.yaml"), SimulationConfig())
    return build_report(sim.run(), profile)


@pytest.fixture(scope="module")
def page(demo_report):
    return render_html(demo_report, demo_events())


def test_one_self_contained_file(page):
    doc = parse(page)
    assert page.startswith("<!DOCTYPE html>")
    # Nothing is fetched: no link, src, or remote URL; the CSP forbids any other request.
    assert not doc.find_all("link") and not doc.find_all("img") and not doc.find_all("iframe")
    assert not [e for e in doc.iter() if "src" in e.attrs or e.attrs.get("href", "#")[:1] not in "#"]
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", page))
    assert urls == {"http://www.w3.org/2000/svg"}  # the SVG namespace, never fetched
    assert "@import" not in page and "url(" not in page
    csp = doc.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert csp.startswith("default-src 'none';")
    assert len(doc.find_all("style")) == 1 and len(doc.find_all("script")) == 1
    assert not doc.find("script").attrs  # inline, no src


def test_the_timeline_marks_placements_and_preemptions_by_priority(page):
    svg = parse(page).find("svg", id="timeline")
    assert svg.attrs["data-placements"] == "5" and svg.attrs["data-preemptions"] == "1"
    placements = marks(svg, "placement")
    assert len(placements) == 5
    assert {m.attrs["data-pod"] for m in placements} == PLACED
    assert {m.attrs["data-pod"]: m.attrs["data-t"] for m in placements} == {
        "default/web-3": "0.001", "default/web-4": "0.002", "default/web-5": "0.003",
        "default/critical-job": "150.002", "default/batch-4": "300.001"}
    [preemption] = marks(svg, "preemption")
    assert (preemption.attrs["data-pod"], preemption.attrs["data-priority"],
            preemption.attrs["data-t"]) == ("default/critical-job", "1000", "120.001")
    assert "default/batch-2" in preemption.text()  # the tooltip names the victims
    # One eviction: the `terminated` line that follows it is not a second mark.
    [eviction] = marks(svg, "eviction")
    assert (eviction.attrs["data-pod"], eviction.attrs["data-priority"]) == ("default/batch-2", "100")
    assert len(marks(svg, "arrival")) == 5
    # A row per priority, highest on top.
    marks_panel = svg.find("g", id="panel-marks")
    ticks = [t.text() for t in marks_panel.find_all("text", cls="tick") if t.attrs.get("text-anchor") == "end"]
    assert ticks == ["1000", "100", "0"]
    ys = {m.attrs["data-pod"]: float(m.attrs["cy"]) for m in placements}
    assert ys["default/critical-job"] < ys["default/batch-4"]  # priority 1000 above 0
    # Three binds in the same millisecond stay three visible marks (stacked, not on top).
    assert len({(m.attrs["cx"], m.attrs["cy"]) for m in placements
                if m.attrs["data-pod"].startswith("default/web-")}) == 3


def test_every_mark_links_to_its_pod(page):
    doc = parse(page)
    ids = {d.attrs["id"]: d.attrs["data-pod"] for d in doc.find_all("details", cls="pod")}
    links = [a for a in doc.find("svg", id="timeline").find_all("a")]
    assert len(links) == 5 + 5 + 1 + 1  # arrivals, placements, preemption, eviction
    for a in links:
        [mark] = [c for c in a.children if "mark" in c.classes]
        assert ids[a.attrs["href"][1:]] == mark.attrs["data-pod"]


def test_queue_and_allocation_series(page):
    svg = parse(page).find("svg", id="timeline")
    queues = svg.find("g", id="panel-queues")
    series = {p.attrs["data-series"]: p for p in queues.find_all("polyline")}
    assert list(series) == ["pending", "active", "backoff", "unschedulable"]
    assert len(queues.find_all("polygon", cls="area")) == 1  # pending, shaded
    # The y axis runs to the peak (the three web pods at 0 s): ticks 0 to 3.
    assert [t.text() for t in queues.find_all("text", cls="tick")
            if t.attrs.get("text-anchor") == "end"] == ["0", "1", "2", "3"]
    alloc = svg.find("g", id="panel-allocation")
    assert [p.attrs["data-series"] for p in alloc.find_all("polyline")] == [
        "cpuAllocated", "memoryAllocated"]
    # Step lines: the unschedulable pool holds batch-4 from 60.001 s, critical-job too from
    # 120.001 s; at 150.001-150.003 s (one pixel) it goes 2 → 0 → 1: the line takes the
    # pixel's time-weighted mean, a faint stroke its range; 0 from the NodeAdd at 300 s.
    ticks = {t.text(): float(t.attrs["y"]) - 4 for t in queues.find_all("text", cls="tick")
             if t.attrs.get("text-anchor") == "end"}

    def value(y: float) -> float:
        return round(3 * (ticks["0"] - y) / (ticks["0"] - ticks["3"]), 1)

    points = [tuple(map(float, p.split(","))) for p in series["unschedulable"].attrs["points"].split()]
    xs = [x for x, _ in points]
    assert xs == sorted(xs)
    values = [value(y) for _, y in points]
    assert [v for i, v in enumerate(values) if i == 0 or v != values[i - 1]] == [0, 1, 2, 1.5, 1, 0]
    [stroke] = queues.find_all("path", cls="range", data_series="unschedulable")
    lo, hi = map(float, re.fullmatch(r"M[\d.]+ ([\d.]+)V([\d.]+)", stroke.attrs["d"]).groups())
    assert (value(lo), value(hi)) == (2, 0)
    # Time axis: 0 to 5 minutes.
    labels = [t.text() for t in queues.find_all("text", cls="tick") if t.attrs.get("text-anchor") == "middle"]
    assert labels == ["0", "1m", "2m", "3m", "4m", "5m"]
    [change] = svg.find_all("line", cls="nodechange")
    assert (change.attrs["data-node"], change.attrs["data-change"]) == ("worker-d1", "add")
    assert "settled" in svg.find("line", cls="end").text()


def test_rejections_by_plugin_and_reason(page):
    doc = parse(page)
    assert "8 attempts: 5 scheduled, 3 unschedulable." in doc.find("section", id="rejections").text()
    rows = [(r.attrs["data-plugin"], int(r.attrs["data-nodes"]), int(r.attrs["data-attempts"]),
             int(r.attrs["data-pods"]))
            for r in doc.find("table", id="plugin-rejections").find_all("tr") if "data-plugin" in r.attrs]
    assert rows == [("NodeResourcesFit", 9, 3, 2), ("NodeAffinity", 3, 1, 1),
                    ("NodeUnschedulable", 3, 3, 2), ("TaintToleration", 3, 3, 2)]
    reasons = {r.children[0].text(): int(r.attrs["data-nodes"])
               for r in doc.find("table", id="reason-rejections").find_all("tr") if "data-nodes" in r.attrs}
    assert reasons == {"Insufficient cpu": 7, "node(s) didn't match Pod's node affinity/selector": 3,
                       "node(s) had untolerated taint(s)": 3, "node(s) were unschedulable": 3,
                       "Insufficient memory": 2, "Too many pods": 2}


def test_per_pod_drill_down_of_every_attempt(page, demo_report):
    doc = parse(page)
    pods = doc.find_all("details", cls="pod")
    assert [d.attrs["data-pod"] for d in pods] == DEMO_PODS
    assert len({d.attrs["id"] for d in pods}) == 6
    by_pod = {d.attrs["data-pod"]: d for d in pods}
    attempts = by_pod["default/batch-4"].find_all("tr", cls="attempt")
    assert [(a.attrs["data-cycle"], [c.text() for c in a.children[:4]]) for a in attempts] == [
        ("4", ["60.001 s", "attempt 4", "unschedulable", "–"]),
        ("7", ["150.003 s", "attempt 7", "unschedulable", "–"]),
        ("8", ["300.001 s", "attempt 8", "scheduled", "worker-d1"])]
    assert attempts[0].find("code").text() == BATCH_4_MESSAGE
    assert "Insufficient cpu ×3" in attempts[0].text() and "NodeResourcesFit ×4" in attempts[0].text()
    # The other events of the pod, in order, between its attempts.
    kinds = [r.children[1].text() for r in by_pod["default/batch-4"].find("tbody").children]
    assert kinds == ["arrive", "move", "attempt 4", "move", "move", "attempt 7", "move", "move",
                     "attempt 8", "bind"]
    assert "unschedulable → active (NodeAdd)" in by_pod["default/batch-4"].text()
    victim = by_pod["default/batch-2"]
    assert victim.attrs["data-status"] == "Preempted"
    assert [r.children[1].text() for r in victim.find("tbody").children] == ["evict", "evict"]
    assert "from worker-b2 by default/critical-job (grace period 30 s)" in victim.text()
    assert "terminated on worker-b2" in victim.text()
    critical = by_pod["default/critical-job"]
    assert len(critical.find_all("tr", cls="attempt")) == 2
    assert "victims: default/batch-2" in critical.text()
    summary = [s.text() for s in critical.find("summary").children]
    assert summary[:4] == ["default/critical-job", "1000", "Scheduled", "worker-b2"]


def test_same_inputs_same_bytes_and_events_files(tmp_path, demo_report, page):
    assert render_html(demo_report, demo_events()) == page
    path = tmp_path / "events.jsonl"
    path.write_text(demo_events_jsonl())
    assert list(read_events(path)) == demo_events()
    assert render_html(demo_report, read_events(path)) == page  # any iterable
    path.write_text('{"t": 0, "action": "arrive", "pod": "a/b"}\n\n[1, 2]\n')
    with pytest.raises(EventsError, match=r"events.jsonl:3: not an event"):
        list(read_events(path))
    path.write_text('{"t": 0,\n')
    with pytest.raises(EventsError, match=r"events.jsonl:1: not JSON"):
        list(read_events(path))


def test_text_is_escaped(demo_report):
    events = [{"t": 1.0, "action": "attempt", "pod": "default/web-3", "cycle": 1,
               "result": "error", "message": 'bind: <img src=x>"no"</img> & more', "plugins": {},
               "reasons": {"a<b": 1}}]
    text = render_html(demo_report, events)
    assert "<img" not in text and "&lt;img src=x&gt;&quot;no&quot;&lt;/img&gt; &amp; more" in text
    assert "a&lt;b" in text
    row = parse(text).find("tr", cls="attempt")
    assert row.find("code").text() == 'bind: <img src=x>"no"</img> & more'


def test_without_events_the_page_says_what_it_cannot_show(demo_report):
    doc = parse(render_html(demo_report, None))
    svg = doc.find("svg", id="timeline")
    # Placements come from the report's scheduled times; preemption times are not in it.
    assert {m.attrs["data-pod"] for m in marks(svg, "placement")} == PLACED
    assert svg.attrs["data-preemptions"] == "0"
    assert "no queue samples" in svg.text()
    assert "Rendered from the report alone" in doc.text()
    assert "No attempt events" in doc.find("section", id="rejections").text()
    assert len(events_from_report(demo_report)) == 5 + 5  # arrivals and binds


def test_long_runs_keep_the_step_lines_small():
    # 20 000 queue samples over 1000 px, 20 per pixel column cycling through 0..6: the line
    # runs through each column's time-weighted mean (3), a faint stroke spans its range.
    samples = [(i * 0.05, float(i % 7)) for i in range(20000)]
    line, ranges = _step_series(samples, 1000.0)
    points = [tuple(map(float, p.split(","))) for p in line.split()]
    assert len(points) <= 1000 + 4
    assert all(2 <= y <= 4 for x, y in points[1:-2])
    strokes = re.findall(r"M([\d.]+) ([\d.]+)V([\d.]+)", ranges)
    assert len(strokes) == 1001 and {(lo, hi) for _, lo, hi in strokes} == {("0", "6")}
    # One change per column stays an exact step.
    assert _step_series([(10.0, 5.0), (20.0, 7.0), (30.0, 5.0)], 40.0) == (
        "10,5 20,5 20,7 30,7 30,5 40,5", "")
    report = {"pods": [], "nodes": [], "totals": {"virtualTimeSeconds": 1000.0}}
    events = [{"t": i * 0.05, "action": "queues", "active": i % 7, "backoff": 0,
               "unschedulable": 0, "pending": i % 7, "cpuAllocated": 0.5, "memoryAllocated": 0.5}
              for i in range(20000)]
    svg = timeline_svg(collect(report, events))
    assert len(svg) < 200_000


def test_many_priorities_share_a_linear_scale():
    report = {"pods": [{"namespace": "d", "name": f"p{i}", "priority": i * 10} for i in range(40)],
              "nodes": [], "totals": {"virtualTimeSeconds": 40.0}}
    events = [{"t": float(i), "action": "bind", "pod": f"d/p{i}", "node": "n"} for i in range(40)]
    svg = parse(timeline_svg(collect(report, events))).find("svg")
    ys = [float(c.attrs["cy"]) for c in marks(svg, "placement")]
    assert len(ys) == 40 and ys == sorted(ys, reverse=True)  # higher priority, higher up
    assert json.dumps(ys)  # plain numbers


# -- the command -----------------------------------------------------------------------------------

def _demo_args(tmp_path: Path, *extra: str) -> list[str]:
    return ["simulate", "--cluster", str(EXAMPLES / "cluster.json"),
            "--workload", str(EXAMPLES / "workload.yaml"),
            "--policy", str(ROOT / "config" / "policy.yaml"), "--no-progress", *extra]


def test_the_emitter_writes_the_lines_the_renderer_is_tested_with(tmp_path, capsys):
    """The contract both ways: `--events` of the demo run is exactly demo_events()."""
    from extender.cli import main

    events = tmp_path / "events.jsonl"
    assert main(_demo_args(tmp_path, "--events", str(events))) == 0
    assert list(read_events(events)) == demo_events()


def test_simulate_html_with_and_without_an_events_file(tmp_path, capsys, demo_report):
    from extender.cli import main

    assert main(_demo_args(tmp_path, "--html", str(tmp_path / "a.html"))) == 0
    assert main(_demo_args(tmp_path, "--html", str(tmp_path / "b.html"),
                           "--events", str(tmp_path / "b.jsonl"))) == 0
    a = (tmp_path / "a.html").read_text()
    assert a == (tmp_path / "b.html").read_text()  # in-memory events = the file's
    doc = parse(a)
    title = doc.find("head").find("title").text()
    assert title == "extender simulate: policy.yaml on cluster.json + workload.yaml"
    svg = doc.find("svg", id="timeline")
    assert (svg.attrs["data-placements"], svg.attrs["data-preemptions"]) == ("5", "1")
    assert len(doc.find_all("details", cls="pod")) == len(demo_report["pods"]) == 6
    assert a == render_html(demo_report, demo_events(), title=title)


def test_simulate_html_to_a_missing_directory_fails_before_the_run(tmp_path, capsys):
    from extender.cli import main

    assert main(_demo_args(tmp_path, "--html", str(tmp_path / "no" / "r.html"))) == 2
    assert "--html: cannot write" in capsys.readouterr().err


def test_rendering_needs_no_plotting_library(tmp_path):
    """The server image installs no extra: the HTML page is built from the standard library."""
    import subprocess
    import sys

    code = f"""
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("matplotlib", "PIL"):
            raise ModuleNotFoundError(name, name=name)
sys.meta_path.insert(0, _Missing())
from extender.cli import main
assert main(["simulate", "--cluster", {str(EXAMPLES / "cluster.json")!r},
             "--workload", {str(EXAMPLES / "workload.yaml")!r},
             "--policy", {str(ROOT / "config" / "policy.yaml")!r}, "--no-progress",
             "--html", {str(tmp_path / "r.html")!r}]) == 0
print(sorted(m for m in sys.modules if m.split(".")[0] in ("matplotlib", "PIL")))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("[]")
    assert parse((tmp_path / "r.html").read_text()).find("svg", id="timeline")


def test_a_real_runs_page_shows_its_reasons_and_says_what_it_has_not(demo_report):
    # An --on-sandbox report: kube-scheduler's events give reasons but no plugins, its queues
    # are not observed, and no seed drew anything.
    real = {**demo_report, "inputs": {**demo_report["inputs"], "onSandbox": {"version": "1.37.2"}}}
    events = [e for e in demo_events() if e["action"] != "queues"]
    for e in events:
        if e["action"] == "attempt":
            e.pop("plugins", None)
    html = render_html(real, events)
    assert "No plugin rejected a node." not in html
    assert "kube-scheduler's events name the reasons, not the plugins that gave them." in html
    assert 'id="reason-rejections"' in html
    assert "no queue samples: kube-scheduler does not report its queues" in html
    assert "seed 0" not in html and "seed " in render_html(demo_report, demo_events())


def _every_outcome(tmp_path: Path) -> dict:
    """A run with one pod of each outcome but Preempted: 1 scheduled, 1 pending, 1 deleted, 2
    succeeded, 1 failed, 1 rejected."""
    from .helpers import at, node, pod, simulate

    def lifetime(raw: dict, finish: str) -> dict:
        raw["metadata"]["annotations"] = {"simulator.extender/run-for": "10s",
                                          "simulator.extender/finish": finish}
        return raw

    workload = [pod("web", "1", created=at(0)), pod("huge", "64", created=at(0)),
                lifetime(pod("job-1", "1", created=at(0)), "Succeeded"),
                lifetime(pod("job-2", "1", created=at(0)), "Succeeded"),
                lifetime(pod("job-3", "1", created=at(0)), "Failed"),
                pod("gone", "1", created=at(0)),
                {"kind": "SimulationEvent", "at": "5s", "deletePod": "default/gone"},
                pod("typo", "1", created=at(0), priorityClassName="hihg")]
    for raw in workload:  # priority from the class, as admission gives it
        if raw.get("kind") == "Pod":
            raw["spec"].pop("priority")
    _, report = simulate(tmp_path, [node("n1", "8", "16Gi")], workload)
    return report


def test_the_cards_show_the_outcomes_the_summary_line_shows(tmp_path):
    # The cards left out succeeded, failed and rejected: "33 pods / 26 / 2 / 1 / 0" beside
    # "26 scheduled, 2 pending, 1 preempted, 0 deleted, 4 succeeded".
    from extender.simulator.cli import summary_line

    report = _every_outcome(tmp_path)
    doc = parse(render_html(report, None))
    cards = {c.attrs["data-total"]: c.find(cls="n").text() for c in doc.find_all(cls="card")}
    assert list(cards)[:9] == ["pods", "scheduled", "pending", "preempted", "deleted",
                               "succeeded", "failed", "rejected", "preemptions"]
    outcomes = {k: int(cards[k]) for k in list(cards)[1:8]}
    assert outcomes == {"scheduled": 1, "pending": 1, "preempted": 0, "deleted": 1,
                        "succeeded": 2, "failed": 1, "rejected": 1}
    assert sum(outcomes.values()) == int(cards["pods"]) == 7
    assert summary_line(report["totals"], {}).startswith(
        ", ".join(f"{n} {k}" for k, n in outcomes.items()) + ";")
    # The same rule for zeros: the four first always, the others only when not 0.
    totals = {**report["totals"], "deleted": 0, "succeeded": 0, "failed": 0, "rejected": 0,
              "pods": 2}
    cards = {c.attrs["data-total"]: c.find(cls="n").text() for c in parse(render_html(
        {**report, "totals": totals}, None)).find_all(cls="card")}
    assert list(cards)[:6] == ["pods", "scheduled", "pending", "preempted", "deleted",
                               "preemptions"]
    assert (cards["preempted"], cards["deleted"]) == ("0", "0")
    assert summary_line(totals, {}).startswith("1 scheduled, 1 pending, 0 preempted, 0 deleted;")
    # Every status has its colour.
    status = {d.attrs["data-pod"]: d.find("span", cls="status").attrs["class"]
              for d in doc.find_all("details", cls="pod")}
    assert (status["default/job-1"], status["default/job-3"], status["default/typo"]) == (
        "status ok", "status bad", "status bad")


def test_the_plots_title_says_what_the_summary_line_says(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from extender.simulator.plot import plot_utilization

    titles: list[str] = []
    original = Figure.suptitle
    monkeypatch.setattr(Figure, "suptitle",
                        lambda fig, text, **kw: titles.append(text) or original(fig, text, **kw))
    plot_utilization(_every_outcome(tmp_path), tmp_path / "u.png")
    assert titles == ["1 scheduled, 1 pending, 0 preempted, 1 deleted, 2 succeeded, 1 failed, "
                      "1 rejected on 1 nodes"]
