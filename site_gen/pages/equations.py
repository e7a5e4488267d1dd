"""The equation index, included by the hand-written ``docs/equations.md``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from roofline.model.build import build_model
from roofline.model.terms import Term
from roofline.publish import cite
from roofline.publish.latex import symbolic
from roofline.recipes import CastKernel, CastKind, Mode, get_recipe
from roofline.symbols import G
from site_gen.context import GEN
from site_gen.markup import safe
from site_gen.markup.formulas import Formula, equation_index
from site_gen.markup.grouped_formulas import (
    GROUPED_RECIPE,
    grouped_formulas,
    nvfp4_training_formulas,
)
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows.validation import calibration_symbols_table

_GEMM, _CAST, _ACT = r"T_{\mathrm{gemm}}", r"T_{\mathrm{cast}}", r"T_{\mathrm{act}}^{\mathrm{bf16}}"


@dataclass(frozen=True)
class Pick:
    """One calibrated formula: a representative term of one recipe's calibrated model."""

    name: str
    caption: str
    lhs: str
    mode: Mode
    recipe: str
    fusion: bool
    #: Whether a term is the one shown (given the term and, for cast terms, its kernel).
    matches: Callable[[Term, CastKernel | None], bool]


def _key(key: str) -> Callable[[Term, CastKernel | None], bool]:
    return lambda term, _kernel: term.key == key


def _kind(kind: CastKind, launches: int = 1) -> Callable[[Term, CastKernel | None], bool]:
    return lambda _term, k: k is not None and k.kind is kind and k.launches == launches


T, I = Mode.TRAINING, Mode.INFERENCE  # noqa: E741 (the modes, as the table reads them)
#: One representative recipe per kind of term, as the building blocks do for torchao's.
PICKS: tuple[Pick, ...] = (
    Pick(
        "gemm-bf16",
        "bf16 GEMM (the baseline)",
        _GEMM,
        T,
        "rowwise",
        False,
        _key("gemm.output.bf16"),
    ),
    Pick(
        "gemm-fp8",
        "fp8 GEMM with per-tensor or per-row scales (rowwise)",
        _GEMM,
        T,
        "rowwise",
        False,
        _key("gemm.output.lowp"),
    ),
    Pick(
        "gemm-fp8-block",
        "block-scaled fp8 GEMM (mxfp8_cublas: one scale per 32 elements)",
        _GEMM,
        T,
        "mxfp8_cublas",
        False,
        _key("gemm.output.lowp"),
    ),
    Pick(
        "gemm-fp4", "fp4 GEMM (nvfp4 inference)", _GEMM, I, "nvfp4", False, _key("gemm.output.lowp")
    ),
    Pick(
        "cast-row",
        "a row (dim0) cast kernel: rowwise inference quantize of the input",
        _CAST,
        I,
        "rowwise",
        False,
        _kind(CastKind.ROW),
    ),
    Pick(
        "cast-column",
        "a column (dim1) cast kernel: the mxfp8_cublas dim1 cast of the input",
        _CAST,
        T,
        "mxfp8_cublas",
        False,
        _kind(CastKind.COLUMN),
    ),
    Pick(
        "cast-tile",
        "a tile cast kernel: the blockwise 128 × 128 weight quantize",
        _CAST,
        T,
        "blockwise",
        False,
        _kind(CastKind.TILE),
    ),
    Pick(
        "cast-reduce",
        "an amax reduction kernel (tensorwise, stage 1)",
        _CAST,
        T,
        "tensorwise",
        False,
        _kind(CastKind.REDUCE),
    ),
    Pick(
        "cast-nvfp4-dynamic",
        "the dynamic nvfp4 quantize: amax and cast, two launches",
        _CAST,
        I,
        "nvfp4",
        False,
        _kind(CastKind.ROW, launches=2),
    ),
    Pick(
        "bf16-act",
        "the bf16 activation kernel (inference with fusion)",
        _ACT,
        I,
        "rowwise",
        True,
        _key("act.input.bf16"),
    ),
)


def _term(pick: Pick) -> Term:
    """The first term of the pick's calibrated model that it matches."""
    model = build_model(pick.mode, pick.recipe, pick.fusion, calibrated=True)
    kernels = iter(get_recipe(pick.recipe, pick.mode).plan(pick.mode).kernels)
    for term in model.terms:
        # Cast terms come in the plan's kernel order (formulas._cast_terms).
        kernel = next(kernels) if term.key.startswith("cast.") else None
        if pick.matches(term, kernel):
            return term
    raise LookupError(f"no term of {pick.mode.value} {pick.recipe} matches {pick.name}")


def calibrated_formulas() -> list[Formula]:
    """The calibrated model's GEMM, cast-kernel and activation times, printed by sympy."""
    out = []
    for pick in PICKS:
        anchor = f"f-calibrated-{pick.name}"
        caption = f"calibrated model: {pick.caption}"
        latex = symbolic(_term(pick).expr)
        out.append(Formula(anchor, caption, pick.lhs, latex, cite.equations_url(anchor)))
    return out


def render(site: SiteInput) -> PageOutput:
    """Every formula of the model, grouped, with anchors and citations; after the building
    blocks, the calibrated model's formulas and its parameters' symbols, the grouped
    (MoE) layer's terms and NVFP4 training's kernels."""
    groups = equation_index()
    calibrated = calibrated_formulas()
    grouped = list(grouped_formulas().values())
    nvfp4 = list(nvfp4_training_formulas().values())
    symbols = calibration_symbols_table("calibration-symbols")
    count = sum(len(f) for _, f in groups) + len(calibrated) + len(grouped) + len(nvfp4)
    return page(
        "equations.md",
        "equations.md.j2",
        [symbols],
        output=f"{GEN}/_snippets/equations.md.txt",
        export_folder=f"{GEN}/equations",
        groups=groups,
        count=count,
        calibrated=calibrated,
        symbols=symbols,
        grouped=grouped,
        nvfp4=nvfp4,
        grouped_recipe=GROUPED_RECIPE,
        g_symbol=safe.math(symbolic(G)),
    )
