"""The speedup heatmap, drawn by matplotlib once per grid and filled in per chart.

Every GPU x recipe page has one heatmap, and all of them share their grid, their marked
shape and their legend: what differs from one to the next is the colour of the cells, the
speedup = 1 contours and the colour bar's ticks. Drawing each one in full took a fifth of
the build's chart time, most of it in matplotlib laying out the same axes again.

So the figure is drawn by matplotlib once per process and grid, as :class:`Frame`, with
marks where the changing parts go, and each chart fills them in (:func:`heatmap_svg`):

* the cells: an image at the grid's own resolution, coloured by the same colour map and
  norm as matplotlib's ``imshow`` (and scaled without smoothing, as it draws them);
* the contours: the lines contourpy (matplotlib's own contouring) finds at speedup = 1;
* the colour bar's ticks: the values and labels matplotlib's locator and formatter give
  for the chart's range, placed as the template's first tick.

``tests/test_heatmap.py`` checks charts made so against matplotlib drawing them in full.
A heatmap with a title is drawn in full by matplotlib (no page has one).
"""

from __future__ import annotations

import base64
import functools
import io
import re
from dataclasses import dataclass
from xml.sax.saxutils import escape

import contourpy
import matplotlib.pyplot as plt
import numpy as np
from matplotlib import colormaps, ticker
from matplotlib.colors import TwoSlopeNorm
from PIL import Image

from site_gen.charts.draw.style import (
    REFERENCE_STYLE,
    WIDTH_IN,
    compact_svg,
    log2_axis,
    mark_shape,
    to_svg,
)

#: matplotlib's style of each contour set, the calibrated model's and torchao's (dashed):
#: ``tests/test_heatmap.py`` compares the charts with matplotlib's own.
CONTOUR_STYLES = (
    "fill: none; stroke: #000000; stroke-width: 1.4",
    "fill: none; stroke-dasharray: 7,4.2; stroke-dashoffset: 0; stroke: #000000; stroke-width: 1.4",
)
_IMAGE_GID = "atlas-heat-image"
_CONTOURS_GID = "atlas-heat-contours"
_BAR_GID = "atlas-heat-bar"
COLOURS = "RdBu"
BAR_LABEL = "speedup over bf16 (×); >1 is faster"
#: The colour bar label's place, in widths of the bar from its left edge.
BAR_LABEL_X = 4.55


def colour_norm(values: np.ndarray) -> TwoSlopeNorm:
    """The colour scale of a chart: centred on 1, spanning at least 0.95 to 1.05."""
    vmin = min(float(np.min(values)), 0.95)
    vmax = max(float(np.max(values)), 1.05)
    return TwoSlopeNorm(vcenter=1.0, vmin=vmin, vmax=vmax)


def crosses_one(values: np.ndarray) -> bool:
    """Whether a speedup = 1 contour exists: values on both sides of 1."""
    return bool(np.min(values) < 1.0 < np.max(values))


def _figure(x: np.ndarray, y: np.ndarray, mark: tuple[int, int] | None, reference: bool) -> dict:
    """The heatmap figure with neutral cells, no contours and no title."""
    dx, dy = (x[1] - x[0]) / 2, (y[1] - y[0]) / 2
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.6))
    fig.subplots_adjust(left=0.09, right=0.87, bottom=0.11, top=0.93)
    image = ax.imshow(
        np.ones((len(y), len(x))),
        origin="lower",
        aspect="auto",
        extent=(x[0] - dx, x[-1] + dx, y[0] - dy, y[-1] + dy),
        cmap=COLOURS,
        norm=TwoSlopeNorm(vcenter=1.0, vmin=0.5, vmax=2.0),
        interpolation="nearest",
    )
    if reference:
        ax.plot([], [], color="black", linewidth=1.4, label="speedup = 1, calibrated model")
        ax.plot(
            [],
            [],
            color="black",
            linewidth=1.4,
            linestyle=REFERENCE_STYLE,
            label="speedup = 1, torchao model",
        )
    else:
        ax.plot([], [], color="black", linewidth=1.4, label="speedup = 1")
    if mark is not None:
        mark_shape(ax, mark, "#FFD23F", label=f"M={mark[0]}, K=N={mark[1]}")
    ax.legend(loc="upper left", framealpha=0.9)
    log2_axis(ax.xaxis, x[0], x[-1])
    log2_axis(ax.yaxis, y[0], y[-1])
    ax.grid(False)
    ax.set_xlabel("M (tokens per GEMM, log2 scale)")
    ax.set_ylabel("K = N (log2 scale)")
    bar = fig.colorbar(image, cax=fig.add_axes((0.885, 0.11, 0.02, 0.82)))
    bar.set_label(BAR_LABEL)
    # At a fixed place, right of the widest tick labels a range can get ("0.975"):
    # placed by matplotlib, the label moved right with wider labels and left the figure.
    bar.ax.yaxis.set_label_coords(BAR_LABEL_X, 0.5)
    return {"fig": fig, "ax": ax, "image": image, "bar": bar, "drawn": []}


