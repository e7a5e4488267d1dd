"""Numbers as readers see them: one formatter per unit, shared by the site and the diff.

The site's formats are the standard (the diff adopted them): speedups to two decimals
with a multiplication sign (``1.23×``), break-even M as a rounded integer with thousands
separators (or ``< 16`` / ``never (≤ 262,144)`` at the ends of the searched grid), peaks
in TFLOP/s, bandwidth in TB/s, launch floors in µs, fractions as Python's ``g``, errors as
percentages with one decimal. A value that cannot be computed is an em dash (:data:`MISSING`).
Every module that shows a number to a reader (pages, charts, the CLI, the diff) formats it
here; only the data-file writers keep their own precision, which is storage, not display.

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


def mebibytes(value_bytes: float) -> str:
    """Bytes as MiB with the unit, as device queries print caches: 52428800 -> ``50 MiB``."""
    return f"{value_bytes / 2**20:,.4g} MiB"


def tflops(flops_per_s: float | None) -> str:
    """FLOP/s as a whole number of TFLOP/s, no unit (table columns name it): ``1,979``."""
    return MISSING if flops_per_s is None else f"{flops_per_s / TERA:,.0f}"


def tflops_with_unit(flops_per_s: float | None) -> str:
    """FLOP/s with its unit: ``1,979 TFLOP/s``; a missing (or zero) peak -> ``— (none)``."""
    return f"{tflops(flops_per_s)} {'TFLOP/s' if flops_per_s else '(none)'}"


def tb_per_s(bytes_per_s: float) -> str:
    """Bytes/s as TB/s, no unit: 3.35e12 -> ``3.35``."""
    return f"{bytes_per_s / TERA:g}"


def microseconds(seconds: float, digits: int | None = None) -> str:
    """Seconds as µs with the unit: 2e-6 -> ``2 µs`` (``digits`` significant ones if given)."""
    return f"{significant(seconds / MICRO, digits)} µs"


def microseconds_measured(value_us: float) -> str:
    """A time already in µs, to a tenth with separators: 1234.56 -> ``1,234.6 µs``."""
    return f"{value_us:,.1f} µs"


def significant(value: float, digits: int | None = 3) -> str:
    """``digits`` significant digits (None: Python's ``g``, six at most): 0.77612 -> ``0.776``."""
    return f"{value:g}" if digits is None else f"{value:.{digits}g}"


def magnitude(value: float, digits: int = 4, whole_from: float = 1000) -> str:
    """A positive quantity of any size: whole with separators from ``whole_from`` on
    (``12,345``), else ``digits`` significant digits (``812.3``, ``0.01234``)."""
    return count(value) if value >= whole_from else significant(value, digits)


def percent(
    value: float | None, digits: int = 1, signed: bool = False, missing: str = MISSING
) -> str:
    """A fraction as a percentage: 0.075 -> ``7.5%`` (``+7.5%`` signed); None or NaN ->
    ``missing``."""
    if value is None or math.isnan(value):
        return missing
    return f"{value:+.{digits}%}" if signed else f"{value:.{digits}%}"


def percent_number(value: float | None, digits: int | None = 1, signed: bool = False) -> str:
    """A fraction in percent without the sign, for a column headed "%": 0.075 -> ``7.5``
    (``digits`` None: Python's ``g``, 0.15 -> ``15``); None or NaN -> ``—``.

    Without the percent sign a table cell is a number, which CSV readers take as one.
    """
    if value is None or math.isnan(value):
        return MISSING
    spec = ("+" if signed else "") + ("g" if digits is None else f".{digits}f")
    return format(value * 100, spec)


def band(value: float) -> str:
    """An error band, whole percent: 0.18 -> ``±18%``."""
    return f"±{percent(value, 0)}"


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
