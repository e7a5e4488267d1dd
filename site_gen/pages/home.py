"""The home page's matrix snippet (included by the hand-written ``docs/index.md``)."""

from __future__ import annotations

from site_gen import config, rows
from site_gen.context import GEN
from site_gen.pages.base import PageOutput, SiteInput, page

#: Links in the snippet are relative to the page that includes it.
PAGE = "index.md"
SHAPE_SETS = ("canonical", "llama")


def render(site: SiteInput) -> PageOutput:
    """The best-recipe table and the GPU x recipe matrices per mode and shape set."""
    best = rows.best_table(site.atlas, PAGE)
    matrices = {
        (mode.value, shape): rows.matrix_table(site.atlas, mode, shape, PAGE)
        for mode in config.MODES
        for shape in SHAPE_SETS
    }
    return page(
        PAGE, "home_matrix.md.j2", [best, *matrices.values()],
        output=f"{GEN}/_snippets/home_matrix.md.txt", export_folder=f"{GEN}/home",
        best_table=best, matrices=matrices, modes=config.MODES,
    )  # fmt: skip
