"""The equation index, included by the hand-written ``docs/equations.md``."""

from __future__ import annotations

from site_gen.context import GEN
from site_gen.formulas import equation_index
from site_gen.pages.base import PageOutput, SiteInput, page


def render(site: SiteInput) -> PageOutput:
    """Every formula of the model, grouped, with anchors and citations."""
    groups = equation_index()
    return page("equations.md", "equations.md.j2", output=f"{GEN}/_snippets/equations.md.txt",
                groups=groups, count=sum(len(f) for _, f in groups))  # fmt: skip
