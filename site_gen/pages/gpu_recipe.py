"""One GPU x mode x recipe: formulas, heatmap, curves, breakdown, tables, calculator.

The page leads with the calibrated model; torchao's model stands beside it in the
headline table, the break-even and breakdown tables, the charts (dashed) and the
column tables (a tab each).
"""

from __future__ import annotations

from typing import Any

from roofline.publish.site_paths import EQUATIONS_PAGE, grouped_result_page
from site_gen import config
from site_gen.charts import jobs as charts
from site_gen.charts.jobs import breakdown_labels
from site_gen.context import GEN, gpu_dir, gpu_page, recipe_page, recipe_result_page, rel
from site_gen.gather.dense import RecipeResult
from site_gen.markup import calculator, exports
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import recipe_tables
from site_gen.pages.rows import specs as spec_rows
from site_gen.pages.rows import speedup as rows

TEMPLATE = "gpu_recipe.md.j2"


def _common(result: RecipeResult, path: str) -> dict[str, Any]:
    """What the page shows whether or not the recipe is computable on the GPU."""
    gpu, mode, recipe = result.gpu, result.mode, result.recipe
    return dict(
        gpu=gpu,
        mode=mode.value,
        recipe=recipe,
        title=f"{gpu.name}: {mode.value} with {recipe.name}",
        support=result.capability.support.value,
        reason=result.capability.reason,
        hardware=result.capability.hardware,
        software=result.capability.software,
        intro=spec_rows.recipe_intro(recipe),
        gpu_link=rel(gpu_page(gpu), path),
        recipe_link=rel(recipe_page(recipe.name), path),
    )


def render(site: SiteInput, result: RecipeResult) -> PageOutput:
    """The page, its tables' exports and (when computable) its three charts.

    ``result`` may be of either model: the page shows the calibrated one first.
    """
    gpu, mode, recipe = result.gpu, result.mode, result.recipe
    result = site.atlas.get(gpu.name, mode, recipe.name, calibrated=True)
    path = recipe_result_page(gpu, mode, recipe.name)
    common = _common(result, path)
    common["calibration_data"] = site.atlas.has_calibration_data(gpu.name)
    common["calibration_link"] = rel(gpu_page(gpu), path) + "#calibrated-model-parameters"
    common["validation_link"] = rel(f"{GEN}/validation.md", path)
    grouped = grouped_result_page(gpu.name, mode, recipe.name)
    has_grouped = (gpu.name, mode, recipe.name) in site.atlas.grouped
    common["grouped_link"] = rel(grouped, path) if has_grouped else ""
    if not result.computable:
        return page(path, TEMPLATE, computable=False, **common)
    stem = config.recipe_page_name(mode, recipe.name)
    torchao = result.torchao
    tables = {
        "headline": recipe_tables.headline_table(
            result, rows.error_band(site.atlas, gpu.name, mode, recipe.name)
        ),
        "llama-calibrated": rows.columns_table(result, "llama", rows.llama_names()),
        "llama": rows.columns_table(torchao, "llama", rows.llama_names()),
        "pow2-calibrated": rows.columns_table(result, "pow2"),
        "pow2": rows.columns_table(torchao, "pow2"),
        "break-even": recipe_tables.page_break_even_table(result),
        "breakdown": recipe_tables.breakdown_table(result, breakdown_labels(result)),
        "kernels": spec_rows.kernels_table(recipe, mode, "kernels"),
    }
    data = exports.evaluation_path(gpu, mode.value, recipe.name, False) + ".json"
    symbolic = site.symbolic[(mode.value, recipe.name)]
    # The totals in symbols are the same on every GPU: each GPU page links to them once,
    # on the Equations page (their Cite permalinks point there too), instead of carrying
    # 20 KB of the same formulas 22 times.
    equations = rel(EQUATIONS_PAGE, path)
    symbolic_links = [
        (f.caption.rsplit(";", 1)[0], f"{equations}#{f.anchor}") for f in symbolic[1:]
    ]
    out = page(
        path,
        TEMPLATE,
        list(tables.values()),
        computable=True,
        symbolic=symbolic,
        symbolic_links=symbolic_links,
        instantiated=site.instantiated[gpu.name][(mode.value, recipe.name)],
        headline=tables["headline"],
        tables=tables,
        ranged=len(tables["headline"].rows) > 2,
        calculator=calculator.widget(path, gpu.name, mode.value, recipe.name),
        calculator_link=rel("calculator.md", path),
        data_link=rel(data, path),
        img_prefix=f"img/{stem}",
        kernels=tables["kernels"],
        **common,
    )
    out.charts = charts.result_charts(result, f"{gpu_dir(gpu)}/img/{stem}")
    return out
