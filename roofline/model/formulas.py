"""The roofline formulas, built once per (mode, recipe, fusion) in symbolic form.

A GEMM takes the longest of its compute time, its memory time and the launch floor; a
cast kernel takes the longer of its memory time and the launch floor. A model is the
list of these terms, each tagged with the quantity it adds to:

* ``bf16_gemm``: the bf16 baseline's GEMMs (three in training, one in inference);
* ``lowp_gemm``: the same GEMMs in the recipe's formats;
* ``overhead``: the recipe's cast kernels;
* ``bf16_overhead``: inference with fusion modelling only: the activation kernel the bf16
  baseline pays and the low-precision path fuses into its quantize kernel.

``speedup = (bf16_gemm + bf16_overhead) / (lowp_gemm + overhead)``.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Protocol

import sympy

from roofline.model.grouped import (
    GemmShape,
    Rearrange,
    gemm_shape,
    rearrange_kernels,
    role_dims,
    when_grouped,
)
from roofline.recipes import BF16, CastKernel, Format, Mode, Phase, Recipe, Role, get_recipe
from roofline.symbols import DIM0, DIM1, ETA_GEMM, ETA_MEM, MEM_BW, T_LAUNCH, K, M

#: Bumped whenever any formula changes, so pages and reports can say which model
#: produced a number. Format: <torchao release matched>.<project revision>.
MODEL_VERSION = "torchao-0.18/r4"


class Quantity(enum.StrEnum):
    """A named total the model reports (the CLI's ``--quantity``)."""

    SPEEDUP = "speedup"
    BF16_GEMM = "bf16_gemm"
    LOWP_GEMM = "lowp_gemm"
    OVERHEAD = "overhead"
    BF16_OVERHEAD = "bf16_overhead"


#: The totals of the low-precision side of a speedup (its GEMMs and its cast kernels).
LOWP_SIDE: tuple[Quantity, ...] = (Quantity.LOWP_GEMM, Quantity.OVERHEAD)


#: Symbols standing for each total, for the structured (paper-style) speedup formula.
QUANTITY_SYMBOLS: dict[Quantity, sympy.Symbol] = {
    Quantity.BF16_GEMM: sympy.Symbol("T_bf16_gemm", positive=True),
    Quantity.LOWP_GEMM: sympy.Symbol("T_lowp_gemm", positive=True),
    Quantity.OVERHEAD: sympy.Symbol("T_cast", positive=True),
    Quantity.BF16_OVERHEAD: sympy.Symbol("T_bf16_act", positive=True),
}
QUANTITY_LATEX: dict[sympy.Symbol, str] = {
    QUANTITY_SYMBOLS[Quantity.BF16_GEMM]: r"T_{\mathrm{gemm}}^{\mathrm{bf16}}",
    QUANTITY_SYMBOLS[Quantity.LOWP_GEMM]: r"T_{\mathrm{gemm}}^{\mathrm{lowp}}",
    QUANTITY_SYMBOLS[Quantity.OVERHEAD]: r"T_{\mathrm{cast}}",
    QUANTITY_SYMBOLS[Quantity.BF16_OVERHEAD]: r"T_{\mathrm{act}}^{\mathrm{bf16}}",
}

# The (d_0, d_1) of each cast tensor in a dense layer.
ROLE_DIMS: dict[Role, tuple[sympy.Expr, sympy.Expr]] = {
    role: role_dims(role, grouped=False) for role in Role
}


def memory_time(bytes_moved: sympy.Expr) -> sympy.Expr:
    """Seconds to move ``bytes_moved`` at the achievable memory bandwidth."""
    return bytes_moved / (ETA_MEM.symbol * MEM_BW.symbol)


@dataclass(frozen=True)
class GemmTime:
    """The three candidate times of one GEMM; the GEMM takes the longest."""

    compute: sympy.Expr
    memory: sympy.Expr
    # The calibrated model adds a fixed latency instead of torchao's launch floor.
    latency: sympy.Expr | None = None
    # The calibrated model's kernel that runs on the GEMM's output right after it (an
    # NVFP4 GEMM's per-tensor rescale): its own launch and traffic, shown with the GEMM.
    epilogue: sympy.Expr | None = None

    @functools.cached_property
    def total(self) -> sympy.Expr:
        """max(compute, memory, launch floor), or latency + max(compute, memory)
        (+ the epilogue kernel's time)."""
        if self.latency is None:
            return sympy.Max(self.compute, self.memory, T_LAUNCH.symbol)
        total = self.latency + sympy.Max(self.compute, self.memory)
        return total if self.epilogue is None else total + self.epilogue


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
    operand_elements = m * k + rhs_copies * k * n
    if scale_block is not None:
        operand_elements = operand_elements + sympy.floor(operand_elements / scale_block)
    output_bytes = BF16.bytes_per_element * out_copies * m * n
    bytes_moved = fmt.bytes_per_element * operand_elements + output_bytes
    return GemmTime(compute, memory_time(bytes_moved))


def shaped_gemm_time(shape: GemmShape, fmt: Format, scale_block: int | None) -> GemmTime:
    """:func:`gemm_time` of a dense or grouped GEMM shape."""
    copies = (shape.rhs_copies, shape.out_copies)
    return gemm_time(shape.m, shape.k, shape.n, fmt, scale_block, *copies)


@functools.cache
def cast_kernel_time(kernel: CastKernel, fused: bool, grouped: bool = False) -> sympy.Expr:
    """max(bytes / achievable bandwidth, launch floor) for one cast kernel."""
    d0, d1 = role_dims(kernel.role, grouped)
    bytes_moved = kernel.bytes_moved(fused).xreplace({DIM0: d0, DIM1: d1})
    return sympy.Max(memory_time(bytes_moved), T_LAUNCH.symbol)


@functools.cache
def rearrange_time(kernel: Rearrange) -> sympy.Expr:
    """A scale rearrangement in torchao's style: max(bytes / bandwidth, launch floor),
    only where there is more than one group."""
    return when_grouped(sympy.Max(memory_time(kernel.bytes_moved), T_LAUNCH.symbol))


def bf16_activation_time() -> sympy.Expr:
    """The bf16 baseline's activation kernel in inference: read and write M x K in bf16."""
    bytes_moved = 2 * BF16.bytes_per_element * M * K
    return sympy.Max(memory_time(bytes_moved), T_LAUNCH.symbol)


@dataclass(frozen=True)
class Term:
    """One GEMM or kernel of a model: a stable key, a label and its time expression."""

    key: str
    label: str
    quantity: Quantity
    expr: sympy.Expr
    gemm: GemmTime | None = None  # set for GEMM terms, to classify them as bound
    phase: Phase = Phase.FORWARD

    @property
    def is_gemm(self) -> bool:
        """True for GEMMs, False for cast kernels."""
        return self.gemm is not None


@dataclass(frozen=True)
class RooflineModel:
    """All terms of one (mode, recipe, fusion) model, in symbolic form."""

    mode: Mode
    recipe: Recipe
    fusion: bool
    terms: tuple[Term, ...]
    calibrated: bool = False
    grouped: bool = False  # a grouped (MoE) layer: the terms use G, the expert count

    def total(self, quantity: Quantity) -> sympy.Expr:
        """The sum of the terms in ``quantity``; the speedup for ``Quantity.SPEEDUP``."""
        if quantity is Quantity.SPEEDUP:
            return self.speedup
        return sympy.Add(*(t.expr for t in self.terms if t.quantity is quantity))

    @property
    def speedup(self) -> sympy.Expr:
        """(bf16 GEMMs + bf16 activation) / (low-precision GEMMs + cast kernels)."""
        return self.structured_speedup.xreplace(
            {QUANTITY_SYMBOLS[q]: self.total(q) for q in QUANTITY_SYMBOLS}
        )

    @property
    def structured_speedup(self) -> sympy.Expr:
        """The speedup in the totals' symbols (T_gemm^bf16 ...), as a paper writes it."""
        t = QUANTITY_SYMBOLS
        baseline = t[Quantity.BF16_GEMM]
        if self.has_bf16_overhead:
            baseline = baseline + t[Quantity.BF16_OVERHEAD]
        return baseline / (t[Quantity.LOWP_GEMM] + t[Quantity.OVERHEAD])

    @property
    def has_bf16_overhead(self) -> bool:
        """True when the bf16 baseline pays an activation kernel (inference + fusion)."""
        return any(t.quantity is Quantity.BF16_OVERHEAD for t in self.terms)

    def quantities(self) -> tuple[Quantity, ...]:
        """The quantities this model reports, speedup first."""
        present = [q for q in Quantity if q is Quantity.SPEEDUP or self._has(q)]
        return tuple(present)

    def _has(self, quantity: Quantity) -> bool:
        return any(t.quantity is quantity for t in self.terms)


class Timing(Protocol):
    """How a model times its pieces: torchao's (:data:`TORCHAO_TIMING`) or the calibrated
    model's (:mod:`roofline.model.calibrated`). Both share the term list built here."""

    def gemm(self, shape: GemmShape, fmt: Format, recipe: Recipe) -> GemmTime:
        """One GEMM of ``recipe`` with operands in ``fmt`` (bf16 for the baseline)."""
        ...

    def cast(self, kernel: CastKernel, fused: bool, grouped: bool) -> sympy.Expr:
        """One cast kernel, in the layer's M, K, N (and G when ``grouped``)."""
        ...

    def rearrange(self, kernel: Rearrange) -> sympy.Expr:
        """One scale rearrangement of a grouped layer (0 when G = 1)."""
        ...

    def activation(self) -> sympy.Expr:
        """The bf16 baseline's activation kernel in inference with fusion modelling."""
        ...


class _TorchaoTiming:
    """torchao 0.18's timing: max(compute, memory, launch floor) with one efficiency each."""

    def gemm(self, shape: GemmShape, fmt: Format, recipe: Recipe) -> GemmTime:
        scale_block = recipe.scaling.gemm_scale_block if fmt is not BF16 else None
        return shaped_gemm_time(shape, fmt, scale_block)

    def cast(self, kernel: CastKernel, fused: bool, grouped: bool) -> sympy.Expr:
        return cast_kernel_time(kernel, fused, grouped)

    def rearrange(self, kernel: Rearrange) -> sympy.Expr:
        return rearrange_time(kernel)

    def activation(self) -> sympy.Expr:
        return bf16_activation_time()


TORCHAO_TIMING: Timing = _TorchaoTiming()


def _gemm_terms(mode: Mode, recipe: Recipe, timing: Timing, grouped: bool) -> list[Term]:
    plan = recipe.plan(mode)
    terms = []
    kind = "grouped GEMM" if grouped else "GEMM"
    for gemm, fmt in plan.gemm_formats.items():
        shape = gemm_shape(gemm, grouped)
        for fmt_used, tag, quantity in (
            (BF16, "bf16", Quantity.BF16_GEMM),
            (fmt, "lowp", Quantity.LOWP_GEMM),
        ):
            time = timing.gemm(shape, fmt_used, recipe)
            label = f"{gemm} {kind}, {fmt_used.name} ({shape.text})"
            terms.append(Term(f"gemm.{gemm}.{tag}", label, quantity, time.total, time, gemm.phase))
    return terms


def _cast_terms(
    mode: Mode, recipe: Recipe, fusion: bool, timing: Timing, grouped: bool
) -> list[Term]:
    # Training fusion lets the first read of input and grad_output ride on the op that
    # produced them; inference fusion moves the activation into the quantize kernel,
    # which torchao models as unchanged traffic (the bf16 side pays the activation).
    counts: dict[Role, int] = {}
    terms = []
    for kernel in recipe.plan(mode).kernels:
        fused = fusion and mode is Mode.TRAINING and kernel.fuses_under_fusion
        counts[kernel.role] = counts.get(kernel.role, 0) + 1
        key = f"cast.{kernel.role}.{counts[kernel.role]}"
        label = f"{kernel.role}: {kernel.description}"
        time = timing.cast(kernel, fused, grouped)
        terms.append(Term(key, label, Quantity.OVERHEAD, time, phase=kernel.phase))
    return terms


def _rearrange_terms(mode: Mode, recipe: Recipe, timing: Timing) -> list[Term]:
    return [
        Term(
            kernel.key,
            f"{kernel.gemm} GEMM {kernel.operand} scales -> per-group layout",
            Quantity.OVERHEAD,
            timing.rearrange(kernel),
            phase=kernel.phase,
        )
        for kernel in rearrange_kernels(mode, recipe)
    ]


def assemble_model(
    mode: Mode,
    recipe: Recipe,
    fusion: bool,
    timing: Timing,
    calibrated: bool = False,
    grouped: bool = False,
) -> RooflineModel:
    """The model's terms (GEMMs, cast kernels, the bf16 activation) timed by ``timing``;
    ``grouped`` builds a grouped (MoE) layer of G experts (:mod:`roofline.model.grouped`)."""
    terms = _gemm_terms(mode, recipe, timing, grouped)
    terms += _cast_terms(mode, recipe, fusion, timing, grouped)
    if grouped:
        terms += _rearrange_terms(mode, recipe, timing)
    if mode is Mode.INFERENCE and fusion:
        terms.append(
            Term(
                "act.input.bf16",
                "bf16 activation kernel (read + write M x K)",
                Quantity.BF16_OVERHEAD,
                timing.activation(),
            )
        )
    return RooflineModel(mode, recipe, fusion, tuple(terms), calibrated, grouped)


def build_model(
    mode: Mode | str,
    recipe: Recipe | str,
    fusion: bool = False,
    calibrated: bool = False,
    grouped: bool = False,
) -> RooflineModel:
    """The symbolic model for ``recipe`` in ``mode``; cached, so built once per process.

    ``calibrated=True`` builds the calibrated model (:mod:`roofline.model.calibrated`):
    the same terms under the same keys, timed with measured and fitted efficiencies.
    ``grouped=True`` builds a grouped (mixture-of-experts) layer in the symbol G, the
    number of experts (:mod:`roofline.model.grouped`); at G = 1 it equals the dense model.
    """
    mode = Mode.parse(mode)
    recipe = get_recipe(recipe, mode)
    if calibrated:
        from roofline.model.calibrated import build_calibrated  # it imports this module

        return build_calibrated(mode, recipe, bool(fusion), bool(grouped))
    return _build_model(mode, recipe, bool(fusion), bool(grouped))


@functools.cache
def _build_model(mode: Mode, recipe: Recipe, fusion: bool, grouped: bool) -> RooflineModel:
    return assemble_model(mode, recipe, fusion, TORCHAO_TIMING, grouped=grouped)
