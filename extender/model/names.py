"""Kubernetes name and value rules (apimachinery `validation`), Go's integer parsing, and the
"did you mean" of a mistyped name."""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SIGNED_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def qualified_name_errors(name: str) -> list[str]:
    """`IsQualifiedName`: an optional DNS-subdomain prefix and '/', then a 63-character name."""
    parts = name.split("/")
    if len(parts) == 1:
        prefix, short = "", parts[0]
    elif len(parts) == 2:
        prefix, short = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        if len(prefix) > 253:
            return ["prefix part must be no more than 253 characters"]
        if not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return ["prefix part must be a lowercase DNS subdomain (e.g. 'example.com')"]
    else:
        return ["a qualified name has at most one '/' (optional prefix, then a name)"]
    if not short:
        return ["name part must be non-empty"]
    if len(short) > 63:
        return ["name part must be no more than 63 characters"]
    if not _QUALIFIED_NAME_PART.fullmatch(short):
        return ["name part must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                "'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]
    return []


def label_value_errors(value: str) -> list[str]:
    """`IsValidLabelValue`'s messages, word for word."""
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if value and not _QUALIFIED_NAME_PART.fullmatch(value):
        errors.append("a valid label must be an empty string or consist of alphanumeric "
                      "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
    return errors


def go_quote(text: str) -> str:
    """Go's %q for the plain strings label rules print."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@lru_cache(maxsize=4096)
def is_qualified_name(name: str) -> bool:
    return not qualified_name_errors(name)


@lru_cache(maxsize=4096)
def is_label_value(value: str) -> bool:
    """`IsValidLabelValue`: empty, or up to 63 alphanumerics, '-', '_', '.' that start and end
    with an alphanumeric."""
    return value == "" or (len(value) <= 63 and _QUALIFIED_NAME_PART.fullmatch(value) is not None)


def parse_int64(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 10, 64)`: an optional sign and ASCII digits, in range."""
    if not _SIGNED_INT.fullmatch(text):
        return None
    number = int(text, 10)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def suggest(key: str, known: list[str]) -> str:
    """A ` (did you mean X?)` hint: case-insensitive twin first, then a close spelling."""
    for name in known:
        if name.lower() == key.lower():
            return f" (did you mean {name}?)"
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""
