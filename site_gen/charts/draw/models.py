"""The model x GPU page's chart drawn: the linear layers' time per training step, per recipe.

:func:`site_gen.charts.models.time_chart` asks for it (a
:class:`~site_gen.charts.jobs.PlotJob`); :func:`model_time_svg` draws it in a worker from
plain data: one horizontal bar per recipe, stacked by the model's GEMMs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from roofline import units
from site_gen.charts.draw.replay import replay
from site_gen.charts.draw.style import TOL_MUTED, WIDTH_IN, bar_polygons, to_svg

UNIT_WORDS = {"µs": "microseconds", "ms": "milliseconds", "s": "seconds"}
#: Longest bar or legend label drawn; longer ones end in "…" (the page's tables have them whole).
MAX_LABEL_CHARS = 28


def time_unit(largest_s: float) -> tuple[str, float]:
    """(unit, factor from seconds) that shows ``largest_s`` as a number from 1 to 1000
    or so: µs below a millisecond, ms below a second, s beyond (no "0 ms" axes)."""
    if largest_s >= 1:
        return "s", 1.0
    if largest_s >= 1e-3:
        return "ms", 1e3
    return "µs", 1e6


def axis_ticks(right: float) -> tuple[np.ndarray, int]:
    """Tick positions over [0, right] (at most 6 nice steps) and the decimals their labels
    need to differ: never "0 0 0 0 0 0 1"."""
    ticks = MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]).tick_values(0, right)
    ticks = ticks[(ticks >= 0) & (ticks <= right * 1.0001)]
    step = float(ticks[1] - ticks[0]) if len(ticks) > 1 else max(right, 1.0)
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    if step * 10**decimals % 1:  # a step of 2.5 needs one more
        decimals += 1
    return ticks, decimals


def amount(value: float) -> str:
    """A bar's total in the chart's unit, to three significant digits or whole: ``1,234``,
    ``12.3``, ``0.123``."""
    return units.magnitude(value, 3, whole_from=100)


def short_label(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (labels are never clipped
    by the figure's edge)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def model_time_svg(
    title: str,
    bars: Sequence[str],
    segments: Sequence[str],
    seconds: np.ndarray,
    reference_s: Sequence[float],
) -> str:
    """Horizontal bars stacked by segment (in µs, ms or s: :func:`time_unit`), the first
    bar (bf16) on top; each bar labelled with its total and speedup over the first, and
    a diamond at ``reference_s`` (torchao's model's total of the same bar)."""
    n_bars, n_seg = seconds.shape
    fig, ax = _figure(n_bars, (n_seg + 2) // 3)
    seconds = np.asarray(seconds, dtype=float)
    largest_s = max(float(seconds.sum(axis=1).max()), float(np.max(reference_s)))
    unit, factor = time_unit(largest_s)
    values = seconds * factor  # in the chosen unit
    y = np.arange(n_bars, dtype=float)
    left = np.zeros(n_bars)
    handles = []
    for col, label in enumerate(segments):
        colour = TOL_MUTED[col % len(TOL_MUTED)]
        width = values[:, col]
        ax.add_collection(
            PolyCollection(
                bar_polygons(left, width, y, 0.7),
                facecolors=colour,
                edgecolors="white",
                linewidths=0.5,
            )
        )
        handles.append(Patch(facecolor=colour, edgecolor="white", label=short_label(label)))
        left = left + width
    reference_in_unit = np.asarray(reference_s, dtype=float) * factor
    ax.scatter(
        reference_in_unit,
        y,
        marker="D",
        s=26,
        color="black",
        edgecolors="white",
        linewidths=0.8,
        zorder=3,
    )
    handles.append(
        Line2D(
            [],
            [],
            marker="D",
            color="black",
            markeredgecolor="white",
            linestyle="none",
            label="torchao model: total",
        )
    )
    right = max(float(left.max()), float(reference_in_unit.max())) or 1.0
    ax.set_xlim(0, right * 1.02)
    ticks, decimals = axis_ticks(right)
    ax.set_xticks(ticks)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.{decimals}f}"))
    for row in range(n_bars):
        text = f" {amount(left[row])} {unit}, {units.speedup(left[0] / left[row])}"
        ax.annotate(
            text,
            (1.0, y[row]),
            xycoords=("axes fraction", "data"),
            va="center",
            fontsize=8,
            annotation_clip=False,
        )
    ax.set_yticks(y, [short_label(b) for b in bars], fontsize=8.5)
    ax.set_ylim(n_bars - 0.4, -0.6)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(f"{UNIT_WORDS[unit]} per step (forward + backward)")
    ax.set_title(title, loc="left", fontsize=10)
    legend = fig.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0.01, 0.0),
        ncols=3,
        fontsize=8,
        frameon=False,
    )
    # One legend per model's segments and figure size: drawn by matplotlib once (replay.py).
    labels = tuple(h.get_label() for h in handles)
    replay(legend, ("model time", fig.get_size_inches().tobytes(), labels))
    return to_svg(fig, close=False)


#: Reused figures of model-time charts by (bars, legend rows): their size and margins.
_FIGURES: dict[tuple[int, int], tuple[plt.Figure, plt.Axes]] = {}


def _figure(n_bars: int, legend_rows: int) -> tuple[plt.Figure, plt.Axes]:
    """The process' figure for a model-time chart of ``n_bars`` bars and ``legend_rows``
    legend rows, made once and emptied of the last chart's bars, markers, labels and
    legend when handed out again (a new figure and its axes and ticks cost about a
    third of a chart's time); every chart sets its limits, ticks, labels and title
    again, so it comes out as on a new figure (``tests/test_replay.py`` compares the
    bytes)."""
    key = (n_bars, legend_rows)
    if key in _FIGURES:
        fig, ax = _FIGURES[key]
        for artist in (*ax.collections, *ax.texts, *fig.legends):
            artist.remove()
    else:
        height = 0.36 * n_bars + 1.3 + 0.24 * legend_rows
        fig, ax = plt.subplots(figsize=(WIDTH_IN, height))
        bottom_in = 0.55 + 0.24 * legend_rows
        top = 1 - 0.62 / height
        fig.subplots_adjust(left=0.25, right=0.84, top=top, bottom=bottom_in / height)
        _FIGURES[key] = fig, ax
    return _FIGURES[key]
