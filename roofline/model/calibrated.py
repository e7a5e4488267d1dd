"""The calibrated model's timing: measured efficiencies per format and kernel kind, and a
fixed latency per kernel instead of torchao's flat launch floor.

It builds the same terms as torchao's model, under the same keys, so every page and
report can show both; only each term's time expression differs:

* a GEMM takes ``t_gemm + max(FLOPs / (w eta_fmt P_fmt), bytes / (eta_row B))``, with
  ``eta_fmt`` the efficiency of its operand format and scaling path (bf16, per-tensor or
  per-row fp8, block-scaled fp8, fp4) in full waves, and ``w`` the wave efficiency
  (:func:`wave_efficiency`): the output's 256 x 128 tiles (at most M rows) run ``N_SM``
  at a time, so a partly filled tile or last wave costs a full one. Efficiency therefore
  rises with the shape for two stated reasons: the fixed latency (the achieved fraction is
  ``FLOPs / (FLOPs + t_gemm w eta_fmt P_fmt)`` of ``w eta_fmt``) and the tile waves.
  Only the share ``omega_st`` of the bf16 output store is in ``bytes``: the rest,
  ``(1 - omega_st) 2 M N / (eta_row B)``, follows the main loop (a kernel that stores each
  tile after its last K step; a persistent warp-specialized one hides it all, omega_st = 1);
* an emulated recipe's low-precision GEMMs (``Recipe.emulated``: bf16 GEMMs on dequantized
  operands, torchao's ``KernelPreference.EMULATED``) are timed as the bf16 GEMMs that run,
  at the bf16 peak, efficiency and operand bytes; torchao's model keeps timing them at the
  fp8 peak (parity). The dequantize kernels themselves are not modelled;
* a cast kernel takes ``n_launch t_cast + bytes / (eta_kind B)``, with ``eta_kind`` the
  measured fraction of peak bandwidth of its memory pattern (row, column, tile, reduce);
  a kernel that fusion modelling removes entirely (an amax read fused into the producer)
  takes no time at all;
* with inference fusion, a quantize kernel that torch.compile cannot fuse an activation
  into (``CastKernel.takes_prologue`` False: torchao's Triton NVFP4 quantize) leaves the
  activation in a pass of its own, so that kernel's term also pays the pass:
  ``t_cast + 2 M K / (eta_row B)`` (its output write; its read is the amax pass's).
"""

from __future__ import annotations

import functools

import sympy

from roofline.model.grouped import (
    GemmShape,
    Layout,
    Rearrange,
    grouped_factor,
    role_dims,
    when_grouped,
)
from roofline.model.terms import (
    GemmTime,
    RooflineModel,
    Timing,
    assemble_model,
    gemm_bytes,
    output_bytes,
)
from roofline.recipes import (
    BF16,
    FP4,
    SCALE_E8M0_BYTES,
    CastKernel,
    CastKind,
    Family,
    Format,
    Mode,
    Recipe,
)
from roofline.symbols import (
    DIM0,
    DIM1,
    ETA_COLUMN,
    ETA_FP4_TILE,
    ETA_GEMM_BF16,
    ETA_GEMM_FP4,
    ETA_GEMM_FP8,
    ETA_GEMM_FP8_BLOCK,
    ETA_HADAMARD_AMAX,
    ETA_HADAMARD_CAST,
    ETA_HADAMARD_CAST_SR,
    ETA_REARRANGE,
    ETA_REARRANGE_K,
    ETA_REDUCE,
    ETA_ROW,
    ETA_TILE,
    MEM_BW,
    N_SM,
    OMEGA_STORE,
    RHO_2D2D,
    RHO_2D3D,
    RHO_BF16,
    T_CAST,
    T_FP4_TILE,
    T_GEMM,
    T_GEMM_FP4,
    T_HADAMARD_AMAX,
    T_HADAMARD_CAST,
    T_HADAMARD_CAST_SR,
    T_KSTEP,
    T_REARRANGE,
    T_REARRANGE_K,
    T_REDUCE,
    G,
    HardwareSymbol,
    K,
    M,
)

