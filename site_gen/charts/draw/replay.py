"""Parts of a chart that many charts share, drawn by matplotlib once per process.

A legend lays out its entries (text extents, boxes, offsets) every time it is drawn:
about 17 ms of each curves, breakdown and model-time chart, a quarter of the build's
chart time, though most charts show one of a few legends (one per recipe, say). The
curves' x axis is the same on every chart of a grid.

:func:`replay` puts a recorder in front of such an artist's ``draw``: the first time it
is drawn into an SVG, the text matplotlib writes for it is kept under a key that names
what the artist shows (the caller's: its labels, colours, figure size ...), with the
renderer's state before and after; a later artist under the same key, drawn into a
renderer in the same state, gets the kept text written and the state moved on as the
drawing would have. What the renderer's state decides about an artist's text:

* whether a marker is already defined (``<defs>`` written on first use): part of the
  state that must match;
* the ids of the clip paths, hatches and path collections it adds: by content (the same)
  or by counter (must match), and all are carried over for the document's end;
* its group ids (``line2d_12``), numbered across the document: not compared (charts
  drop every group id, :func:`site_gen.charts.draw.style.compact_svg`), but moved on.

``tests/test_replay.py`` checks every curves, breakdown and model-time chart of the
bundled site, drawn in any order, against matplotlib drawing each in full. Where the
renderer is not matplotlib's SVG one, or its writer is not as this module expects, the
artist is drawn in full.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from matplotlib.artist import Artist
from matplotlib.backends.backend_svg import RendererSVG

#: The SVG writer's private parts this module uses (matplotlib 3.x's ``_XMLWriter``).
_WRITE, _FLUSH, _OPEN, _DATA, _TAGS = (
    f"_XMLWriter__{name}" for name in ("write", "flush", "open", "data", "tags")
)
#: Renderer state an artist's text depends on: compared before a replay.
_COMPARED = ("_markers", "_path_collection_id", "_n_gradients")
#: Renderer state an artist adds to (written at the document's end, or numbering):
#: carried over after a replay.
_CARRIED = ("_clipd", "_clip_path_ids", "_hatchd")


@dataclass(frozen=True)
class _Recording:
    depth: int
    before: tuple[Any, ...]
    text: str
    after: tuple[Any, ...]
    added: dict[str, dict[Any, Any]]
    groups: dict[str, int]


_RECORDINGS: dict[Hashable, _Recording] = {}
#: This process's artists drawn "recorded" (by matplotlib, kept) and "replayed".
COUNTS: Counter[str] = Counter()


def replay(artist: Artist, key: Hashable) -> Artist:
    """Draw ``artist`` from the recording kept under ``key`` when there is one for the
    renderer's state (see the module's notes); ``key`` must name everything the artist
    shows and where. Returns the artist."""
    draw = artist.draw

    def replaying_draw(renderer: Any) -> None:
        svg = getattr(renderer, "_renderer", renderer)
        if type(svg) is not RendererSVG or not _writer_known(svg.writer):
            draw(renderer)
            return
        _draw(svg, key, lambda: draw(renderer))

    artist.draw = replaying_draw  # type: ignore[method-assign]
    return artist


def _writer_known(writer: Any) -> bool:
    return all(hasattr(writer, name) for name in (_WRITE, _FLUSH, _OPEN, _DATA, _TAGS))


def _draw(svg: RendererSVG, key: Hashable, draw: Any) -> None:
    writer = svg.writer
    getattr(writer, _FLUSH)()  # the parent's pending ">": written now, not by the artist
    depth = len(getattr(writer, _TAGS))
    before = tuple(copy.copy(getattr(svg, name)) for name in _COMPARED)
    kept = _RECORDINGS.get(key)
    if kept is not None and kept.depth == depth and kept.before == before:
        getattr(writer, _WRITE)(kept.text)
        _move_on(svg, kept)
        COUNTS["replayed"] += 1
        return
    carried = {name: dict(getattr(svg, name)) for name in _CARRIED}
    groups = dict(svg._groupd)
    images = repr(svg._image_counter)  # count(n): an image's id is numbered
    parts: list[str] = []
    write = getattr(writer, _WRITE)

    def tee(text: str) -> None:
        parts.append(text)
        write(text)

    setattr(writer, _WRITE, tee)
    try:
        draw()
    finally:
        setattr(writer, _WRITE, write)
    if getattr(writer, _OPEN) or getattr(writer, _DATA) or len(getattr(writer, _TAGS)) != depth:
        return  # the artist left an element open: its text is not a whole part
    if repr(svg._image_counter) != images:
        return  # an image's id is numbered: its text cannot be written twice
    COUNTS["recorded"] += 1
    _RECORDINGS[key] = _Recording(
        depth=depth,
        before=before,
        text="".join(parts),
        after=tuple(copy.copy(getattr(svg, name)) for name in _COMPARED),
        added={
            name: {k: v for k, v in getattr(svg, name).items() if k not in carried[name]}
            for name in _CARRIED
        },
        groups={
            name: count - groups.get(name, 0)
            for name, count in svg._groupd.items()
            if count != groups.get(name, 0)
        },
    )


def _move_on(svg: RendererSVG, kept: _Recording) -> None:
    """The renderer's state as drawing the recorded artist would have left it."""
    for name, value in zip(_COMPARED, kept.after, strict=True):
        setattr(svg, name, copy.copy(value))
    for name, added in kept.added.items():
        getattr(svg, name).update(added)
    for name, count in kept.groups.items():
        svg._groupd[name] = svg._groupd.get(name, 0) + count
