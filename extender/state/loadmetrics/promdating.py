"""When a Prometheus query's data was sampled: the dating query of a configured query.

An average over the window says nothing of how old its newest sample is: a node whose exporter
died a minute ago keeps its averages until they leave the window, and load-watcher's provider,
which runs the same queries at the current time, never notices. Where a query's series are
known, one more instant query dates them. That is so for a query of the form

    <fn>_over_time(<selector>[<range>])

(load-watcher's four defaults are), bare or inside `label_replace(…, "dst", "repl", "src",
"regex")` (the relabelling of docs/operations.md). Its dating query is

    timestamp(<selector>) or max_over_time(timestamp(<selector>)[<range>:])

wrapped in the same `label_replace`, so its series name the nodes as the query's do.
`timestamp()` of a selector is the time of the sample it selects: exact while the series is
live; once the series has gone stale (a stale marker, or no sample within the lookback delta)
the subquery finds its newest sample within the range, to a step of the subquery's resolution
(the evaluation interval). Any other query (arithmetic, aggregation, `offset`, …) cannot be
dated: `dating_query` gives None and its nodes are dated at the read.
"""

from __future__ import annotations

import re

# A PromQL string literal (double or single quoted, with escapes).
_STRING = r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)*'"
# `{…}` label matchers, quoted values may hold braces.
_MATCHERS = rf"\{{(?:[^{{}}\"']|{_STRING})*\}}"
_SELECTOR = rf"(?:[A-Za-z_:][A-Za-z0-9_:]*\s*(?:{_MATCHERS})?|{_MATCHERS})"
_RANGE = r"[0-9][0-9a-z]*"  # a duration: 15m, 1h30m, 900s
_OVER_TIME = (rf"[a-z]+_over_time\s*\(\s*(?P<selector>{_SELECTOR})\s*"
              rf"\[\s*(?P<range>{_RANGE})\s*\]\s*\)")
_PLAIN = re.compile(rf"\s*{_OVER_TIME}\s*")
_RELABELLED = re.compile(rf"\s*label_replace\s*\(\s*{_OVER_TIME}\s*,"
                         rf"(?P<args>\s*(?:{_STRING})\s*(?:,\s*(?:{_STRING})\s*){{3}})\)\s*")


def newest_sample(selector: str, window: str) -> str:
    """PromQL: each series of `selector` valued at the time of its newest sample in `window`."""
    return f"timestamp({selector}) or max_over_time(timestamp({selector})[{window}:])"


def dating_query(promql: str) -> str | None:
    """The query dating `promql`'s series (its `{window}` already filled in), or None when
    its series are not known."""
    found = _PLAIN.fullmatch(promql)
    if found is not None:
        return newest_sample(found["selector"].strip(), found["range"])
    found = _RELABELLED.fullmatch(promql)
    if found is not None:
        inner = newest_sample(found["selector"].strip(), found["range"])
        return f"label_replace({inner},{found['args']})"
    return None