Grid = tuple[float, ...]  # log2 of the grid's sizes, hashable (a cache key)


@functools.cache
def _full_figure(x: Grid, y: Grid, mark: tuple[int, int] | None, reference: bool) -> dict:
    """A figure per process and grid for charts drawn in full, reused with new data."""
    return _figure(np.array(x), np.array(y), mark, reference)


def full_heatmap_svg(
    title: str,
    x: np.ndarray,
    y: np.ndarray,
    speedup: np.ndarray,
    mark: tuple[int, int] | None,
    reference: np.ndarray | None = None,
) -> str:
    """The heatmap drawn by matplotlib in full (x, y: log2 of the grid)."""
    parts = _full_figure(tuple(x), tuple(y), mark, reference is not None)
    for artist in parts["drawn"]:
        artist.remove()
    parts["drawn"] = []
    parts["image"].set_data(speedup)
    parts["image"].set_norm(colour_norm(speedup))
    parts["bar"].update_normal(parts["image"])
    for values, style in ((speedup, "solid"), (reference, REFERENCE_STYLE)):
        if values is not None and crosses_one(values):
            parts["drawn"].append(
                parts["ax"].contour(
                    x, y, values, levels=[1.0], colors="black", linewidths=1.4, linestyles=[style]
                )
            )
    parts["ax"].set_title(title)
    return to_svg(parts["fig"], close=False)


def _short(value: float) -> str:
    """A number as matplotlib's SVG writer prints it ('%f', trailing zeros dropped)."""
    return f"{value:f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Frame:
    """The heatmap's SVG (matplotlib's, not yet compacted) cut where charts differ, and
    what placing the parts takes: the plot and colour bar boxes (SVG points)."""

    head: str  # up to the cells' image
    middle: str  # the cells' image to the contours
    before_ticks: str  # the contours to the colour bar's first tick
    tail: str  # the colour bar's label to the end
    clip: str  # the plot's clip path id
    plot_box: tuple[float, float, float, float]  # left, top, width, height
    data_box: tuple[float, float, float, float]  # x0, x1, y0, y1 (log2 units)
    bar_box: tuple[float, float]  # bottom (SVG y), height
    tick: str  # the first tick's group, with {y}, {label_y} and {label} fields
    tick_defs: str  # the tick mark's definition, which only the first tick carries
    label_offset: float  # a tick label's baseline below its tick (SVG points)


def _cut(svg: str, start: str, end: str) -> tuple[int, int]:
    """Where ``start`` ... ``end`` (both included) first occurs in ``svg``."""
    i = svg.index(start)
    return i, svg.index(end, i) + len(end)


