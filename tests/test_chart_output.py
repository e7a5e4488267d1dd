"""Chart output: the SVG compaction changes no drawing, and equal charts are one file."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import matplotlib.pyplot as plt
import matplotlib.text
import numpy as np
import pytest

from site_gen.charts.draw import models as model_charts
from site_gen.charts.draw import plots, style
from site_gen.charts.jobs import PlotJob
from site_gen.pages.base import PageOutput
from site_gen.pages.render import share_charts

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"


def _raw_svg() -> str:
    """A chart as matplotlib writes it (lines, markers, a legend, rotated and upright text)."""
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1, 4, 2], marker="o", label="calibrated")
    ax.plot([1, 2, 3], [2, 3, 1], linestyle="--", label="torchao")
    ax.set_ylabel("speedup")  # rotated text keeps its rotation
    ax.set_title("B200 <training> & mxfp8")
    ax.legend()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return buffer.getvalue()


def _drawn(svg: str) -> list[tuple[str, dict[str, str], str]]:
    """Every drawing element in order: tag, the style it gets (inline or by class, ids
    and whitespace left out) and its text."""
    root = ET.fromstring(svg.encode())
    sheet = "".join(e.text or "" for e in root.iter(f"{SVG}style"))
    classes = dict(re.findall(r"\.(s\d+)\{([^}]*)\}", sheet))
    out = []
    for element in root.iter():
        if not element.tag.startswith(SVG) or element.tag in (f"{SVG}style", f"{SVG}metadata"):
            continue  # the style sheet is read above; metadata (RDF) is dropped
        if element.tag == f"{SVG}g" and not element.attrib:
            continue
        attrs = {k: v for k, v in element.attrib.items() if k not in ("id", "style", "class")}
        if attrs.get("transform", "").startswith("rotate(-0 "):
            del attrs["transform"]
        attrs = {k: re.sub(r"\s+", " ", v).strip() for k, v in attrs.items()}
        declared = element.get("style") or classes.get(element.get("class", ""), "")
        attrs["style"] = declared
        if element.tag == f"{SVG}g" and set(attrs) == {"style"} and not declared:
            continue
        out.append((element.tag, attrs, (element.text or "").strip()))
    return out


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _shape_and_numbers(items) -> tuple[list, list[float]]:
    """The elements with their numbers taken out, and the numbers (geometry is rounded to
    0.01 pt, so it is compared to within that)."""
    numbers: list[float] = []

    def take(value: str) -> str:
        numbers.extend(float(n) for n in _NUMBER.findall(value))
        return _NUMBER.sub("#", value)

    shape = [(t, {k: take(v) for k, v in a.items()}, x) for t, a, x in items]
    return shape, numbers


def test_compact_svg_draws_the_same_elements_with_the_same_styles() -> None:
    raw = _raw_svg()
    compact = style.compact_svg(raw)
    assert len(compact) < 0.8 * len(raw)
    shape, numbers = _shape_and_numbers(_drawn(compact))
    raw_shape, raw_numbers = _shape_and_numbers(_drawn(raw))
    assert shape == raw_shape
    assert numbers == pytest.approx(raw_numbers, abs=0.01)


def test_compact_svg_keeps_every_referenced_id_and_the_text() -> None:
    raw = _raw_svg()
    compact = style.compact_svg(raw)
    root = ET.fromstring(compact.encode())
    ids = {e.get("id") for e in root.iter() if e.get("id")}
    refs = {e.get(XLINK)[1:] for e in root.iter() if e.get(XLINK)}
    refs |= set(re.findall(r"url\(#([^)]+)\)", compact))
    assert refs and refs <= ids
    assert "B200 &lt;training&gt; &amp; mxfp8" in compact
    assert "rotate(-90" in compact and "rotate(-0 " not in compact
    assert compact.count(' style="') < raw.count(' style="') / 4  # the rest are used once


def test_compact_svg_is_stable() -> None:
    raw = _raw_svg()
    assert style.compact_svg(raw) == style.compact_svg(raw)
    assert style.compact_svg(style.compact_svg(raw)) == style.compact_svg(raw)


def _charts() -> list[str]:
    """A few charts as the workers draw them, each twice (a reused figure)."""
    m = 2.0 ** np.arange(8, 17, 0.25)
    curves = {1024: np.linspace(0.6, 1.7, len(m)), 4096: np.linspace(0.8, 1.9, len(m))}
    out = []
    for title in ("H100 <training> rowwise", "B200 inference nvfp4"):
        out.append(plots.curves_svg(title, m, curves, {k: v * 0.9 for k, v in curves.items()}))
        out.append(
            model_charts.model_time_svg(
                title,
                ["bf16", "rowwise"],
                ["q", "kv"],
                np.array([[3e-3, 1e-3], [2e-3, 5e-4]]),
                [4e-3, 2.4e-3],
            )
        )
    return out


def test_shared_text_metrics_draw_the_same_svg(monkeypatch: pytest.MonkeyPatch) -> None:
    """The measure shared by every SVG renderer (style._text_metrics) gives the bytes
    matplotlib's per-renderer one gives."""
    assert matplotlib.text._get_text_metrics_with_cache is style._text_metrics
    shared = _charts()
    monkeypatch.setattr(matplotlib.text, "_get_text_metrics_with_cache", style._MEASURE)
    assert _charts() == shared
    assert style._svg_text_metrics.cache_info().hits > 0


def _page(path: str, chart: str, kwargs: dict) -> PageOutput:
    name = chart.rsplit("/", 1)[1]
    text = f"# {path}\n\n[![a chart](img/{name})](img/{name})\n"
    return PageOutput({path: text}, [PlotJob(chart, "curves", kwargs)])


def test_an_equal_chart_is_written_once_and_linked_from_both_pages() -> None:
    first = _page("gpus/b200/training-a.md", "gpus/b200/img/training-a.svg", {"x": 1.0})
    second = _page("gpus/b200/training-b.md", "gpus/b200/img/training-b.svg", {"x": 1.0})
    other = _page("gpus/b200/training-c.md", "gpus/b200/img/training-c.svg", {"x": 2.0})
    out = share_charts([first, second, other])
    assert [job.paths for job in out.charts] == [
        ["gpus/b200/img/training-a.svg"],
        ["gpus/b200/img/training-c.svg"],
    ]
    assert out.files["gpus/b200/training-b.md"].count("](img/training-a.svg)") == 2
    assert "training-b.svg" not in out.files["gpus/b200/training-b.md"]
    assert "](img/training-c.svg)" in out.files["gpus/b200/training-c.md"]


def test_a_shared_chart_from_another_folder_is_linked_relatively() -> None:
    first = _page("gpus/b200/index.md", "gpus/b200/img/x.svg", {"x": 1.0})
    second = _page("models/m/b200/index.md", "models/m/b200/img/x.svg", {"x": 1.0})
    out = share_charts([first, second])
    assert "](../../../gpus/b200/img/x.svg)" in out.files["models/m/b200/index.md"]


def test_a_shared_chart_that_no_page_links_fails_the_build() -> None:
    first = _page("a.md", "img/a.svg", {"x": 1.0})
    second = PageOutput({"b.md": "no link here\n"}, [PlotJob("img/b.svg", "curves", {"x": 1.0})])
    with pytest.raises(ValueError, match=r"img/b\.svg"):
        share_charts([first, second])
