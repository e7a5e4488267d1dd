"""LaTeX of every formula on the site, printed by :mod:`roofline.latex` (never by hand)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from roofline.capability import Support, classify
from roofline.formulas import (
    QUANTITY_LATEX,
    QUANTITY_SYMBOLS,
    Quantity,
    bf16_activation_time,
    build_model,
    cast_kernel_time,
    gemm_time,
)
from roofline.latex import instantiated, symbolic
from roofline.recipes import BF16, FP8, RECIPE_LIST, Mode, Role, get_recipe
from roofline.specs import GpuSpec
from roofline.symbols import K, M, N
from site_gen import config

QUANTITY_CAPTIONS: dict[Quantity, str] = {
    Quantity.SPEEDUP: "speedup",
    Quantity.BF16_GEMM: "bf16 GEMM time (baseline), seconds",
    Quantity.LOWP_GEMM: "low-precision GEMM time, seconds",
    Quantity.OVERHEAD: "cast-kernel overhead, seconds",
    Quantity.BF16_OVERHEAD: "bf16 activation kernel (baseline), seconds",
}


@dataclass(frozen=True)
class Formula:
    """One displayed formula: its anchor id, a caption, the LHS symbol and sympy's LaTeX."""

    anchor: str
    caption: str
    lhs: str
    latex: str


def quantity_lhs(quantity: Quantity) -> str:
    """The left-hand side symbol of a quantity, from the model's own LaTeX names."""
    if quantity is Quantity.SPEEDUP:
        return r"\mathrm{speedup}"
    return QUANTITY_LATEX[QUANTITY_SYMBOLS[quantity]]


def symbolic_formulas(mode: Mode, recipe: str) -> list[Formula]:
    """The structured speedup, then each total, in symbols (no GPU)."""
    model = build_model(mode, recipe)
    out = [
        Formula(
            config.formula_id(mode, recipe, "structured"),
            "speedup in terms of the totals",
            r"\mathrm{speedup}",
            symbolic(model.structured_speedup),
        )
    ]
    for quantity in model.quantities():
        out.append(
            Formula(
                config.formula_id(mode, recipe, quantity.value),
                QUANTITY_CAPTIONS[quantity],
                quantity_lhs(quantity),
                symbolic(model.total(quantity)),
            )
        )
    return out


def instantiated_for_gpu(gpu: GpuSpec) -> dict[tuple[str, str], tuple[Formula, ...]]:
    """(mode, recipe) -> the speedup, then each total, with ``gpu``'s figures substituted.

    Only computable combinations appear. The totals read better than the whole speedup
    (which runs wide), so pages show them first; the speedup stays for citing.
    """
    out = {}
    for mode in config.MODES:
        for recipe in RECIPE_LIST:
            if mode not in recipe.plans:
                continue
            if classify(gpu, recipe, mode).support is Support.IMPOSSIBLE:
                continue
            model = build_model(mode, recipe)
            speedup = Formula(
                config.formula_id(mode, recipe.name, "speedup", gpu=gpu.name),
                f"speedup on {gpu.name}",
                r"\mathrm{speedup}",
                instantiated(model.speedup, gpu),
            )
            totals = tuple(
                Formula(
                    config.formula_id(mode, recipe.name, quantity.value, gpu=gpu.name),
                    f"{QUANTITY_CAPTIONS[quantity]}, on {gpu.name}",
                    quantity_lhs(quantity),
                    instantiated(model.total(quantity), gpu),
                )
                for quantity in model.quantities()
                if quantity is not Quantity.SPEEDUP
            )
            out[(mode.value, recipe.name)] = (speedup, *totals)
    return out


def methodology_formulas() -> dict[str, Formula]:
    """The building blocks of the model, for the methodology page."""
    bf16 = gemm_time(M, K, N, BF16, None)
    fp8 = gemm_time(M, K, N, FP8, None)
    mx = gemm_time(M, K, N, FP8, 32)
    kernel = get_recipe("rowwise", Mode.INFERENCE).plan(Mode.INFERENCE).kernels_for(Role.INPUT)[0]
    items = {
        "gemm-compute": (
            "GEMM compute time (bf16 operands)",
            r"T_{\mathrm{compute}}",
            bf16.compute,
        ),
        "gemm-memory": ("GEMM memory time (bf16 operands)", r"T_{\mathrm{memory}}", bf16.memory),
        "gemm-bf16": ("bf16 GEMM time", r"T_{\mathrm{gemm}}", bf16.total),
        "gemm-fp8": ("fp8 GEMM time", r"T_{\mathrm{gemm}}", fp8.total),
        "gemm-mxfp8": (
            "MXFP8 GEMM time (reads one scale per 32 elements)",
            r"T_{\mathrm{gemm}}",
            mx.total,
        ),
        "cast-rowwise": (
            "a cast kernel: rowwise inference quantize of the input",
            r"T_{\mathrm{cast}}",
            cast_kernel_time(kernel, False),
        ),
        "bf16-act": (
            "the bf16 activation kernel (inference with fusion)",
            r"T_{\mathrm{act}}^{\mathrm{bf16}}",
            bf16_activation_time(),
        ),
        "speedup-training": (
            "speedup (training, or inference without fusion)",
            r"\mathrm{speedup}",
            build_model(Mode.TRAINING, "rowwise").structured_speedup,
        ),
        "speedup-inference-fused": (
            "speedup (inference with fusion modelling)",
            r"\mathrm{speedup}",
            build_model(Mode.INFERENCE, "rowwise", True).structured_speedup,
        ),
    }
    return {
        key: Formula(f"f-model-{key}", caption, lhs, symbolic(expr))
        for key, (caption, lhs, expr) in items.items()
    }


def latex_of(expr: sympy.Expr) -> str:
    """Symbolic LaTeX of a kernel byte count (for the traffic tables)."""
    return symbolic(expr)
