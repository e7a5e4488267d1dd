"""The pieces both models share: the quantities they report, a term, a model, the timing
protocol each model implements and the one term list both are built from.

A GEMM takes the longest of its compute time, its memory time and a launch floor (torchao's
model, :mod:`roofline.model.torchao`) or a fixed latency plus the longer of the two (the
calibrated model, :mod:`roofline.model.calibrated`); a cast kernel likewise. A model is the
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

from roofline.model.grouped import GemmShape, Rearrange, gemm_shape, rearrange_kernels
from roofline.recipes import BF16, CastKernel, Format, Mode, Phase, Recipe, Role
from roofline.symbols import T_LAUNCH


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
    # The calibrated model's part of the output store the main loop does not hide.
    store: sympy.Expr | None = None

    @functools.cached_property
    def total(self) -> sympy.Expr:
        """max(compute, memory, launch floor), or latency + max(compute, memory)
        (+ the exposed output store, + the epilogue kernel's time)."""
        # Unevaluated: sympy's Max would try to prove one symbolic time above another
        # (assumption queries over ceilings and Piecewise waves), which never succeeds here
        # and was 2 of the 7 s compiling every model takes; printers sort the arguments.
        if self.latency is None:
            return sympy.Max(self.compute, self.memory, T_LAUNCH.symbol, evaluate=False)
        total = self.latency + sympy.Max(self.compute, self.memory, evaluate=False)
        for serial in (self.store, self.epilogue):
            total = total if serial is None else total + serial
        return total


def output_bytes(m: sympy.Expr, n: sympy.Expr, out_copies: sympy.Expr = sympy.S.One) -> sympy.Expr:
    """The bytes a GEMM's bf16 m x n output (``out_copies`` of them) writes."""
    return BF16.bytes_per_element * out_copies * m * n


def gemm_bytes(
    m: sympy.Expr,
    k: sympy.Expr,
    n: sympy.Expr,
    fmt: Format,
    rhs_copies: sympy.Expr = sympy.S.One,
    out_copies: sympy.Expr = sympy.S.One,
    scale_block: int | None = None,
    scale_bytes: int | None = None,
) -> sympy.Expr:
    """The bytes an m x k @ k x n GEMM moves, the one traffic rule of both models: its
    operands in ``fmt`` (``rhs_copies`` right operands in a grouped GEMM) and its bf16
    output (``out_copies`` of them).

    With ``scale_block`` it also reads one scale per ``scale_block`` operand elements:
    counted as torchao does by default (the floor of the summed operand elements, at the
    operand format's size), or ``scale_bytes`` each, unfloored (the calibrated model's
    one-byte E8M0 scales).
    """
    operand_elements = m * k + rhs_copies * k * n
    scales: sympy.Expr | int = 0
    if scale_block is not None:
        if scale_bytes is None:
            operand_elements = operand_elements + sympy.floor(operand_elements / scale_block)
        else:
            scales = scale_bytes * operand_elements / scale_block
    return fmt.bytes_per_element * operand_elements + output_bytes(m, n, out_copies) + scales


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
    """How a model times its pieces: torchao's (:mod:`roofline.model.torchao`) or the
    calibrated model's (:mod:`roofline.model.calibrated`). Both share the term list built here."""

    def gemm(self, shape: GemmShape, fmt: Format, recipe: Recipe) -> GemmTime:
        """One GEMM of ``recipe`` with operands in ``fmt`` (bf16 for the baseline)."""
        ...

    def cast(
        self, kernel: CastKernel, fused: bool, grouped: bool, prologue: bool = False
    ) -> sympy.Expr:
        """One cast kernel, in the layer's M, K, N (and G when ``grouped``); ``prologue``:
        inference fusion puts the layer's activation into this kernel."""
        ...

    def rearrange(self, kernel: Rearrange) -> sympy.Expr:
        """One scale rearrangement of a grouped layer (0 when G = 1)."""
        ...

    def activation(self) -> sympy.Expr:
        """The bf16 baseline's activation kernel in inference with fusion modelling."""
        ...


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
        # Inference fusion hands the input's activation to its (first) quantize kernel.
        prologue = fusion and mode is Mode.INFERENCE and counts[kernel.role] == 1
        time = timing.cast(kernel, fused, grouped, prologue=prologue)
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
