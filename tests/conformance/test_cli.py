"""`python -m conformance` as a command: bad options and files refused before anything is built,
and what a run writes and replays. No Go needed: the oracle is stood in for by the engine at
kube-scheduler 1.36 (whose BalancedAllocation 1.35 does not have), so a run with the engine
at 1.35 disagrees where the real oracle of 1.36.3 does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import conformance.__main__ as cli
from conformance.compare import PLUGINS, engine_answer, weights

ORACLES_RELEASE = "1.36.3"


class _EngineAsOracle:
    """Answers as the oracle does (scores weighted by the profile), from the engine at
    ORACLES_RELEASE."""

    def __init__(self, binary: Path, plugins: tuple[str, ...] = PLUGINS) -> None:
        self.asked: list[tuple[Any, ...]] = []

    def send(self, objects: list[Any], pod: Any, plugin_config: list[Any] | None = None,
             plugins: dict[str, Any] | None = None) -> None:
        self.asked.append((objects, pod, plugin_config, plugins))

    def receive(self) -> dict[str, Any]:
        objects, pod, config, plugins = self.asked.pop(0)
        answer = engine_answer(objects, pod, ORACLES_RELEASE, config, plugins)
        weight = weights(plugins)
        answer["scores"] = {name: {node: score * weight.get(name, 1)
                                   for node, score in scores.items()}
                            for name, scores in answer["scores"].items()}
        return answer

    def close(self) -> None:
        pass


class _Built(Exception):
    """Raised where the oracle would be built: the options were taken."""


def _refuse_to_build(version: str, progress: Any = None, flavour: str = "in-tree") -> Path:
    raise _Built(version, flavour)


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "build_oracle", lambda version, progress, flavour: Path("oracle"))
    monkeypatch.setattr(cli, "Oracle", _EngineAsOracle)


@pytest.fixture
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "build_oracle", _refuse_to_build)
    monkeypatch.setattr(cli, "scheduler_plugins_kubernetes", lambda: "1.34.4")


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    try:
        status = cli.main(argv)
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out.splitlines(), err


@pytest.mark.usefixtures("stand_in")
def test_a_case_written_with_another_engine_replays_with_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The engine's minor is written with the case and used again: replayed alone, it still
    disagrees, and it is written under its own name and origin, not the replay's position and
    the default seed (where it would overwrite seed 1's case 0)."""
    first = tmp_path / "first"
    status, lines, _ = _run(["--cases", "3", "--seed", "9", "--kubernetes-version",
                             ORACLES_RELEASE, "--engine-version", "1.35", "--out", str(first)],
                            capsys)
    assert status == 1
    assert lines[0].startswith(f"kube-scheduler {ORACLES_RELEASE} (the engine at 1.35): 3 cases")
    case_file = json.loads((first / "case-9-2.json").read_text())
    assert {k: case_file[k] for k in ("seed", "index", "flavour", "kubernetes", "engine")} == {
        "seed": 9, "index": 2, "flavour": "in-tree", "kubernetes": ORACLES_RELEASE,
        "engine": "1.35"}
    again = tmp_path / "again"
    again.mkdir()
    (again / "case-1-0.json").write_text("seed 1's own case\n")
    status, lines, _ = _run(["--replay", str(first / "case-9-2.json"), "--out", str(again)],
                            capsys)
    assert status == 1
    assert lines[0].startswith(f"kube-scheduler {ORACLES_RELEASE} (the engine at 1.35): 1 cases")
    assert lines[-1] == "conformance: 0/1 cases agree"
    assert sorted(p.name for p in again.iterdir()) == ["case-1-0.json", "case-9-2.json"]
    assert (again / "case-1-0.json").read_text() == "seed 1's own case\n"
    replayed = json.loads((again / "case-9-2.json").read_text())
    assert (replayed["seed"], replayed["index"], replayed["engine"]) == (9, 2, "1.35")
    # A flag given still says otherwise: the engine at the oracle's minor agrees.
    status, lines, _ = _run(["--replay", str(first / "case-9-2.json"), "--engine-version",
                             "1.36"], capsys)
    assert (status, lines[-1]) == (0, "conformance: 1/1 cases agree")


@pytest.mark.usefixtures("stand_in")
def test_each_disagreeing_case_is_named_with_its_kinds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After the documented summary, one line per written case; the last line stays the
    count."""
    out = tmp_path / "out"
    status, lines, _ = _run(["--cases", "3", "--seed", "9", "--kubernetes-version",
                             ORACLES_RELEASE, "--engine-version", "1.35", "--out", str(out)],
                            capsys)
    assert status == 1
    written = lines.index(f"disagreements written to {out}")
    assert lines[written + 1:] == [
        "  case-9-2.json: score:NodeResourcesBalancedAllocation, total",
        "conformance: 2/3 cases agree"]
    assert sorted(p.name for p in out.iterdir()) == ["case-9-2.json"]


@pytest.mark.usefixtures("stand_in")
def test_the_engine_at_the_oracles_minor_is_not_written_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A case says which engine only when `--engine-version` set it apart: replayed with
    another `--kubernetes-version`, the engine follows that one."""
    out = tmp_path / "out"
    status, lines, _ = _run(["--cases", "3", "--seed", "9", "--kubernetes-version", "1.35.4",
                             "--out", str(out)], capsys)
    assert status == 1
    assert lines[0].startswith("kube-scheduler 1.35.4: 3 cases")
    case_file = json.loads((out / "case-9-2.json").read_text())
    assert (case_file["kubernetes"], "engine" in case_file) == ("1.35.4", False)
    status, lines, _ = _run(["--replay", str(out / "case-9-2.json"), "--kubernetes-version",
                             ORACLES_RELEASE], capsys)
    assert (status, lines[-1]) == (0, "conformance: 1/1 cases agree")


