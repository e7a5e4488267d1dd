"""The one GitHub-flavoured Markdown table builder: the site's tables and the spec diff's.

It only lays out cells that the caller has already made table-safe: each caller escapes at
its own boundary (the site's :mod:`site_gen.markup.safe`, the diff report's cell folding),
so this module needs nothing from the package and any layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] = ()
) -> list[str]:
    """The lines of a pipe table: header, alignment row (``---`` by default), one per row.

    ``align`` holds one GFM alignment marker per column (``---``, ``:--``, ``--:``,
    ``:-:``); empty means every column left to Markdown's default.
    """
    if align and len(align) != len(header):
        raise ValueError(f"{len(align)} alignment markers for {len(header)} columns")
    markers = align or ("---",) * len(header)
    return [_row(header), "|" + "|".join(markers) + "|", *(_row(r) for r in rows)]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