#: The output tile one SM (compute unit) computes at a time in the calibrated model's
#: GEMMs: 256 x 128 (M x N), the tile of NVIDIA's worked example of wave quantization in
#: its Matrix Multiplication Background guide (section "Wave Quantization"), one of the
#: tiles it names as typical of cuBLAS for large GEMMs. Assumed for every library, GPU and
#: format: cuBLAS, CUTLASS and hipBLASLt choose tiles per shape by heuristics.
GEMM_TILE_M = 256
GEMM_TILE_N = 128
GEMM_TILE_K = 128
#: Where that guide is (the wave-quantization rule and its tile).
WAVE_SOURCE = (
    "https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/"
    "index.html#wave-quant"
)

#: Cast kind -> the bandwidth fraction that times it.
KIND_EFFICIENCY: dict[CastKind, HardwareSymbol] = {
    CastKind.ROW: ETA_ROW,
    CastKind.COLUMN: ETA_COLUMN,
    CastKind.TILE: ETA_TILE,
    CastKind.REDUCE: ETA_REDUCE,
    CastKind.REARRANGE: ETA_REARRANGE,
    CastKind.REARRANGE_K: ETA_REARRANGE_K,
    CastKind.HADAMARD_AMAX: ETA_HADAMARD_AMAX,
    CastKind.HADAMARD_CAST: ETA_HADAMARD_CAST,
    CastKind.HADAMARD_CAST_SR: ETA_HADAMARD_CAST_SR,
    CastKind.FP4_TILE: ETA_FP4_TILE,
}
#: Cast kind -> its fixed latency per launch: the kinds measured as separate kernels
#: (grouped layers, NVFP4 training) have their own; the others share t_cast.
KIND_LATENCY: dict[CastKind, HardwareSymbol] = {
    **dict.fromkeys((CastKind.ROW, CastKind.COLUMN, CastKind.TILE), T_CAST),
    CastKind.REDUCE: T_REDUCE,
    CastKind.REARRANGE: T_REARRANGE,
    CastKind.REARRANGE_K: T_CAST,  # plus t_rearr,K per serial step (calibrated_rearrange_time)
    CastKind.HADAMARD_AMAX: T_HADAMARD_AMAX,
    CastKind.HADAMARD_CAST: T_HADAMARD_CAST,
    CastKind.HADAMARD_CAST_SR: T_HADAMARD_CAST_SR,
    CastKind.FP4_TILE: T_FP4_TILE,
}
#: Grouped GEMM layout -> the rate factor relative to the dense GEMM of its format.
LAYOUT_FACTOR: dict[Layout, HardwareSymbol] = {
    Layout.GROUPED_2D3D: RHO_2D3D,
    Layout.GROUPED_2D2D: RHO_2D2D,
}
# Recipe families whose fp8 GEMMs read block scales (a different kernel path).
_BLOCK_SCALED = frozenset({Family.MX, Family.BLOCKWISE})


def executed_format(fmt: Format, recipe: Recipe) -> Format:
    """The format a GEMM of ``recipe`` planned in ``fmt`` runs in: bf16 when the recipe
    emulates its low-precision GEMMs (dequantize, then a bf16 GEMM), else ``fmt``."""
    return BF16 if recipe.emulated else fmt


def gemm_efficiency(fmt: Format, recipe: Recipe) -> HardwareSymbol:
    """The efficiency symbol of a GEMM in ``fmt`` for ``recipe`` (bf16 for the baseline and
    for an emulated recipe's GEMMs, which run in bf16)."""
    if executed_format(fmt, recipe) is BF16:
        return ETA_GEMM_BF16
    if fmt is FP4:
        return ETA_GEMM_FP4
    return ETA_GEMM_FP8_BLOCK if recipe.family in _BLOCK_SCALED else ETA_GEMM_FP8


def streaming_time(bytes_moved: sympy.Expr) -> sympy.Expr:
    """Seconds to stream ``bytes_moved`` at the row-kernel bandwidth fraction."""
    return bytes_moved / (ETA_ROW.symbol * MEM_BW.symbol)


def output_rescale_time(shape: GemmShape) -> sympy.Expr:
    """t_cast + 4 m n / (eta_row B): the pointwise kernel that multiplies a GEMM's bf16
    output by the per-tensor scales (reads and writes m x n bf16 once)."""
    return kind_time(CastKind.ROW, 2 * BF16.bytes_per_element * shape.m * shape.n)


