"""A PNG of per-node CPU and memory allocation, before and after the simulation.

Up to `MAX_BARS` nodes: grouped bars per node. Beyond that bars are unreadable, so each panel
shows the nodes ranked by allocation (a sorted profile), before and after.

With a replayed utilization (`--utilization`, the report's `utilization`) a second column shows
each node's replayed CPU and memory utilization over virtual time (steps) and its requested
share of allocatable at the sample times and at the end (crosses), one colour and legend entry
per node up to `MAX_LINES` nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extender.simulator.outcomes import outcome_text

MAX_BARS = 60
MAX_LINES = 12  # nodes with their own line and legend entry in the utilization panels
# Installed from its clone, as README's command 1 installs it (nothing is published to PyPI).
INSTALL_HINT = "pip install -e '.[plot]'"
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

    Raises `PlotUnavailable` (naming the `plot` extra's install) without matplotlib.
    """
    plt = _pyplot()
    nodes = report["nodes"]
    many = len(nodes) > MAX_BARS
    width = 10 if many else max(8.0, 0.35 * len(nodes) + 3)
    replay = report.get("utilization")
    if replay is None:
        fig, axes = plt.subplots(2, 1, figsize=(width, 7), constrained_layout=True)
    else:
        fig, grid = plt.subplots(2, 2, figsize=(width + 8, 7), constrained_layout=True)
        axes = grid[:, 0]
        _plot_replay(grid[:, 1], replay, report["totals"]["virtualTimeSeconds"], nodes)
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
    fig.suptitle(f"{outcome_text(report['totals'])} on {len(nodes)} nodes")
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def _plot_replay(axes: Any, replay: dict[str, Any], end: float,
                 nodes: list[dict[str, Any]]) -> None:
    """Replayed utilization (steps) per node over virtual time, and its requested share (x)
    at each sample time and at the end."""
    series = {name: rows for name, rows in replay["nodes"].items() if rows}
    ends = {n["name"]: n["after"] or {} for n in nodes}
    for ax, resource in zip(axes, ("cpu", "memory"), strict=True):
        for i, (name, rows) in enumerate(sorted(series.items())):
            labelled = len(series) <= MAX_LINES
            color = f"C{i % 10}" if labelled else "0.4"
            xs = [r["appliedAtSeconds"] for r in rows] + [max(end, rows[-1]["appliedAtSeconds"])]
            used = [r[f"{resource}Percent"] for r in rows]
            requested = [r[f"{resource}RequestedPercent"] for r in rows]
            ax.step(xs, used + used[-1:], where="post", color=color, linewidth=1.5,
                    label=name if labelled else None)
            # Requests are known at the sample times and at the end, not in between.
            after = ends.get(name, {}).get(f"{resource}Fraction")
            ax.plot(xs, requested + [None if after is None else 100.0 * after],
                    color=color, linestyle="none", marker="x", markersize=5)
        ax.set_xlabel("virtual time (s)")
        ax.set_ylabel("%")
        ax.set_ylim(0, 105)
        ax.set_title(f"{resource}: replayed utilization (line), requested (x)")
        if 0 < len(series) <= MAX_LINES:
            ax.legend(loc="upper right", fontsize=7)
        ax.grid(alpha=0.3)