def _tick_pattern(group: str) -> tuple[str, str, float]:
    """The first colour bar tick's group as a pattern (fields {y}, {label_y}, {label}),
    its tick mark's definition and its label's offset below the tick (SVG points);
    ValueError where the group does not have the form this module expects."""
    defs = re.search(r"\s*<defs>.*?</defs>", group, re.S)
    path = re.search(r'<path d="M [-\d.]+ ([-\d.]+) ', group)
    text = re.search(r'<text [^>]* y="([-\d.]+)" [^>]*>([^<]*)</text>', group)
    if defs is None or path is None or text is None:
        raise ValueError("unexpected colour bar tick")
    tick_y, label_y, label = path[1], text[1], text[2]
    if group.count(f" {tick_y} ") + group.count(f'"{tick_y}"') != 3 or group.count(label_y) != 2:
        raise ValueError("colour bar tick position not found where expected")
    pattern = group.replace("{", "{{").replace("}", "}}")
    pattern = pattern.replace(f" {tick_y} ", " {y} ").replace(f'"{tick_y}"', '"{y}"')
    pattern = pattern.replace(label_y, "{label_y}").replace(f">{label}<", ">{label}<")
    return pattern, defs[0], float(label_y) - float(tick_y)


@functools.cache
def frame(x: Grid, y: Grid, mark: tuple[int, int] | None, reference: bool) -> Frame:
    """The heatmap's frame for a grid (log2 sizes), drawn once per process.

    ValueError where matplotlib's SVG is not as this module expects it (another
    matplotlib): :func:`heatmap_svg` then draws each chart in full."""
    parts = _figure(np.array(x), np.array(y), mark, reference)
    parts["image"].set_gid(_IMAGE_GID)
    parts["ax"].plot([], [], gid=_CONTOURS_GID)  # where the contours go
    parts["bar"].ax.yaxis.set_gid(_BAR_GID)
    buffer = io.StringIO()
    parts["fig"].savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(parts["fig"])
    svg = buffer.getvalue()
    at = svg.index(f'id="{_IMAGE_GID}"')
    image = (svg.rindex("<image ", 0, at), svg.index("/>", at) + 2)
    contours = _cut(svg, f'<g id="{_CONTOURS_GID}"', "/>")
    contours = (svg.rindex("\n", 0, contours[0]), contours[1])  # with its line break
    bar = svg.index(f'<g id="{_BAR_GID}">')
    first = svg.index('<g id="ytick_', bar)
    second = svg.find('<g id="ytick_', first + 1)
    label = svg.rindex('<g id="text_', first, svg.index(f">{escape(BAR_LABEL)}<", first))
    tick, defs, offset = _tick_pattern(svg[first : second if 0 < second < label else label])
    clip = re.search(r'<g clip-path="url\(#([^)]+)\)">\s*$', svg[: image[0]])
    if clip is None:
        raise ValueError("cells' clip path not found")
    fig_h = parts["fig"].get_size_inches()[1] * 72
    fig_w = parts["fig"].get_size_inches()[0] * 72
    box, bar_box = parts["ax"].get_position(), parts["bar"].ax.get_position()
    limits = (*parts["ax"].get_xlim(), *parts["ax"].get_ylim())
    return Frame(
        head=svg[: image[0]],
        middle=svg[image[1] : contours[0]],
        before_ticks=svg[contours[1] : first],
        tail=svg[label:],
        clip=clip[1],
        plot_box=(box.x0 * fig_w, fig_h - box.y1 * fig_h, box.width * fig_w, box.height * fig_h),
        data_box=limits,
        bar_box=(fig_h - bar_box.y0 * fig_h, bar_box.height * fig_h),
        tick=tick,
        tick_defs=defs,
        label_offset=offset,
    )


def _cells(frame: Frame, speedup: np.ndarray, norm: TwoSlopeNorm) -> str:
    """The cells as an image of one pixel each, scaled up without smoothing."""
    rgba = colormaps[COLOURS](norm(speedup), bytes=True)[::-1]  # the first row is the lowest
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgba)).save(buffer, format="png")
    left, top, width, height = frame.plot_box
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (
        f'<image xlink:href="data:image/png;base64,{data}" x="{_short(left)}" '
        f'y="{_short(top)}" width="{_short(width)}" height="{_short(height)}" '
        'preserveAspectRatio="none" '
        'style="image-rendering:crisp-edges;image-rendering:pixelated"/>'
    )


