"""Ratios to the floors, target checks and the Markdown table of a ``bench.run`` result."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

JSON = dict[str, Any]
GIB_KIB = 1024 * 1024


# --------------------------------------------------------------------------- ratios


def _ratio(value: Any, floor: Any) -> float | None:
    if not isinstance(value, int | float) or not isinstance(floor, int | float):
        return None
    if math.isnan(value) or math.isnan(floor) or floor <= 0:
        return None
    return value / floor


def case_ratios(case: JSON, floor: JSON) -> JSON:
    """Latency / floor latency (≥ 1 means slower than the floor) and req/s / floor req/s
    (≤ 1 means slower), for the same body, connections and request budget."""
    out: JSON = {}
    server1, floor1 = case["server"].get("c1", {}), floor["http"].get("c1", {})
    for q in ("p50", "p90", "p99"):
        out[f"{q}_http"] = _ratio(server1.get(f"{q}_ms"), floor1.get(f"{q}_ms"))
    out["p50_decode"] = _ratio(server1.get("p50_ms"), floor["decode"]["ms"])
    for key, run in case["server"].items():
        out[f"rps_{key}_http"] = _ratio(run.get("rps"), floor["http"].get(key, {}).get("rps"))
    return out


def add_ratios(result: JSON) -> None:
    for case in result["cases"]:
        case["ratios"] = case_ratios(case, result["floors"][case["floor_key"]])
    result["targets"] = targets(result)


# --------------------------------------------------------------------------- targets


def _case(result: JSON, case_id: str) -> JSON | None:
    return next((c for c in result["cases"] if c["id"] == case_id), None)


def _ratio_target(result: JSON, case_id: str, key: str, limit: float, label: str) -> JSON:
    case = _case(result, case_id)
    value = None if case is None else case["ratios"].get(key)
    return {"target": label, "value": value, "unit": "×", "limit": limit,
            "met": None if value is None else value <= limit}


def targets(result: JSON) -> list[JSON]:
    """The issue's targets, as measured in this run (None = not measured)."""
    out = [
        _ratio_target(result, "filter-names-500", "p50_http", 3.0, "NodeNames 500 filter p50 ≤ 3× HTTP floor"),
        _ratio_target(result, "prioritize-names-500", "p50_http", 3.0,
                      "NodeNames 500 prioritize p50 ≤ 3× HTTP floor"),
    ]
    case = _case(result, "filter-names-5000")
    p50 = None if case is None else case["server"].get("c1", {}).get("p50_ms")
    out.append({"target": "NodeNames 5000 filter p50 < 5 ms", "value": p50, "unit": "ms", "limit": 5.0,
                "met": None if p50 is None else p50 < 5.0})
    out.append(_ratio_target(result, "filter-nodes-5000", "p50_decode", 1.5,
                             "Nodes 5000 filter p50 ≤ 1.5× decode floor"))
    plain, spread = _case(result, "filter-names-5000"), _case(result, "filter-names-5000-spread")
    both = plain is not None and spread is not None
    ratio = (spread["server"]["c1"]["p50_ms"] / plain["server"]["c1"]["p50_ms"]  # type: ignore[index]
             if both and plain["server"].get("c1", {}).get("p50_ms") else None)  # type: ignore[index]
    out.append({"target": "NodeNames 5000 filter with zone spread + anti-affinity p50 ≤ 2× without",
                "value": ratio, "unit": "×", "limit": 2.0,
                "met": None if ratio is None else ratio <= 2.0})
    out.append(load_aware_target(result))
    state = result.get("state")
    rss = None
    if state and state["nodes"] >= 5000 and state["pods"] >= 150_000 and state.get("rss_kib"):
        rss = state["rss_kib"] / 1024
    out.append({"target": "5000 nodes / 150 000 pods state ≤ 1 GiB RSS", "value": rss, "unit": "MiB",
                "limit": 1024.0, "met": None if rss is None else rss <= 1024.0})
    return out


def load_aware_target(result: JSON) -> JSON:
    """prioritize NodeNames 500 scoring with TargetLoadPacking (its metrics refreshed from a
    load-watcher meanwhile) against NodeResourcesFit LeastAllocated alone: p50 ratio."""
    info = result.get("load_aware") or {}
    size = info.get("size", 500)
    plain = _case(result, f"prioritize-names-{size}-leastallocated")
    loaded = _case(result, f"prioritize-names-{size}-targetloadpacking")
    p50s = [None if c is None else c["server"].get("c1", {}).get("p50_ms") for c in (plain, loaded)]
    ratio = p50s[1] / p50s[0] if p50s[0] and p50s[1] else None
    return {"target": f"NodeNames {size} prioritize, TargetLoadPacking (metrics refreshed every "
                      f"{num(info.get('refresh_seconds'))} s) p50 ≤ 1.2× LeastAllocated alone",
            "value": ratio, "unit": "×", "limit": 1.2,
            "met": None if ratio is None else ratio <= 1.2}


