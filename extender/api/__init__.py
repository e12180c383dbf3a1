"""The HTTP service: one thin route per verb, plus health, readiness, version and metrics."""

from extender.api.app import create_app
from extender.api.runtime import Runtime

__all__ = ["Runtime", "create_app"]
