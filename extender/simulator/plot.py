"""A PNG of per-node CPU and memory allocation, before and after the simulation.

Up to `MAX_BARS` nodes: grouped bars per node. Beyond that bars are unreadable, so each panel
shows the nodes ranked by allocation (a sorted profile), before and after.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MAX_BARS = 60
INSTALL_HINT = "pip install 'extender[plot]'"
_PANELS = (("cpuFraction", "CPU requested / allocatable"),
           ("memoryFraction", "memory requested / allocatable"))


class PlotUnavailable(ImportError):
    """matplotlib, which only the `plot` extra installs, is missing."""


def _pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, imported on first use: the server never needs it."""
    try:
        import matplotlib
    except ImportError as exc:
        raise PlotUnavailable(
            f"the PNG plot needs matplotlib, which is not installed: {INSTALL_HINT}") from exc
    matplotlib.use("Agg")  # no display; must precede pyplot
    import matplotlib.pyplot as plt

    return plt


def require_plotting() -> None:
    """Fail now, with the install hint, if `plot_utilization` could not run."""
    _pyplot()


def _percent(usage: dict[str, Any] | None, key: str) -> float:
    value = usage.get(key) if usage else None
    return 100.0 * value if value is not None else 0.0


def plot_utilization(report: dict[str, Any], path: str | Path) -> None:
    """Write the allocation chart of a report (see `report.build_report`) to `path`.

    Raises `PlotUnavailable` (naming `pip install 'extender[plot]'`) without matplotlib.
    """
    plt = _pyplot()
    nodes = report["nodes"]
    many = len(nodes) > MAX_BARS
    width = 10 if many else max(8.0, 0.35 * len(nodes) + 3)
    fig, axes = plt.subplots(2, 1, figsize=(width, 7), constrained_layout=True)
    for ax, (key, title) in zip(axes, _PANELS, strict=True):
        before = [_percent(n["before"], key) for n in nodes]
        after = [_percent(n["after"], key) for n in nodes]
        if many:
            ranks = range(1, len(nodes) + 1)
            ax.plot(ranks, sorted(before, reverse=True), label="before", drawstyle="steps-mid")
            ax.plot(ranks, sorted(after, reverse=True), label="after", drawstyle="steps-mid")
            ax.set_xlabel("nodes, ranked by allocation")
        else:
            xs = range(len(nodes))
            ax.bar([x - 0.2 for x in xs], before, width=0.4, label="before")
            ax.bar([x + 0.2 for x in xs], after, width=0.4, label="after")
            ax.set_xticks(list(xs))
            ax.set_xticklabels([n["name"] for n in nodes], rotation=60, ha="right", fontsize=8)
        ax.set_ylabel("%")
        ax.set_ylim(0, 105)
        ax.set_title(title)
        ax.legend(loc="upper right")
        ax.grid(axis="y", alpha=0.3)
    totals = report["totals"]
    fig.suptitle(f"{totals['scheduled']} scheduled, {totals['pending']} pending, "
                 f"{totals['preempted']} preempted on {len(nodes)} nodes")
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
