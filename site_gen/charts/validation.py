"""The Validation page's charts as jobs: what a set's chart and the CV-by-size chart plot.

:func:`validation_chart` says what one chart plots (a :class:`~site_gen.charts.jobs.PlotJob`
of plain data, built in the main process without matplotlib); the worker draws it
(:func:`site_gen.charts.draw.validation.validation_svg`, kind ``"validation"`` in
:mod:`site_gen.pool`). The x axis is M on a log2 scale when the set sweeps M over single
shapes, otherwise the points in the set's order, labelled.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from roofline.analysis.validation import ModelKind, SetResult
from roofline.measurements import MeasuredQuantity, Point
from site_gen.charts.jobs import PlotJob

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
FIG_IN = (5.0, 3.5)
WIDTH_PX = round(FIG_IN[0] * 96)


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
    positions = tuple(float(i) for i in range(len(points)))
    if numbered(points):
        numbers = tuple(str(i) for i in range(1, len(points) + 1))
        return XAxis(positions, numbers, False, "measured point (numbered as in the table)")
    return XAxis(positions, tuple(point_name(p) for p in points), False, "measured point")


#: The characters of tick labels (each with two of spacing) that fit side by side under
#: a chart FIG_IN wide at the 10.5 pt tick font; longer names would overlap.
MAX_TICK_CHARS = 48


def numbered(points: Sequence[Point]) -> bool:
    """Whether a set's chart labels its points by number (the set's table numbers its
    rows to match), because their names would overlap under the chart."""
    return sum(len(point_name(p)) + 2 for p in points) > MAX_TICK_CHARS


def validation_chart(result: SetResult, path: str) -> PlotJob:
    """The chart of one set: measured, torchao's and the calibrated model's values."""
    axis = x_axis([p.point for p in result.points])
    quantity = result.set.quantity
    return PlotJob(
        path,
        "validation",
        dict(
            positions=list(axis.positions),
            tick_labels=list(axis.tick_labels),
            log2_m=axis.log2_m,
            xlabel=axis.label,
            ylabel=Y_LABELS[quantity],
            measured=[p.measured for p in result.points],
            torchao=[p.predicted[ModelKind.TORCHAO] for p in result.points],
            calibrated=[p.predicted[ModelKind.CALIBRATED] for p in result.points],
            break_even=quantity is not MeasuredQuantity.TIME_US,
        ),
    )


#: The CV-by-size chart's size in inches; the page shows it at most at SIZE_WIDTH_PX.
SIZE_FIG_IN = (6.4, 3.6)
SIZE_WIDTH_PX = round(SIZE_FIG_IN[0] * 96)


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
    return PlotJob(
        path,
        "cv_size",
        dict(
            labels=[size_label(b) for b in buckets],
            cv=list(cv),
            torchao=list(torchao),
            points=list(points),
        ),
    )
