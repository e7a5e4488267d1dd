"""Stage 2b: matplotlib charts as deterministic SVG strings (building blocks in
:mod:`site_gen.charts.draw.style`).

Every function takes plain data (numbers, arrays, strings) so it can run in a worker
process, and returns the SVG text. Charts have a white background so they read the same
in Material's light and dark schemes; palettes are colour-blind safe (Okabe-Ito for
lines and categories, Paul Tol's muted set for stacked terms, RdBu for speedups).
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from roofline import units
from site_gen.charts.draw.replay import replay
from site_gen.charts.draw.style import (
    OKABE_ITO,
    REFERENCE_STYLE,
    TOL_MUTED,
    WIDTH_IN,
    bar_polygons,
    log2_axis,
    to_svg,
)

_CACHE: dict[str, dict] = {}


def _curves_figure(x: np.ndarray, kns: tuple[int, ...], reference: bool) -> dict:
    """A curves figure built once per process, grid and K = N list, reused with new data.

    Colour and marker tell K = N apart; with a ``reference``, solid lines are the
    calibrated model and dashed ones torchao's (the legend, under the plot, says so).
    """
    key = f"curves-{x[0]}-{x[-1]}-{len(x)}-{kns}-{reference}"
    if key in _CACHE:
        return _CACHE[key]
    # With a reference, the legend goes under the plot: the curves keep the full width,
    # which a phone screen needs.
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.7 if reference else 4.0))
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.25 if reference else 0.12, top=0.93)
    markers = ("o", "s", "^", "D", "v", "P", "X")
    lines, dashed = [], []
    for i, kn in enumerate(kns):
        style = dict(
            color=OKABE_ITO[i % len(OKABE_ITO)],
            linewidth=1.8,
            marker=markers[i % len(markers)],
            markersize=4,
            markevery=(8 * i, 48),
        )
        lines.append(ax.plot(x, np.ones_like(x), label=f"K = N = {kn}", **style)[0])
        if reference:
            dashed.append(
                ax.plot(
                    x,
                    np.ones_like(x),
                    color=style["color"],
                    linewidth=1.2,
                    linestyle=REFERENCE_STYLE,
                    alpha=0.85,
                )[0]
            )
    ax.axhline(1.0, color="#555555", linewidth=1.0, linestyle=(0, (1, 2)))
    ax.text(
        x[0], 1.0, " break-even (speedup = 1)", va="bottom", ha="left", fontsize=8, color="#555555"
    )
    log2_axis(ax.xaxis, x[0], x[-1])
    ax.set_xlabel("M (tokens per GEMM, log2 scale)")
    ax.set_ylabel("speedup over bf16 (×)")
    if reference:
        handles = [
            *lines,
            Line2D([], [], color="#333333", linewidth=1.8, label="calibrated model"),
            Line2D(
                [],
                [],
                color="#333333",
                linewidth=1.2,
                linestyle=REFERENCE_STYLE,
                label="torchao model",
            ),
        ]
        legend = fig.legend(
            handles=handles, loc="lower center", bbox_to_anchor=(0.53, 0.0), ncols=4, frameon=False
        )
    else:
        legend = ax.legend(loc="upper left", framealpha=0.9)
    # The same on every chart of this figure: drawn by matplotlib once (replay.py).
    replay(legend, (key, "legend"))
    replay(ax.xaxis, (key, "x axis"))
    _CACHE[key] = {"fig": fig, "ax": ax, "lines": lines, "dashed": dashed}
    return _CACHE[key]


def curves_svg(
    title: str,
    curve_m: np.ndarray,
    curves: dict[int, np.ndarray],
    reference: dict[int, np.ndarray] | None = None,
) -> str:
    """Speedup vs M (log2) for several K = N, with the break-even line; ``reference``
    (torchao's curves for the same K = N) is drawn dashed beside them."""
    x = np.log2(curve_m)
    parts = _curves_figure(x, tuple(curves), reference is not None)
    for line, values in zip(parts["lines"], curves.values(), strict=True):
        line.set_ydata(values)
    shown = list(curves.values())
    if reference is not None:
        for line, values in zip(parts["dashed"], reference.values(), strict=True):
            line.set_ydata(values)
        shown += list(reference.values())
    ax = parts["ax"]
    top = max(float(np.max(v)) for v in shown)
    bottom = min(float(np.min(v)) for v in shown)
    span = max(top, 1.0) - min(bottom, 1.0)
    ax.set_ylim(min(bottom, 1.0) - 0.05 * span, max(top, 1.0) + 0.08 * span)
    ax.set_xlim(x[0], x[-1])  # the x axis replayed: the same limits on every chart
    ax.set_title(title)
    return to_svg(parts["fig"], close=False)


def breakdown_svg(
    title: str,
    shape_labels: Sequence[str],
    recipe_label: str,
    terms: Sequence[tuple[str, bool, np.ndarray]],
    reference_share: Sequence[float] | None = None,
) -> str:
    """Stacked time per GEMM and cast kernel, as a share of each shape's bf16 time.

    ``terms`` holds (label, is_baseline, seconds per shape); baseline terms stack on the
    bf16 bar of each shape, the others on the recipe bar (whose length is 1/speedup).
    ``reference_share`` (torchao's low-precision time per shape, % of its own bf16 time)
    is marked on each recipe bar.
    """
    n_shapes = len(shape_labels)
    baseline_s = np.zeros(n_shapes)
    for _, is_baseline, seconds in terms:
        if is_baseline:
            baseline_s = baseline_s + np.asarray(seconds, dtype=float)
    labels = list(dict.fromkeys(label for label, _, _ in terms))
    colours = {label: TOL_MUTED[i % len(TOL_MUTED)] for i, label in enumerate(labels)}
    hatches = {label: ("///" if i >= len(TOL_MUTED) else None) for i, label in enumerate(labels)}
    legend_rows = (len(labels) + (reference_share is not None) + 1) // 2
    key = f"breakdown-{n_shapes}-{legend_rows}"
    if key not in _CACHE:
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.62 * n_shapes + 3.4))
        bottom = 0.08 + 0.032 * legend_rows + 0.06
        fig.subplots_adjust(left=0.36, right=0.98, top=0.95, bottom=bottom)
        ax.axvline(100.0, color="#555555", linewidth=0.8, linestyle=(0, (4, 3)))
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("time, % of the bf16 time of the same shape")
        _CACHE[key] = {"fig": fig, "ax": ax}
    fig, ax = _CACHE[key]["fig"], _CACHE[key]["ax"]
    for collection in _CACHE[key].setdefault("bars", []):
        collection.remove()
    _CACHE[key]["bars"] = []
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    rows_y = np.arange(n_shapes) * 2.6
    lefts = {True: np.zeros(n_shapes), False: np.zeros(n_shapes)}
    handles: dict[str, Patch] = {}
    for label, is_baseline, seconds in terms:
        share = 100.0 * np.asarray(seconds, dtype=float) / baseline_s
        y = rows_y + (0.0 if is_baseline else 1.0)
        # One collection per term (not a Rectangle per bar): far cheaper to build and draw.
        bars = PolyCollection(
            bar_polygons(lefts[is_baseline], share, y, 0.85),
            facecolors=colours[label],
            edgecolors="white",
            linewidths=0.4,
            hatch=hatches[label],
        )
        ax.add_collection(bars, autolim=False)
        _CACHE[key]["bars"].append(bars)
        handles.setdefault(
            label,
            Patch(facecolor=colours[label], hatch=hatches[label], edgecolor="white", label=label),
        )
        lefts[is_baseline] = lefts[is_baseline] + share
    ticks = np.concatenate([rows_y, rows_y + 1.0])
    tick_labels = [
        f"{lbl}   bf16 ({units.count(t * 1e6)} µs)"
        for lbl, t in zip(shape_labels, baseline_s, strict=True)
    ]
    tick_labels += [f"{recipe_label} ({units.count(p)}%)" for p in lefts[False]]
    ax.set_yticks(ticks, tick_labels, fontsize=8)
    ax.set_ylim(ticks.max() + 0.7, -0.7)
    right = max(100.0, float(np.max(lefts[False])))
    if reference_share is not None:
        marks = ax.scatter(
            reference_share,
            rows_y + 1.0,
            marker="D",
            s=30,
            color="black",
            edgecolors="white",
            linewidths=0.8,
            zorder=3,
        )
        _CACHE[key]["bars"].append(marks)
        handles["torchao"] = Line2D(
            [],
            [],
            marker="D",
            color="black",
            markeredgecolor="white",
            linestyle="none",
            label="torchao model: low-precision total",
        )
        right = max(right, float(np.max(reference_share)))
    ax.set_xlim(0, right * 1.04)
    ax.set_title(title)
    legend = ax.legend(
        handles=list(handles.values()),
        loc="upper center",
        bbox_to_anchor=(0.3, -0.1),
        ncols=2,
        fontsize=7.5,
        frameon=False,
    )
    # One legend per recipe's terms: drawn by matplotlib once per figure (replay.py).
    replay(legend, (key, "legend", tuple(labels), reference_share is not None))
    return to_svg(fig, close=False)
