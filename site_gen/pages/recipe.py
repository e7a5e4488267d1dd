"""One recipe across all GPUs: a comparison chart, a table, formulas and kernels per mode.

Speedups are the calibrated model's; the table quotes torchao's beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.recipes import Recipe
from site_gen.charts import jobs as charts
from site_gen.context import Table, recipe_page, rel
from site_gen.markup.formulas import Formula
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import recipe_tables
from site_gen.pages.rows import specs as spec_rows
from site_gen.pages.rows import speedup as rows


@dataclass(frozen=True)
class ModeSection:
    """One mode's part of a recipe page."""

    mode: str
    chart: str | None  # link to the comparison chart; None when no GPU can compute it
    table: Table
    formulas: list[Formula]
    kernels: Table


def render(site: SiteInput, recipe: Recipe) -> PageOutput:
    """The recipe's page, its tables' exports and its comparison charts."""
    path = recipe_page(recipe.name)
    sections, jobs = [], []
    for mode in recipe.modes:
        results = [
            site.atlas.get(g.name, mode, recipe.name, calibrated=True) for g in site.atlas.gpus
        ]
        chart = charts.compare_chart(recipe, mode, results)
        if chart is not None:
            jobs.append(chart)
        sections.append(
            ModeSection(
                mode=mode.value,
                chart=None if chart is None else rel(chart.path, path),
                table=recipe_tables.recipe_gpus_table(
                    results,
                    path,
                    mode.value,
                    [
                        rows.error_band(site.atlas, g.name, mode, recipe.name)
                        for g in site.atlas.gpus
                    ],
                ),
                formulas=site.symbolic[(mode.value, recipe.name)],
                kernels=spec_rows.kernels_table(recipe, mode, f"{mode.value}-kernels"),
            )
        )
    tables = [t for s in sections for t in (s.table, s.kernels)]
    out = page(
        path,
        "recipe.md.j2",
        tables,
        recipe=recipe,
        intro=spec_rows.recipe_intro(recipe),
        sections=sections,
    )
    out.charts = jobs
    return out
