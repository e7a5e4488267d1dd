"""The sympy symbols every formula is written in.

Shape symbols (M, K, N) and hardware parameters stay symbolic in the model; a GPU's
numbers are substituted only to evaluate a formula or to print its instantiated form.
Each hardware symbol is tied to the spec-file key that supplies its value, so the
evaluator, the LaTeX printer and the spec loader agree on one mapping.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

M, K, N = sympy.symbols("M K N", integer=True, positive=True)
SHAPE_SYMBOLS: tuple[sympy.Symbol, sympy.Symbol, sympy.Symbol] = (M, K, N)

# The two dimensions of a tensor being cast; recipes write their kernel bytes in these.
DIM0, DIM1 = sympy.symbols("d_0 d_1", integer=True, positive=True)


@dataclass(frozen=True)
class HardwareSymbol:
    """One hardware parameter: its sympy symbol, spec-file key and LaTeX name."""

    symbol: sympy.Symbol
    spec_key: str
    latex: str
    description: str
    unit: str


def _hw(name: str, spec_key: str, latex: str, description: str, unit: str) -> HardwareSymbol:
    return HardwareSymbol(sympy.Symbol(name, positive=True), spec_key, latex, description, unit)


PEAK_BF16 = _hw("P_bf16", "bf16_peak_tops", r"P_{\mathrm{bf16}}", "dense bf16 peak", "FLOP/s")
PEAK_FP8 = _hw("P_fp8", "fp8_peak_tops", r"P_{\mathrm{fp8}}", "dense fp8 peak", "FLOP/s")
PEAK_FP4 = _hw("P_fp4", "fp4_peak_tops", r"P_{\mathrm{fp4}}", "dense fp4 peak", "FLOP/s")
MEM_BW = _hw(
    "B_mem", "peak_mem_bw_bytes_sec", r"B_{\mathrm{mem}}", "peak memory bandwidth", "bytes/s"
)
ETA_GEMM = _hw(
    "eta_gemm",
    "pct_achievable_gemm_tops",
    r"\eta_{\mathrm{gemm}}",
    "achievable fraction of peak FLOP/s in GEMMs",
    "1",
)
ETA_MEM = _hw(
    "eta_mem",
    "pct_achievable_mem_bw",
    r"\eta_{\mathrm{mem}}",
    "achievable fraction of peak memory bandwidth",
    "1",
)
T_LAUNCH = _hw(
    "t_launch",
    "kernel_launch_overhead_s",
    r"t_{\mathrm{launch}}",
    "kernel launch floor: the least time any kernel takes",
    "s",
)

HARDWARE_SYMBOLS: tuple[HardwareSymbol, ...] = (
    PEAK_BF16,
    PEAK_FP8,
    PEAK_FP4,
    MEM_BW,
    ETA_GEMM,
    ETA_MEM,
    T_LAUNCH,
)

#: Symbol -> LaTeX name, for ``sympy.latex(expr, symbol_names=LATEX_NAMES)``.
LATEX_NAMES: dict[sympy.Symbol, str] = {hw.symbol: hw.latex for hw in HARDWARE_SYMBOLS}
LATEX_NAMES.update({DIM0: r"d_{0}", DIM1: r"d_{1}"})
