"""All GPUs side by side, the capability matrix and the spec file format."""

from __future__ import annotations

from site_gen.context import GEN
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import capability as capability_rows
from site_gen.pages.rows import specs as spec_rows

PAGE = f"{GEN}/specs.md"


def render(site: SiteInput) -> PageOutput:
    """The Specs page and its tables' exports."""
    specs = site.atlas.specs
    keys, top = spec_rows.gpu_keys_table(), spec_rows.top_keys_table()
    caps = capability_rows.capability_table(specs, PAGE)
    reasons = capability_rows.reasons_table(specs, PAGE)
    legend = [
        (capability_rows.SUPPORT_SYMBOL[s], text)
        for s, text in capability_rows.SUPPORT_MEANING.items()
    ]
    side = spec_rows.side_by_side_table(site.atlas.gpus, PAGE)
    return page(
        PAGE,
        "specs.md.j2",
        [keys, top, caps, reasons, side],
        keys=keys,
        top=top,
        cap_table=caps,
        cap_reasons=reasons,
        cap_legend=legend,
        side=side,
        origin=specs.origin,
        warnings=[str(w) for w in specs.warnings],
    )
