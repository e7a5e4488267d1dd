"""Where generated pages live, how they link, and the structured table every page shows.

Links are relative to the page that shows them (MkDocs resolves and validates them in
strict mode). A :class:`Table` holds cells, never Markdown built from user text: a cell
is plain text (escaped when the table is rendered) or :class:`site_gen.markup.safe.Md` built by
the helpers there, and every table carries the explicit name of its CSV and JSON exports.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from roofline.capability import Support
from roofline.publish import site_paths
from roofline.publish.table import markdown_table
from roofline.recipes import Mode
from roofline.specs import GpuSpec
from site_gen import config
from site_gen.markup import safe

GEN = config.GENERATED_DIRNAME


def gpu_dir(gpu: GpuSpec) -> str:
    """Docs-relative folder of a GPU's pages (the scheme: :mod:`roofline.publish.site_paths`)."""
    return site_paths.gpu_dir(gpu.name)


def gpu_page(gpu: GpuSpec) -> str:
    """Docs-relative path of a GPU page."""
    return site_paths.gpu_page(gpu.name)


def recipe_result_page(gpu: GpuSpec, mode: Mode, recipe: str) -> str:
    """Docs-relative path of a GPU x mode x recipe page."""
    return site_paths.recipe_result_page(gpu.name, mode, recipe)


recipe_page = site_paths.recipe_page


def rel(target: str, page: str) -> str:
    """``target`` (docs-relative) as a link from ``page`` (docs-relative)."""
    return posixpath.relpath(target, posixpath.dirname(page) or ".")


def set_links(ids: tuple[str, ...] | list[str], validation: str) -> safe.Md:
    """Measurement set ids, each linked to its section of the Validation page
    (``validation``: that page's link from the page shown, "" on the page itself),
    comma-separated."""
    parts: list[object] = []
    for i, set_id in enumerate(ids):
        parts += [", "] if i else []
        parts.append(safe.link(set_id, f"{validation}#{set_id}"))
    return safe.concat(*parts)


SUPPORT_BADGE = {
    Support.NATIVE: "native",
    Support.EMULATED: "emulated‡",
    Support.HYPOTHETICAL: "hypothetical†",
    Support.IMPOSSIBLE: "not computable",
}


Cell = str | safe.Md


@dataclass
class Table:
    """A Markdown table: header and rows of cells, exported under an explicit name.

    A cell is plain text (a ``str``, escaped when the table is rendered, so spec text can
    never become markup) or :class:`site_gen.markup.safe.Md` built by the helpers there (links,
    code, math), which also carries the plain text that exports write. ``name`` is the
    file name (without ``.csv`` / ``.json``) of the table's exports beside its page: part
    of the public download URLs, so it is fixed where the table is built.
    """

    header: tuple[Cell, ...]
    rows: list[tuple[Cell, ...]] = field(default_factory=list)
    align: tuple[str, ...] = ()
    #: Full-precision values behind the formatted rows (exports use them when set).
    raw: list[tuple[object, ...]] | None = None
    #: Links (relative to the page) to this table's CSV and JSON exports, set on export.
    exports: tuple[str, str] | None = None
    #: The export file name, a slug (e.g. ``training-ranked``); "" for a table not exported.
    name: str = ""

    def markdown(self) -> safe.Md:
        """GitHub-flavoured Markdown (every text cell escaped), then the export links."""

        def cells(row: tuple[Cell, ...]) -> list[str]:
            return [safe.md_text(c) for c in row]

        lines = markdown_table(cells(self.header), map(cells, self.rows), self.align)
        if self.exports:
            csv_link, json_link = self.exports
            lines += [
                "",
                f'<small class="ra-export">Download: {safe.link("CSV", csv_link)} · '
                f"{safe.link('JSON', json_link)}</small>",
            ]
        return safe.Md("\n".join(lines), "")
