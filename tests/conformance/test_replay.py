"""`--replay`'s files read back: what a case ran against, and files that are not cases refused
naming the file and what is wrong (no Go needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.replay import ReplayError, read_case, replay_settings


def _file(tmp_path: Path, name: str = "case.json", **fields: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"objects": [], "pod": {}, "pluginConfig": [], "plugins": {},
                                **fields}))
    return path


def test_a_written_case_replays_against_its_own_flavour_release_and_engine(
        tmp_path: Path) -> None:
    def settings(*cases: dict, **given: bool) -> tuple[str, str | None, str | None]:
        paths = [_file(tmp_path, f"c{i}.json", **c) for i, c in enumerate(cases)]
        return replay_settings([read_case(p) for p in paths], **given)

    assert settings({"flavour": "scheduler-plugins", "kubernetes": "1.34.4"}) == (
        "scheduler-plugins", "1.34.4", None)
    assert settings({"flavour": "in-tree", "kubernetes": "1.36.3", "engine": "1.35"},
                    {"flavour": "in-tree", "kubernetes": "1.36.3", "engine": "1.35"}) == (
        "in-tree", "1.36.3", "1.35")
    # Written before the flavour was: a profile naming a scheduler-plugins plugin tells.
    legacy = {"plugins": {"multiPoint": {"enabled": [{"name": "CapacityScheduling"}]}}}
    assert settings(legacy) == ("scheduler-plugins", None, None)
    assert settings({}) == ("in-tree", None, None)
    # A case that did not record its release goes with the others'.
    assert settings({"kubernetes": "1.36.3"}, {}) == ("in-tree", "1.36.3", None)
    with pytest.raises(ValueError, match="both the in-tree and the scheduler-plugins"):
        settings(legacy, {"flavour": "in-tree"})


def test_cases_of_different_releases_or_engines_are_not_run_against_one(
        tmp_path: Path) -> None:
    """Each case replays against what it was written with: two releases (or two engine
    minors) cannot both be, unless the flag sets that side for all of them."""
    two_releases = [read_case(_file(tmp_path, "a.json", kubernetes="1.36.3")),
                    read_case(_file(tmp_path, "b.json", kubernetes="1.37.2"))]
    with pytest.raises(ValueError, match=r"kube-scheduler 1\.36\.3, 1\.37\.2; replay each "):
        replay_settings(two_releases)
    assert replay_settings(two_releases, release_given=True) == ("in-tree", None, None)
    two_engines = [read_case(_file(tmp_path, "c.json", kubernetes="1.36.3", engine="1.35")),
                   read_case(_file(tmp_path, "d.json", kubernetes="1.36.3"))]
    with pytest.raises(ValueError, match=r"the engine at 1\.35, the oracle's"):
        replay_settings(two_engines)
    assert replay_settings(two_engines, engine_given=True) == ("in-tree", "1.36.3", None)


def test_a_replayed_case_keeps_its_origin(tmp_path: Path) -> None:
    written = read_case(_file(tmp_path, "anything.json", seed=9, index=2))
    assert (written.name, written.origin) == ("case-9-2.json", {"seed": 9, "index": 2})
    # Without one, named after its file and apart from every generated case's name.
    bare = read_case(_file(tmp_path, "case-1-0.json"))
    assert (bare.name, bare.origin) == ("replay-case-1-0.json", {})


@pytest.mark.parametrize(("content", "words"), [
    ("{}", "no `objects`: a written case has `objects` (a list of objects) and `pod` (an "
           "object)"),
    ('{"objects": []}', "no `pod`: a written case has `objects` (a list of objects) and `pod` "
                        "(an object)"),
    ("[1, 2]", "expected a JSON object (a case `python -m conformance` wrote), got a list"),
    ('{"objects": "x", "pod": 3}', "`objects` must be a list of objects, got a string"),
    ('{"objects": [{}, 3], "pod": {}}', "`objects` must be a list of objects; item 1 is a number"),
    ('{"objects": [], "pod": 3}', "`pod` must be an object, got a number"),
    ('{"objects": [], "pod": {}, "plugins": []}', "`plugins` must be an object, got a list"),
    ('{"objects": [], "pod": {}, "pluginConfig": {}}',
     "`pluginConfig` must be a list of objects, got an object"),
    ('{"objects": [], "pod": {}, "flavour": "x"}',
     "`flavour` must be one of in-tree, scheduler-plugins, got 'x'"),
    ('{"objects": [], "pod": {}, "kubernetes": "1.33.0"}',
     "`kubernetes`: the oracle runs kube-scheduler 1.34 or later (the framework API it is "
     "written against), not 1.33.0; older releases are covered by the engine's transcribed "
     "tables only"),
    ('{"objects": [], "pod": {}, "engine": "banana"}',
     "`engine`: expected a release the engine follows, 1.N (1.25..1.37), got 'banana'"),
    ('{"objects": [], "pod": {}, "seed": "9"}', "`seed` must be a number, got a string"),
    ('{"objects": [], \n}', "not JSON: Expecting property name enclosed in double quotes: "
                            "line 2 column 1 (char 17)"),
])
def test_a_file_that_is_not_a_case_is_refused_naming_it(tmp_path: Path, content: str,
                                                        words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ReplayError) as refused:
        read_case(path)
    assert str(refused.value) == f"--replay {path}: {words}"


def test_an_unreadable_file_is_refused_naming_it(tmp_path: Path) -> None:
    gone = tmp_path / "gone.json"
    with pytest.raises(ReplayError) as refused:
        read_case(gone)
    assert str(refused.value) == f"--replay {gone}: No such file or directory"
    undecodable = tmp_path / "latin1.json"
    undecodable.write_bytes(b'{"objects": [], "pod": {"name": "\xe9"}}')
    with pytest.raises(ReplayError) as refused:
        read_case(undecodable)
    assert str(refused.value) == (f"--replay {undecodable}: not UTF-8 text (invalid "
                                  "continuation byte at byte 33)")
