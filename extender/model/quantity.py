"""`resource.Quantity` parsing with apimachinery's exact semantics.

Values are kept as exact fractions; nothing goes through floating point. Non-zero values are
rounded up (away from zero) to nano precision on parse, as apimachinery does, and `value()` /
`milli_value()` round up again to whole units or millis.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

__all__ = ["QuantityError", "parse_quantity", "value", "milli_value", "INT64_MAX"]

INT64_MAX = 2**63 - 1
MAX_MILLI_VALUE = INT64_MAX // 1000

_DECIMAL_SI = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_BINARY_SI = {
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = 10**9


class QuantityError(ValueError):
    """A string that apimachinery would refuse as a quantity."""


def _ceil_away(x: Fraction) -> int:
    """Round away from zero to an integer."""
    if x >= 0:
        return -((-x.numerator) // x.denominator)
    return x.numerator // x.denominator


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> Fraction:
    n = len(text)
    i = 0
    negative = False
    if i < n and text[i] in "+-":
        negative = text[i] == "-"
        i += 1
    start = i
    while i < n and text[i].isdigit() and text[i].isascii():
        i += 1
    whole = text[start:i]
    frac = ""
    if i < n and text[i] == ".":
        i += 1
        fstart = i
        while i < n and text[i].isdigit() and text[i].isascii():
            i += 1
        frac = text[fstart:i]
    sstart = i
    while i < n and text[i] in _SUFFIX_CHARS:
        i += 1
    if i < n and text[i] in "+-":
        i += 1
    while i < n and text[i].isdigit() and text[i].isascii():
        i += 1
    suffix = text[sstart:i]
    if i != n or n == 0:
        raise QuantityError(f"quantity {text!r} must match the regular expression "
                            r"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    binary = False
    if suffix in _DECIMAL_SI:
        multiplier = _DECIMAL_SI[suffix]
    elif suffix in _BINARY_SI:
        multiplier = _BINARY_SI[suffix]
        binary = True
    elif len(suffix) > 1 and suffix[0] in "eE":
        exponent_text = suffix[1:]
        try:
            exponent = int(exponent_text, 10)
        except ValueError:
            raise QuantityError(f"quantity {text!r} has an unknown suffix {suffix!r}") from None
        if not exponent_text.lstrip("+-").isdigit():
            raise QuantityError(f"quantity {text!r} has an unknown suffix {suffix!r}")
        multiplier = Fraction(10) ** exponent
    else:
        raise QuantityError(f"quantity {text!r} has an unknown suffix {suffix!r}")
    mantissa = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    amount = mantissa * multiplier
    if amount and (amount * _NANO).denominator != 1:
        amount = Fraction(_ceil_away(amount * _NANO), _NANO)
    if binary and amount > INT64_MAX:
        amount = Fraction(INT64_MAX)
    return -amount if negative else amount


def parse_quantity(raw: str | int | float | None) -> Fraction:
    """Parse a quantity as it appears in a Kubernetes JSON object.

    Strings are trimmed of surrounding whitespace (as `Quantity.UnmarshalJSON` does), bare JSON
    numbers are accepted, and `None` is zero.
    """
    if raw is None:
        return Fraction(0)
    if isinstance(raw, bool):
        raise QuantityError(f"quantity {raw!r} is not a string or a number")
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        return _parse_text(repr(raw))
    if not isinstance(raw, str):
        raise QuantityError(f"quantity {raw!r} is not a string or a number")
    return _parse_text(raw.strip())


def _to_value(amount: Fraction) -> int:
    return _ceil_away(amount)


@lru_cache(maxsize=8192)
def value(raw: str | int | float | None) -> int:
    """`Quantity.Value()`: whole units, rounded up (away from zero)."""
    return _to_value(parse_quantity(raw))


@lru_cache(maxsize=8192)
def milli_value(raw: str | int | float | None) -> int:
    """`Quantity.MilliValue()`: thousandths, rounded up; 0 on int64 overflow as apimachinery."""
    millis = _ceil_away(parse_quantity(raw) * 1000)
    if abs(millis) > INT64_MAX:
        return 0
    return millis
