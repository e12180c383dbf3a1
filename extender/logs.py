"""Structured logging: one JSON object per line."""

from __future__ import annotations

import logging
import sys
import time

import msgspec

_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
_encoder = msgspec.json.Encoder()


def _json_default(value: object) -> str:
    return str(value)


_fallback_encoder = msgspec.json.Encoder(enc_hook=_json_default)


class JsonFormatter(logging.Formatter):
    """`fields` (a dict passed as `extra={"fields": ...}`) is merged as is; other extra
    attributes are found by scanning the record, which costs more on the request path."""

    def __init__(self) -> None:
        super().__init__()
        self._second = -1
        self._stamp = ""

    def _timestamp(self, created: float) -> str:
        second = int(created)
        if second != self._second:  # strftime once per second, not once per line
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._stamp}.{int((created - second) * 1000):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": self._timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        else:
            for key, value in vars(record).items():
                if key not in _RESERVED and not key.startswith("_"):
                    entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        try:
            return _encoder.encode(entry).decode()
        except (TypeError, msgspec.EncodeError):
            return _fallback_encoder.encode(entry).decode()


def configure_logging(level: str = "info") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
