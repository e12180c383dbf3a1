"""Fixtures for the node-metrics tests: anyio on asyncio, a real Prometheus per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.loadmetrics.prom import PrometheusServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    """A Prometheus serving the backfilled series of `prom.LOAD` (shared by a module's tests)."""
    server = PrometheusServer(tmp_path_factory.mktemp("prometheus"))
    server.start()
    try:
        yield server
    finally:
        server.stop()
