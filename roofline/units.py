"""Numbers as readers see them: one formatter per unit, shared by the site and the diff.

The site's formats are the standard (the diff adopted them): speedups to two decimals
with a multiplication sign (``1.23×``), break-even M as a rounded integer with thousands
separators (or ``< 16`` / ``never (≤ 262,144)`` at the ends of the searched grid), peaks
in TFLOP/s, bandwidth in TB/s, launch floors in µs, fractions as Python's ``g``. A value
that cannot be computed is an em dash (:data:`MISSING`).

:func:`format_value` picks the formatter by a symbol's unit string
(:attr:`roofline.symbols.HardwareSymbol.unit`: ``FLOP/s``, ``bytes/s``, ``s``, ``1``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

#: What a table shows for a value that does not exist (not computable, no peak).
MISSING = "—"

TERA = 1e12
MICRO = 1e-6


def speedup(value: float | None) -> str:
    """A speedup over bf16: 1.234 -> ``1.23×``; None -> ``—``."""
    return MISSING if value is None else f"{value:.2f}×"


def versus_bf16(value: float) -> str:
    """A speedup in words: ``1.23× faster than bf16``, or below 1.00× (as shown)
    ``0.90× the speed of bf16: slower``, never "0.90× faster"."""
    shown = speedup(value)
    if round(value, 2) >= 1:
        return f"{shown} faster than bf16"
    return f"{shown} the speed of bf16: slower"


def speedup_delta(value: float | None) -> str:
    """A change of speedup, signed, to the speedup's precision plus one digit: ``+0.123``."""
    return "" if value is None else f"{value:+.3f}"


def break_even_m(value: float | None, m_first: float, m_last: float) -> str:
    """A break-even M searched over ``m_first`` ... ``m_last``.

    None means the speedup stays below 1 up to the last M (``never (≤ 262,144)``);
    ``-inf`` means it is above 1 from the first M on (``< 16``); otherwise the M rounded.
    """
    if value is None:
        return f"never (≤ {int(m_last):,})"
    if math.isinf(value):
        return f"< {int(m_first)}"
    return f"{round(value):,}"


def count(value: float) -> str:
    """An integer quantity with thousands separators: 4096.0 -> ``4,096``."""
    return f"{value:,.0f}"


def tflops(flops_per_s: float | None) -> str:
    """FLOP/s as a whole number of TFLOP/s, no unit (table columns name it): ``1,979``."""
    return MISSING if flops_per_s is None else f"{flops_per_s / TERA:,.0f}"


def tflops_with_unit(flops_per_s: float | None) -> str:
    """FLOP/s with its unit: ``1,979 TFLOP/s``; a missing (or zero) peak -> ``— (none)``."""
    return f"{tflops(flops_per_s)} {'TFLOP/s' if flops_per_s else '(none)'}"


def tb_per_s(bytes_per_s: float) -> str:
    """Bytes/s as TB/s, no unit: 3.35e12 -> ``3.35``."""
    return f"{bytes_per_s / TERA:g}"


def microseconds(seconds: float) -> str:
    """Seconds as µs with the unit: 2e-6 -> ``2 µs``."""
    return f"{seconds / MICRO:g} µs"


def fraction(value: float) -> str:
    """A dimensionless fraction (an efficiency): 0.78 -> ``0.78``."""
    return f"{value:g}"


def flop_per_byte(value: float) -> str:
    """An arithmetic intensity (ridge point), whole FLOP per byte: ``591``."""
    return count(value)


#: Formatters keyed by a hardware symbol's unit (:mod:`roofline.symbols`).
BY_UNIT: dict[str, Callable[[float], str]] = {
    "FLOP/s": lambda v: f"{tflops(v)} TFLOP/s",
    "bytes/s": lambda v: f"{tb_per_s(v)} TB/s",
    "s": microseconds,
    "1": fraction,
}


def format_value(value: float | None, unit: str) -> str:
    """``value`` in the reader's unit for a symbol measured in ``unit``; None -> ``—``."""
    if value is None:
        return MISSING
    return BY_UNIT[unit](value)
