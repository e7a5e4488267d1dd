"""The GPU list."""

from __future__ import annotations

from site_gen import spec_rows
from site_gen.context import GEN
from site_gen.pages.base import PageOutput, SiteInput, page

PAGE = f"{GEN}/gpus/index.md"


def render(site: SiteInput) -> PageOutput:
    """Every GPU with its headline figures."""
    table = spec_rows.gpus_table(site.atlas.gpus, PAGE)
    return page(PAGE, "gpus_index.md.j2", [table], table=table)