def wave_efficiency(m: sympy.Expr, n: sympy.Expr) -> sympy.Expr:
    """The fraction of the GPU's tile slots an m x n output keeps busy.

    The output splits into T = ceil(m / t_m) ceil(n / 128) tiles of t_m = min(m, 256) rows
    that run ``N_SM`` at a time; with T >= N_SM the GEMM takes ceil(T / N_SM) full waves of
    whole tiles, so the useful fraction is m n / (t_m x 128 x N_SM ceil(T / N_SM)): partly
    filled tiles (tile quantization) and a partly filled last wave (wave quantization)
    cost as much as full ones. A skinny GEMM (m < 256) runs tiles no taller than itself:
    the libraries pick a small-M tile (or swap the operands) there, where a 256-row tile
    would charge a decode step's single row for 256. With fewer tiles than SMs the
    libraries split K over the idle SMs (split-K, stream-K), so the fraction is 1. A GPU
    without ``sm_count`` has N_SM = 10^12: every shape has fewer tiles than that, so waves
    are not modelled."""
    # ceil(m / t_m) = ceil(m / 256): one row of tiles up to 256 rows either way
    tiles = sympy.ceiling(m / GEMM_TILE_M) * sympy.ceiling(n / GEMM_TILE_N)
    tile_m = sympy.Min(m, GEMM_TILE_M)
    slots = tile_m * GEMM_TILE_N * N_SM.symbol * sympy.ceiling(tiles / N_SM.symbol)
    return sympy.Piecewise((1, tiles < N_SM.symbol), (m * n / slots, True))


@functools.cache
def calibrated_gemm_time(
    shape: GemmShape, fmt: Format, recipe: Recipe, rescale: bool = False
) -> GemmTime:
    """t_gemm + max(compute, memory) + exposed store of an m x k @ k x n GEMM in ``fmt``
    (bf16 output; the memory holds the hidden share omega_st of the output store), the
    compute at the wave efficiency of its tiles (:func:`wave_efficiency`); an
    emulated recipe's GEMM is the bf16 GEMM it runs (:func:`executed_format`). A grouped
    GEMM runs at ``rho`` of the dense rate of its layout (2D-3D or 2D-2D), measured per
    GPU, a bf16 one at ``rho_bf16`` (its own kernel; 2D-2D at ``rho_bf16 rho_2D2D /
    rho_2D3D``); with one group it is the dense
    GEMM. With ``rescale``, the output rescale kernel that follows the GEMM
    (:func:`output_rescale_time`) is the GEMM term's epilogue."""
    epilogue = output_rescale_time(shape) if rescale else None
    fmt = executed_format(fmt, recipe)
    m, k, n = shape.m, shape.k, shape.n
    flops = 2 * m * k * n
    rate = gemm_efficiency(fmt, recipe).symbol * fmt.peak.symbol
    if shape.layout in LAYOUT_FACTOR:
        factor = LAYOUT_FACTOR[shape.layout].symbol
        if fmt is BF16:  # torch._grouped_mm, not the scaled grouped kernel: its own rate
            factor = RHO_BF16.symbol * factor / RHO_2D3D.symbol
        # A grouped GEMM runs at rho times the rate of the dense GEMM of the same layer
        # (G = 1), that GEMM's waves included: how its groups fill the SMs is in the
        # measured rho. So more experts never raise the rate (only the K walk below,
        # shorter per group in a 2D-2D GEMM, can make a walk-bound GEMM faster).
        waves = wave_efficiency(m, n).xreplace({G: 1})
        rate = grouped_factor(factor) * waves * rate
    else:
        rate = wave_efficiency(m, n) * rate
    # A tile's K loop cannot run faster than its steps' latency, one after another (a 2D-2D
    # grouped GEMM's groups each walk their own M / G tokens of K).
    k_tile = k / G if shape.layout is Layout.GROUPED_2D2D else k
    chain = T_KSTEP.symbol * sympy.ceiling(k_tile / GEMM_TILE_K)
    compute = sympy.Max(flops / rate, chain, evaluate=False)
    # One one-byte scale per block (torchao counts them at the operand format's size).
    block = recipe.scaling.gemm_scale_block if fmt is not BF16 else None
    operand_bytes = gemm_bytes(m, k, n, fmt, shape.rhs_copies, 0, block, SCALE_E8M0_BYTES)
    # The main loop hides the share omega_st of the output store; the rest follows it.
    out_bytes = output_bytes(m, n, shape.out_copies)
    omega = OMEGA_STORE.symbol
    memory = streaming_time(operand_bytes + omega * out_bytes)
    latency = (T_GEMM_FP4 if fmt is FP4 else T_GEMM).symbol
    return GemmTime(compute, memory, latency, epilogue, streaming_time(out_bytes * (1 - omega)))


