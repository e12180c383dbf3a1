"""Ratios to the floors, target checks and the Markdown table of a ``bench.run`` result."""

from __future__ import annotations

import math
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
    (≤ 1 means slower), for the same body, connections and request budget. A floor measured
    without its decode part (``decode`` None) gives no ``p50_decode``."""
    out: JSON = {}
    server1, floor1 = case["server"].get("c1", {}), floor["http"].get("c1", {})
    for q in ("p50", "p90", "p99"):
        out[f"{q}_http"] = _ratio(server1.get(f"{q}_ms"), floor1.get(f"{q}_ms"))
    if floor.get("decode"):
        out["p50_decode"] = _ratio(server1.get("p50_ms"), floor["decode"]["ms"])
        out["p50_msgspec"] = _ratio(server1.get("p50_ms"), msgspec_ms(floor))
    for key, run in case["server"].items():
        out[f"rps_{key}_http"] = _ratio(run.get("rps"), floor["http"].get(key, {}).get("rps"))
    return out


def msgspec_ms(floor: JSON) -> float | None:
    """The decode floor's msgspec figure alone: the faster of its GC-on and GC-paused medians."""
    runs = [d["decode_ms"] for d in (floor.get("decode") or {}).get("all", []) if d["decoder"] == "msgspec"]
    return min(runs) if runs else None


def add_ratios(result: JSON) -> None:
    """Each case's ratios to its floors; a Go yardstick case's p50 over ours for the same
    body (``go_over_ours_p50``: how many times faster ours is); the targets."""
    for case in result["cases"]:
        floor = result["floors"].get(case.get("floor_key") or "")
        case["ratios"] = case_ratios(case, floor) if floor else {}
    for case in result["cases"]:
        if case.get("group") == "go":
            ours = _case(result, case.get("ours", ""))
            case["ratios"]["go_over_ours_p50"] = None if ours is None else _ratio(
                _p50(case), _p50(ours))
    result["targets"] = targets(result)


# --------------------------------------------------------------------------- targets


def _case(result: JSON, case_id: str) -> JSON | None:
    return next((c for c in result["cases"] if c["id"] == case_id), None)


def _p50(case: JSON | None) -> float | None:
    if case is None:
        return None
    p50 = case["server"].get("c1", {}).get("p50_ms")
    return p50 if isinstance(p50, int | float) and not math.isnan(p50) else None


def target(label: str, value: float | None, unit: str, limit: float, op: str = "≤", note: str = "") -> JSON:
    """One informational target: ``value op limit`` (None: not measured, ``note`` says why)."""
    met = None
    if value is not None:
        met = value <= limit if op == "≤" else value >= limit if op == "≥" else value < limit
    return {"target": label, "value": value, "unit": unit, "limit": limit, "op": op, "met": met,
            "note": note if value is None else ""}


def _ratio_of(result: JSON, case_id: str, key: str) -> float | None:
    case = _case(result, case_id)
    return None if case is None else case["ratios"].get(key)


def _skipped(info: JSON | None) -> str:
    """The reason a section did not run, for the targets that needed it."""
    if info and info.get("status") in ("skipped", "failed"):
        return f"{info['status']}: {info.get('reason', '')}"
    return ""


