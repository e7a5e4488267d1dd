"""The home page's matrix snippet (included by the hand-written ``docs/index.md``).

The best-recipe table and the matrices use the calibrated model and say so; torchao's
model has its own column in the best-recipe table and its own tab beside each matrix.
"""

from __future__ import annotations

from site_gen import config
from site_gen.context import GEN, rel
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import speedup as rows

#: Links in the snippet are relative to the page that includes it.
PAGE = "index.md"
SHAPE_SETS = ("canonical", "llama")


def render(site: SiteInput) -> PageOutput:
    """The best-recipe table and the GPU x recipe matrices per mode, shape set and model."""
    best = rows.best_table(site.atlas, PAGE)
    matrices = {
        (mode.value, shape, calibrated): rows.matrix_table(
            site.atlas, mode, shape, PAGE, calibrated
        )
        for mode in config.MODES
        for shape in SHAPE_SETS
        for calibrated in (True, False)
    }
    assumed = any(not site.atlas.has_calibration_data(g.name) for g in site.atlas.gpus)
    ranged = any(r.spread for r in site.atlas.calibrated_results.values())
    return page(
        PAGE,
        "home_matrix.md.j2",
        [best, *matrices.values()],
        output=f"{GEN}/_snippets/home_matrix.md.txt",
        export_folder=f"{GEN}/home",
        best_table=best,
        matrices=matrices,
        modes=config.MODES,
        assumed=assumed,
        ranged=ranged,
        assumed_mark=rows.ASSUMED_MARK,
        fallback_mark=rows.FALLBACK_MARK,
        validation=rel(f"{GEN}/validation.md", PAGE),
    )