@pytest.mark.usefixtures("nothing_built")
@pytest.mark.parametrize(("argv", "words"), [
    (["--cases", "0"], "argument --cases: must be at least 1, got 0"),
    (["--cases", "-5"], "argument --cases: must be at least 1, got -5"),
    (["--max-nodes", "0"], "argument --max-nodes: must be at least 1, got 0"),
    (["--jobs", "0"], "argument --jobs: must be at least 1, got 0"),
    (["--jobs", "-2"], "argument --jobs: must be at least 1, got -2"),
    (["--kubernetes-version", "1.33.0"],
     "argument --kubernetes-version: the oracle runs kube-scheduler 1.34 or later (the "
     "framework API it is written against), not 1.33.0; older releases are covered by the "
     "engine's transcribed tables only"),
    (["--kubernetes-version", "banana"],
     "argument --kubernetes-version: expected 1.N or 1.N.P (e.g. 1.37.2), got 'banana'"),
    (["--engine-version", "banana"], "argument --engine-version: expected a release the "
                                     "engine follows, 1.N (1.25..1.37), got 'banana'"),
    (["--engine-version", "9.99"], "argument --engine-version: expected a release the "
                                   "engine follows, 1.N (1.25..1.37), got '9.99'"),
    (["--engine-version", "1.20"], "argument --engine-version: expected a release the "
                                   "engine follows, 1.N (1.25..1.37), got '1.20'"),
    (["--kubernetes-version", "1.38.0"], "kube-scheduler 1.38.0: the engine follows "
                                         "1.25..1.37; set --engine-version to compare it with "
                                         "one of those"),
    (["--scheduler-plugins", "--kubernetes-version", "1.36"],
     "--kubernetes-version 1.36: the scheduler-plugins oracle exists for kube-scheduler 1.34.4 "
     "only (the release sigs.k8s.io/scheduler-plugins v0.34.7 is built at); leave "
     "--kubernetes-version out"),
])
def test_a_bad_option_is_a_usage_error_before_anything_is_built(
        argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, err = _run(argv, capsys)
    assert (status, lines) == (2, [])
    assert err.splitlines()[-1] == f"python -m conformance: error: {words}"


@pytest.mark.usefixtures("nothing_built")
def test_an_out_that_cannot_be_written_is_refused_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    for out, words in ((a_file, f"{a_file} is not a directory"),
                       (a_file / "sub", f"{a_file / 'sub'}: {a_file} is not a directory"),
                       (Path("/proc/conformance"), "/proc/conformance: cannot write in /proc (")):
        status, _, err = _run(["--cases", "1", "--out", str(out)], capsys)
        assert status == 2
        # (/proc's reason differs between root and other users)
        assert err.splitlines()[-1].startswith(
            f"python -m conformance: error: argument --out: {words}")
    # A directory still to be made is not made before a disagreement needs it.
    with pytest.raises(_Built):
        cli.main(["--cases", "1", "--out", str(tmp_path / "new" / "dir")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.usefixtures("nothing_built")
def test_options_that_can_work_reach_the_build() -> None:
    """The release scheduler-plugins' oracle has, said as its minor or whole; the engine at a
    release the oracle is newer than."""
    for argv in (["--scheduler-plugins", "--kubernetes-version", "1.34"],
                 ["--scheduler-plugins", "--kubernetes-version", "1.34.4"],
                 ["--kubernetes-version", "1.38.0", "--engine-version", "1.37"]):
        with pytest.raises(_Built):
            cli.main(argv)


@pytest.mark.usefixtures("nothing_built")
def test_replay_files_are_refused_in_one_line_naming_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"objects": "x", "pod": 3}')
    status, lines, err = _run(["--replay", str(bad)], capsys)
    assert (status, lines) == (2, [])
    assert err == (f"conformance: --replay {bad}: `objects` must be a list of objects, "
                   "got a string\n")


@pytest.mark.usefixtures("nothing_built")
def test_replays_of_another_release_or_flavour_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def case(name: str, **fields: str) -> str:
        path = tmp_path / name
        path.write_text(json.dumps({"objects": [], "pod": {}, **fields}))
        return str(path)

    older = case("older.json", flavour="in-tree", kubernetes="1.36.3")
    newer = case("newer.json", flavour="in-tree", kubernetes="1.37.2")
    status, _, err = _run(["--replay", older, "--replay", newer], capsys)
    assert status == 2
    assert err.splitlines()[-1] == (
        "python -m conformance: error: --replay: the cases were written against kube-scheduler "
        "1.36.3, 1.37.2; replay each release's cases apart (or set one with "
        "--kubernetes-version)")
    # Set for all of them, they run against it; alone, each against its own.
    with pytest.raises(_Built) as built:
        cli.main(["--replay", older, "--replay", newer, "--kubernetes-version", "1.37.2"])
    assert built.value.args == ("1.37.2", "in-tree")
    with pytest.raises(_Built) as built:
        cli.main(["--replay", older])
    assert built.value.args == ("1.36.3", "in-tree")
    # scheduler-plugins' oracle has one release: another asked for is refused, not ignored.
    quota = case("quota.json", flavour="scheduler-plugins", kubernetes="1.34.4")
    status, _, err = _run(["--replay", quota, "--kubernetes-version", "1.37.2"], capsys)
    assert status == 2
    assert "the scheduler-plugins oracle exists for kube-scheduler 1.34.4 only" in err
    with pytest.raises(_Built) as built:
        cli.main(["--replay", quota])
    assert built.value.args == ("1.34.4", "scheduler-plugins")

