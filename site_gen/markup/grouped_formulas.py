"""The grouped (MoE) model's and NVFP4 training's formulas for the Equations and
Methodology pages, printed by sympy from the terms the evaluator compiles.

Each formula is one term of a built model (:func:`roofline.model.build.build_model`) of a
representative recipe, found by its stable key, so the printed LaTeX is the evaluated
expression. Anchors are names (``f-grouped-<name>``, ``f-nvfp4-training-<name>``) and
permalinks point at the Equations page, which lists every one of them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from roofline.model.build import build_model
from roofline.model.terms import Term
from roofline.publish import cite
from roofline.publish.latex import symbolic
from roofline.recipes import Mode
from site_gen.markup.formulas import Formula

_GEMM, _CAST, _REARRANGE = r"T_{\mathrm{gemm}}", r"T_{\mathrm{cast}}", r"T_{\mathrm{rearr}}"
#: The recipe whose grouped layer shows the grouped terms: MXFP8 is the one measured
#: grouped (M4) and has every kind of term (block scales, so rearrangements too).
GROUPED_RECIPE = "mxfp8_cublas"
NVFP4 = "nvfp4"


@dataclass(frozen=True)
class TermPick:
    """One term of a model: its formula's name, caption, left-hand side and term key."""

    name: str
    caption: str
    lhs: str
    key: str
    calibrated: bool


#: The grouped terms, torchao's model first (its GEMMs have no rho), then the calibrated.
GROUPED_PICKS: tuple[TermPick, ...] = (
    TermPick(
        "gemm-2d3d",
        "2D-3D grouped GEMM (output: M × K @ G × K × N), MXFP8",
        _GEMM,
        "gemm.output.lowp",
        False,
    ),
    TermPick(
        "gemm-2d2d",
        "2D-2D grouped GEMM (grad_weight: K × M @ M × N → G × K × N), MXFP8",
        _GEMM,
        "gemm.grad_weight.lowp",
        False,
    ),
    TermPick(
        "weight-cast-3d",
        "3D weight cast (G K × N, one tensor), MXFP8 dim0",
        _CAST,
        "cast.weight.1",
        False,
    ),
    TermPick(
        "rearrange-m",
        "scale rearrangement of the activation (groups along M)",
        _REARRANGE,
        "rearrange.output.lhs",
        False,
    ),
    TermPick(
        "rearrange-3d",
        "scale rearrangement of the 3D weight (per group)",
        _REARRANGE,
        "rearrange.output.rhs",
        False,
    ),
    TermPick(
        "rearrange-k",
        "scale rearrangement of a 2D-2D operand (groups along K)",
        _REARRANGE,
        "rearrange.grad_weight.lhs",
        False,
    ),
    TermPick(
        "calibrated-gemm-bf16",
        "calibrated model: bf16 2D-3D grouped GEMM (the baseline)",
        _GEMM,
        "gemm.output.bf16",
        True,
    ),
    TermPick(
        "calibrated-gemm-2d3d",
        "calibrated model: 2D-3D grouped GEMM, MXFP8",
        _GEMM,
        "gemm.output.lowp",
        True,
    ),
    TermPick(
        "calibrated-gemm-2d2d",
        "calibrated model: 2D-2D grouped GEMM, MXFP8",
        _GEMM,
        "gemm.grad_weight.lowp",
        True,
    ),
    TermPick(
        "calibrated-rearrange-m",
        "calibrated model: scale rearrangement (groups along M)",
        _REARRANGE,
        "rearrange.output.lhs",
        True,
    ),
    TermPick(
        "calibrated-rearrange-k",
        "calibrated model: scale rearrangement (groups along K)",
        _REARRANGE,
        "rearrange.grad_weight.lhs",
        True,
    ),
)


def _formula(anchor: str, caption: str, lhs: str, latex: str) -> Formula:
    return Formula(anchor, caption, lhs, latex, cite.equations_url(anchor))


def _terms(mode: Mode, recipe: str, calibrated: bool, grouped: bool) -> dict[str, Term]:
    model = build_model(mode, recipe, calibrated=calibrated, grouped=grouped)
    return {t.key: t for t in model.terms}


def grouped_formulas() -> dict[str, Formula]:
    """The grouped layer's terms (MXFP8 training, :data:`GROUPED_RECIPE`), by name."""
    # Printed once per site URL: the permalinks hold it, and one process can build sites
    # for two URLs (a cache keyed without it served the first URL to the second site).
    return dict(_grouped_formulas(cite.site_url()))


@functools.cache
def _grouped_formulas(_url: str) -> dict[str, Formula]:
    out = {}
    for pick in GROUPED_PICKS:
        term = _terms(Mode.TRAINING, GROUPED_RECIPE, pick.calibrated, True)[pick.key]
        anchor = f"f-grouped-{pick.name}"
        out[pick.name] = _formula(anchor, pick.caption, pick.lhs, symbolic(term.expr))
    return out


def nvfp4_training_formulas() -> dict[str, Formula]:
    """Every cast kernel of NVFP4 training in the calibrated model, then the fp4 GEMM, by
    name (``<tensor>-<n>``, ``gemm-fp4``)."""
    return dict(_nvfp4_training_formulas(cite.site_url()))  # once per site URL, as above


@functools.cache
def _nvfp4_training_formulas(_url: str) -> dict[str, Formula]:
    model = build_model(Mode.TRAINING, NVFP4, calibrated=True)
    out = {}
    for term in model.terms:
        if term.key.startswith("cast."):
            name = term.key.removeprefix("cast.").replace(".", "-").replace("_", "-")
            caption = f"calibrated model, NVFP4 training: {term.label}"
            out[name] = _formula(f"f-nvfp4-training-{name}", caption, _CAST, symbolic(term.expr))
        elif term.key == "gemm.output.lowp":
            caption = f"calibrated model, NVFP4 training: {term.label}"
            out["gemm-fp4"] = _formula(
                "f-nvfp4-training-gemm-fp4", caption, _GEMM, symbolic(term.expr)
            )
    return out
