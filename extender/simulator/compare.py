"""`extender simulate --compare POLICY_A POLICY_B`: one cluster, workload and seed through two
policies, and what differs.

`compare_reports(a, b)` is the comparison of two reports (`report.build_report`), as data:
totals side by side, the pods whose node, status or scheduled time differ, and every node's
allocation at the end. `format_comparison` prints it as text; `htmlreport.comparison_html`
draws it. `run_compare` runs both simulations through the ordinary `extender simulate` path
(`cli.run`, each with its own fresh cluster state), so every flag means what it means for one
run.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

KIND = "SimulationComparison"
#: Totals compared, in this order.
TOTALS = ("pods", "scheduled", "pending", "preempted", "deleted", "succeeded", "failed",
          "rejected", "preemptions", "attempts", "cycles", "virtualTimeSeconds",
          "lastBindSeconds", "truncated", "endReason")
#: Totals shown only when one of the runs has some (pod lifetimes, admission).
_OPTIONAL = {"succeeded", "failed", "rejected", "endReason"}
#: What a pod's outcome is, for the comparison.
POD_FIELDS = ("node", "status", "scheduledAtSeconds")
NODE_FIELDS = ("cpuFraction", "memoryFraction", "pods", "cpuMilli", "memoryBytes")


def _key(p: Mapping[str, Any]) -> str:
    return f"{p['namespace']}/{p['name']}"


def file_labels(paths: Sequence[str]) -> list[str]:
    """Short labels for two files (policies, reports): their names, else their paths as given
    when the names clash (two runs' `real.json`)."""
    names = [Path(p).name for p in paths]
    return names if len(set(names)) == len(names) else list(paths)


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any],
                    names: Sequence[str] = ("A", "B")) -> dict[str, Any]:
    """The differences between two runs' reports (JSON-ready, deterministic order)."""
    ta, tb = a.get("totals", {}), b.get("totals", {})
    totals = {k: [ta.get(k), tb.get(k)] for k in TOTALS
              if k not in _OPTIONAL or ta.get(k) or tb.get(k)}
    pods_a = {_key(p): p for p in a.get("pods", [])}
    pods_b = {_key(p): p for p in b.get("pods", [])}
    pods = []
    for key in sorted(set(pods_a) | set(pods_b)):
        sa = _outcome(pods_a.get(key))
        sb = _outcome(pods_b.get(key))
        differs = [f for f in POD_FIELDS if (sa or {}).get(f) != (sb or {}).get(f)]
        if sa is None or sb is None:
            differs = list(POD_FIELDS)
        if differs:
            pods.append({"pod": key, "differs": differs, "a": sa, "b": sb})
    nodes_a = {n["name"]: n for n in a.get("nodes", [])}
    nodes_b = {n["name"]: n for n in b.get("nodes", [])}
    nodes = []
    for name in sorted(set(nodes_a) | set(nodes_b)):
        ea, eb = _end(nodes_a.get(name)), _end(nodes_b.get(name))
        nodes.append({"name": name, "differs": ea != eb, "a": ea, "b": eb})
    return {"kind": KIND, "names": list(names), "totals": totals,
            "podCount": len(set(pods_a) | set(pods_b)), "pods": pods, "nodes": nodes}


