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
    """One hardware parameter: its sympy symbol, spec-file key and LaTeX name.

    ``fallback`` names the spec key whose value stands in when a GPU's spec omits this
    one (a per-path peak that equals the general one on most GPUs); "" for none.
    """

    symbol: sympy.Symbol
    spec_key: str
    latex: str
    description: str
    unit: str
    fallback: str = ""


def _hw(
    name: str, spec_key: str, latex: str, description: str, unit: str, fallback: str = ""
) -> HardwareSymbol:
    symbol = sympy.Symbol(name, positive=True)
    return HardwareSymbol(symbol, spec_key, latex, description, unit, fallback)


PEAK_BF16 = _hw("P_bf16", "bf16_peak_tops", r"P_{\mathrm{bf16}}", "dense bf16 peak", "FLOP/s")
PEAK_FP8 = _hw("P_fp8", "fp8_peak_tops", r"P_{\mathrm{fp8}}", "dense fp8 peak", "FLOP/s")
# Block-scaled (MX) fp8 GEMMs run a different instruction from plain fp8 ones; GeForce
# Blackwell runs it at twice the plain fp8 rate. Absent from a spec = the fp8 peak.
PEAK_FP8_BLOCK = _hw(
    "P_fp8blk",
    "fp8_block_scaled_peak_tops",
    r"P_{\mathrm{fp8,blk}}",
    "dense block-scaled (MX) fp8 peak",
    "FLOP/s",
    fallback=PEAK_FP8.spec_key,
)
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
    PEAK_FP8_BLOCK,
    PEAK_FP4,
    MEM_BW,
    ETA_GEMM,
    ETA_MEM,
    T_LAUNCH,
)

# -- the calibrated model's parameters ------------------------------------------------
# Their values come from roofline/data/calibration.toml and the spec database's measured
# matmul throughput (roofline.calibration), each with its basis: measured, fitted or
# assumed. ``spec_key`` here is the parameter's name in that file.

ETA_GEMM_BF16 = _hw(
    "eta_bf16",
    "gemm_efficiency.bf16",
    r"\eta_{\mathrm{bf16}}",
    "achieved fraction of the bf16 peak in large GEMMs",
    "1",
)
ETA_GEMM_FP8 = _hw(
    "eta_fp8",
    "gemm_efficiency.fp8",
    r"\eta_{\mathrm{fp8}}",
    "achieved fraction of the fp8 peak in large per-tensor/per-row scaled GEMMs",
    "1",
)
ETA_GEMM_FP8_BLOCK = _hw(
    "eta_fp8blk",
    "gemm_efficiency.fp8_block",
    r"\eta_{\mathrm{fp8,blk}}",
    "achieved fraction of the peak that runs large block-scaled fp8 GEMMs (the block-scaled "
    "fp8 peak for MX, the fp8 peak for 1x128)",
    "1",
)
ETA_GEMM_FP4 = _hw(
    "eta_fp4",
    "gemm_efficiency.fp4",
    r"\eta_{\mathrm{fp4}}",
    "achieved fraction of the fp4 peak in large block-scaled fp4 GEMMs",
    "1",
)
ETA_ROW = _hw(
    "eta_row",
    "cast_efficiency.row",
    r"\eta_{\mathrm{row}}",
    "achieved fraction of peak bandwidth in row-wise (dim0) cast kernels and streaming reads",
    "1",
)
ETA_COLUMN = _hw(
    "eta_col",
    "cast_efficiency.column",
    r"\eta_{\mathrm{col}}",
    "achieved fraction of peak bandwidth in column-wise (dim1) or transposing cast kernels",
    "1",
)
ETA_TILE = _hw(
    "eta_tile",
    "cast_efficiency.tile",
    r"\eta_{\mathrm{tile}}",
    "achieved fraction of peak bandwidth in two-dimensional block cast kernels",
    "1",
)
ETA_REDUCE = _hw(
    "eta_red",
    "cast_efficiency.reduce",
    r"\eta_{\mathrm{red}}",
    "achieved fraction of peak bandwidth in amax reduction kernels",
    "1",
)
T_GEMM = _hw(
    "t_gemm",
    "gemm_fixed_latency_s",
    r"t_{\mathrm{gemm}}",
    "fixed latency of a bf16 or fp8 GEMM kernel (added to its roofline time)",
    "s",
)
T_GEMM_FP4 = _hw(
    "t_gemm4",
    "fp4_gemm_fixed_latency_s",
    r"t_{\mathrm{gemm}}^{\mathrm{fp4}}",
    "fixed latency of an fp4 GEMM kernel (added to its roofline time)",
    "s",
)
T_CAST = _hw(
    "t_cast",
    "cast_fixed_latency_s",
    r"t_{\mathrm{cast}}",
    "fixed latency of a cast or pointwise kernel launch (added to its memory time)",
    "s",
)

#: The calibrated model's parameters, in argument order after HARDWARE_SYMBOLS.
CALIBRATION_SYMBOLS: tuple[HardwareSymbol, ...] = (
    ETA_GEMM_BF16,
    ETA_GEMM_FP8,
    ETA_GEMM_FP8_BLOCK,
    ETA_GEMM_FP4,
    ETA_ROW,
    ETA_COLUMN,
    ETA_TILE,
    ETA_REDUCE,
    T_GEMM,
    T_GEMM_FP4,
    T_CAST,
)

#: Symbol -> LaTeX name, for ``sympy.latex(expr, symbol_names=LATEX_NAMES)``.
LATEX_NAMES: dict[sympy.Symbol, str] = {
    hw.symbol: hw.latex for hw in (*HARDWARE_SYMBOLS, *CALIBRATION_SYMBOLS)
}
LATEX_NAMES.update({DIM0: r"d_{0}", DIM1: r"d_{1}"})
