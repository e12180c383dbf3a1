"""A Quantity as apimachinery holds it inside, for the messages that print one by value.

Go's `%v` of a `resource.Quantity` value (a map's, where its pointer `String` method is not
called) prints the struct: `{{value scale} {<nil>} s Format}` — the int64 amount, the
unset inf.Dec, the cached string (empty once arithmetic cleared it) and the format.
scheduler-plugins' Coscheduling words its PreFilter's "resource gap" that way.
"""

from __future__ import annotations

from dataclasses import dataclass

from extender.model.quantity import (
    _BINARY_SUFFIXES,
    _DECIMAL_SUFFIXES,
    _GO_SPACE,
    _GRAMMAR,
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    INT64_MAX,
    INT64_MIN,
    QuantityLike,
    nano_value,
    quantity_format,
)

_MAX_INT64_FACTORS = 18  # apimachinery math.go
_NANO = -9


@dataclass(frozen=True, slots=True)
class GoQuantity:
    """`int64Amount{value, scale}` with the Format and cached string. Where Go leaves the
    int64 path for an inf.Dec (beyond int64, finer than nanos), the amount is kept exactly
    here and printed as if it had not: Go would print a pointer there, which no one matches."""

    value: int
    scale: int
    format: str
    text: str = ""

    def sub(self, value: int, scale: int, fmt: str) -> GoQuantity:
        """`Quantity.Sub` of `NewQuantity`/`NewMilliQuantity`'s amount (value, scale)."""
        out_format = fmt if self.value == 0 else self.format
        amount = _add(self.value, self.scale, -value, scale)
        if amount is None:
            return GoQuantity(self.value - _exact(value, scale - self.scale), self.scale,
                              out_format)
        return GoQuantity(amount[0], amount[1], out_format)

    @property
    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def go_value_string(self) -> str:
        return f"{{{{{self.value} {self.scale}}} {{<nil>}} {self.text} {self.format}}}"


def _exact(value: int, shift: int) -> int:
    return value * 10**shift if shift >= 0 else value // 10**-shift


def _add(a: int, a_scale: int, b: int, b_scale: int) -> tuple[int, int] | None:
    """`int64Amount.Add`: None where it overflows int64 (Go then goes to inf.Dec)."""
    if b == 0:
        return a, a_scale
    if a == 0:
        return b, b_scale
    if a_scale > b_scale:
        a, a_scale = a * 10 ** (a_scale - b_scale), b_scale
    elif b_scale > a_scale:
        b = b * 10 ** (b_scale - a_scale)
    total = a + b
    if not (INT64_MIN <= a <= INT64_MAX and INT64_MIN <= b <= INT64_MAX
            and INT64_MIN <= total <= INT64_MAX):
        return None
    return total, a_scale


def parse_go_quantity(raw: QuantityLike) -> GoQuantity:
    """`ParseQuantity`'s result for a JSON value (a string, or a bare number's text);
    `QuantityError` for one apimachinery refuses."""
    if raw is None:  # JSON null: the zero Quantity
        return GoQuantity(0, 0, "")
    nanos = nano_value(raw)  # refuses what apimachinery refuses
    text = raw.strip(_GO_SPACE) if isinstance(raw, str) else str(raw)
    if text == "0":
        return GoQuantity(0, 0, DECIMAL_SI, "0")
    match = _GRAMMAR.fullmatch(text)
    assert match is not None, text  # nano_value accepted it
    sign, _zeros, num, dot_frac, suffix = match.groups()
    denom = dot_frac[1:] if dot_frac else ""
    num = num or "0"
    if suffix in _DECIMAL_SUFFIXES:
        exponent, fmt = _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    elif suffix in _BINARY_SUFFIXES:
        exponent, fmt = _BINARY_SUFFIXES[suffix], BINARY_SI
    else:
        exponent, fmt = int(suffix[1:]), DECIMAL_EXPONENT
    mantissa, scale = 1, 0
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = num + denom
            value = int(shifted)
            result = value * mantissa
            if INT64_MIN <= result <= INT64_MAX:
                result = -result if sign == "-" else result
                canonical = (exponent % 10 == 0 and value & 0x07 != 0) if fmt == BINARY_SI \
                    else (scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0")
                return GoQuantity(result, scale, fmt, text if canonical else "")
    # inf.Dec (see `GoQuantity`): the exact value, in nano-units, and the format the model
    # keeps (a BinarySI amount below 1 becomes DecimalSI there).
    return GoQuantity(nanos, _NANO, quantity_format(raw))