def _contour(frame: Frame, x: np.ndarray, y: np.ndarray, values: np.ndarray, style: str) -> str:
    """The speedup = 1 lines of ``values`` as one path, as matplotlib's contour draws it."""
    generator = contourpy.contour_generator(x, y, values, name="mpl2014", line_type="SeparateCode")
    left, top, width, height = frame.plot_box
    x0, x1, y0, y1 = frame.data_box
    commands = []
    for points, codes in zip(*generator.lines(1.0), strict=True):
        px = left + (points[:, 0] - x0) / (x1 - x0) * width
        py = top + height - (points[:, 1] - y0) / (y1 - y0) * height
        for code, u, v in zip(codes, px, py, strict=True):
            # A closed loop's last point (CLOSEPOLY, 79) repeats its first: matplotlib
            # draws a line to it, then closes the path.
            commands.append(f"{'M' if code == 1 else 'L'} {_short(u)} {_short(v)} \n")
            if code == 79:
                commands.append("z\n")
    # Written as matplotlib writes a path ("M x y \nL x y \n ... z\n"), for compact_svg.
    return (
        f'<g>\n<path d="{"".join(commands)}" clip-path="url(#{frame.clip})" style="{style}"/>\n</g>'
    )


def bar_ticks(norm: TwoSlopeNorm) -> list[tuple[float, str]]:
    """The colour bar's ticks (value, label) as matplotlib's colour bar makes them: its
    automatic locator over the norm's range, its scalar formatter's labels."""
    locator = ticker.AutoLocator()
    locator.create_dummy_axis()
    locator.axis.set_view_interval(norm.vmin, norm.vmax)
    values = [v for v in locator() if _within(v, norm)]
    formatter = ticker.ScalarFormatter()
    formatter.create_dummy_axis()
    formatter.axis.set_view_interval(norm.vmin, norm.vmax)
    return list(zip(values, formatter.format_ticks(values), strict=True))


def _within(value: float, norm: TwoSlopeNorm) -> bool:
    """A tick inside the colour bar (matplotlib's closeness allowance at its ends)."""
    position = float(norm(value))
    return -1e-10 <= position <= 1 + 1e-10


def _ticks(frame: Frame, norm: TwoSlopeNorm) -> str:
    """The colour bar's tick groups, each as the frame's first tick at its own place."""
    bottom, height = frame.bar_box
    groups = []
    for i, (value, label) in enumerate(bar_ticks(norm)):
        y = bottom - float(norm(value)) * height
        group = frame.tick.format(
            y=_short(y), label_y=_short(y + frame.label_offset), label=escape(label)
        )
        groups.append(group if i == 0 else group.replace(frame.tick_defs, "", 1))
    return "".join(groups)


def heatmap_svg(
    title: str,
    heat_m: np.ndarray,
    heat_kn: np.ndarray,
    speedup: np.ndarray,
    mark: tuple[int, int] | None,
    reference: np.ndarray | None = None,
) -> str:
    """Speedup over log2 M x log2 K=N, RdBu centred on 1, with the speedup = 1 contour;
    ``reference`` (torchao's speedups over the same grid) adds its contour, dashed."""
    x, y = np.log2(heat_m), np.log2(heat_kn)
    mark = None if mark is None else (int(mark[0]), int(mark[1]))  # a cache key: hashable
    if title:
        return full_heatmap_svg(title, x, y, speedup, mark, reference)
    try:
        parts = frame(tuple(map(float, x)), tuple(map(float, y)), mark, reference is not None)
    except ValueError:  # matplotlib's SVG not as this module expects it: draw in full
        return full_heatmap_svg(title, x, y, speedup, mark, reference)
    norm = colour_norm(speedup)
    contours = "".join(
        "\n" + _contour(parts, x, y, values, style)
        for values, style in zip((speedup, reference), CONTOUR_STYLES, strict=True)
        if values is not None and crosses_one(values)
    )
    svg = (
        parts.head
        + _cells(parts, speedup, norm)
        + parts.middle
        + contours
        + parts.before_ticks
        + _ticks(parts, norm)
        + parts.tail
    )
    return compact_svg(svg)
