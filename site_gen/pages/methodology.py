"""The model derived step by step, kernel traffic per recipe, limits and deviations."""

from __future__ import annotations

from dataclasses import dataclass

from roofline import notes
from roofline.recipes import RECIPE_LIST, Recipe
from site_gen import config, spec_rows
from site_gen.context import GEN, Table, recipe_page, rel
from site_gen.formulas import Formula, methodology_formulas
from site_gen.pages.base import PageOutput, SiteInput, page

PAGE = f"{GEN}/methodology.md"


@dataclass(frozen=True)
class Traffic:
    """One recipe x mode of the kernel-by-kernel traffic section."""

    recipe: Recipe
    mode: str
    link: str
    gemms: Table
    rows: Table
    structured: Formula


def render(site: SiteInput) -> PageOutput:
    """The Methodology page and its tables' exports."""
    traffic = []
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            stem = config.slug(f"{mode.value}-{recipe.name}")
            traffic.append(Traffic(
                recipe=recipe, mode=mode.value, link=rel(recipe_page(recipe.name), PAGE),
                gemms=spec_rows.gemms_table(recipe, mode, f"{stem}-gemms"),
                rows=spec_rows.kernels_table(recipe, mode, f"{stem}-rows"),
                structured=site.symbolic[(mode.value, recipe.name)][0],
            ))  # fmt: skip
    symbols = spec_rows.symbols_table()
    tables = [symbols, *(t for x in traffic for t in (x.rows, x.gemms))]
    return page(
        PAGE, "methodology.md.j2", tables, formulas=methodology_formulas(), traffic=traffic,
        symbols=symbols, recipes=RECIPE_LIST, limitations=notes.LIMITATIONS,
        deviations=notes.DEVIATIONS,
    )  # fmt: skip
