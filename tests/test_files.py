"""`extender.files.replacing`: a file is replaced whole, or left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from extender.files import replacing


def test_the_written_temporary_replaces_the_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    with replacing(target) as tmp:
        assert tmp.parent == tmp_path and str(os.getpid()) in tmp.name and tmp != target
        tmp.write_text("new")
        assert target.read_text() == "old"  # a reader meanwhile sees the old file
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_failed_write_leaves_the_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), replacing(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("the writer failed")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
