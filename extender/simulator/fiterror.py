"""kube-scheduler's FitError message (`framework.FitError.Error()`), reference §A.0 step 7.

    0/<N> nodes are available: <PreFilterMsg>. <count> <reason>, <count> <reason>. <PostFilterMsg>.

Every reason of every node status is counted; the `"<count> <reason>"` strings are sorted
lexicographically as whole strings ("1 Too many pods" < "154 …" < "33 …").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Protocol


class _HasReasons(Protocol):
    @property
    def reasons(self) -> tuple[str, ...]: ...


def reasons_histogram(statuses: Iterable[_HasReasons]) -> list[str]:
    """Sorted `"<count> <reason>"` strings."""
    counts: Counter[str] = Counter()
    for status in statuses:
        counts.update(status.reasons)
    return sorted(f"{count} {reason}" for reason, count in counts.items())


def fit_error_message(num_all_nodes: int, statuses: Mapping[str, _HasReasons],
                      pre_filter_msg: str = "", post_filter_msg: str = "") -> str:
    msg = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    else:
        # A PreFilter rejection copies its status to every node; counting them would repeat it.
        histogram = reasons_histogram(statuses.values())
        if histogram:
            msg += f" {', '.join(histogram)}."
    if post_filter_msg:
        msg += f" {post_filter_msg}."
    return msg
