"""The recipe list."""

from __future__ import annotations

from site_gen.context import GEN
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import specs as spec_rows

PAGE = f"{GEN}/recipes/index.md"


def render(site: SiteInput) -> PageOutput:
    """Every recipe of the registry."""
    table = spec_rows.recipes_table(PAGE)
    return page(PAGE, "recipes_index.md.j2", [table], table=table)