# --------------------------------------------------------------------------- formatting


def num(x: Any) -> str:
    """Three significant figures, never scientific notation."""
    if not isinstance(x, int | float) or math.isnan(x):
        return "–"
    ax = abs(x)
    if ax >= 100:
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    if ax == 0:
        return "0"
    return f"{x:.{max(3, 2 - math.floor(math.log10(ax)))}f}"


def times(r: Any) -> str:
    return "–" if r is None else f"{num(r)}×"


def size(n: Any) -> str:
    if not isinstance(n, int):
        return "–"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f} MB"
    if n >= 1000:
        return f"{n / 1e3:.0f} KB"
    return f"{n} B"


def mib(kib: Any) -> str:
    return "–" if not isinstance(kib, int | float) else f"{kib / 1024:,.0f}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def reply_text(case: JSON) -> str:
    reply = case["reply"]
    if reply.get("status") != 200:
        return f"HTTP {reply.get('status')}: {str(reply.get('text', ''))[:60]}"
    if reply.get("error"):
        return f"Error: {str(reply['error'])[:60]}"
    verb = case["verb"]
    if verb == "filter":
        return f"{reply.get('passed')} pass, {reply.get('failed')} fail, {reply.get('unresolvable')} unres."
    if verb == "prioritize":
        return f"{reply.get('scored')} scored, max {reply.get('max_score')}"
    if verb == "preempt":
        return f"{reply.get('nodes')} nodes"
    return "ok"


def _count(case: JSON) -> str:
    c1 = case["server"].get("c1", {})
    bad = sum(v for k, v in c1.get("statuses", {}).items() if k != "200") + c1.get("errors", 0)
    return f"{c1.get('requests', 0)}" + (f" ({bad} failed)" if bad else "")


def _rss(case: JSON) -> str:
    peak, before = case.get("peak_rss_kib"), case.get("rss_before_kib")
    if not isinstance(peak, int) or not isinstance(before, int) or peak < before:
        return mib(peak)
    return f"{mib(peak)} (+{mib(peak - before)})"


def _rps(case: JSON, key: str) -> str:
    run = case["server"].get(key)
    if run is None:
        return "–"
    return f"{num(run.get('rps'))} ({times(case['ratios'].get(f'rps_{key}_http'))})"


def _form(case: JSON) -> str:
    """The form, and the pod variant when it is not the plain pending pod, or the scoring
    policy of a load-aware row."""
    form = case["form"] or "–"
    if case.get("variant"):
        return f"{form}, {case['variant']}"
    return f"{form} + spread" if case["id"].endswith("-spread") else form


def case_rows(result: JSON) -> list[str]:
    conns = [k for k in ("c1", "c4") if any(k in c["server"] for c in result["cases"])]
    extra = [k for c in result["cases"] for k in c["server"] if k not in conns]
    conns += sorted(set(extra))
    header = ["verb", "form", "n", "body", "p50 ms (×HTTP)", "p90 ms (×HTTP)", "p99 ms (×HTTP)",
              "p50 ×decode", *[f"req/s {k[1:]} conn (×floor)" for k in conns], "peak RSS MiB (+case)",
              "requests", "first reply"]
    rows = []
    for case in result["cases"]:
        c1, r = case["server"].get("c1", {}), case["ratios"]
        rows.append([
            case["verb"], _form(case), str(case["size"] or "–"), size(case.get("body_bytes")),
            f"{num(c1.get('p50_ms'))} ({times(r.get('p50_http'))})",
            f"{num(c1.get('p90_ms'))} ({times(r.get('p90_http'))})",
            f"{num(c1.get('p99_ms'))} ({times(r.get('p99_http'))})",
            times(r.get("p50_decode")),
            *[_rps(case, k) for k in conns],
            _rss(case), _count(case), reply_text(case),
        ])
    return _table(header, rows)


