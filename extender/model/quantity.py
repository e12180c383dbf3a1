"""`resource.Quantity` parsing with apimachinery's exact semantics.

A parsed quantity is held as an exact integer count of nano-units: apimachinery rounds every
non-zero value up (away from zero) to 1n on parse, so nothing finer ever exists, and integer
sums are both exact and fast. Nothing goes through floating point. `value()` / `milli_value()`
round up again to whole units or millis, as `Quantity.Value()` / `MilliValue()` do.

Deliberate departures from apimachinery, all outside anything the API server lets through for
resources (which must be non-negative):

* `value` / `milli_value` return 0 whenever the result does not fit an int64, which is what
  apimachinery's int64 fast path does; its big-decimal path (inputs with more than 18 digits,
  binary suffixes with a fraction, sub-nano inputs) instead wraps around modulo 2^64 and rounds
  a negative inexact value toward zero plus one.
* Magnitudes of 10^1000 and more are clamped to 10^1000 (Go would carry an arbitrarily large
  exponent; every such value overflows int64 either way).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "QuantityError",
    "parse_quantity",
    "value",
    "milli_value",
    "nano_value",
    "format_quantity",
    "quantity_format",
    "scaled_from_nanos",
    "INT64_MAX",
    "DECIMAL_SI",
    "BINARY_SI",
    "DECIMAL_EXPONENT",
]

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
MAX_MILLI_VALUE = INT64_MAX // 1000

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

NANO = 10**9
MILLI_IN_NANOS = 10**6

QuantityLike = str | int | float | None

# Decimal exponents and binary exponents (powers of two) by suffix, as suffix.go.
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT = {e: s for s, e in _BINARY_SUFFIXES.items()}

# parseQuantityString is a greedy scanner; possessive quantifiers keep the regex from finding
# a split the scanner would not: sign, leading zeros, digits, optional `.digits`, then a run of
# suffix characters, one optional sign and digits, and nothing else.
_GRAMMAR = re.compile(r"([+-]?)(0*+)([0-9]*+)(\.[0-9]*+)?+([eEinumkKMGTP]*+[+-]?+[0-9]*+)")
_SIGNED_INT = re.compile(r"[+-]?[0-9]+")

# Values at or beyond 10^_MAX_EXPONENT are clamped there (see module docstring).
_MAX_EXPONENT = 1000
_CLAMP_NANOS = 10 ** (_MAX_EXPONENT + 9)
_MAX_NANOS = INT64_MAX * NANO  # the BinarySI cap, 2^63-1
# Fraction digits kept for binary suffixes: beyond 9 + 60 digits, the rest of the fraction can
# only decide whether to round up, never by how much.
_BINARY_FRACTION_DIGITS = 90

# Go's strings.TrimSpace: unicode.IsSpace. Unlike str.strip() it keeps \x1c-\x1f.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"

# apimachinery's three errors (ErrFormatWrong, ErrSuffix, ErrNumeric)
_ERR_FORMAT = r"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_ERR_SUFFIX = "unable to parse quantity's suffix"
_ERR_NUMERIC = "unable to parse numeric part of quantity"


class QuantityError(ValueError):
    """A string that apimachinery would refuse as a quantity."""


def _invalid(raw: object, reason: str) -> QuantityError:
    return QuantityError(f"invalid quantity {raw!r}: {reason}")


class _Parsed(NamedTuple):
    nanos: int
    format: str


_ZERO = _Parsed(0, DECIMAL_SI)


def _round_away(n: int, d: int) -> int:
    """n / d rounded away from zero, for d > 0."""
    q = -(-abs(n) // d)
    return q if n >= 0 else -q


def _parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None where Go returns an error."""
    if not _SIGNED_INT.fullmatch(text):
        return None
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > 19:  # also keeps int() clear of its 4300-digit limit
        return None
    number = int(digits or "0")
    if text[0] == "-":
        number = -number
    return number if INT64_MIN <= number <= INT64_MAX else None


