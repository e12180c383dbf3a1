"""The project's typing standard: mypy is clean on the engine and the model.

mypy runs in a subprocess with the configuration of pyproject's `[tool.mypy]` (Python 3.11) and
a cache of its own, so a stale or concurrently written `.mypy_cache` cannot change the answer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("extender/engine", "extender/model")


@pytest.mark.slow
def test_engine_and_model_are_mypy_clean(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache"), *PACKAGES],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, f"mypy found errors:\n{result.stdout}{result.stderr}"