def floor_rows(result: JSON) -> list[str]:
    header = ["body", "size", "HTTP floor p50 / p90 / p99 ms", "req/s 1 / 4 conn",
              "decode floor ms", "decoder, GC", "decode with GC on ms", "free ms"]
    rows = []
    sizes = {c["floor_key"]: c.get("body_bytes") for c in result["cases"]}
    for key, floor in result["floors"].items():
        c1, c4 = floor["http"].get("c1", {}), floor["http"].get("c4", {})
        best = floor["decode"]
        gc_on = [d["decode_ms"] for d in best["all"] if d["gc"] == "on"]
        frees = [d["free_ms"] for d in best["all"] if d["decoder"] == best["decoder"] and d["gc"] == best["gc"]]
        rows.append([
            key, size(sizes.get(key)),
            f"{num(c1.get('p50_ms'))} / {num(c1.get('p90_ms'))} / {num(c1.get('p99_ms'))}",
            f"{num(c1.get('rps'))} / {num(c4.get('rps'))}",
            num(best["ms"]), f"{best['decoder']}, GC {best['gc']}",
            num(min(gc_on)) if gc_on else "–", num(frees[0]) if frees else "–",
        ])
    return _table(header, rows)


def state_rows(state: JSON | None) -> list[str]:
    if not state:
        return ["(state size not measured: --skip-state)"]
    header = ["nodes", "pods", "snapshot", "load s (start → /readyz 200)", "RSS MiB after load",
              "peak RSS MiB during load"]
    return _table(header, [[str(state["nodes"]), f"{state['pods']:,}", size(state["snapshot_bytes"]),
                            num(state["load_seconds"]), mib(state.get("rss_kib")),
                            mib(state.get("peak_rss_kib"))]])


def target_rows(result: JSON) -> list[str]:
    marks: dict[Any, str] = {True: "met", False: "not met", None: "not measured"}
    fmt: dict[str, Callable[[Any], str]] = {"×": times, "ms": lambda v: f"{num(v)} ms",
                                             "MiB": lambda v: f"{num(v)} MiB"}
    rows = [[t["target"], "–" if t["value"] is None else fmt[t["unit"]](t["value"]), marks[t["met"]]]
            for t in result.get("targets", [])]
    return _table(["target (informational; never fails)", "measured", ""], rows)


def machine_line(result: JSON) -> str:
    m, pin = result["machine"], result["pinning"]
    pinned = (f"server on CPU {pin['server_cpu']}, client on CPU {pin['client_cpu']}"
              if pin["server_cpu"] is not None else "not pinned (fewer than 2 CPUs)")
    pk = m["packages"]
    libs = ", ".join(f"{k} {v}" for k, v in pk.items() if v and k in ("msgspec", "orjson", "uvicorn",
                                                                          "uvloop", "httptools", "starlette"))
    return (f"Machine: {m['cpu_model']}, {m['cpus_available']} of {m['cpu_count']} CPUs ({pinned}), "
            f"{m['memory_gib']} GiB RAM, Linux {m['kernel']}, {m['python_implementation']} {m['python']}; "
            f"{libs}.")


def incident_lines(result: JSON) -> list[str]:
    lines = []
    for r in result.get("server_restarts", []):
        what = "stalled" if r.get("server_alive") else f"exited ({r.get('returncode')})"
        lines.append(f"**The server {what} before `{r['before_case']}` and was restarted**; "
                     "later cases ran against a fresh server process.")
    done = {c["id"] for c in result["cases"]}
    missing = [c for c in result.get("planned_cases", []) if c not in done]
    if missing:
        lines.append(f"**Not measured:** {', '.join(missing)}.")
    return [*lines, ""] if lines else []


def markdown(result: JSON) -> str:
    cfg = result["config"]
    cl = cfg["cluster"]
    lines = [
        f"## extender benchmark, {result['started']}",
        "",
        machine_line(result),
        "",
        f"Served cluster: {cl['nodes']} nodes, {cl['pods']:,} pods (seed {cl['seed']}, snapshot "
        f"{size(cl['snapshot_bytes'])}); policy `{cfg['policy']}`. Each measurement: after "
        f"{cfg['warmup']} warm-up requests, at most {cfg['max_requests']} requests and "
        f"{cfg['max_seconds']} s (at least {cfg['min_requests']} requests). Server idle RSS "
        f"{mib(result.get('server_idle_rss_kib'))} MiB; peak RSS per case from "
        f"{result.get('rss_mode')}. Run took {result['seconds']:.0f} s.",
        "",
        *incident_lines(result),
        "### Per verb and form (ratio to the floor of the same body)",
        "",
        *case_rows(result),
        "",
        "### Floors",
        "",
        *floor_rows(result),
        "",
        "### State size",
        "",
        *state_rows(result.get("state")),
        "",
        "### Targets",
        "",
        *target_rows(result),
        "",
    ]
    return "\n".join(lines)
