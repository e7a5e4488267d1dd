"""The GPUs, Recipes and Models sections of the navigation (``generated/nav.json``, for
docs/hooks.py)."""

from __future__ import annotations

import json
from typing import Any

from roofline.recipes import RECIPE_LIST
from site_gen.context import GEN, gpu_page, recipe_page
from site_gen.markup import safe
from site_gen.pages.base import PageOutput, SiteInput
from site_gen.pages.rows.models import nav_section


def nav(site: SiteInput) -> dict[str, Any]:
    """The GPUs, Recipes and Models sections: one entry per GPU page, per recipe page and
    per model page.

    The pages below them (a GPU's recipe and grouped-GEMM pages, a model's page per GPU)
    are not listed: every page carries the whole navigation mkdocs-material renders, and
    listing their ~900 leaves made it about 40 KB of every page of the site. Each leaf is
    linked from its parent page instead (the GPU page's recipe tables link every recipe
    page, a recipe page its grouped-GEMM page, a model page every GPU), and mkdocs.yml's
    ``not_in_nav`` names them, so strict mode knows they are left out on purpose.
    """
    gpus: list[Any] = [f"{GEN}/gpus/index.md"]
    # mkdocs prints nav titles into the HTML as they are: escape them here.
    gpus += [{str(safe.md_text(gpu.name)): gpu_page(gpu)} for gpu in site.atlas.gpus]
    recipes: list[Any] = [f"{GEN}/recipes/index.md"]
    recipes += [{r.name: recipe_page(r.name)} for r in RECIPE_LIST]
    sections = {"GPUs": gpus, "Recipes": recipes}
    if site.atlas.models is not None:  # the Models section (site_gen/pages/models.py)
        sections["Models"] = nav_section(site.atlas.models)
    return sections


def render(site: SiteInput) -> PageOutput:
    """``generated/nav.json``."""
    return PageOutput({f"{GEN}/nav.json": json.dumps(nav(site), indent=1) + "\n"})
