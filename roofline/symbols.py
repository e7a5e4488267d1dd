"""The sympy symbols every formula is written in.

Shape symbols (M, K, N) and hardware parameters stay symbolic in the model; a GPU's
numbers are substituted only to evaluate a formula or to print its instantiated form.
Each hardware symbol is tied to the spec-file key that supplies its value, so the
evaluator, the LaTeX printer and the spec loader agree on one mapping.
"""

from __future__ import annotations

import sympy

from roofline.scoring_symbols import L2_CAPACITY, PHI_L2, T_COLD, T_COLD_CAST
from roofline.symbol_types import HardwareSymbol
from roofline.symbol_types import hardware_symbol as _hw

M, K, N = sympy.symbols("M K N", integer=True, positive=True)
SHAPE_SYMBOLS: tuple[sympy.Symbol, sympy.Symbol, sympy.Symbol] = (M, K, N)
# Experts of a grouped GEMM (a mixture-of-experts layer): M tokens in all, split over G
# groups, each with its own K x N weight. Only the grouped model has this symbol.
G = sympy.Symbol("G", integer=True, positive=True)
GROUPED_SHAPE_SYMBOLS: tuple[sympy.Symbol, ...] = (M, K, N, G)

# The two dimensions of a tensor being cast; recipes write their kernel bytes in these.
DIM0, DIM1 = sympy.symbols("d_0 d_1", integer=True, positive=True)


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

# Only the calibrated model reads it (wave quantization of GEMM tiles). A GPU without it
# counts as 10^12 SMs: more than any shape has tiles, so no wave is ever partly filled.
N_SM = _hw(
    "N_SM",
    "sm_count",
    r"N_{\mathrm{SM}}",
    "streaming multiprocessors (NVIDIA) or compute units (AMD)",
    "SMs",
    default=1e12,
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
    N_SM,
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
    "fixed latency of a GEMM kernel (added to its roofline time)",
    "s",
)
# Block-scaled FP4 GEMM kernels (NVFP4 / MXFP4 on Blackwell) have a fixed cost of their own:
# at M <= 512 a CUTLASS NVFP4 GEMM takes ~10 us where the fp8 one takes ~5 (helion PRs
# #3046 / #3209, vLLM PR #20646), so they do not share t_gemm.
T_GEMM_FP4 = _hw(
    "t_gemm_fp4",
    "fp4_gemm_fixed_latency_s",
    r"t_{\mathrm{gemm,fp4}}",
    "fixed latency of a block-scaled fp4 GEMM kernel (NVFP4, MXFP4; added to its roofline time)",
    "s",
)
# A tile's K loop runs its steps in order: with too few tiles to fill the GPU and no split
# of K, one step's load-to-MMA latency, not the tile's rate, paces it.
T_KSTEP = _hw(
    "t_kstep",
    "gemm_k_step_latency_s",
    r"t_{\mathrm{gemm},k}",
    "latency of one 128-deep K step of a GEMM tile's main loop (floors its compute time)",
    "s",
)
T_CAST = _hw(
    "t_cast",
    "cast_fixed_latency_s",
    r"t_{\mathrm{cast}}",
    "fixed latency of a cast or pointwise kernel launch (added to its memory time)",
    "s",
)

# -- grouped GEMMs and the kernels only grouped or NVFP4 training layers run ------------
# Measured on the GPUs named in roofline/data/calibration.toml (M3, M4, M5 of the
# measurement file); elsewhere assumed (see roofline.calibration.params).

RHO_2D3D = _hw(
    "rho_2d3d",
    "grouped_efficiency.2d3d",
    r"\rho_{\mathrm{2D3D}}",
    "achieved rate of a 2D-3D grouped GEMM (tokens x K @ G x K x N: output, grad_input) over "
    "the dense GEMM of the same format",
    "1",
)
RHO_2D2D = _hw(
    "rho_2d2d",
    "grouped_efficiency.2d2d",
    r"\rho_{\mathrm{2D2D}}",
    "achieved rate of a 2D-2D grouped GEMM (K x tokens @ tokens x N -> G x K x N: grad_weight) "
    "over the dense GEMM of the same format",
    "1",
)

# The bf16 baseline's grouped GEMM (torch._grouped_mm) is another kernel from the
# low-precision one, with its own rate relative to its dense GEMM: an efficiency in
# (0, 1] like rho. Its 2D-2D rate keeps the low-precision kernel's 2D-2D / 2D-3D ratio
# (no bf16 2D-2D grouped GEMM has been timed alone).
RHO_BF16 = _hw(
    "rho_bf16",
    "grouped_efficiency.bf16",
    r"\rho_{\mathrm{bf16}}",
    "achieved rate of a bf16 2D-3D grouped GEMM (torch._grouped_mm) over the dense bf16 "
    "GEMM; its 2D-2D rate is this times rho_2D2D / rho_2D3D",
    "1",
)
# A persistent warp-specialized GEMM (CUTLASS 3 on Hopper, Blackwell) stores one tile while
# it computes the next; one that stores each tile after its last K step exposes the store.
OMEGA_STORE = _hw(
    "omega_st",
    "gemm_store_overlap",
    r"\omega_{\mathrm{st}}",
    "fraction of a GEMM's output store hidden behind its main loop (1: all of it)",
    "1",
)