def targets(result: JSON) -> list[JSON]:
    """Issue 15's targets, and the earlier ones that still apply, as measured in this run
    (value None = not measured). Informational: nothing fails on them."""
    go_note, reuse_note = _skipped(result.get("go")), _skipped(result.get("reply_reuse"))
    out = [
        target("filter NodeNames 5000 p50 ≤ 1.5 ms", _p50(_case(result, "filter-names-5000")), "ms", 1.5),
        target("filter NodeNames 5000 p50 ≤ 4× the do-nothing endpoint (HTTP floor)",
               _ratio_of(result, "filter-names-5000", "p50_http"), "×", 4.0),
        target("filter NodeNames 5000 ≥ 4× faster than the Go yardstick (Go p50 / ours p50)",
               _ratio_of(result, "filter-names-5000-go", "go_over_ours_p50"), "×", 4.0, "≥", go_note),
        target("prioritize NodeNames 5000, default scorers, p50 ≤ 2 ms",
               _p50(_case(result, "prioritize-names-5000")), "ms", 2.0),
        target("filter NodeNames 5000, same pod and node list repeated, p50 ≤ 2× the HTTP floor",
               _ratio_of(result, "filter-names-5000-repeated", "p50_http"), "×", 2.0, note=reuse_note),
        target("prioritize NodeNames 5000, same pod and node list repeated, p50 ≤ 2× the HTTP floor",
               _ratio_of(result, "prioritize-names-5000-repeated", "p50_http"), "×", 2.0, note=reuse_note),
        target("preempt NodeNames 5000 p50 ≤ 25 ms", _p50(_case(result, "preempt-names-5000")), "ms", 25.0),
        target("filter Nodes 5000, cold (node versions not held), p50 ≤ 1.5× msgspec decode of the body",
               _ratio_of(result, "filter-nodes-5000-cold", "p50_msgspec"), "×", 1.5),
    ]
    cycles = _case(result, "cycle-names-500")
    out.append(target("filter → prioritize at 500 candidates, 1 connection ≥ 1000 cycles/s",
                      None if cycles is None else cycles["server"].get("c1", {}).get("rps"),
                      "cycles/s", 1000.0, "≥"))
    out.extend(simulator_targets(result.get("simulator")))
    state = result.get("state")
    full = bool(state and state["nodes"] >= 5000 and state["pods"] >= 150_000)
    rss = state["rss_kib"] / 1024 if full and state and state.get("rss_kib") else None
    out.append(target("state 5000 nodes + 150 000 pods ≤ 400 MiB RSS", rss, "MiB", 400.0))
    out.append(target("state 5000 nodes + 150 000 pods loaded (start → /readyz 200) ≤ 8 s",
                      state["load_seconds"] if full and state else None, "s", 8.0))
    out += [
        target("filter NodeNames 500 p50 ≤ 3× HTTP floor", _ratio_of(result, "filter-names-500", "p50_http"),
               "×", 3.0),
        target("prioritize NodeNames 500 p50 ≤ 3× HTTP floor",
               _ratio_of(result, "prioritize-names-500", "p50_http"), "×", 3.0),
        target("filter Nodes 5000, node versions held, p50 ≤ 1.5× decode floor",
               _ratio_of(result, "filter-nodes-5000", "p50_decode"), "×", 1.5),
    ]
    plain, spread = _p50(_case(result, "filter-names-5000")), _p50(_case(result, "filter-names-5000-spread"))
    out.append(target("filter NodeNames 5000 with zone spread + anti-affinity p50 ≤ 2× without",
                      spread / plain if plain and spread else None, "×", 2.0))
    out.append(load_aware_target(result))
    return out


def simulator_targets(sim: JSON | None) -> list[JSON]:
    """Pods/s of the simulator's scenarios at 1000 nodes / 10 000 pods (smaller runs: not measured)."""
    out = []
    scenarios = {sc["name"]: sc for sc in (sim or {}).get("scenarios", [])}
    full = bool(sim and sim["nodes"] >= 1000 and sim["pods"] >= 10_000)
    for name, limit in (("unsaturated", 1500.0), ("saturated, with preemption", 300.0)):
        sc = scenarios.get(name)
        value = sc.get("pods_per_s") if sc and full and sc["status"] == "ran" else None
        note = "" if sim is not None else "not run (--no-simulator; off with --quick)"
        if sc is not None and sc["status"] != "ran":
            note = f"{sc['status']}: {sc.get('reason', '')}"
        out.append(target(f"simulator 1000 nodes / 10 000 pods, {name} ≥ {limit:,.0f} pods/s",
                          value, "pods/s", limit, "≥", note))
    return out


