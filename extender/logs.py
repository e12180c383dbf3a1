"""Logging in kube-scheduler's two formats, chosen with `--logging-format`.

- `text` (the default): klog's text line,
  `I1120 12:00:00.123456   12345 observe.py:40] "filter ok" verb="filter" nodes=6`
  (severity I/W/E, local date and time to the microsecond, process id, file:line, the quoted
  message, then key=value pairs; a multi-line value is written `key=<` newline, its lines
  indented by a tab, newline, `>`, as klog does).
- `json`: klog's JSON layout, one object per line:
  `{"ts": 1763640000.123, "caller": "api/observe.py:40", "logger": "extender.request",
  "msg": "filter ok", "v": 4, "verb": "filter", ...}`; an error has `"err"` (the exception's
  text, or null) instead of `"v"`, and the traceback, if any, in `"stacktrace"`.

Verbosity is klog's `-v`: a record logged at `V(n)` (the Python level `INFO - n`) is written
when `-v` is at least n. `logging.INFO` is `V(0)`, `logging.DEBUG` is `V(10)`; warnings and
errors are always written. Key/value pairs come from `extra={"fields": {...}}` (merged as is,
the cheap way on hot paths) or else from other `extra=` attributes (found by scanning the
record).
uvicorn's `color_message` attribute is dropped and ANSI escape sequences are removed from
messages and values, so no colour code reaches the output.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from typing import Any, TextIO

import msgspec

FORMATS = ("text", "json")
#: `--log-level` (kept as an alias) → verbosity, or the lowest level written.
LOG_LEVELS = {"debug": 10, "info": 0, "warning": logging.WARNING, "error": logging.ERROR}


def V(verbosity: int) -> int:  # noqa: N802 - klog's name
    """The Python level of klog's `V(verbosity)`: INFO is V(0), INFO-4 is V(4)."""
    return max(1, logging.INFO - verbosity)


#: Request lines (one per scheduler call) are written from `-v 4` up.
REQUEST_LEVEL = V(4)
#: Other libraries' information (matplotlib's font cache, httpx's requests) from `-v 6` up;
#: their warnings and errors always.
THIRD_PARTY_INFO = V(6)
#: Loggers whose information is ours to give at default verbosity.
OWN_LOGGERS = ("extender", "uvicorn", "__main__")
for _v in range(1, 10):
    logging.addLevelName(V(_v), f"V{_v}")

_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "fields", "color_message", "taskName"}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def _clean(text: str) -> str:
    return _ANSI.sub("", text) if "\x1b" in text else text


def _json_default(value: object) -> str:
    return _clean(str(value))


_encoder = msgspec.json.Encoder()
_fallback_encoder = msgspec.json.Encoder(enc_hook=_json_default)


def verbosity_of(record: logging.LogRecord) -> int:
    """klog's verbosity of a record: 0 for INFO and above, n for V(n)."""
    return logging.INFO - record.levelno if record.levelno < logging.INFO else 0


