"""``generated/data/``, the calculator's scripts and the Data page's file list."""

from __future__ import annotations

from site_gen import config
from site_gen.context import GEN, rel
from site_gen.gather.dense import table_sets
from site_gen.markup import calculator, exports
from site_gen.pages.base import PageOutput, SiteInput, page

#: The hand-written page that includes the snippet (links are relative to it).
PAGE = "data.md"
#: Files of data/ that are not one evaluation: index.json, specs.json, spec.schema.json.
SHARED_JSON = 3


def render(site: SiteInput) -> PageOutput:
    """The data files, the calculator's scripts and the snippet that lists them."""
    files = exports.data_files(site.atlas)
    gpus = [{"name": g.name, "slug": config.slug(g.name)} for g in site.atlas.gpus]
    evaluations = sum(1 for p in files if p.endswith(".json")) - SHARED_JSON
    out = page(
        PAGE,
        "data.md.j2",
        output=f"{GEN}/_snippets/data.md.txt",
        gpus=gpus,
        evaluations=evaluations,
        data_dir=rel(exports.DATA_DIR, PAGE),
        sets=table_sets(),
    )
    out.files.update(files)
    out.files.update(
        calculator.scripts(
            site.atlas.specs, calibrations=site.atlas.calibrations, models_js=site.models_js
        )
    )
    return out
