"""A run's outcome counts as every view of it shows them: the summary line, the HTML
report's cards and the `--plot` title. Each pod of the report has exactly one of these
statuses, so the counts shown add up to its pod count."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Shown even when 0: what every run is about.
ALWAYS = ("scheduled", "pending", "preempted", "deleted")
#: Shown only when not 0: lifetimes and admission, which most runs do not have.
WHEN_ANY = ("succeeded", "failed", "rejected")


def outcome_counts(totals: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(outcome, count) in the report's order, the ones of `WHEN_ANY` only when not 0."""
    return ([(key, int(totals.get(key) or 0)) for key in ALWAYS]
            + [(key, int(totals[key])) for key in WHEN_ANY if totals.get(key)])


def outcome_text(totals: Mapping[str, Any]) -> str:
    """`26 scheduled, 2 pending, 1 preempted, 0 deleted, 4 succeeded`."""
    return ", ".join(f"{count} {key}" for key, count in outcome_counts(totals))