def _pairs(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    if isinstance(fields, dict):
        return dict(fields)
    return {key: value for key, value in vars(record).items()
            if key not in _RESERVED and not key.startswith("_")}


def _error_text(record: logging.LogRecord, pairs: dict[str, Any]) -> str | None:
    """The `err` of an error record: the exception's text, else an `err`/`error` pair."""
    if record.exc_info and record.exc_info[1] is not None:
        exc = record.exc_info[1]
        return _clean(str(exc)) or type(exc).__name__
    for key in ("err", "error"):
        if key in pairs:
            return _clean(str(pairs.pop(key)))
    return None


_callers: dict[str, str] = {}


def _caller(record: logging.LogRecord) -> str:
    """zap's short caller: `package/file.py:line`."""
    short = _callers.get(record.pathname)
    if short is None:
        folder = os.path.basename(os.path.dirname(record.pathname))
        short = _callers[record.pathname] = f"{folder}/{record.filename}" if folder else record.filename
    return f"{short}:{record.lineno}"


#: uvicorn logs its start, stop and errors alike on a logger it names "uvicorn.error": as
#: "uvicorn" a `jq 'select(.logger == "uvicorn.error")'` no longer finds "Started server".
_LOGGER_NAMES = {"uvicorn.error": "uvicorn"}


class KlogJsonFormatter(logging.Formatter):
    """klog's JSON layout: ts (epoch seconds), caller, logger, msg, v (or err), pairs."""

    def format(self, record: logging.LogRecord) -> str:
        pairs = _pairs(record)
        entry: dict[str, Any] = {
            "ts": record.created,
            "caller": _caller(record),
            "logger": _LOGGER_NAMES.get(record.name, record.name),
            "msg": _clean(record.getMessage()),
        }
        if record.levelno >= logging.ERROR:
            entry["err"] = _error_text(record, pairs)
        else:
            entry["v"] = verbosity_of(record)
        for key, value in pairs.items():
            if key not in entry:
                entry[key] = _clean(value) if isinstance(value, str) else value
        if record.exc_info:
            entry["stacktrace"] = _clean(self.formatException(record.exc_info))
        try:
            return _encoder.encode(entry).decode()
        except (TypeError, msgspec.EncodeError):
            return _fallback_encoder.encode(entry).decode()


def _text_value(value: Any) -> str:
    if isinstance(value, str):
        value = _clean(value)
        if "\n" in value:  # klog's multi-line form
            return "<\n" + "".join(f"\t{line}\n" for line in value.splitlines()) + " >"
        return _fallback_encoder.encode(value).decode()
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    try:
        return _encoder.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return _fallback_encoder.encode(value).decode()


class KlogTextFormatter(logging.Formatter):
    """klog's text line: `Lmmdd hh:mm:ss.uuuuuu pid file:line] "msg" key=value ...`."""

    _SEVERITY = {logging.CRITICAL: "E", logging.ERROR: "E", logging.WARNING: "W"}

    def __init__(self) -> None:
        super().__init__()
        self._pid = os.getpid()
        self._second = -1
        self._stamp = ""

    def _timestamp(self, created: float) -> str:
        second = int(created)
        if second != self._second:  # strftime once per second, not once per line
            self._second = second
            self._stamp = time.strftime("%m%d %H:%M:%S", time.localtime(second))
        return f"{self._stamp}.{int((created - second) * 1_000_000):06d}"

    def format(self, record: logging.LogRecord) -> str:
        severity = "I" if record.levelno < logging.WARNING else (
            "E" if record.levelno >= logging.ERROR else "W")
        pairs = _pairs(record)
        parts = [f"{severity}{self._timestamp(record.created)} {self._pid:7d} "
                 f"{record.filename}:{record.lineno}] "
                 f"{_fallback_encoder.encode(_clean(record.getMessage())).decode()}"]
        if record.levelno >= logging.ERROR:
            err = _error_text(record, pairs)
            if err is not None:
                parts.append(f"err={_text_value(err)}")
        parts.extend(f"{key}={_text_value(value)}" for key, value in pairs.items())
        if record.exc_info:
            parts.append(f"stacktrace={_text_value(self.formatException(record.exc_info))}")
        return " ".join(parts)


def formatter(fmt: str) -> logging.Formatter:
    if fmt not in FORMATS:
        raise ValueError(f"unknown logging format {fmt!r} (known: {', '.join(FORMATS)})")
    return KlogJsonFormatter() if fmt == "json" else KlogTextFormatter()


def threshold(verbosity: int | None = None, log_level: str | None = None) -> int:
    """The lowest Python level written: `-v` wins; else `--log-level` (debug = -v 10)."""
    if verbosity is None:
        mapped = LOG_LEVELS.get((log_level or "info").lower(), 0)
        if mapped >= logging.WARNING:
            return mapped
        verbosity = mapped
    if verbosity < 0:
        raise ValueError(f"verbosity must be 0 or more, got {verbosity}")
    return V(verbosity)


def _quiet_third_party(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING or record.name.startswith(OWN_LOGGERS)


def configure_logging(verbosity: int | None = None, fmt: str = "text", *,
                      log_level: str | None = None, stream: TextIO | None = None) -> None:
    """Route every log record (the extender's, uvicorn's, httpx's) through one handler on
    standard error in format `fmt`, written from verbosity `verbosity` (or `log_level`)."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter(fmt))
    level = threshold(verbosity, log_level)
    if level > THIRD_PARTY_INFO:
        handler.addFilter(_quiet_third_party)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.setLevel(logging.NOTSET)
        logger.propagate = True
