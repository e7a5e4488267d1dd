"""LaTeX for the model's formulas, printed by sympy from the evaluated expressions.

``symbolic`` prints a formula in named symbols (``P_{\\mathrm{bf16}}``, ``\\eta_{\\mathrm{mem}}``);
``instantiated`` substitutes one GPU's numbers, kept apart from each other (not folded
into one constant) and printed with 4 significant digits, so a reader can see which
figure went where. For the calibrated model, ``instantiated`` also prints the calibration
parameters (``\\eta_{\\mathrm{row}}``, ``t_{\\mathrm{gemm}}`` ...) as the GPU's values.
"""

from __future__ import annotations

import functools

import sympy
from sympy.printing.latex import LatexPrinter

from roofline.calibration.params import CalibratedParameters
from roofline.model.terms import QUANTITY_LATEX
from roofline.specs import GpuSpec
from roofline.symbols import CALIBRATION_SYMBOLS, HARDWARE_SYMBOLS, LATEX_NAMES

SIGNIFICANT_DIGITS = 4


def format_number_latex(value: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """``2.4 \\cdot 10^{12}`` style: at most ``digits`` significant digits, no trailing zeros."""
    text = f"{value:.{digits}g}"
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = f"10^{{{int(exponent)}}}"
    return power if mantissa == "1" else rf"{mantissa} \cdot {power}"


class _Printer(LatexPrinter):
    """sympy's LaTeX printer with short floats and the project's symbol names."""

    def _print_Float(self, expr: sympy.Float) -> str:
        return format_number_latex(float(expr))


_NAMES = {**LATEX_NAMES, **QUANTITY_LATEX}


def symbolic(expr: sympy.Expr) -> str:
    """The formula in the model's named symbols (remembered, as :func:`instantiated`'s:
    the site prints the same few hundred formulas on thousands of pages)."""
    return _printed(expr, frozenset())


def instantiated(
    expr: sympy.Expr, gpu: GpuSpec, calibration: CalibratedParameters | None = None
) -> str:
    """The formula with ``gpu``'s figures in place of the hardware symbols.

    The figures are printed as the symbols' names rather than substituted, so they stay
    apart (``2.4 \\cdot 10^{12} \\cdot 0.92``) instead of folding into one opaque
    constant, the formula keeps its symbolic shape, and no expression is rebuilt. With
    ``calibration`` (the GPU's calibrated parameters) the calibrated model's symbols are
    printed as their values too; without it they keep their names.
    """
    values = gpu.hardware_values()
    figures = {}
    for hw in HARDWARE_SYMBOLS:
        if hw.spec_key in values:
            figures[hw.symbol] = format_number_latex(values[hw.spec_key])
    if calibration is not None:
        numbers = calibration.numbers()
        for hw in CALIBRATION_SYMBOLS:
            if hw.spec_key in numbers:
                figures[hw.symbol] = format_number_latex(numbers[hw.spec_key])
    return _printed(expr, frozenset(figures.items()))


@functools.lru_cache(maxsize=8192)
def _printed(expr: sympy.Expr, figures: frozenset[tuple[sympy.Symbol, str]]) -> str:
    """``expr`` printed with ``figures`` (symbol -> printed number) in place of those
    symbols' names: what it prints depends on these alone, and one GPU's pages and
    model runs print the same totals many times over."""
    return _Printer({"symbol_names": {**_NAMES, **dict(figures)}}).doprint(expr)