def kind_time(kind: CastKind, bytes_moved: sympy.Expr, launches: int = 1) -> sympy.Expr:
    """launches x t_kind + bytes / (eta_kind B): a kernel of ``kind`` moving ``bytes``."""
    eta = KIND_EFFICIENCY[kind].symbol
    return launches * KIND_LATENCY[kind].symbol + bytes_moved / (eta * MEM_BW.symbol)


@functools.cache
def calibrated_cast_time(kernel: CastKernel, fused: bool, grouped: bool = False) -> sympy.Expr:
    """launches x t_kind + bytes / (eta_kind B) for one cast kernel."""
    d0, d1 = role_dims(kernel.role, grouped)
    bytes_moved = kernel.bytes_moved(fused).xreplace({DIM0: d0, DIM1: d1})
    if fused and bytes_moved == 0:
        # Fused away entirely (an amax read done by the op that produced the tensor):
        # no kernel is launched, so there is no latency to pay either.
        return sympy.Integer(0)
    return kind_time(kernel.kind, bytes_moved, kernel.launches)


def unfused_activation_time() -> sympy.Expr:
    """t_cast + 2 M K / (eta_row B): with inference fusion, the activation a quantize
    kernel cannot take as a prologue runs in its own pass (with the amax's first stage,
    whose read the quantize kernel's term already counts) and writes its M x K bf16
    output for the quantize kernel to read: one more launch and that write."""
    return T_CAST.symbol + streaming_time(BF16.bytes_per_element * M * K)


@functools.cache
def calibrated_rearrange_time(kernel: Rearrange) -> sympy.Expr:
    """t_kind + bytes / (eta_kind B) of a scale rearrangement, when G > 1; a K-group
    rearrangement also pays t_rearr,K per serial step (its programs walk M / G tokens)."""
    time = kind_time(kernel.kind, kernel.bytes_moved)
    if kernel.kind is CastKind.REARRANGE_K:
        time = time + T_REARRANGE_K.symbol * kernel.serial_steps
    return when_grouped(time)


class _CalibratedTiming:
    """The calibrated model's :class:`~roofline.model.terms.Timing` in one mode."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode

    def gemm(self, shape: GemmShape, fmt: Format, recipe: Recipe) -> GemmTime:
        # Only torchao's inference path is known to rescale in a kernel of its own; the
        # NVFP4 training kernels apply the per-tensor scales inside their GEMM.
        rescale = (
            self.mode is Mode.INFERENCE
            and executed_format(fmt, recipe) is FP4
            and recipe.scaling.output_rescale
        )
        return calibrated_gemm_time(shape, fmt, recipe, rescale)

    def cast(
        self, kernel: CastKernel, fused: bool, grouped: bool, prologue: bool = False
    ) -> sympy.Expr:
        time = calibrated_cast_time(kernel, fused, grouped)
        if prologue and not kernel.takes_prologue:
            time = time + unfused_activation_time()
        return time

    def rearrange(self, kernel: Rearrange) -> sympy.Expr:
        return calibrated_rearrange_time(kernel)

    def activation(self) -> sympy.Expr:
        return T_CAST.symbol + streaming_time(2 * BF16.bytes_per_element * M * K)


CALIBRATED_TIMING: dict[Mode, Timing] = {mode: _CalibratedTiming(mode) for mode in Mode}


@functools.cache
def build_calibrated(
    mode: Mode, recipe: Recipe, fusion: bool, grouped: bool = False
) -> RooflineModel:
    """The calibrated model of ``recipe`` in ``mode`` (see the module docstring)."""
    timing = CALIBRATED_TIMING[mode]
    return assemble_model(mode, recipe, fusion, timing, calibrated=True, grouped=grouped)
