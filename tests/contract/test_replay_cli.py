"""`extender replay` on the command line: a recording it cannot read is one line on stderr
naming the file and line (never a traceback), exit 2; every other recording given is still
replayed and reported."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from extender import serve
from extender.cli import main
from extender.engine import registry
from tests.contract.test_recording import POLICY, record_rejected_holds, record_session

Line = dict[str, Any]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path, _ = record_session(tmp_path_factory.mktemp("record"))
    return path


def edited(source: Path, target: Path, change: Callable[[list[Line]], None]) -> Path:
    """`source` with its lines (the header first) changed in place by `change`."""
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    change(lines)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return target


def replay(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, str, list[str]]:
    """The exit code, stdout, and the lines of stderr (of the replay alone: what was printed
    before, such as a recording server's log where an earlier test left a handler, is not)."""
    capsys.readouterr()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        code = main(["replay", *map(str, paths)])
    finally:
        # `main` points the root logger at this test's captured stderr, closed after it.
        root.handlers[:] = handlers
        root.setLevel(level)
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def unknown_filter(lines: list[Line]) -> None:
    lines[0]["policy"] = ("apiVersion: scheduler-extender/v1\nkind: ExtenderPolicy\n"
                          "plugins:\n  filter:\n    enabled: [{name: Foo}]\n")


def metadata_not_an_object(lines: list[Line]) -> None:
    lines[1]["object"] = {"metadata": 5}


def unknown_kind(lines: list[Line]) -> None:
    lines[2]["kind"] = "Bogus"


def worker_a2_cpu(lines: list[Line]) -> None:
    """A state change the replies see (worker-a2 with 1 CPU): a mismatch, not an error."""
    (node,) = [line for line in lines if line.get("kind") == "Node"
               and line["object"]["metadata"]["name"] == "worker-a2"]
    node["object"]["status"]["allocatable"]["cpu"] = "1"


@pytest.mark.parametrize(("change", "problem"), [
    (unknown_filter, f"1: the header's policy ({POLICY}) is invalid: "
                     "plugins.filter.enabled[0].name: unknown plugin 'Foo' (known: "),
    (metadata_not_an_object, "2: cannot replay this load entry: Expected `object`, got "
                             "`int` - at `$.metadata`"),
    (unknown_kind, "3: cannot replay this load entry: unknown kind 'Bogus' (known: "
                   f"{', '.join(registry.KINDS)})"),
], ids=["policy", "object", "kind"])
def test_a_corrupt_recording_is_one_line_naming_the_file_and_line(
        good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        change: Callable[[list[Line]], None], problem: str) -> None:
    bad = edited(good, tmp_path / "recording-1.jsonl", change)
    code, out, errors = replay(capsys, bad)
    assert (code, out) == (2, "")
    assert len(errors) == 1 and errors[0].startswith(f"extender replay: {bad}:{problem}"), errors


def test_a_corrupt_entry_while_a_bind_is_held_is_still_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The replay stops with m0's bind held at Permit: abandoning it is no failure to log.
    _, path = record_rejected_holds(tmp_path, serve.stop_holding, [])

    def unknown_resource(lines: list[Line]) -> None:
        at = next(i for i, line in enumerate(lines) if line["record"] == "in")
        lines.insert(at + 1, {"record": "apply", "t": lines[at]["t"], "w": lines[at]["w"],
                              "resource": "bogus", "object": {}})

    bad = edited(path, tmp_path / "bad" / "recording-1.jsonl", unknown_resource)
    line = next(n for n, text in enumerate(bad.read_text().splitlines(), start=1)
                if '"bogus"' in text)
    assert replay(capsys, bad) == (2, "", [
        f"extender replay: {bad}:{line}: cannot replay this apply entry: unknown resource "
        "'bogus'"])


def test_a_bad_recording_does_not_hide_the_others_reports(
        good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "rec"
    folder.mkdir()
    shutil.copy(good, folder / "recording-1.jsonl")
    edited(good, folder / "recording-2.jsonl", worker_a2_cpu)
    bad = edited(good, tmp_path / "bad.jsonl", unknown_kind)
    code, out, errors = replay(capsys, folder, bad)
    assert code == 2
    reports = out.splitlines()
    assert reports[0] == (f"{folder}/recording-1.jsonl: 8 replies compared, 0 mismatch(es), "
                          "0 skipped")
    assert reports[1].startswith(f"{folder}/recording-2.jsonl: ")
    assert reports[2].startswith("  exchange 1: POST /filter, pod default/api-7d9f: reply "
                                 "differs")
    assert [e.split(": cannot")[0] for e in errors] == [f"extender replay: {bad}:3"]


def test_a_mismatch_alone_exits_1(good: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    changed = edited(good, tmp_path / "recording-1.jsonl", worker_a2_cpu)
    code, out, errors = replay(capsys, good, changed)
    assert (code, errors) == (1, [])
    assert "8 replies compared, 0 mismatch(es)" in out.splitlines()[0]


def test_no_recording_found_names_where_it_looked(
        good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, errors = replay(capsys, good, empty, tmp_path / "missing.jsonl")
    assert code == 2
    assert out.startswith(f"{good}: 8 replies compared, 0 mismatch(es)")
    assert errors == [f"extender replay: no recording found in {empty} (recording-<n>.jsonl "
                      "or .jsonl.gz, searched below it too)",
                      f"extender replay: {tmp_path / 'missing.jsonl'}: No such file or "
                      "directory"]
