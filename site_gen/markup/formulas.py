"""LaTeX of every formula on the site, printed by :mod:`roofline.publish.latex` (never by hand)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy

from roofline.capability import Support, classify
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.model.torchao import bf16_activation_time, cast_kernel_time, gemm_time
from roofline.publish import cite
from roofline.publish.latex import symbolic
from roofline.recipes import BF16, FP8, FP8_BLOCK, RECIPE_LIST, Mode, Role, get_recipe
from roofline.specs import GpuSpec
from roofline.symbols import K, M, N
from site_gen import config

QUANTITY_CAPTIONS = cite.QUANTITY_CAPTIONS
quantity_lhs = cite.quantity_lhs


@dataclass(frozen=True)
class Formula(cite.Citable):
    """One displayed formula: a :class:`roofline.publish.cite.Citable` (anchor id, caption,
    LHS symbol, sympy's LaTeX, permalink ``url``, ``citation_id``) and the snippet its
    page's "Cite" button copies (``roofline latex --cite`` prints the same).
    """

    @property
    def cite(self) -> str:
        """The Markdown permalink plus ``$$`` block (empty without a permalink)."""
        return self.snippet if self.url else ""


def _symbolic(anchor: str, caption: str, lhs: str, latex: str) -> Formula:
    return Formula(anchor, caption, lhs, latex, cite.equations_url(anchor))


def _formula(c: cite.Citable) -> Formula:
    return Formula(c.anchor, c.caption, c.lhs, c.latex, c.url)


def symbolic_formula(mode: Mode, recipe: str, quantity: Quantity, fusion: bool) -> Formula:
    """One total (or the speedup) of a model, in symbols, as the index page cites it."""
    return _formula(cite.symbolic_total(mode, recipe, quantity, fusion))


def symbolic_formulas(mode: Mode, recipe: str, fusion: bool = False) -> list[Formula]:
    """The structured speedup, then each total, in symbols (no GPU)."""
    # The same for every GPU and model page that quotes them: printed once per site URL
    # (the permalinks hold it).
    return list(_symbolic_formulas(mode, recipe, fusion, cite.site_url()))


@functools.cache
def _symbolic_formulas(mode: Mode, recipe: str, fusion: bool, _url: str) -> tuple[Formula, ...]:
    model = build_model(mode, recipe, fusion)
    out = [
        _symbolic(
            cite.formula_id(mode, recipe, "structured", fusion=fusion),
            cite.symbolic_caption(mode, recipe, fusion, "speedup in terms of the totals"),
            r"\mathrm{speedup}",
            symbolic(model.structured_speedup),
        )
    ]
    out += [symbolic_formula(mode, recipe, q, fusion) for q in model.quantities()]
    return tuple(out)


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
            out[(mode.value, recipe.name)] = tuple(
                instantiated_formula(gpu, mode, recipe.name, q) for q in model.quantities()
            )
    return out


def instantiated_formula(gpu: GpuSpec, mode: Mode, recipe: str, quantity: Quantity) -> Formula:
    """One total (or the speedup) with ``gpu``'s figures, as its GPU x recipe page shows it."""
    return _formula(cite.instantiated_total(gpu, mode, recipe, quantity))


def equation_index() -> list[tuple[str, list[Formula]]]:
    """Every symbolic formula, grouped for the equation index page.

    The methodology's building blocks first, then per mode x recipe x fusion the
    structured speedup and each total. Ids are names, never positions.
    """
    groups = [("Building blocks", list(methodology_formulas().values()))]
    for mode in config.MODES:
        for recipe in RECIPE_LIST:
            if mode not in recipe.plans:
                continue
            for fusion in (False, True):
                title = f"{mode.value} / {recipe.name}" + (" / fusion modelled" if fusion else "")
                groups.append((title, symbolic_formulas(mode, recipe.name, fusion)))
    return groups


def methodology_formulas() -> dict[str, Formula]:
    """The building blocks of the model, for the methodology page."""
    bf16 = gemm_time(M, K, N, BF16, None)
    fp8 = gemm_time(M, K, N, FP8, None)
    mx = gemm_time(M, K, N, FP8_BLOCK, 32)  # MX fp8 GEMMs run at the block-scaled peak
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
        key: _symbolic(f"f-model-{key}", caption, lhs, symbolic(expr))
        for key, (caption, lhs, expr) in items.items()
    }


def latex_of(expr: sympy.Expr) -> str:
    """Symbolic LaTeX of a kernel byte count (for the traffic tables)."""
    return symbolic(expr)
