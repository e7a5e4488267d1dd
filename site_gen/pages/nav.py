"""The GPUs, Recipes and Models sections of the navigation (``generated/nav.json``, for
docs/hooks.py)."""

from __future__ import annotations

import json
from typing import Any

from roofline.recipes import RECIPE_LIST
from roofline.site_paths import grouped_result_page
from site_gen import config, safe
from site_gen.context import GEN, gpu_page, recipe_page, recipe_result_page
from site_gen.model_rows import nav_section
from site_gen.pages.base import PageOutput, SiteInput

#: The nav section of a GPU's grouped-GEMM (MoE) pages.
GROUPED_TITLE = "Grouped GEMMs (MoE), {mode}"


def nav(site: SiteInput) -> dict[str, Any]:
    """The GPUs and Recipes sections: every GPU page with its recipe pages per mode, then
    its grouped-GEMM pages."""
    gpus: list[Any] = [f"{GEN}/gpus/index.md"]
    for gpu in site.atlas.gpus:
        entries: list[Any] = [gpu_page(gpu)]
        for mode in config.MODES:
            pages = [
                {r.recipe.name: recipe_result_page(gpu, mode, r.recipe.name)}
                for r in site.atlas.for_gpu(gpu.name, mode)
            ]
            entries.append({mode.value.capitalize(): pages})
        for mode in config.MODES:
            grouped = [
                {recipe: grouped_result_page(gpu.name, mode, recipe)}
                for (name, grouped_mode, recipe) in site.atlas.grouped
                if name == gpu.name and grouped_mode is mode
            ]
            if grouped:
                entries.append({GROUPED_TITLE.format(mode=mode.value): grouped})
        # mkdocs prints nav titles into the HTML as they are: escape them here.
        gpus.append({str(safe.md_text(gpu.name)): entries})
    recipes: list[Any] = [f"{GEN}/recipes/index.md"]
    recipes += [{r.name: recipe_page(r.name)} for r in RECIPE_LIST]
    sections = {"GPUs": gpus, "Recipes": recipes}
    if site.atlas.models is not None:  # the Models section (site_gen/pages/models.py)
        sections["Models"] = nav_section(site.atlas.models)
    return sections


def render(site: SiteInput) -> PageOutput:
    """``generated/nav.json``."""
    return PageOutput({f"{GEN}/nav.json": json.dumps(nav(site), indent=1) + "\n"})
