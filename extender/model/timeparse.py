"""RFC 3339 timestamps as Kubernetes writes them, to epoch seconds."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache


@lru_cache(maxsize=4096)
def parse_time(text: str | None) -> float | None:
    """Epoch seconds for an RFC 3339 time; None for null, empty or unparsable."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