@lru_cache(maxsize=4096)
def _parse(text: str) -> _Parsed:
    """ParseQuantity: exact value in nano-units and the remembered Format."""
    match = _GRAMMAR.fullmatch(text) if text else None
    if match is None:
        raise _invalid(text, _ERR_FORMAT)
    sign, zeros, whole, dot_frac, suffix = match.groups()
    frac = dot_frac[1:] if dot_frac else ""

    if suffix in _DECIMAL_SUFFIXES:
        base, exponent, fmt = 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    elif suffix in _BINARY_SUFFIXES:
        base, exponent, fmt = 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    elif len(suffix) > 1 and suffix[0] in "eE":
        parsed = _parse_int64(suffix[1:])
        if parsed is None:
            raise _invalid(text, _ERR_SUFFIX)
        # suffix.go converts the int64 exponent with int32(parsed), which wraps.
        base, exponent, fmt = 10, ((parsed + 2**31) % 2**32) - 2**31, DECIMAL_EXPONENT
    else:
        raise _invalid(text, _ERR_SUFFIX)

    if not (zeros or whole or frac):
        # "", "+", ".", "Mi" parse as zero on the int64 fast path. Outside it, inf.Dec is handed
        # the digit-less number text and fails ("Ei", "Pi", "e-10" are invalid).
        if base == 10:
            fast = exponent >= -9
        else:
            fast = 15 - 1 - (exponent * 3) // 10 - 1 >= 0
        if not fast:
            raise _invalid(text, _ERR_NUMERIC)
        return _Parsed(0, fmt)

    nanos = _decimal_nanos(whole, frac, exponent) if base == 10 else _binary_nanos(whole, frac, exponent)
    if fmt == BINARY_SI and 0 < nanos < NANO:
        fmt = DECIMAL_SI  # a BinarySI value strictly between 0 and 1 switches format
    return _Parsed(-nanos if sign == "-" else nanos, fmt)


def _decimal_nanos(whole: str, frac: str, exponent: int) -> int:
    """|whole.frac| * 10^exponent in nano-units, rounded up."""
    digits = (whole + frac).lstrip("0")
    if not digits:
        return 0
    if len(digits) + exponent - len(frac) > _MAX_EXPONENT:  # value >= 10^_MAX_EXPONENT
        return _CLAMP_NANOS
    shift = exponent + 9 - len(frac)
    if shift >= 0:
        return int(digits) * 10**shift
    cut = len(digits) + shift
    if cut <= 0:
        return 1
    nanos = int(digits[:cut])
    return nanos + 1 if digits[cut:].strip("0") else nanos


def _binary_nanos(whole: str, frac: str, exponent: int) -> int:
    """|whole.frac| * 2^exponent in nano-units, rounded up and capped at 2^63-1."""
    if len(whole) > 19:  # >= 10^19 > 2^63 before the multiplier
        return _MAX_NANOS
    tail = False
    if len(frac) > _BINARY_FRACTION_DIGITS:
        tail = bool(frac[_BINARY_FRACTION_DIGITS:].strip("0"))
        frac = frac[:_BINARY_FRACTION_DIGITS]
    scaled = (int(whole + frac or "0") << exponent) * NANO
    nanos, remainder = divmod(scaled, 10 ** len(frac))
    if remainder or tail:
        nanos += 1
    return min(nanos, _MAX_NANOS)


def _parse_text(text: str) -> Fraction:
    """`ParseQuantity(text)` as an exact fraction; whitespace is not accepted."""
    return Fraction(_parse(text).nanos, NANO)


def _parse_raw(raw: QuantityLike) -> _Parsed:
    """`Quantity.UnmarshalJSON` on an already-decoded JSON value."""
    if type(raw) is str:  # the common case first; strings are cached by `_parse`
        return _parse(raw.strip(_GO_SPACE))
    if raw is None:
        return _ZERO
    if isinstance(raw, bool):
        raise _invalid(raw, "not a string or a number")
    if isinstance(raw, int):
        # A bare JSON number is parsed from its text; an int's text is plain digits.
        magnitude = min(abs(raw) * NANO, _CLAMP_NANOS)
        return _Parsed(-magnitude if raw < 0 else magnitude, DECIMAL_SI)
    if isinstance(raw, float):
        # The JSON text is gone; repr() is the shortest text that reads back as this float.
        return _parse(repr(raw))
    if isinstance(raw, str):
        return _parse(raw.strip(_GO_SPACE))
    raise _invalid(raw, "not a string or a number")


