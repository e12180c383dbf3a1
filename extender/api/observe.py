"""One structured log line and the metrics for every scheduler request."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from extender.api import metrics
from extender.logs import REQUEST_LEVEL

log = logging.getLogger("extender.request")


@dataclass
class RequestRecord:
    """Filled in by a route as it goes; emitted once when the request ends."""

    verb: str
    started: float = field(default_factory=time.perf_counter)
    pod: str = ""
    nodes: int = 0
    outcome: str = "ok"
    details: dict[str, Any] = field(default_factory=dict)
    #: The nodes caught up with the API server before the handler's second call
    #: (`api.catchup.Behind`); empty on a first call.
    caught_up: tuple[str, ...] = ()

    def finish(self, status: int) -> None:
        elapsed = time.perf_counter() - self.started
        if status >= 500 and self.outcome == "ok":
            # A 5xx counted as ok would hide from the failed-calls share (a request whose
            # task was cancelled ends here with 500 and the outcome it started with).
            # Named outcomes (not_ready, busy) keep their own label on a 503.
            self.outcome = "error"
        metrics.labelled(metrics.REQUEST_DURATION, self.verb).observe(elapsed)
        metrics.labelled(metrics.REQUESTS, self.verb, self.outcome).inc()
        # One line per call from -v 4 up (as kube-scheduler logs per-pod detail); a 5xx always.
        level = REQUEST_LEVEL if status < 500 else logging.ERROR
        if log.isEnabledFor(level):
            log.log(level, "%s %s", self.verb, self.outcome, extra={"fields": {
                "verb": self.verb, "pod": self.pod, "nodes": self.nodes, "outcome": self.outcome,
                "status": status, "duration_ms": round(elapsed * 1000, 3), **self.details,
            }})
