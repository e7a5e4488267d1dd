"""What a hardware or calibration symbol is (:class:`HardwareSymbol`); the symbols
themselves are in :mod:`roofline.symbols`."""

from __future__ import annotations

from dataclasses import dataclass

import sympy


@dataclass(frozen=True)
class HardwareSymbol:
    """One hardware parameter: its sympy symbol, spec-file key and LaTeX name.

    ``fallback`` names the spec key whose value stands in when a GPU's spec omits this
    one (a per-path peak that equals the general one on most GPUs); "" for none.
    ``default`` is the number an absent value stands for, when that number changes
    nothing (sm_count: more SMs than any GEMM has tiles, so waves are not modelled); None
    for none.
    """

    symbol: sympy.Symbol
    spec_key: str
    latex: str
    description: str
    unit: str
    fallback: str = ""
    default: float | None = None


def hardware_symbol(
    name: str,
    spec_key: str,
    latex: str,
    description: str,
    unit: str,
    fallback: str = "",
    default: float | None = None,
) -> HardwareSymbol:
    """A :class:`HardwareSymbol` whose sympy symbol is a positive one named ``name``."""
    symbol = sympy.Symbol(name, positive=True)
    return HardwareSymbol(symbol, spec_key, latex, description, unit, fallback, default)
