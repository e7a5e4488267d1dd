"""The GPU list."""

from __future__ import annotations

from site_gen.context import GEN, Table
from site_gen.gather.dense import Atlas
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import specs as spec_rows

PAGE = f"{GEN}/gpus/index.md"


def with_calibration(table: Table, atlas: Atlas) -> Table:
    """``table`` (one row per GPU, in atlas order) with a column saying whether the
    calibrated model's efficiencies for the GPU are measured or assumed."""
    table.header = (*table.header, "calibrated efficiencies")
    table.rows = [
        (*row, "measured" if atlas.has_calibration_data(gpu.name) else "assumed")
        for row, gpu in zip(table.rows, atlas.gpus, strict=True)
    ]
    return table


def render(site: SiteInput) -> PageOutput:
    """Every GPU with its headline figures."""
    table = with_calibration(spec_rows.gpus_table(site.atlas.gpus, PAGE), site.atlas)
    return page(PAGE, "gpus_index.md.j2", [table], table=table)
