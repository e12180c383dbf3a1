"""The project's typing standard: mypy is clean on the engine and the model.

mypy runs in a subprocess with the configuration of pyproject's `[tool.mypy]` (Python 3.11) and
a cache directory of its own under `.mypy_cache/` (gitignored), kept between runs: mypy checks
each cached module against its source's hash and the options, and replaces its cache files
whole, so the cache changes how long a run takes (16 CPU-seconds cold, about 3 warm), never
its answer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("extender/engine", "extender/model")


@pytest.mark.slow
def test_engine_and_model_are_mypy_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache" / "suite"), *PACKAGES],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, f"mypy found errors:\n{result.stdout}{result.stderr}"
