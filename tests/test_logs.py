"""Log lines in klog's layouts: JSON (`--logging-format=json`) and text (the default)."""

from __future__ import annotations

import io
import json
import logging
import re
import time

import pytest

from extender.logs import (
    REQUEST_LEVEL,
    KlogJsonFormatter,
    KlogTextFormatter,
    V,
    configure_logging,
    threshold,
)

ANSI = "\x1b[32mINFO\x1b[0m"


def capture(formatter: logging.Formatter, level: int = logging.INFO,
            ) -> tuple[logging.Logger, io.StringIO]:
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(formatter)
    logger = logging.getLogger("test.logs")
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(level)
    return logger, buffer


def lines(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_json_lines_follow_klogs_layout():
    logger, buffer = capture(KlogJsonFormatter(), level=1)
    logger.info("filter ok", extra={"fields": {"verb": "filter", "nodes": 500, "duration_ms": 0.3}})
    logger.log(REQUEST_LEVEL, "request")
    logger.warning("state %s", "stale", extra={"resource": "pods", "odd": object()})
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed")
    logger.error("cannot start", extra={"fields": {"error": "bad policy", "path": "p.yaml"}})
    info, request, warning, error, error2 = lines(buffer)
    assert isinstance(info["ts"], float) and abs(info["ts"] - time.time()) < 60
    assert list(info)[:5] == ["ts", "caller", "logger", "msg", "v"]
    assert {k: info[k] for k in ("msg", "v", "verb", "nodes", "duration_ms", "logger")} == {
        "msg": "filter ok", "v": 0, "verb": "filter", "nodes": 500, "duration_ms": 0.3,
        "logger": "test.logs"}
    assert re.fullmatch(r"tests/test_logs\.py:\d+", info["caller"])
    assert request["v"] == 4
    assert warning["msg"] == "state stale" and warning["v"] == 0 and warning["resource"] == "pods"
    assert warning["odd"].startswith("<object object")
    # Errors carry err (and no v), as klog's ErrorS does; the traceback goes to stacktrace.
    assert error["err"] == "boom" and "v" not in error
    assert "ValueError: boom" in error["stacktrace"]
    assert error2["err"] == "bad policy" and error2["path"] == "p.yaml" and "error" not in error2


def test_json_mode_has_no_ansi_codes_and_drops_uvicorns_colour_message():
    logger, buffer = capture(KlogJsonFormatter())
    # What uvicorn passes: the plain message, plus a coloured copy as `color_message`.
    logger.info("Uvicorn running on %s", "http://x", extra={"color_message": f"{ANSI} running"})
    logger.info(f"{ANSI} coloured by someone", extra={"note": ANSI})
    text = buffer.getvalue()
    assert "\x1b" not in text and "color_message" not in text
    first, second = lines(buffer)
    assert first["msg"] == "Uvicorn running on http://x"
    assert second["msg"] == "INFO coloured by someone" and second["note"] == "INFO"


def test_text_lines_look_like_klogs():
    logger, buffer = capture(KlogTextFormatter())
    logger.info("extender configured", extra={"fields": {"nodes": 6, "policy": "a b",
                                                          "filters": ["X"], "ok": True}})
    logger.warning("watch down")
    try:
        raise RuntimeError("lost")
    except RuntimeError:
        logger.exception("bind failed")
    info, warning, error, *trace = buffer.getvalue().splitlines()
    assert re.fullmatch(r'I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ test_logs\.py:\d+\] "extender configured" '
                        r'nodes=6 policy="a b" filters=\["X"\] ok=true', info), info
    assert warning.startswith("W") and warning.endswith('] "watch down"')
    assert error.startswith("E") and '"bind failed" err="lost" stacktrace=<' in error
    assert trace[0].startswith("\tTraceback") and trace[-1] == " >"


def test_verbosity_thresholds_and_the_log_level_alias():
    assert threshold(0) == logging.INFO and threshold(4) == REQUEST_LEVEL == V(4)
    assert threshold(None, "debug") <= logging.DEBUG  # debug is -v 10: everything
    assert threshold(None, "info") == logging.INFO
    assert threshold(None, "warning") == logging.WARNING
    assert threshold(2, "warning") == V(2)  # -v wins
    with pytest.raises(ValueError):
        threshold(-1)


@pytest.mark.parametrize(("verbosity", "fmt", "written"), [
    (None, "text", False), (0, "json", False), (4, "json", True), (5, "text", True)])
def test_request_lines_only_from_v4(verbosity, fmt, written):
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    stream = io.StringIO()
    try:
        configure_logging(verbosity, fmt, stream=stream)
        logging.getLogger("extender.request").log(REQUEST_LEVEL, "filter ok")
        logging.getLogger("uvicorn.error").info("Started server process [1]",
                                                extra={"color_message": ANSI})
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    out = stream.getvalue()
    assert ("filter ok" in out) is written
    assert "Started server process" in out and "\x1b" not in out
    if fmt == "json":
        assert all(json.loads(line)["v"] in (0, 4) for line in out.splitlines())
        started = next(json.loads(line) for line in out.splitlines() if "Started" in line)
        assert started["logger"] == "uvicorn"  # not uvicorn's "uvicorn.error" for a start


@pytest.mark.parametrize(("verbosity", "shown"), [(None, False), (4, False), (6, True)])
def test_other_libraries_information_only_from_v6(verbosity, shown):
    """matplotlib's "generated new fontManager" is not the user's business at default
    verbosity; another library's warning always is."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    stream = io.StringIO()
    try:
        configure_logging(verbosity, "text", stream=stream)
        logging.getLogger("matplotlib.font_manager").info("generated new fontManager")
        logging.getLogger("matplotlib.font_manager").warning("findfont: Font family not found")
        logging.getLogger("extender.serve").info("serving")
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    out = stream.getvalue()
    assert ("generated new fontManager" in out) is shown
    assert "findfont: Font family not found" in out and "serving" in out
