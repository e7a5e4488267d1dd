"""Shared building blocks of the charts: palettes, matplotlib settings, SVG output, axes.

Colour-blind safe palettes (Okabe-Ito for lines and categories, Paul Tol's muted set for
stacked terms); one rcParams set for every chart; deterministic SVG (no date, fixed ids).
"""

from __future__ import annotations

import functools
import io
import re
from collections import Counter

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import matplotlib.text
import numpy as np
from matplotlib.backends.backend_svg import RendererSVG
from matplotlib.font_manager import FontProperties
from matplotlib.ticker import FixedLocator, FuncFormatter

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
TOL_MUTED = (
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#DDCC77",
    "#CC6677",
    "#882255",
    "#AA4499",
    "#BBBBBB",
)
BF16_GREY = "#DDDDDD"
#: torchao's model beside the calibrated one: dashed, in the same colour.
REFERENCE_STYLE = (0, (5, 3))
WIDTH_IN = 7.6

RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "roofline-atlas",
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.grid": True,
    "grid.color": "#E5E5E5",
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "path.simplify": True,
    "axes.titley": 1.01,  # fixed title position: skips a costly layout pass per chart
    # Titles and legends carry GPU names from spec files: a "$" must stay a dollar sign,
    # never start mathtext (which would fail the build or draw something else).
    "text.parse_math": False,
}
plt.rcParams.update(RC)

#: matplotlib's own measure of a text (cached per renderer, and every savefig makes a new
#: SVG renderer, so each chart measured every label again: a fifth of a chart's time).
_MEASURE = matplotlib.text._get_text_metrics_with_cache
#: Measures text for every SVG renderer: an SVG renderer's text metrics are its TextToPath's,
#: which depend on the text, the font properties and the rcParams alone (set once, above).
_SVG_MEASURER = RendererSVG(1, 1, io.StringIO())


@functools.lru_cache(maxsize=8192)
def _svg_text_metrics(
    text: str, font: FontProperties, ismath: bool | str, dpi: float
) -> tuple[float, float, float]:
    return _SVG_MEASURER.get_text_width_height_descent(text, font, ismath=ismath)


def _text_metrics(renderer, text: str, font: FontProperties, ismath: bool | str, dpi: float):
    """``matplotlib.text._get_text_metrics_with_cache``, its cache shared by every SVG
    renderer of the process (the font properties copied: they are mutable, as matplotlib's
    own cache notes)."""
    # savefig draws through a MixedModeRenderer around the SVG renderer (or around Agg's
    # while it rasterizes an artist).
    if type(getattr(renderer, "_renderer", renderer)) is RendererSVG:
        return _svg_text_metrics(text, font.copy(), ismath, dpi)
    return _MEASURE(renderer, text, font, ismath, dpi)


matplotlib.text._get_text_metrics_with_cache = _text_metrics


def to_svg(fig: plt.Figure, close: bool = True) -> str:
    """Serialize ``fig`` (closing it unless reused); no date, fixed ids: byte-stable output,
    made smaller by :func:`compact_svg`."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    if close:
        plt.close(fig)
    return compact_svg(buffer.getvalue())


#: Geometry attributes whose numbers :func:`compact_svg` rounds (never text content:
#: tick labels and legends are ``<text>`` elements and keep every digit).
_GEOMETRY = re.compile(
    r'(\s(?:d|points|x|y|x1|x2|y1|y2|cx|cy|r|width|height|transform|viewBox)=")([^"]*)"'
)
_DECIMALS = re.compile(r"(-?\d+\.\d\d)\d+")
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
#: matplotlib names every group (``figure_1``, ``xtick_4``, ``line2d_7``); nothing refers
#: to a group's id (clip paths and markers, which are referred to, are not groups).
_GROUP_ID = re.compile(r'<g id="[^"]*">')
#: Upright text carries ``rotate(-0 x y)``, the identity.
_NO_ROTATION = re.compile(r'\s+transform="rotate\(-?0(?:\.0+)? [-\d.e]+ [-\d.e]+\)"')
_STYLE = re.compile(r' style="([^"&<>{}]*)"')
_STYLE_END = "</style>"


def _geometry(value: str) -> str:
    # matplotlib ends each path command with " \n": one space separates them as well.
    return _DECIMALS.sub(r"\1", value).replace(" \n", " ")


def _styles_as_classes(svg: str) -> str:
    """Each inline style used more than once becomes a class of the SVG's own style sheet
    (a class outranks the sheet's ``*`` rule, as the inline style did): a chart repeats a
    handful of styles on hundreds of elements."""
    counts = Counter(_STYLE.findall(svg))  # first-use order: byte-stable class names
    names = {style: f"s{i}" for i, style in enumerate(s for s, n in counts.items() if n > 1)}
    if not names or svg.count(_STYLE_END) != 1:
        return svg
    svg = _STYLE.sub(lambda m: f' class="{names[m[1]]}"' if m[1] in names else m[0], svg)
    rules = "".join(f".{name}{{{style}}}" for style, name in names.items())
    return svg.replace(_STYLE_END, rules + _STYLE_END, 1)


def compact_svg(svg: str) -> str:
    """``svg`` made smaller without a visible change: geometry rounded to 0.01 pt (a
    hundredth of a point is far below a pixel at any zoom a reader uses); matplotlib's
    RDF metadata block (format and type only: no author, no date), its group ids, the
    identity rotations of upright text, the line breaks inside paths and the indentation
    dropped; repeated inline styles made classes (:func:`_styles_as_classes`). Text is
    kept as it is, as are the ids that something refers to (clip paths, markers)."""
    svg = _METADATA.sub("", svg, count=1)
    svg = _GEOMETRY.sub(lambda m: m.group(1) + _geometry(m.group(2)) + '"', svg)
    svg = _GROUP_ID.sub("<g>", svg)
    svg = _NO_ROTATION.sub("", svg)
    svg = _styles_as_classes(svg)
    return re.sub(r"\n[ \t]+", "\n", svg)


def human_size(value: float) -> str:
    """1024 -> 1k, 65536 -> 64k, 300 -> 300."""
    value = round(value)
    if value >= 1024 and value % 1024 == 0:
        return f"{value // 1024}k"
    return str(value)


def log2_axis(axis, lo: float, hi: float, max_ticks: int = 16) -> None:
    """Ticks at integer log2 positions, labelled 256, 1k, 4k ...; every other one if crowded."""
    ticks = np.arange(np.ceil(lo), np.floor(hi) + 1)
    if len(ticks) > max_ticks:
        ticks = ticks[::2]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda x, _pos: human_size(2.0**x)))


def mark_shape(ax, mark: tuple[int, int], colour: str, label: str | None = None) -> None:
    """A star at (log2 M, log2 K=N): the canonical shape on heatmaps and decision maps."""
    ax.plot(
        np.log2(mark[0]),
        np.log2(mark[1]),
        marker="*",
        markersize=12,
        color=colour,
        markeredgecolor="black",
        linestyle="none",
        label=label,
    )


def bar_polygons(left: np.ndarray, width: np.ndarray, y: np.ndarray, height: float) -> np.ndarray:
    """Corners of horizontal bars, shape (bars, 4, 2)."""
    x0, x1, y0, y1 = left, left + width, y - height / 2, y + height / 2
    return np.stack(
        [
            np.stack([x0, y0], -1),
            np.stack([x1, y0], -1),
            np.stack([x1, y1], -1),
            np.stack([x0, y1], -1),
        ],
        axis=1,
    )
