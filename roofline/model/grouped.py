"""Grouped GEMMs: the linear layers of a mixture-of-experts (MoE) layer.

A grouped layer holds ``G`` experts, each with its own ``K x N`` weight (``G x K x N`` in
all), and runs ``M`` routed tokens in total, split over the experts (balanced routing:
``M / G`` each; the roofline time depends on the total ``M`` only, so the split does not
enter the formulas). Its three GEMMs are grouped GEMMs of two kinds, each with its own
measured efficiency in the calibrated model:

* **2D-3D** (output, grad_input): ``tokens x K @ G x K x N``; the weight operand is
  ``G`` times a dense layer's;
* **2D-2D** (grad_weight): ``K x tokens @ tokens x N -> G x K x N``; the output is
  ``G`` times a dense layer's.

Weights are cast as one ``G K x N`` tensor (3D weight quantization). Block-scaled GEMMs
(MX, NVFP4) also need each operand's scales rearranged into the per-group layout the
grouped kernel reads (torchao's ``mx_block_rearrange_*`` kernels): one kernel per
operand, reading and writing one byte per scale, as torchao's MoE roofline counts them.

With ``G = 1`` a grouped layer is a dense layer: the grouped-only terms and factors are
written ``Piecewise(..., G > 1)``, so the grouped model at ``G = 1`` is the dense model
(tests hold the two to 1e-12).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import sympy

from roofline.recipes import SCALE_E8M0_BYTES, CastKind, Gemm, Mode, Phase, Recipe, Role
from roofline.symbols import G, K, M, N

_ONE = sympy.Integer(1)


class Layout(enum.StrEnum):
    """How a GEMM's operands are laid out: one dense GEMM or a grouped one."""

    DENSE = "dense"
    GROUPED_2D3D = "2d3d"  # tokens x K @ G x K x N (output, grad_input)
    GROUPED_2D2D = "2d2d"  # K x tokens @ tokens x N -> G x K x N (grad_weight)


@dataclass(frozen=True)
class GemmShape:
    """An ``m x k @ k x n`` GEMM; a grouped one has ``rhs_copies`` right operands (the
    experts' weights) or ``out_copies`` outputs (the experts' weight gradients)."""

    gemm: Gemm
    m: sympy.Expr
    k: sympy.Expr
    n: sympy.Expr
    layout: Layout = Layout.DENSE
    rhs_copies: sympy.Expr = _ONE
    out_copies: sympy.Expr = _ONE

    @property
    def text(self) -> str:
        """``MxK @ KxN``, with the group count where a side holds one block per expert."""
        rhs = (
            f"{self.rhs_copies}x{self.k}x{self.n}" if self.rhs_copies != 1 else f"{self.k}x{self.n}"
        )
        out = f" -> {self.out_copies}x{self.m}x{self.n}" if self.out_copies != 1 else ""
        return f"{self.m}x{self.k} @ {rhs}{out}"


# The (m, k, n) of each training GEMM, in the layer's M, K, N.
GEMM_DIMS: dict[Gemm, tuple[sympy.Symbol, sympy.Symbol, sympy.Symbol]] = {
    Gemm.OUTPUT: (M, K, N),
    Gemm.GRAD_INPUT: (M, N, K),
    Gemm.GRAD_WEIGHT: (K, M, N),
}
_GROUPED_LAYOUT = {
    Gemm.OUTPUT: Layout.GROUPED_2D3D,
    Gemm.GRAD_INPUT: Layout.GROUPED_2D3D,
    Gemm.GRAD_WEIGHT: Layout.GROUPED_2D2D,
}


def gemm_shape(gemm: Gemm, grouped: bool) -> GemmShape:
    """The shape of ``gemm`` in a dense layer, or in a grouped layer of ``G`` experts."""
    m, k, n = GEMM_DIMS[gemm]
    if not grouped:
        return GemmShape(gemm, m, k, n)
    layout = _GROUPED_LAYOUT[gemm]
    if layout is Layout.GROUPED_2D2D:
        return GemmShape(gemm, m, k, n, layout, out_copies=G)
    return GemmShape(gemm, m, k, n, layout, rhs_copies=G)


def role_dims(role: Role, grouped: bool) -> tuple[sympy.Expr, sympy.Expr]:
    """The ``(d_0, d_1)`` of the tensor a cast kernel of ``role`` converts; a grouped
    layer's weight is cast as one ``G K x N`` tensor."""
    if role is Role.WEIGHT:
        return (G * K if grouped else K), N
    return (M, K) if role is Role.INPUT else (M, N)


def when_grouped(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` for more than one group, 0 for one (a dense layer runs no such kernel)."""
    return sympy.Piecewise((expr, sympy.StrictGreaterThan(G, 1)), (sympy.Integer(0), True))


def grouped_factor(factor: sympy.Expr) -> sympy.Expr:
    """``factor`` for more than one group, 1 for one (a dense GEMM runs at full rate)."""
    return sympy.Piecewise((factor, sympy.StrictGreaterThan(G, 1)), (sympy.Integer(1), True))


@dataclass(frozen=True)
class Rearrange:
    """One scale-rearrangement kernel: a grouped GEMM operand's block scales, read and
    written once (one byte each) into the kernel's per-group layout."""

    gemm: Gemm
    operand: str
    scales: sympy.Expr  # how many scales it moves
    kind: CastKind
    # Serial steps of a K-group rearrangement: each program walks its group's tokens in
    # tiles of 4 scale columns (torchao's Triton kernel), M / (4 block G) steps.
    serial_steps: sympy.Expr = _ONE

    @property
    def key(self) -> str:
        """Stable term key, e.g. ``rearrange.output.lhs``."""
        return f"rearrange.{self.gemm}.{self.operand}"

    @property
    def phase(self) -> Phase:
        """The pass of the GEMM it feeds."""
        return self.gemm.phase

    @property
    def bytes_moved(self) -> sympy.Expr:
        """Read plus write, one byte per scale."""
        return 2 * SCALE_E8M0_BYTES * self.scales


def rearrange_kernels(mode: Mode, recipe: Recipe) -> tuple[Rearrange, ...]:
    """The scale rearrangements a grouped layer of ``recipe`` runs in ``mode``: none unless
    its GEMMs read block scales (an emulated recipe's do not: they run in bf16); in
    inference only the activation's (weights and their scales are prepared once, offline)."""
    block = recipe.scaling.gemm_scale_block
    if block is None or recipe.emulated:  # an emulated recipe's grouped GEMMs run in bf16
        return ()
    out: list[Rearrange] = []
    for gemm, fmt in recipe.plan(mode).gemm_formats.items():
        if fmt.name == "bf16":
            continue
        shape = gemm_shape(gemm, grouped=True)
        kind = CastKind.REARRANGE_K if shape.layout is Layout.GROUPED_2D2D else CastKind.REARRANGE
        lhs = shape.m * shape.k / block
        rhs = shape.rhs_copies * shape.k * shape.n / block
        # Whole steps: a group's last tile of columns is a step however few tokens it has.
        steps = sympy.ceiling(M / (4 * block * G)) if kind is CastKind.REARRANGE_K else _ONE
        out.append(Rearrange(gemm, "lhs", lhs, kind, steps))
        if mode is Mode.TRAINING:
            out.append(Rearrange(gemm, "rhs", rhs, kind, steps))
    return tuple(out)
