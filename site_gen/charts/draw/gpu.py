"""The GPU-level charts as deterministic SVG strings: the roofline, the decision map and the
recipe comparison (the per-page charts are in :mod:`site_gen.charts.draw.plots`)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter

from roofline import units
from site_gen.charts.draw.style import (
    BF16_GREY,
    OKABE_ITO,
    WIDTH_IN,
    log2_axis,
    mark_shape,
    to_svg,
)


def roofline_svg(
    title: str,
    bandwidth_bytes_s: float,
    eta_mem: float,
    eta_gemm: float,
    ceilings: Sequence[tuple[str, float]],
    points: Sequence[tuple[str, str, float, float]],
) -> str:
    """Attainable FLOP/s vs arithmetic intensity: peak ceilings, memory slope, GEMM points.

    ``ceilings``: (format, peak FLOP/s); ``points``: (label, format, FLOP/byte, FLOP/s).
    """
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.8))
    fig.subplots_adjust(left=0.11, right=0.98, bottom=0.11, top=0.93)
    intensity = np.logspace(0, 4.3, 200)
    top = max(p for _, p in ceilings)
    ax.plot(
        intensity,
        np.minimum(intensity * bandwidth_bytes_s, top) / 1e12,
        color="#777777",
        linewidth=1.0,
        linestyle=":",
        label=f"memory slope {units.tb_per_s(bandwidth_bytes_s)} TB/s",
    )
    for i, (fmt, peak) in enumerate(ceilings):
        colour = OKABE_ITO[i]
        roof = np.minimum(intensity * bandwidth_bytes_s, peak) / 1e12
        ax.plot(
            intensity,
            roof,
            color=colour,
            linewidth=2.0,
            label=f"{fmt} peak {units.tflops_with_unit(peak)}",
        )
        achievable = np.minimum(intensity * bandwidth_bytes_s * eta_mem, peak * eta_gemm) / 1e12
        ax.plot(intensity, achievable, color=colour, linewidth=1.0, linestyle="--")
        ridge = peak / bandwidth_bytes_s
        ax.annotate(
            f"ridge {units.flop_per_byte(ridge)}",
            (ridge, peak / 1e12),
            textcoords="offset points",
            xytext=(4, -12),
            fontsize=8,
            color=colour,
        )
    markers = {"bf16": "o", "fp8": "s", "fp4": "D"}
    fmt_colour = {fmt: OKABE_ITO[i] for i, (fmt, _) in enumerate(ceilings)}
    labelled = 0
    for label, fmt, ai, flops in points:
        ax.plot(
            ai,
            flops / 1e12,
            marker=markers.get(fmt, "o"),
            color=fmt_colour.get(fmt, "k"),
            markeredgecolor="black",
            markersize=6,
            linestyle="none",
        )
        if label:
            # Staggered below the ceiling with a leader line: the llama GEMMs sit close
            # together in intensity, so side-by-side names would overlap.
            leader = {"arrowstyle": "-", "linewidth": 0.5, "color": "#999999"}
            ax.annotate(
                label,
                (ai, flops / 1e12),
                textcoords="offset points",
                xytext=(6, -16 - 11 * labelled),
                fontsize=7,
                color="#333333",
                ha="left",
                va="center",
                arrowprops=leader,
            )
            labelled += 1
    achievable_label = (
        f"achievable, torchao model ({units.percent(eta_gemm, 0)} GEMM, "
        f"{units.percent(eta_mem, 0)} memory)"
    )
    ax.plot([], [], color="#333333", linestyle="--", linewidth=1.0, label=achievable_label)
    ax.plot(
        [],
        [],
        marker="o",
        color="#333333",
        linestyle="none",
        label="llama GEMMs (M=16384), per format",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    # Plain-text tick labels: matplotlib's log labels are mathtext, which this site turns
    # off (text.parse_math), so they would print as raw "$\\mathdefault{10^{3}}$".
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(
            FuncFormatter(lambda v, _pos: units.count(v) if v >= 1 else units.fraction(v))
        )
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.95)
    return to_svg(fig)


def decision_svg(
    title: str,
    heat_m: np.ndarray,
    heat_kn: np.ndarray,
    best: np.ndarray,
    recipes: Sequence[str],
    mark: tuple[int, int] | None,
) -> str:
    """The fastest native recipe per (M, K=N) cell; grey = stay in bf16."""
    x, y = np.log2(heat_m), np.log2(heat_kn)
    dx, dy = (x[1] - x[0]) / 2, (y[1] - y[0]) / 2
    # Colours go to the recipes that win somewhere, largest area first, so the common
    # winners get the most distinct Okabe-Ito hues and yellow is rarely needed.
    winners, counts = np.unique(best[best >= 0], return_counts=True)
    order = [int(w) for _, w in sorted(zip(-counts, winners, strict=True))]
    slot = {recipe: i + 1 for i, recipe in enumerate(order)}  # 0 is bf16
    shown = np.vectorize(lambda v: slot.get(int(v), 0))(best) if best.size else best
    colours = [BF16_GREY] + [OKABE_ITO[i % len(OKABE_ITO)] for i in range(len(order))]
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.4))
    fig.subplots_adjust(left=0.09, right=0.66, bottom=0.11, top=0.93)
    ax.imshow(
        shown,
        origin="lower",
        aspect="auto",
        interpolation="nearest",
        extent=(x[0] - dx, x[-1] + dx, y[0] - dy, y[-1] + dy),
        cmap=ListedColormap(colours),
        vmin=-0.5,
        vmax=len(colours) - 0.5,
    )
    handles = [Patch(facecolor=colours[slot[r]], label=recipes[r]) for r in order]
    if np.any(best < 0):
        handles.append(Patch(facecolor=BF16_GREY, label="bf16 (no recipe wins)"))
    if mark is not None:
        mark_shape(ax, mark, "white")
    log2_axis(ax.xaxis, x[0], x[-1])
    log2_axis(ax.yaxis, y[0], y[-1])
    ax.grid(False)
    ax.set_xlabel("M (tokens per GEMM, log2 scale)")
    ax.set_ylabel("K = N (log2 scale)")
    # Left-aligned: a long GPU name must not run off the left edge of the figure.
    ax.set_title(title, loc="left")
    fig.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(0.67, 0.93),
        fontsize=8,
        title="fastest",
        frameon=False,
    )
    return to_svg(fig)


def compare_svg(
    title: str, curve_m: np.ndarray, series: Sequence[tuple[str, bool, np.ndarray]]
) -> str:
    """Speedup vs M at one K = N for every GPU; dashed lines are hypothetical."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.6))
    two_lines = "\n" in title
    fig.subplots_adjust(left=0.08, right=0.64, bottom=0.11, top=0.89 if two_lines else 0.93)
    x = np.log2(curve_m)
    for i, (label, native, values) in enumerate(series):
        colour = OKABE_ITO[i % 7]
        width = 2.0 if i < 7 else 1.2
        ax.plot(
            x,
            values,
            color=colour,
            linewidth=width,
            linestyle="-" if native else "--",
            marker=None if i < 7 else ".",
            markevery=16,
            label=label if native else f"{label} (hypothetical)",
        )
    ax.axhline(1.0, color="#555555", linewidth=1.0, linestyle=(0, (4, 3)))
    log2_axis(ax.xaxis, x[0], x[-1], max_ticks=9)
    ax.set_xlabel("M (tokens per GEMM, log2 scale)")
    ax.set_ylabel("speedup over bf16 (×)")
    # Left-aligned: long recipe names must not run off the left edge of the figure.
    ax.set_title(title, loc="left")
    fig.legend(loc="upper left", bbox_to_anchor=(0.65, 0.93), fontsize=7.5, frameon=False)
    return to_svg(fig)
