"""The heatmap filled into matplotlib's frame (site_gen.charts.draw.heatmap) is the chart
matplotlib draws in full: the same SVG, but for the cells' image, which holds one pixel
per cell instead of matplotlib's resampled copy, in the same colours."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest
from PIL import Image

from site_gen import config
from site_gen.charts.draw import heatmap

X, Y = np.log2(config.HEAT_M), np.log2(config.HEAT_KN)
MARK = (config.CANONICAL_M, config.CANONICAL_KN)
IMAGE = re.compile(r"<image [^>]*/>")
PNG = re.compile(r'<image xlink:href="data:image/png;base64,\s*([A-Za-z0-9+/=\s]+)"')


def _speedups(low: float, high: float, bump: float = 0.0) -> np.ndarray:
    """Speedups rising from ``low`` at small shapes to ``high`` at large ones, plus a
    bump in the middle (closed contour loops)."""
    mx, my = np.meshgrid(np.linspace(0, 1, len(X)), np.linspace(0, 1, len(Y)))
    values = low + (high - low) * (mx + my) / 2
    return values + bump * np.exp(-((mx - 0.3) ** 2 + (my - 0.7) ** 2) / 0.005)


CASES = {
    "both contours": (_speedups(0.4, 1.7), _speedups(0.5, 1.9)),
    "closed loops": (_speedups(0.8, 0.98, bump=0.4), _speedups(0.7, 1.2, bump=-0.3)),
    "no crossing": (_speedups(1.1, 2.5), _speedups(0.2, 0.9)),
    "three-decimal ticks": (_speedups(0.9, 1.1), None),
    "no reference": (_speedups(0.6, 1.3), None),
}


def _both(speedup: np.ndarray, reference: np.ndarray | None, mark=MARK) -> tuple[str, str]:
    fast = heatmap.heatmap_svg("", config.HEAT_M, config.HEAT_KN, speedup, mark, reference)
    full = heatmap.full_heatmap_svg("", X, Y, speedup, mark, reference)
    return fast, full


def _pixels(svg: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(PNG.search(svg)[1]))).convert("RGBA"))


@pytest.mark.parametrize("case", CASES)
def test_the_filled_frame_is_matplotlibs_chart(case: str) -> None:
    speedup, reference = CASES[case]
    fast, full = _both(speedup, reference)
    assert IMAGE.sub("<image/>", fast) == IMAGE.sub("<image/>", full)


@pytest.mark.parametrize("case", CASES)
def test_every_cell_has_matplotlibs_colour(case: str) -> None:
    fast, full = _both(*CASES[case])
    cells, drawn = _pixels(fast), _pixels(full)[::-1]  # matplotlib's is stored upside down
    assert cells.shape[:2] == (len(Y), len(X))
    rows = ((np.arange(len(Y)) + 0.5) / len(Y) * drawn.shape[0]).astype(int)
    cols = ((np.arange(len(X)) + 0.5) / len(X) * drawn.shape[1]).astype(int)
    assert np.array_equal(cells, drawn[rows][:, cols])
    assert 'preserveAspectRatio="none"' in fast and "pixelated" in fast  # no smoothing


def test_a_mark_given_as_a_list() -> None:
    speedup, reference = CASES["both contours"]
    listed = heatmap.heatmap_svg("", config.HEAT_M, config.HEAT_KN, speedup, list(MARK), reference)
    assert listed == heatmap.heatmap_svg(
        "", config.HEAT_M, config.HEAT_KN, speedup, MARK, reference
    )


def test_without_a_mark() -> None:
    fast, full = _both(*CASES["both contours"], mark=None)
    assert IMAGE.sub("<image/>", fast) == IMAGE.sub("<image/>", full)
    assert "K=N=" not in fast


def test_a_titled_chart_is_drawn_in_full() -> None:
    speedup = CASES["no reference"][0]
    title = 'GPU "<b>&amp;'
    fast = heatmap.heatmap_svg(title, config.HEAT_M, config.HEAT_KN, speedup, MARK)
    assert fast == heatmap.full_heatmap_svg(title, X, Y, speedup, MARK)
    assert "&lt;b&gt;&amp;amp;" in fast and "<b>" not in fast


def test_the_bar_label_stays_inside_the_figure() -> None:
    # The widest tick labels a range gets ("0.975"): matplotlib placed the label right of
    # them, past the figure's edge; it now has a fixed place that fits.
    fast, _ = _both(*CASES["three-decimal ticks"])
    assert ">0.975<" in fast
    width = float(re.search(r'<svg [^>]*width="([\d.]+)pt"', fast)[1])
    label_x = float(re.search(r'x="([\d.]+)"[^>]*>speedup over bf16', fast)[1])
    assert label_x + 3 < width  # the baseline plus a descender
    ticks_right = max(
        float(x) + 6.4 * len(text)  # DejaVu Sans digits at 10 px: 6.4 px at most
        for x, text in re.findall(r'x="(5\d\d[\d.]*)" y="[\d.]+">([\d.]+)</text>', fast)
    )
    assert ticks_right < label_x - 7  # the label's glyphs (their ascent) clear the ticks


def test_a_frame_is_drawn_once_per_grid() -> None:
    heatmap.frame.cache_clear()
    for speedup, reference in CASES.values():
        heatmap.heatmap_svg("", config.HEAT_M, config.HEAT_KN, speedup, MARK, reference)
    assert heatmap.frame.cache_info().misses == 2  # with and without a reference