def _outcome(p: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if p is None else {f: p.get(f) for f in POD_FIELDS}


def _end(n: Mapping[str, Any] | None) -> dict[str, Any] | None:
    after = (n or {}).get("after")
    return None if after is None else {f: after.get(f) for f in NODE_FIELDS}


# -- text -----------------------------------------------------------------------------------------

def _v(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _pct(fraction: float | None) -> str:
    return "-" if fraction is None else f"{100 * fraction:.1f}%"


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        out.append("  ".join(cells).rstrip())
    return out


def _pod_cell(s: Mapping[str, Any] | None) -> str:
    if s is None:
        return "(absent)"
    at = s.get("scheduledAtSeconds")
    return f"{s.get('node') or '-'} {s.get('status')}" + (f" at {at:g}s" if at is not None else "")


def format_comparison(cmp: Mapping[str, Any]) -> str:
    """The comparison as text: totals, the pods that differ, the nodes at the end."""
    a, b = cmp["names"]
    lines = _table([["", f"A: {a}", f"B: {b}", ""]]
                   + [[k, _v(va), _v(vb), "" if va == vb else "*"]
                      for k, (va, vb) in cmp["totals"].items()])
    pods = cmp["pods"]
    lines += ["", f"pods that differ: {len(pods)} of {cmp['podCount']}"]
    if pods:
        lines += _table([["POD", "A", "B"]]
                        + [[d["pod"], _pod_cell(d["a"]), _pod_cell(d["b"])] for d in pods])
    lines += ["", "nodes at the end (cpu, memory requested / allocatable; pods):"]

    def node_cell(s: Mapping[str, Any] | None) -> list[str]:
        if s is None:
            return ["-", "-", "-"]
        return [_pct(s.get("cpuFraction")), _pct(s.get("memoryFraction")), _v(s.get("pods"))]

    lines += _table([["NODE", "A cpu", "mem", "pods", "B cpu", "mem", "pods", ""]]
                    + [[n["name"], *node_cell(n["a"]), *node_cell(n["b"]),
                        "*" if n["differs"] else ""] for n in cmp["nodes"]],
                    right=(1, 2, 3, 4, 5, 6))
    return "\n".join(lines) + "\n"


# -- the command ----------------------------------------------------------------------------------

Run = Callable[[argparse.Namespace], int]


def run_compare(args: argparse.Namespace, run: Run) -> int:
    """Both policies through `run` (the single-run `extender simulate`), then the comparison:
    text on stdout (stderr with `--report -`), `--report` a SimulationComparison (both
    reports and the differences), `--html` one page with both runs."""
    path_a, path_b = args.compare
    names = file_labels([path_a, path_b])
    for flag in ("plot", "events"):
        if getattr(args, flag):
            print(f"extender simulate: --{flag} does not combine with --compare", file=sys.stderr)
            return 2
    out = sys.stderr if args.report == "-" else sys.stdout
    reports: list[dict[str, Any]] = []
    events: list[list[dict[str, Any]] | None] = []
    with tempfile.TemporaryDirectory(prefix="extender-compare-") as tmp:
        for label, name, path in (("A", names[0], path_a), ("B", names[1], path_b)):
            one = copy.copy(args)
            one.compare = None
            one.policy = path
            one.html = None
            one.report = str(Path(tmp) / f"{label}.json")
            # The page shows each run's events: the single run writes them to a file here.
            one.events = str(Path(tmp) / f"{label}.jsonl") if args.html else None
            summary = io.StringIO()
            with contextlib.redirect_stdout(summary):
                code = run(one)
            if code != 0:
                return code
            for line in summary.getvalue().splitlines():
                print(f"{label} ({name}): {line}", file=out)
            reports.append(json.loads(Path(one.report).read_text(encoding="utf-8")))
            if one.events:
                from extender.simulator.htmlreport import read_events

                events.append(list(read_events(one.events)))
            else:
                events.append(None)
    cmp = compare_reports(reports[0], reports[1], names)
    print(file=out)
    out.write(format_comparison(cmp))
    if args.report:
        from extender.simulator.report import write_report_to

        doc = {"apiVersion": "simulator.extender/v1", "kind": KIND,
               "policies": [path_a, path_b], "names": names,
               "differences": {k: v for k, v in cmp.items() if k not in ("kind", "names")},
               "reports": reports}
        write_report_to(doc, args.report)
    if args.html:
        from extender.simulator.htmlreport import render_compare_html, write_html

        write_html(render_compare_html(
            [(f"A: {names[0]}", reports[0], events[0]), (f"B: {names[1]}", reports[1], events[1])],
            cmp, title=f"extender simulate --compare {names[0]} {names[1]}"), args.html)
    return 0
