"""Stage 2: the pages. :func:`render_pages` calls each page module of :mod:`site_gen.pages`.

Pure: it returns ``docs-relative path -> text`` (pages, snippets, CSV and JSON exports,
data files, the nav) and the :class:`~site_gen.charts.jobs.PlotJob` list for the charts, each
distinct chart once (:func:`site_gen.charts.jobs.dedupe`). Nothing here writes.
"""

from __future__ import annotations

from roofline.analysis.history import SpecHistory
from roofline.recipes import RECIPE_LIST
from site_gen import config
from site_gen.charts.jobs import PlotJob, chart_key, dedupe
from site_gen.gather.dense import Atlas
from site_gen.pages import (
    changes,
    data,
    equations,
    gpu,
    gpu_recipe,
    gpus_index,
    grouped,
    home,
    methodology,
    models,
    nav,
    recipe,
    recipes_index,
    specs,
    validation,
)
from site_gen.pages.base import Instantiated, PageOutput, SiteInput

__all__ = ["PlotJob", "chart_key", "render_pages"]


def render_pages(
    atlas: Atlas, instantiated: Instantiated, history: SpecHistory | None = None
) -> tuple[dict[str, str], list[PlotJob]]:
    """All generated pages (path -> text) and the charts to draw."""
    site = SiteInput.of(atlas, instantiated, history)
    out = PageOutput()
    out.add(home.render(site))
    out.add(gpus_index.render(site))
    for g in atlas.gpus:
        out.add(gpu.render(site, g))
        for mode in config.MODES:
            for result in atlas.for_gpu(g.name, mode):
                out.add(gpu_recipe.render(site, result))
        for key, result in atlas.grouped.items():
            if key[0] == g.name:
                out.add(grouped.render(site, result))
    out.add(recipes_index.render(site))
    for r in RECIPE_LIST:
        out.add(recipe.render(site, r))
    for module in (methodology, validation, specs, equations, data, changes, models, nav):
        out.add(module.render(site))
    return out.files, dedupe(out.charts)
