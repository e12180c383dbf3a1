"""Files written whole: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` to write; it replaces `path` when the block ends, and is
    removed if the block raises. Its name is this process's own, so processes writing the same
    file at once (test workers, bench runs) never move each other's temporary away."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
