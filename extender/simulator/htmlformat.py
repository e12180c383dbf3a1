"""How the HTML report writes times, shares and ids (one place for the page, its timeline and
the run's gathering)."""

from __future__ import annotations


def secs(t: float | None) -> str:
    if t is None:
        return "–"
    return f"{t:.3f}".rstrip("0").rstrip(".") + " s" if t else "0 s"


def duration_label(t: float) -> str:
    """An axis label: 0, 250ms, 1.5s, 2m, 1h30m."""
    if t == 0:
        return "0"
    if t < 1:
        return f"{t * 1000:.4g}ms"
    if t < 60:
        return f"{t:.4g}s"
    total = round(t)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    parts = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s else "")
    return parts or "0"


def exact(t: float) -> str:
    """Seconds for a data attribute: to the nanosecond, no trailing zeros."""
    return f"{t:.9f}".rstrip("0").rstrip(".")


def pct(fraction: float | None) -> str:
    return "–" if fraction is None else f"{100 * fraction:.1f}%"


def pod_id(prefix: str, index: int) -> str:
    return f"{prefix}pod-{index}"
