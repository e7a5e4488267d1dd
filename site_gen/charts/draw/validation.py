"""The Validation page's charts drawn: a set's measured values beside both models' predictions.

The jobs come from :mod:`site_gen.charts.validation`; :func:`validation_svg` and
:func:`cv_size_svg` draw them in a worker (kinds ``"validation"`` and ``"cv_size"`` in
:mod:`site_gen.pool`). Three series, told apart by marker and line style as well as by
colour (Okabe-Ito), so they read in greyscale and for colour-blind readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt

from site_gen.charts.draw.replay import replay
from site_gen.charts.draw.style import log2_axis, to_svg
from site_gen.charts.validation import FIG_IN, SIZE_FIG_IN

#: The reused validation figure (:func:`_figure`): "fig" and "ax", once made.
_FIGURE: dict[str, Any] = {}

#: Series drawn, in legend order: (label, colour, marker, line style).
SERIES: tuple[tuple[str, str, str, str], ...] = (
    ("measured", "#000000", "o", "-"),
    ("torchao model", "#E69F00", "s", "--"),
    ("calibrated model", "#0072B2", "^", "-."),
)
#: Larger text than the site's other charts (plot_style.RC): these are shown smaller.
_RC = {
    "font.size": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "legend.fontsize": 10,
}


def validation_svg(
    positions: Sequence[float],
    tick_labels: Sequence[str],
    log2_m: bool,
    xlabel: str,
    ylabel: str,
    measured: Sequence[float],
    torchao: Sequence[float],
    calibrated: Sequence[float],
    break_even: bool,
) -> str:
    """Measured vs both models against M (log2) or the labelled points; SVG text."""
    with plt.rc_context(_RC):
        fig, ax = _figure()
        _series(ax, positions, (measured, torchao, calibrated), break_even)
        _x_axis(ax, positions, tick_labels, log2_m)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        # Above the plot: a legend inside would cover points of some set or other.
        legend = fig.legend(loc="upper center", bbox_to_anchor=(0.56, 1.0), ncols=2, frameon=False)
        # Same series, same figure: one legend for all charts with or without the line.
        replay(legend, ("validation", break_even))
        return to_svg(fig, close=False)


def _figure() -> tuple[plt.Figure, plt.Axes]:
    """The process' figure for validation charts, made once and emptied of the last
    chart's lines and legend when handed out again, as the model-time charts' are (a new
    figure and its axes, ticks and grid cost a third of a chart's time); what a chart
    sets it sets every time (limits, ticks, grid, labels), so each comes out as it would
    from a new figure (``tests/test_replay.py`` compares the bytes)."""
    if "fig" in _FIGURE:
        for artist in (*_FIGURE["ax"].lines, *_FIGURE["fig"].legends):
            artist.remove()
    else:
        fig, ax = plt.subplots(figsize=FIG_IN)
        fig.subplots_adjust(left=0.16, right=0.97, bottom=0.17, top=0.8)
        _FIGURE.update(fig=fig, ax=ax)
    return _FIGURE["fig"], _FIGURE["ax"]


def _series(
    ax, positions: Sequence[float], values: Sequence[Sequence[float]], break_even: bool
) -> None:
    """The three series, the break-even line and a y range with room around them."""
    # Measured: large filled circles; the models: open markers drawn over them, so a
    # prediction that hits the measurement still shows both.
    for i, ((label, colour, marker, style), ys) in enumerate(zip(SERIES, values, strict=True)):
        ax.plot(
            positions,
            ys,
            color=colour,
            marker=marker,
            linestyle=style,
            linewidth=1.7,
            markersize=9 if i == 0 else 7.5,
            markerfacecolor=colour if i == 0 else "none",
            markeredgewidth=1.7,
            label=label,
        )
    everything = [v for ys in values for v in ys]
    low, high = min(everything), max(everything)
    if break_even:
        ax.axhline(
            1.0, color="#555555", linewidth=0.9, linestyle=(0, (1, 2)), label="break-even (1×)"
        )
        low, high = min(low, 1.0), max(high, 1.0)
    span = (high - low) or abs(high) or 1.0
    ax.set_ylim(max(0.0, low - 0.12 * span), high + 0.12 * span)


def _x_axis(ax, positions: Sequence[float], tick_labels: Sequence[str], log2_m: bool) -> None:
    """log2 M ticks (256, 1k, 4k ...), or one labelled tick per point."""
    lo_x, hi_x = min(positions), max(positions)
    pad = 0.4 if log2_m else 0.5
    ax.set_xlim(lo_x - pad, hi_x + pad)
    if log2_m:
        log2_axis(ax.xaxis, lo_x, hi_x)
        ax.grid(axis="x", visible=True)  # a reused figure's last chart may have hidden it
    else:
        ax.set_xticks(list(positions), list(tick_labels))
        ax.grid(axis="x", visible=False)


#: The CV-by-size chart's two series: (label, colour, hatch).
SIZE_SERIES: tuple[tuple[str, str, str], ...] = (
    ("calibrated model, cross-validated", "#0072B2", ""),
    ("torchao model", "#E69F00", "//"),
)


def cv_size_svg(
    labels: Sequence[str], cv: Sequence[float], torchao: Sequence[float], points: Sequence[int]
) -> str:
    """Grouped bars of mean |error| (%) per size bucket; the point count under each."""
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=SIZE_FIG_IN)
        fig.subplots_adjust(left=0.12, right=0.98, bottom=0.27, top=0.84)
        width = 0.38
        for i, (series, values) in enumerate(zip(SIZE_SERIES, (cv, torchao), strict=True)):
            _size_bars(ax, i - 0.5, width, series, values)
        ticks = [f"{label}\n{n} pts" for label, n in zip(labels, points, strict=True)]
        ax.set_xticks(list(range(len(labels))), ticks)
        ax.grid(axis="x", visible=False)
        ax.set_axisbelow(True)  # grid lines behind the bars
        ax.set_xlabel("log2(M × K × N) of the point's largest GEMM")
        ax.set_ylabel("mean |error| (%)")
        top = max([*cv, *torchao, 0.01]) * 100
        ax.set_ylim(0, top * 1.18)
        fig.legend(loc="upper center", bbox_to_anchor=(0.55, 1.0), ncols=2, frameon=False)
        return to_svg(fig)


def _size_bars(
    ax, offset: float, width: float, series: tuple[str, str, str], values: Sequence[float]
) -> None:
    """One series' bars, shifted by ``offset`` bar widths, each labelled with its value."""
    label, colour, hatch = series
    xs = [x + offset * width for x in range(len(values))]
    face = "white" if hatch else colour  # hatched: an outline, so it reads in greyscale
    bars = ax.bar(
        xs,
        [100 * v for v in values],
        width,
        color=face,
        edgecolor=colour,
        hatch=hatch,
        linewidth=1.5,
        label=label,
    )
    ax.bar_label(bars, fmt="%.0f", padding=2, fontsize=9)
