"""Permit's waiting pods as kube-scheduler's framework words them (`waiting_pods_map.go`).

Shared by the simulator's Permit stage and the extender's bind verb, which holds a gang's
binds the same way.
"""

from __future__ import annotations

SECOND_NS = 1_000_000_000
#: `RunPermitPlugins` caps a plugin's wait at 15 minutes (framework runtime `maxTimeout`).
MAX_PERMIT_TIMEOUT_NS = 15 * 60 * SECOND_NS


def go_duration(ns: int) -> str:
    """Go's `time.Duration.String()` for a duration (`1m0s`, `10s`, `1h30m0s`, `1.5s`)."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < SECOND_NS:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _fraction(ns, size) + unit
    hours, rest = divmod(ns, 3600 * SECOND_NS)
    minutes, rest = divmod(rest, 60 * SECOND_NS)
    text = _fraction(rest, SECOND_NS) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _fraction(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}." + f"{frac:0{digits}d}".rstrip("0")


def timeout_message(wait_ns: int, plugin: str) -> str:
    """The rejection a waiting pod gets when its timer fires (`newWaitingPod`)."""
    return f"rejected due to timeout after waiting {go_duration(wait_ns)} at plugin {plugin}"
