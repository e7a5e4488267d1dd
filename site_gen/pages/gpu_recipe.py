"""One GPU x mode x recipe: formulas, heatmap, curves, breakdown, tables, calculator."""

from __future__ import annotations

from typing import Any

from site_gen import calculator, charts, config, exports, rows, spec_rows
from site_gen.context import gpu_dir, gpu_page, recipe_page, recipe_result_page, rel
from site_gen.gather import RecipeResult
from site_gen.pages.base import PageOutput, SiteInput, page

TEMPLATE = "gpu_recipe.md.j2"


def _common(result: RecipeResult, path: str) -> dict[str, Any]:
    """What the page shows whether or not the recipe is computable on the GPU."""
    gpu, mode, recipe = result.gpu, result.mode, result.recipe
    return dict(
        gpu=gpu, mode=mode.value, recipe=recipe,
        title=f"{gpu.name}: {mode.value} with {recipe.name}",
        support=result.capability.support.value, reason=result.capability.reason,
        intro=spec_rows.recipe_intro(recipe), gpu_link=rel(gpu_page(gpu), path),
        recipe_link=rel(recipe_page(recipe.name), path),
    )  # fmt: skip


def render(site: SiteInput, result: RecipeResult) -> PageOutput:
    """The page, its tables' exports and (when computable) its three charts."""
    gpu, mode, recipe = result.gpu, result.mode, result.recipe
    path = recipe_result_page(gpu, mode, recipe.name)
    common = _common(result, path)
    if not result.computable:
        return page(path, TEMPLATE, computable=False, **common)
    stem = config.recipe_page_name(mode, recipe.name)
    tables = {
        "headline": rows.headline_table(result),
        "llama": rows.columns_table(result, "llama", rows.llama_names()),
        "pow2": rows.columns_table(result, "pow2"),
        "break-even": rows.page_break_even_table(result),
        "kernels": spec_rows.kernels_table(recipe, mode, "kernels"),
    }
    data = exports.evaluation_path(gpu, mode.value, recipe.name, False) + ".json"
    out = page(
        path, TEMPLATE, list(tables.values()), computable=True,
        symbolic=site.symbolic[(mode.value, recipe.name)],
        instantiated=site.instantiated[gpu.name][(mode.value, recipe.name)],
        headline=tables["headline"], tables=tables,
        calculator=calculator.widget(path, gpu.name, mode.value, recipe.name),
        calculator_link=rel("calculator.md", path), data_link=rel(data, path),
        img_prefix=f"img/{stem}", kernels=tables["kernels"], **common,
    )  # fmt: skip
    out.charts = charts.result_charts(result, f"{gpu_dir(gpu)}/img/{stem}")
    return out