def load_aware_target(result: JSON) -> JSON:
    """prioritize NodeNames 500 scoring with TargetLoadPacking (its metrics refreshed from a
    load-watcher meanwhile) against NodeResourcesFit LeastAllocated alone: p50 ratio."""
    info = result.get("load_aware") or {}
    size = info.get("size", 500)
    p50s = [_p50(_case(result, f"prioritize-names-{size}-{v}")) for v in ("leastallocated", "targetloadpacking")]
    ratio = p50s[1] / p50s[0] if p50s[0] and p50s[1] else None
    return target(f"prioritize NodeNames {size}, TargetLoadPacking (metrics refreshed every "
                  f"{num(info.get('refresh_seconds'))} s) p50 ≤ 1.2× LeastAllocated alone", ratio, "×", 1.2)


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


#: Cases with their own table (not in "Per verb and form").
OWN_TABLE = ("go", "cycle")


def case_rows(result: JSON) -> list[str]:
    cases = [c for c in result["cases"] if c.get("group") not in OWN_TABLE]
    conns = [k for k in ("c1", "c4") if any(k in c["server"] for c in cases)]
    extra = [k for c in cases for k in c["server"] if k not in conns]
    conns += sorted(set(extra))
    header = ["verb", "form", "n", "body", "p50 ms (×HTTP)", "p90 ms (×HTTP)", "p99 ms (×HTTP)",
              "p50 ×decode", *[f"req/s {k[1:]} conn (×floor)" for k in conns], "peak RSS MiB (+case)",
              "requests", "first reply"]
    rows = []
    for case in cases:
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
    sizes = {c["floor_key"]: c.get("body_bytes") for c in result["cases"] if c.get("floor_key")}
    for key, floor in result["floors"].items():
        c1, c4 = floor["http"].get("c1", {}), floor["http"].get("c4", {})
        http = [key, size(sizes.get(key)),
                f"{num(c1.get('p50_ms'))} / {num(c1.get('p90_ms'))} / {num(c1.get('p99_ms'))}",
                f"{num(c1.get('rps'))} / {num(c4.get('rps'))}"]
        best = floor.get("decode")
        if not best:  # an HTTP floor of another server (the reply-cache one): no decode part
            rows.append([*http, "–", "–", "–", "–"])
            continue
        gc_on = [d["decode_ms"] for d in best["all"] if d["gc"] == "on"]
        frees = [d["free_ms"] for d in best["all"] if d["decoder"] == best["decoder"] and d["gc"] == best["gc"]]
        rows.append([
            *http, num(best["ms"]), f"{best['decoder']}, GC {best['gc']}",
            num(min(gc_on)) if gc_on else "–", num(frees[0]) if frees else "–",
        ])
    return _table(header, rows)


def cycle_rows(result: JSON) -> list[str]:
    cases = [c for c in result["cases"] if c.get("group") == "cycle"]
    if not cases:
        return ["(not measured: needs the names form and both filter and prioritize in --verbs)"]
    header = ["n", "cycles", "p50 / p90 / p99 ms per cycle", "cycles/s (1 conn)", "filter p50 ms",
              "client p50 ms (reply → next request)", "prioritize p50 ms", "peak RSS MiB (+case)", "first cycle"]
    rows = []
    for case in cases:
        c1 = case["server"].get("c1", {})
        rows.append([
            str(case["size"]), _count(case),
            f"{num(c1.get('p50_ms'))} / {num(c1.get('p90_ms'))} / {num(c1.get('p99_ms'))}",
            num(c1.get("rps")), num(c1.get("filter_p50_ms")), num(c1.get("client_p50_ms")),
            num(c1.get("prioritize_p50_ms")), _rss(case), cycle_reply(case.get("reply") or {}),
        ])
    return _table(header, rows)


def cycle_reply(reply: JSON) -> str:
    if reply.get("status") != 200:
        return f"filter HTTP {reply.get('status')}: {str(reply.get('text', ''))[:60]}"
    prio = reply.get("prioritize") or {}
    if prio.get("status") != 200:
        return f"prioritize HTTP {prio.get('status')}: {str(prio.get('text', ''))[:60]}"
    return f"{reply.get('passed')} pass → {prio.get('scored')} scored"


