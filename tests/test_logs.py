"""Structured JSON log lines."""

from __future__ import annotations

import io
import json
import logging

from extender.logs import JsonFormatter


def capture() -> tuple[logging.Logger, io.StringIO]:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("test.logs")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel("INFO")
    return logger, buffer


def lines(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_request_fields_extras_and_exceptions_are_one_json_object_per_line():
    logger, buffer = capture()
    logger.info("filter ok", extra={"fields": {"verb": "filter", "nodes": 500, "duration_ms": 0.3}})
    logger.warning("state %s", "stale", extra={"resource": "pods", "odd": object()})
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed")
    first, second, third = lines(buffer)
    assert {k: first[k] for k in ("level", "logger", "msg", "verb", "nodes", "duration_ms")} == {
        "level": "info", "logger": "test.logs", "msg": "filter ok", "verb": "filter",
        "nodes": 500, "duration_ms": 0.3}
    assert first["ts"].endswith("Z") and len(first["ts"]) == len("2026-11-21T01:19:09.236Z")
    assert second["msg"] == "state stale" and second["resource"] == "pods"
    assert second["odd"].startswith("<object object")
    assert third["level"] == "error" and "ValueError: boom" in third["exception"]
