"""The Validation page's charts: a set's measured values beside both models' predictions.

:func:`validation_chart` says what one chart plots (a :class:`~site_gen.charts.jobs.PlotJob`
of plain data, built in the main process without matplotlib); :func:`validation_svg` draws
it in a worker (registered as kind ``"validation"`` in :mod:`site_gen.pool`). The x axis
is M on a log2 scale when the set sweeps M over single shapes, otherwise the points in the
set's order, labelled. Three series, told apart by marker and line style as well as by
colour (Okabe-Ito), so they read in greyscale and for colour-blind readers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from roofline.analysis.validation import ModelKind, SetResult
from roofline.measurements import MeasuredQuantity, Point
from site_gen.charts.jobs import PlotJob

#: Series drawn, in legend order: (label, colour, marker, line style).
SERIES: tuple[tuple[str, str, str, str], ...] = (
    ("measured", "#000000", "o", "-"),
    ("torchao model", "#E69F00", "s", "--"),
    ("calibrated model", "#0072B2", "^", "-."),
)
#: The y axis label per measured quantity (with its unit).
Y_LABELS: dict[MeasuredQuantity, str] = {
    MeasuredQuantity.SPEEDUP: "speedup over bf16 (×)",
    MeasuredQuantity.GEMM_SPEEDUP: "GEMM speedup over bf16 (×)",
    MeasuredQuantity.TIME_US: "kernel time (µs)",
}
# Fewer points than this along M read better as labelled points than as a curve.
_MIN_CURVE_POINTS = 3
#: Narrower than the other charts, so the text stays readable shrunk to a phone's width;
#: the page shows it at most at its own width (WIDTH_PX).
_FIG_IN = (5.0, 3.5)
WIDTH_PX = round(_FIG_IN[0] * 96)
#: Larger text than the site's other charts (plot_style.RC): these are shown smaller.
_RC = {"font.size": 11, "axes.labelsize": 11, "xtick.labelsize": 10.5,
       "ytick.labelsize": 10.5, "legend.fontsize": 10}  # fmt: skip


@dataclass(frozen=True)
class XAxis:
    """Where a set's points sit on the chart and how the axis is labelled."""

    positions: tuple[float, ...]
    tick_labels: tuple[str, ...]  # empty on a log2 M axis (ticks come from the values)
    log2_m: bool
    label: str


def shape_text(shape: tuple[int, int, int]) -> str:
    """``1024×4096×4096`` (M × K × N): one unbreakable word, so a narrow table cell
    wraps around it, never inside it."""
    return "×".join(str(d) for d in shape)


def point_name(point: Point) -> str:
    """A point's label, else its shape (or its number of shapes when it has several)."""
    if point.label:
        return point.label
    if len(point.shapes) == 1:
        return shape_text(point.shapes[0])
    return f"{len(point.shapes)} shapes"


def x_axis(points: Sequence[Point]) -> XAxis:
    """log2 M when the points are single shapes along increasing M with K and N fixed (or
    equal to M); otherwise the points in order, labelled by :func:`point_name`."""
    single = all(len(p.shapes) == 1 for p in points)
    shapes = [p.shapes[0] for p in points] if single else []
    ms = [s[0] for s in shapes]
    increasing = len(ms) >= _MIN_CURVE_POINTS and all(a < b for a, b in itertools.pairwise(ms))
    fixed_kn = len({s[1:] for s in shapes}) == 1
    square = all(s[0] == s[1] == s[2] for s in shapes)
    if single and increasing and (fixed_kn or square):
        if square:
            label = "M = K = N (log2 scale)"
        else:
            label = f"M (tokens, log2 scale); K = {shapes[0][1]}, N = {shapes[0][2]}"
        return XAxis(tuple(math.log2(m) for m in ms), (), True, label)
    names = tuple(point_name(p) for p in points)
    return XAxis(tuple(float(i) for i in range(len(points))), names, False, "measured point")


def validation_chart(result: SetResult, path: str) -> PlotJob:
    """The chart of one set: measured, torchao's and the calibrated model's values."""
    axis = x_axis([p.point for p in result.points])
    quantity = result.set.quantity
    return PlotJob(path, "validation", dict(
        positions=list(axis.positions), tick_labels=list(axis.tick_labels),
        log2_m=axis.log2_m, xlabel=axis.label, ylabel=Y_LABELS[quantity],
        measured=[p.measured for p in result.points],
        torchao=[p.predicted[ModelKind.TORCHAO] for p in result.points],
        calibrated=[p.predicted[ModelKind.CALIBRATED] for p in result.points],
        break_even=quantity is not MeasuredQuantity.TIME_US,
    ))  # fmt: skip


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
    # matplotlib only where a chart is drawn (the pages build this job without it).
    import matplotlib.pyplot as plt

    from site_gen.charts.draw.style import to_svg

    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=_FIG_IN)
        fig.subplots_adjust(left=0.16, right=0.97, bottom=0.17, top=0.8)
        _series(ax, positions, (measured, torchao, calibrated), break_even)
        _x_axis(ax, positions, tick_labels, log2_m)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        # Above the plot: a legend inside would cover points of some set or other.
        fig.legend(loc="upper center", bbox_to_anchor=(0.56, 1.0), ncols=2, frameon=False)
        return to_svg(fig)