# Raw JSON text -> nanos, the hot path of request aggregation (a plain dict beats lru_cache).
_TEXT_NANOS: dict[str, int] = {}
_TEXT_NANOS_MAX = 65536


def nano_value(raw: QuantityLike) -> int:
    """The exact value in nano-units (`ScaledValue(Nano)` without the int64 limit).

    JSON semantics as `parse_quantity`."""
    if type(raw) is str:
        nanos = _TEXT_NANOS.get(raw)
        if nanos is None:
            nanos = _parse(raw.strip(_GO_SPACE)).nanos
            if len(_TEXT_NANOS) >= _TEXT_NANOS_MAX:
                _TEXT_NANOS.clear()
            _TEXT_NANOS[raw] = nanos
        return nanos
    return _parse_raw(raw).nanos


def parse_quantity(raw: QuantityLike) -> Fraction:
    """Parse a quantity as it appears in a Kubernetes JSON object.

    Strings are trimmed of surrounding whitespace (as `Quantity.UnmarshalJSON` does), bare JSON
    numbers are accepted, and `None` is zero.
    """
    return Fraction(_parse_raw(raw).nanos, NANO)


def quantity_format(raw: QuantityLike) -> str:
    """The Format apimachinery remembers for a parsed quantity (`DecimalSI`, `BinarySI` …)."""
    return _parse_raw(raw).format


def scaled_from_nanos(nanos: int, unit_nanos: int) -> int:
    """`nanos / unit_nanos` rounded away from zero; 0 if outside int64, like the int64 path."""
    result = _round_away(nanos, unit_nanos)
    return result if -INT64_MAX <= result <= INT64_MAX else 0


def value(raw: QuantityLike) -> int:
    """`Quantity.Value()`: whole units, rounded up (away from zero); 0 on int64 overflow."""
    return scaled_from_nanos(nano_value(raw), NANO)


def milli_value(raw: QuantityLike) -> int:
    """`Quantity.MilliValue()`: thousandths, rounded up; 0 on int64 overflow as apimachinery."""
    return scaled_from_nanos(nano_value(raw), MILLI_IN_NANOS)


def _nanos_of(q: QuantityLike | Fraction) -> tuple[int, str]:
    if isinstance(q, Fraction):
        scaled = q * NANO
        if scaled.denominator == 1:
            return scaled.numerator, DECIMAL_SI
        # Quantities never hold anything finer than 1n: round up as ParseQuantity would.
        return _round_away(scaled.numerator, scaled.denominator), DECIMAL_SI
    parsed = _parse_raw(q)
    return parsed.nanos, parsed.format


def format_quantity(q: QuantityLike | Fraction, fmt: str | None = None) -> str:
    """The canonical string apimachinery emits (`CanonicalizeBytes`), not the echoed input.

    `q` is anything `parse_quantity` accepts (its Format is kept unless `fmt` is given) or an
    exact `Fraction` (DecimalSI unless `fmt` is given). An unknown `fmt` means DecimalExponent.
    """
    nanos, parsed_fmt = _nanos_of(q)
    fmt = fmt or parsed_fmt
    if nanos == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 * NANO < nanos < 1024 * NANO or nanos % NANO:
            fmt = DECIMAL_SI  # small or fractional values are shown in decimal, never rounded
        else:
            units = abs(nanos) // NANO
            power = 0
            while units >= 1024 and units % 1024 == 0:
                units //= 1024
                power += 10
            # An exponent with no suffix (only reachable beyond int64) is emitted bare, as Go does.
            return f"{'-' if nanos < 0 else ''}{units}{_BINARY_BY_EXPONENT.get(power, '')}"
    elif fmt not in (DECIMAL_SI, DECIMAL_EXPONENT):
        fmt = DECIMAL_EXPONENT

    digits = str(abs(nanos))
    mantissa = digits.rstrip("0")
    exponent = -9 + len(digits) - len(mantissa)
    pad = exponent % 3  # move the exponent down to a multiple of 3
    mantissa += "0" * pad
    exponent -= pad
    if fmt == DECIMAL_SI:
        suffix = _DECIMAL_BY_EXPONENT.get(exponent, "")  # Go also emits no suffix past E
    else:
        suffix = f"e{exponent}" if exponent else ""
    return f"{'-' if nanos < 0 else ''}{mantissa}{suffix}"