def _kind_pair(kind: str, latex: str, what: str) -> tuple[HardwareSymbol, HardwareSymbol]:
    """A cast kind's bandwidth fraction (per GPU) and fixed latency (model-wide)."""
    eta = _hw(
        f"eta_{kind}",
        f"cast_efficiency.{kind}",
        rf"\eta_{{\mathrm{{{latex}}}}}",
        f"achieved fraction of peak bandwidth in {what}",
        "1",
    )
    latency = _hw(
        f"t_{kind}",
        f"{kind}_fixed_latency_s",
        rf"t_{{\mathrm{{{latex}}}}}",
        f"fixed latency of {what} (added to its memory time)",
        "s",
    )
    return eta, latency


ETA_REARRANGE, T_REARRANGE = _kind_pair(
    "rearrange", "rearr", "scale-rearrangement kernels of 2D-3D grouped GEMMs (per group)"
)
ETA_REARRANGE_K, _ = _kind_pair(
    "rearrange_k", "rearr,K", "scale-rearrangement kernels of 2D-2D grouped GEMMs (groups along K)"
)
# torchao's K-group rearrangement runs one program per (group, row block), each walking
# its group's tokens serially in tiles of 4 scale columns: its time grows with M / G.
T_REARRANGE_K = _hw(
    "t_rearrange_k",
    "rearrange_k_step_latency_s",
    r"t_{\mathrm{rearr,K}}",
    "time per serial step (4 scale columns of one group) of a 2D-2D scale rearrangement",
    "s",
)
ETA_HADAMARD_AMAX, T_HADAMARD_AMAX = _kind_pair(
    "hadamard_amax", "RHT,amax", "random-Hadamard-transform + amax kernels (NVFP4 training)"
)
ETA_HADAMARD_CAST, T_HADAMARD_CAST = _kind_pair(
    "hadamard_cast",
    "RHT,cast",
    "NVFP4 row + column casts with the random Hadamard transform, round-to-nearest",
)
ETA_HADAMARD_CAST_SR, T_HADAMARD_CAST_SR = _kind_pair(
    "hadamard_cast_sr",
    "RHT,SR",
    "NVFP4 row + column casts with the random Hadamard transform, stochastic rounding",
)
ETA_FP4_TILE, T_FP4_TILE = _kind_pair(
    "fp4_tile", "fp4,tile", "NVFP4 16 x 16 two-dimensional weight casts (row + column outputs)"
)
# A per-tensor amax reduction ends in a grid-wide combine (a second pass, or atomics into
# an initialised accumulator), so its fixed cost is its own, not a pointwise cast's.
T_REDUCE = _hw(
    "t_reduce",
    "reduce_fixed_latency_s",
    r"t_{\mathrm{reduce}}",
    "fixed latency of a per-tensor amax reduction kernel, its grid-wide combine included "
    "(added to its memory time)",
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
    T_CAST,
    RHO_2D3D,
    RHO_2D2D,
    RHO_BF16,
    OMEGA_STORE,
    T_KSTEP,
    ETA_REARRANGE,
    ETA_REARRANGE_K,
    ETA_HADAMARD_AMAX,
    ETA_HADAMARD_CAST,
    ETA_HADAMARD_CAST_SR,
    ETA_FP4_TILE,
    T_REARRANGE,
    T_REARRANGE_K,
    T_HADAMARD_AMAX,
    T_HADAMARD_CAST,
    T_HADAMARD_CAST_SR,
    T_FP4_TILE,
    T_REDUCE,
    T_GEMM_FP4,
    T_COLD,
    T_COLD_CAST,
    PHI_L2,
)

#: The calibration parameters no model term uses: they say how a measurement was taken
#: (scored in roofline.analysis.validation), not what a kernel costs.
HARNESS_SYMBOLS: tuple[HardwareSymbol, ...] = (T_COLD, T_COLD_CAST, PHI_L2)
#: The fixed latencies stored per GPU, resolved GPU -> family -> wider groups -> every GPU
#: like the efficiencies (roofline.calibration.params); every other latency is model-wide.
#: A tiny cast's launch takes about 1 us in CUDA graphs on GeForce / RTX PRO Blackwell and
#: about 1.8 us on B200 and H100 (vLLM PRs #43658, #25427, b12x PR #325); a small GEMM's
#: fixed time differs between vendors' libraries (cuBLAS against hipBLASLt) likewise.
PER_GPU_LATENCY_SYMBOLS: tuple[HardwareSymbol, ...] = (T_CAST, T_GEMM, T_GEMM_FP4, T_KSTEP)
#: The parameters of the calibrated model's terms.
MODEL_CALIBRATION_SYMBOLS: tuple[HardwareSymbol, ...] = tuple(
    hw for hw in CALIBRATION_SYMBOLS if hw not in HARNESS_SYMBOLS
)

# How measurements are scored (roofline.analysis.harness): one kernel's modelled time, and
# the bytes a side kernel of a timed call moves.
KERNEL_TIME = sympy.Symbol("T_k", positive=True)
SIDE_BYTES = sympy.Symbol("b_side", positive=True)
# The bytes one kernel moves (reads + writes), which decide whether it fits in the cache.
KERNEL_BYTES = sympy.Symbol("b_k", positive=True)

#: Symbol -> LaTeX name, for ``sympy.latex(expr, symbol_names=LATEX_NAMES)``.
LATEX_NAMES: dict[sympy.Symbol, str] = {
    hw.symbol: hw.latex for hw in (*HARDWARE_SYMBOLS, *CALIBRATION_SYMBOLS, L2_CAPACITY)
}
LATEX_NAMES.update({DIM0: r"d_{0}", DIM1: r"d_{1}"})
LATEX_NAMES.update(
    {KERNEL_TIME: r"T_{k}", SIDE_BYTES: r"b_{\mathrm{side}}", KERNEL_BYTES: r"b_{k}"}
)