def go_lines(result: JSON) -> list[str]:
    """The Go yardstick's build and start-up, then its rows beside ours for the same body."""
    info = result.get("go")
    if not info:
        return ["(not measured: no filter or prioritize case)"]
    if info["status"] != "ran":
        return [f"**Go yardstick {info['status']}:** {info.get('reason', '')}"]
    built = ("cached binary" if info.get("cached")
             else f"built in {num(info.get('build_seconds'))} s with {info.get('go_version')}")
    lines = [f"`{info.get('src')}` (main.go {info.get('source_hash')}), {built}; pinned like our server; "
             f"snapshot loaded in {num(info.get('load_seconds'))} s, RSS {mib(info.get('rss_kib'))} MiB "
             "after load. Same client, bodies and budgets; it has no `/_floor`. "
             "`Go p50 / ours p50` > 1 means ours is that many times faster.", ""]
    header = ["verb", "form", "n", "body", "Go p50 / p90 / p99 ms", "Go req/s 1 / 4 conn", "ours p50 ms",
              "Go p50 / ours p50", "Go peak RSS MiB", "Go first reply", "ours first reply"]
    rows = []
    for case in (c for c in result["cases"] if c.get("group") == "go"):
        c1, c4 = case["server"].get("c1", {}), case["server"].get("c4", {})
        ours = _case(result, case.get("ours", ""))
        rows.append([
            case["verb"], "go yardstick, " + (case["form"] or "–"), str(case["size"]),
            size(case.get("body_bytes")),
            f"{num(c1.get('p50_ms'))} / {num(c1.get('p90_ms'))} / {num(c1.get('p99_ms'))}",
            f"{num(c1.get('rps'))} / {num(c4.get('rps'))}", num(_p50(ours)),
            times(case["ratios"].get("go_over_ours_p50")), mib(case.get("peak_rss_kib")),
            reply_text(case), "–" if ours is None else reply_text(ours),
        ])
    return [*lines, *_table(header, rows)]


def simulator_rows(sim: JSON | None) -> list[str]:
    if not sim:
        return ["(not run: --no-simulator; off with --quick)"]
    header = ["scenario", "nodes", "pods", "pods/s (final outcomes)", "pods scheduled/s", "cycles/s",
              "scheduled / pending / preempted / preemptions", "simulate s (wall)", ""]
    rows = []
    for sc in sim["scenarios"]:
        if sc["status"] != "ran":
            rows.append([sc["name"], str(sim["nodes"]), f"{sim['pods']:,}", *["–"] * 5,
                         f"{sc['status']}: {sc.get('reason', '')}"])
            continue
        counts = " / ".join(str(sc.get(k, "–")) for k in ("scheduled", "pending", "preempted", "preemptions"))
        pods = num(sc.get("pods_per_s")) + (" (bound)" if sc.get("pods_per_s_from") == "pods scheduled" else "")
        rows.append([sc["name"], str(sim["nodes"]), f"{sim['pods']:,}", pods, num(sc.get("scheduled_per_s")),
                     num(sc.get("cycles_per_s")), counts, num(sc.get("wall_seconds")),
                     " ".join(sc.get("args") or [])])
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

    def value(t: JSON) -> str:
        if t["value"] is None:
            return "–"
        return times(t["value"]) if t["unit"] == "×" else f"{num(t['value'])} {t['unit']}"

    rows = [[t["target"], value(t), t.get("note") or marks[t["met"]]] for t in result.get("targets", [])]
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
        "### Scheduling cycles (filter, then prioritize over the nodes it passed; 1 connection)",
        "",
        *cycle_rows(result),
        "",
        "### Go yardstick (the same requests to the Go stdlib extender)",
        "",
        *go_lines(result),
        "",
        "### Floors",
        "",
        *floor_rows(result),
        "",
        "### State size",
        "",
        *state_rows(result.get("state")),
        "",
        "### Simulator (`python -m bench.simulate`)",
        "",
        *simulator_rows(result.get("simulator")),
        "",
        "### Targets",
        "",
        *target_rows(result),
        "",
    ]
    return "\n".join(lines)