def _series(ax, positions: Sequence[float], values: Sequence[Sequence[float]],
            break_even: bool) -> None:  # fmt: skip
    """The three series, the break-even line and a y range with room around them."""
    # Measured: large filled circles; the models: open markers drawn over them, so a
    # prediction that hits the measurement still shows both.
    for i, ((label, colour, marker, style), ys) in enumerate(zip(SERIES, values, strict=True)):
        ax.plot(positions, ys, color=colour, marker=marker, linestyle=style, linewidth=1.7,
                markersize=9 if i == 0 else 7.5, markerfacecolor=colour if i == 0 else "none",
                markeredgewidth=1.7, label=label)  # fmt: skip
    everything = [v for ys in values for v in ys]
    low, high = min(everything), max(everything)
    if break_even:
        ax.axhline(1.0, color="#555555", linewidth=0.9, linestyle=(0, (1, 2)),
                   label="break-even (1×)")  # fmt: skip
        low, high = min(low, 1.0), max(high, 1.0)
    span = (high - low) or abs(high) or 1.0
    ax.set_ylim(max(0.0, low - 0.12 * span), high + 0.12 * span)


def _x_axis(ax, positions: Sequence[float], tick_labels: Sequence[str], log2_m: bool) -> None:
    """log2 M ticks (256, 1k, 4k ...), or one labelled tick per point."""
    from site_gen.charts.draw.style import log2_axis

    lo_x, hi_x = min(positions), max(positions)
    pad = 0.4 if log2_m else 0.5
    ax.set_xlim(lo_x - pad, hi_x + pad)
    if log2_m:
        log2_axis(ax.xaxis, lo_x, hi_x)
    else:
        ax.set_xticks(list(positions), list(tick_labels))
        ax.grid(axis="x", visible=False)


#: The CV-by-size chart's two series: (label, colour, hatch).
SIZE_SERIES: tuple[tuple[str, str, str], ...] = (
    ("calibrated model, cross-validated", "#0072B2", ""),
    ("torchao model", "#E69F00", "//"),
)
_SIZE_FIG_IN = (6.4, 3.6)
SIZE_WIDTH_PX = round(_SIZE_FIG_IN[0] * 96)


def size_label(bucket: str) -> str:
    """A size bucket's tick text, in log2 of M x K x N: ``30–33``, ``< 27``, ``≥ 39``."""
    text = bucket.replace("MKN", "").replace("<=", "").replace("2^", "").strip()
    if text.startswith("<"):
        return "< " + text.removeprefix("<").strip()
    if text.startswith(">="):
        return "≥ " + text.removeprefix(">=").strip()
    low, _, high = text.partition("<")
    return f"{low.strip()}–{high.strip()}"


def cv_size_chart(
    buckets: Sequence[str],
    cv: Sequence[float],
    torchao: Sequence[float],
    points: Sequence[int],
    path: str,
) -> PlotJob:
    """Mean |error| per shape-size bucket: the calibrated model refitted without each
    point's source, and torchao's model, with the bucket's point count."""
    return PlotJob(path, "cv_size", dict(
        labels=[size_label(b) for b in buckets], cv=list(cv), torchao=list(torchao),
        points=list(points),
    ))  # fmt: skip


def cv_size_svg(
    labels: Sequence[str], cv: Sequence[float], torchao: Sequence[float], points: Sequence[int]
) -> str:
    """Grouped bars of mean |error| (%) per size bucket; the point count under each."""
    import matplotlib.pyplot as plt

    from site_gen.charts.draw.style import to_svg

    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=_SIZE_FIG_IN)
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


def _size_bars(ax, offset: float, width: float, series: tuple[str, str, str],
               values: Sequence[float]) -> None:  # fmt: skip
    """One series' bars, shifted by ``offset`` bar widths, each labelled with its value."""
    label, colour, hatch = series
    xs = [x + offset * width for x in range(len(values))]
    face = "white" if hatch else colour  # hatched: an outline, so it reads in greyscale
    bars = ax.bar(xs, [100 * v for v in values], width, color=face, edgecolor=colour,
                  hatch=hatch, linewidth=1.5, label=label)  # fmt: skip
    ax.bar_label(bars, fmt="%.0f", padding=2, fontsize=9)
