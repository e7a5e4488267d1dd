"""One GPU x mode x recipe of grouped GEMMs (a mixture-of-experts layer).

The grouped counterpart of :mod:`site_gen.pages.gpu_recipe`: the calibrated model first,
torchao's beside it; speedups over the expert count G at the expert GEMMs of the bundled
model presets; each term (2D-3D and 2D-2D GEMMs, 3D weight casts, scale rearrangements)
in µs; the GPU's calibrated parameters with their basis; the grouped terms' formulas in
symbols and with the GPU's numbers (printed by :mod:`roofline.publish.latex`); the kernels.
Tables only, no charts: there are as many of these pages as dense ones.
"""

from __future__ import annotations

import functools
from typing import Any

from roofline.calibration.params import Basis
from roofline.model.terms import Term
from roofline.publish import cite, site_paths
from roofline.publish.latex import symbolic
from roofline.recipes import Mode, Recipe
from roofline.symbols import RHO_2D2D, RHO_2D3D, RHO_BF16
from site_gen.context import GEN, gpu_page, recipe_page, recipe_result_page, rel
from site_gen.gather.grouped import DEFAULT_TOKENS, TOKENS, GroupedResult, formula_terms
from site_gen.markup import safe
from site_gen.markup.formulas import Formula
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import grouped as grouped_rows
from site_gen.pages.rows import specs as spec_rows
from site_gen.pages.rows.validation import parameter_text

TEMPLATE = "grouped.md.j2"
_GEMM, _CAST = r"T_{\mathrm{gemm}}", r"T_{\mathrm{cast}}"
_REARRANGE = r"T_{\mathrm{rearr}}"


def page_path(result: GroupedResult) -> str:
    """Docs-relative path of the result's grouped page."""
    return site_paths.grouped_result_page(result.gpu.name, result.mode, result.recipe.name)


def _anchor(mode: Mode, recipe: str, what: str, gpu: str | None = None) -> str:
    """``f-[<gpu>-]<mode>-<recipe>-grouped-<what>``: from names, never positions."""
    return cite.formula_id(mode, recipe, "grouped-" + what.replace(".", "-"), gpu=gpu)


def _lhs(term: Term) -> str:
    if term.key.startswith("gemm."):
        return _GEMM
    return _REARRANGE if term.key.startswith("rearrange.") else _CAST


@functools.cache
def _symbolic_terms(mode: Mode, recipe: Recipe) -> tuple[tuple[str, str, str, str], ...]:
    """(key, caption, lhs, LaTeX) of each calibrated grouped term a page prints."""
    return tuple((t.key, t.label, _lhs(t), symbolic(t.expr)) for t in formula_terms(mode, recipe))


def formulas(result: GroupedResult, path: str) -> dict[str, Any]:
    """The page's formulas: per calibrated term, its symbolic and instantiated forms
    (torchao's terms are on the Equations page: its totals alone would double the page).
    Permalinks point at this page."""
    url = cite.site_url() + site_paths.url_path(path)
    mode, name, gpu = result.mode, result.recipe.name, result.gpu.name
    terms = []
    for key, label, lhs, latex in _symbolic_terms(mode, result.recipe):
        caption = f"calibrated model: {label}"
        sym = _anchor(mode, name, key)
        inst = _anchor(mode, name, key, gpu=gpu)
        terms.append(
            (
                Formula(sym, f"{caption}, in symbols", lhs, latex, f"{url}#{sym}"),
                Formula(inst, f"{caption}, on {gpu}", lhs, result.latex[key], f"{url}#{inst}"),
            )
        )
    return {"terms": terms}


def _common(result: GroupedResult, path: str) -> dict[str, Any]:
    gpu, mode, recipe = result.gpu, result.mode, result.recipe
    return dict(
        gpu=gpu,
        mode=mode.value,
        recipe=recipe,
        title=f"{gpu.name}: grouped GEMMs (MoE), {mode.value} with {recipe.name}",
        support=result.capability.support.value,
        reason=result.capability.reason,
        hardware=result.capability.hardware,
        software=result.capability.software,
        intro=spec_rows.recipe_intro(recipe),
        gpu_link=rel(gpu_page(gpu), path),
        recipe_link=rel(recipe_page(recipe.name), path),
        dense_link=rel(recipe_result_page(gpu, mode, recipe.name), path),
        methodology_link=rel(f"{GEN}/methodology.md", path) + "#grouped-gemms-mixture-of-experts",
        equations_link=rel("equations.md", path) + "#grouped-gemms",
        rho_2d3d=safe.math(RHO_2D3D.latex),
        rho_2d2d=safe.math(RHO_2D2D.latex),
        rho_bf16=safe.math(RHO_BF16.latex),
    )


def render(site: SiteInput, result: GroupedResult) -> PageOutput:
    """The grouped page of one GPU x mode x recipe and its tables' exports."""
    path = page_path(result)
    common = _common(result, path)
    if not result.computable:
        return page(path, TEMPLATE, computable=False, **common)
    gpu = result.gpu
    validation = rel(f"{GEN}/validation.md", path)
    params = site.atlas.calibration(gpu.name)
    # The default token count first: the tab a reader sees.
    speedups = [
        (t, grouped_rows.speedup_table(result, t))
        for t in sorted(TOKENS, key=lambda t: t != DEFAULT_TOKENS)
    ]
    tables = {
        "parameters": grouped_rows.parameters_table(result, params, validation),
        "terms": grouped_rows.terms_export(result),
        "rearrangements": grouped_rows.rearrangements_table(result.mode, result.recipe),
    }
    parts = [
        (shape, grouped_rows.part_table(result, i))
        for i, (shape, times) in enumerate(zip(result.shapes, result.times, strict=True))
        if not times.skipped
    ]
    # A recipe without block scales has no rearrangement: no table, no empty export.
    exported = [table for _, table in speedups]
    exported += [t for t in tables.values() if t.rows or t.raw]
    exported += [table for _, table in parts]
    rho, bf16 = params.values[RHO_2D3D.spec_key], params.values[RHO_BF16.spec_key]
    lines = [grouped_rows.shape_line(shape) for shape in result.shapes]
    return page(
        path,
        TEMPLATE,
        exported,
        computable=True,
        tables=tables,
        parts=parts,
        speedups=speedups,
        skipped=grouped_rows.skipped_notes(result),
        default_tokens=DEFAULT_TOKENS,
        rho_assumed=rho.basis is Basis.ASSUMED,
        rho_source=rho.source,
        formulas=formulas(result, path),
        shape_lines=lines,
        bf16={"value": parameter_text(bf16.value, RHO_BF16.unit), "basis": bf16.basis.value},
        shape_title=grouped_rows.shape_title,
        shape_dims=grouped_rows.shape_dims,
        calibration_link=rel(gpu_page(gpu), path) + "#calibrated-model-parameters",
        validation_link=validation,
        **common,
    )
