"""torchao 0.18's model: every GEMM and kernel takes the longest of its compute time, its
memory time (one efficiency each) and a flat launch floor (:data:`TORCHAO_TIMING`).

The terms are the shared ones (:mod:`roofline.model.terms`); :mod:`roofline.model.torchao_compat`
exposes these functions under torchao's names, and the parity tests hold them exact.
"""

from __future__ import annotations

import functools

import sympy

from roofline.model.grouped import GemmShape, Rearrange, role_dims, when_grouped
from roofline.model.terms import GemmTime, RooflineModel, Timing, assemble_model, gemm_bytes
from roofline.recipes import BF16, CastKernel, Format, Mode, Recipe
from roofline.symbols import DIM0, DIM1, ETA_GEMM, ETA_MEM, MEM_BW, T_LAUNCH, K, M


def memory_time(bytes_moved: sympy.Expr) -> sympy.Expr:
    """Seconds to move ``bytes_moved`` at the achievable memory bandwidth."""
    return bytes_moved / (ETA_MEM.symbol * MEM_BW.symbol)


def pointwise_time(bytes_moved: sympy.Expr) -> sympy.Expr:
    """A memory-bound kernel moving ``bytes_moved``: max(memory time, launch floor)."""
    # Unevaluated, as GemmTime.total's: sympy would try to prove one argument above the
    # other (assumption queries that never succeed on these symbols), a fifth of the time
    # compiling every model takes.
    memory = memory_time(bytes_moved)
    if memory == 0:  # a kernel that moves no bytes (a scalar's) is its launch floor
        return T_LAUNCH.symbol
    return sympy.Max(memory, T_LAUNCH.symbol, evaluate=False)


@functools.cache  # sympy's Max simplification is costly; models share GEMMs
def gemm_time(
    m: sympy.Expr,
    k: sympy.Expr,
    n: sympy.Expr,
    fmt: Format,
    scale_block: int | None,
    rhs_copies: sympy.Expr = sympy.S.One,
    out_copies: sympy.Expr = sympy.S.One,
) -> GemmTime:
    """An m x k @ k x n GEMM with operands in ``fmt`` and a bf16 output.

    With ``scale_block``, the GEMM also reads one one-byte scale per ``scale_block``
    operand elements, counted as torchao does: floor of the summed operand size. A
    grouped GEMM reads ``rhs_copies`` right operands or writes ``out_copies`` outputs
    (:mod:`roofline.model.grouped`); its FLOPs are the dense GEMM's, split over the groups.
    """
    flops = 2 * m * k * n
    compute = flops / (ETA_GEMM.symbol * fmt.peak.symbol)
    bytes_moved = gemm_bytes(m, k, n, fmt, rhs_copies, out_copies, scale_block)
    return GemmTime(compute, memory_time(bytes_moved))


def shaped_gemm_time(shape: GemmShape, fmt: Format, scale_block: int | None) -> GemmTime:
    """:func:`gemm_time` of a dense or grouped GEMM shape."""
    copies = (shape.rhs_copies, shape.out_copies)
    return gemm_time(shape.m, shape.k, shape.n, fmt, scale_block, *copies)


@functools.cache
def cast_kernel_time(kernel: CastKernel, fused: bool, grouped: bool = False) -> sympy.Expr:
    """max(bytes / achievable bandwidth, launch floor) for one cast kernel."""
    d0, d1 = role_dims(kernel.role, grouped)
    return pointwise_time(kernel.bytes_moved(fused).xreplace({DIM0: d0, DIM1: d1}))


@functools.cache
def rearrange_time(kernel: Rearrange) -> sympy.Expr:
    """A scale rearrangement in torchao's style: max(bytes / bandwidth, launch floor),
    only where there is more than one group."""
    return when_grouped(pointwise_time(kernel.bytes_moved))


def bf16_activation_time() -> sympy.Expr:
    """The bf16 baseline's activation kernel in inference: read and write M x K in bf16."""
    return pointwise_time(2 * BF16.bytes_per_element * M * K)


class _TorchaoTiming:
    """torchao 0.18's timing: max(compute, memory, launch floor) with one efficiency each."""

    def gemm(self, shape: GemmShape, fmt: Format, recipe: Recipe) -> GemmTime:
        scale_block = recipe.scaling.gemm_scale_block if fmt is not BF16 else None
        return shaped_gemm_time(shape, fmt, scale_block)

    def cast(
        self, kernel: CastKernel, fused: bool, grouped: bool, prologue: bool = False
    ) -> sympy.Expr:
        # torchao 0.18 fuses every inference activation into its quantize kernel for free.
        return cast_kernel_time(kernel, fused, grouped)

    def rearrange(self, kernel: Rearrange) -> sympy.Expr:
        return rearrange_time(kernel)

    def activation(self) -> sympy.Expr:
        return bf16_activation_time()


TORCHAO_TIMING: Timing = _TorchaoTiming()


@functools.cache
def build_torchao(mode: Mode, recipe: Recipe, fusion: bool, grouped: bool) -> RooflineModel:
    """torchao's model of ``recipe`` in ``mode``; built once per process."""
    return assemble_model(mode, recipe, fusion, TORCHAO_TIMING, grouped=grouped)
