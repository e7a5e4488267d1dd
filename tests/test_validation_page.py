"""The Validation page, the calibrated model on the Equations and Methodology pages.

Every expectation is computed through the API (``validate``, ``calibration_of``,
``build_model(calibrated=True)``): parameter values are provisional and refitted, so no
number is typed here. Pages are rendered alone from a stub site input (no gather, no
mkdocs); the full build is the golden and browser tests' job.
"""

from __future__ import annotations

import csv
import dataclasses
import html
import html.parser
import io
import pickle
import re
import types
from pathlib import Path

import markdown
import pytest
import yaml
from browser.site_fixtures import SMALL_SPECS

from roofline.analysis.validation import ModelKind, validate
from roofline.calibration.data import load_calibration
from roofline.evaluate import calibration_of
from roofline.measurements import (
    MeasurementDatabase,
    MeasurementError,
    MeasurementProblem,
    Point,
    SetRole,
    load_measurements,
)
from roofline.publish import notes
from roofline.publish.latex import symbolic
from roofline.recipes import RECIPE_LIST
from roofline.specs import load_specs
from roofline.symbols import CALIBRATION_SYMBOLS, MODEL_CALIBRATION_SYMBOLS
from site_gen import config, pool
from site_gen.charts.jobs import chart_key
from site_gen.charts.validation import numbered, point_name, validation_chart, x_axis
from site_gen.gather import validation as gather_validation
from site_gen.gather.dense import Atlas
from site_gen.markup import exports
from site_gen.markup.formulas import equation_index, symbolic_formulas
from site_gen.markup.grouped_formulas import grouped_formulas, nvfp4_training_formulas
from site_gen.pages import equations, methodology, validation
from site_gen.pages.rows.validation import (
    PER_GPU_SYMBOLS,
    ROLE_TEXT,
    measured_text,
    parameter_text,
    pct,
    percent,
    range_text,
    signed_pct,
)

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "data" / "site_small_specs.toml"
EXTENSIONS = [
    "tables",
    "toc",
    "admonition",
    "attr_list",
    "md_in_html",
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.arithmatex",
]


def _site(specs):
    """The part of SiteInput the three pages read."""
    calibrations = {g.name: calibration_of(g, specs) for g in specs.values()}
    atlas = Atlas(specs, {}, calibrations=calibrations)
    symbolic = {
        (m.value, r.name): symbolic_formulas(m, r.name)
        for m in config.MODES
        for r in RECIPE_LIST
        if m in r.plans
    }
    return types.SimpleNamespace(atlas=atlas, symbolic=symbolic)


@pytest.fixture(scope="module")
def bundled_site():
    return _site(load_specs())


@pytest.fixture(scope="module")
def small_site():
    return _site(load_specs(SMALL))


@pytest.fixture(scope="module")
def bundled_page(bundled_site):
    return validation.render(bundled_site)


@pytest.fixture(scope="module")
def small_page(small_site):
    return validation.render(small_site)


@pytest.fixture(scope="module")
def report():
    specs = load_specs()
    return validate(load_measurements(specs=specs), specs)


class _Tags(html.parser.HTMLParser):
    """Every element and attribute of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend((tag, name, value) for name, value in attrs)


def _text(out) -> str:
    return out.files[validation.PAGE]


# -- the Validation page ------------------------------------------------------------------


def test_every_set_has_its_section_table_and_chart(bundled_page, report) -> None:
    text = _text(bundled_page)
    charts = {job.path for job in bundled_page.charts}
    for result in report.sets:
        set_id = result.set.id
        assert "{#" + set_id + "}" in text, set_id  # the heading's anchor
        assert f"](#{set_id})" in text  # linked from the every-set table
        assert f"{exports.export_dir(validation.PAGE)}/set-{set_id}.csv" in bundled_page.files
        assert f"validation/set-{set_id}.json" in text  # its export link
        assert f"{validation.IMG_DIR}/{set_id}.svg" in charts
        assert f"(validation/img/{set_id}.svg)" in text
    # one chart per set, and the CV-against-shape-size chart
    assert len(bundled_page.charts) == len(report.sets) + 1
    assert validation.SIZE_CHART in charts
    assert "(validation/img/cv-by-size.svg)" in text


def test_roles_are_grouped_and_marked(bundled_page, report) -> None:
    text = html.unescape(_text(bundled_page))
    heads = [
        text.index(f"## {validation.HEADINGS[r]}")
        for r in (SetRole.HOLDOUT, SetRole.FIT, SetRole.CONTEXT)
    ]
    assert heads == sorted(heads)  # held out first, then fitted on, then context
    for result in report.sets:
        section = text[text.index("{#" + result.set.id + "}") :]
        badge = re.search(r'<span class="ra-role ra-role-(\w+)">\*\*(.+?)\*\*</span>', section)
        assert badge is not None
        assert badge.group(1) == result.set.role.value
        assert badge.group(2) == ROLE_TEXT[result.set.role]
        heading = validation.HEADINGS[result.set.role]
        assert text.rindex(f"## {heading}", 0, text.index("{#" + result.set.id)) == max(
            i for i in heads if i < text.index("{#" + result.set.id)
        )


def test_numbers_come_from_validate(bundled_page, report) -> None:
    text = html.unescape(_text(bundled_page))
    for role in (SetRole.HOLDOUT, SetRole.FIT):
        for model in ModelKind:
            assert pct(report.mean_error(model, role)) in text
            assert signed_pct(report.worst_error(model, role)) in text
        cal = ModelKind.CALIBRATED  # the reading quotes them as prose
        assert f"off by {percent(report.mean_error(cal, role))}" in text or (
            f"by {percent(report.mean_error(cal, role))}" in text
        )
    overall = bundled_page.files["generated/validation/overall.csv"]
    assert pct(report.mean_error(ModelKind.CALIBRATED, SetRole.HOLDOUT)) in overall
    for result in report.sets:
        table = bundled_page.files[f"generated/validation/set-{result.set.id}.csv"]
        rows = [line[1:] for line in csv.reader(io.StringIO(table))][1:]  # no point label
        quantity = result.set.quantity
        for p in result.points:
            row = [measured_text(p.measured, quantity)]
            for model in (ModelKind.TORCHAO, ModelKind.CALIBRATED):
                row += [measured_text(p.predicted[model], quantity), signed_pct(p.error(model))]
            assert row in rows, (result.set.id, row)
    verdicts = [r for r in report.sets if r.scored and not r.passed]
    if verdicts:
        assert "above their regression guard" in text
    else:
        assert "Every scored set is within its regression guard." in text


def test_parameters_of_every_gpu_with_basis_and_source(bundled_page) -> None:
    specs = load_specs()
    details = list(
        csv.reader(io.StringIO(bundled_page.files["generated/validation/parameters.csv"]))
    )
    assert details[0] == ["GPU", "parameter", "value", "basis", "plausible range", "source"]
    rows = {(r[0], r[1]): r for r in details[1:]}
    for gpu in specs.values():
        params = calibration_of(gpu, specs)
        for hw in PER_GPU_SYMBOLS:
            value = params.values[hw.spec_key]
            row = rows[(gpu.name, hw.latex)]
            assert row[2:5] == [
                parameter_text(value.value, hw.unit),
                value.basis.value,
                range_text(value.value, value.low, value.high, hw.unit),
            ]
            assert value.source in row[5]
    assert len(rows) == len(specs) * len(PER_GPU_SYMBOLS)
    text = _text(bundled_page)
    for hw in CALIBRATION_SYMBOLS:
        assert f"${hw.latex}$" in text


def test_a_site_without_the_measured_gpus_says_so(small_page, bundled_page) -> None:
    small = html.unescape(_text(small_page))
    assert "Predicted with the bundled spec database" in small
    assert "Test B200" in small  # its parameters are this site's GPUs'
    assert "Predicted with the bundled spec database" not in _text(bundled_page)
    # The bundled site links each set's GPU to its page; the small site has none to link.
    assert "](gpus/nvidia-b200/index.md)" in _text(bundled_page)
    assert "](gpus/nvidia-b200/" not in small


def test_a_broken_measurement_file_is_not_hidden(monkeypatch, small_site) -> None:
    problem = MeasurementProblem("m.toml", "x", "points", "a list", "nothing")

    def broken(**_kwargs):
        raise MeasurementError([problem])

    monkeypatch.setattr(gather_validation, "load_measurements", broken)
    with pytest.raises(MeasurementError):
        validation.render(small_site)


def test_nav_lists_the_page_after_methodology() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    titles = [next(iter(entry)) for entry in nav["nav"]]
    assert titles.index("Validation") == titles.index("Methodology") + 1
    (section,) = [e["Validation"] for e in nav["nav"] if "Validation" in e]
    assert section == "generated/validation.md" or section[0] == "generated/validation.md"


def test_hostile_measurement_text_stays_text(small_site) -> None:
    """Set text from a hostile pull request shows as text: no element, link or handler."""
    payload = (
        "<script>alert(1)</script> [x](javascript:alert(2)) {: onclick=alert(3) } "
        "$x$ | =1+1 {#evil}"
    )
    specs = load_specs()
    base = load_measurements(specs=specs)
    first = base.sets[0]
    hostile = dataclasses.replace(
        first,
        title=payload,
        software=payload,
        command=payload,
        notes=payload,
        source=dataclasses.replace(first.source, url="javascript:alert(4)", note=payload),
        points=tuple(dataclasses.replace(p, label="=cmd|' /C calc'!A0 <b>") for p in first.points),
    )
    data = gather_validation.validation_of(
        MeasurementDatabase((hostile,)), specs, small_site.atlas.inputs.calibration
    )
    out = validation.render_with(small_site, data)
    body = _text(out).split("---\n", 2)[2]
    rendered = markdown.markdown(
        body, extensions=EXTENSIONS, extension_configs={"pymdownx.arithmatex": {"generic": True}}
    )
    parser = _Tags()
    parser.feed(rendered)
    assert "script" not in parser.tags and "b" not in parser.tags
    names = {name for _tag, name, _value in parser.attrs}
    assert not any(name.startswith("on") for name in names), names
    for _tag, name, value in parser.attrs:
        assert not (name in ("href", "src") and (value or "").lower().startswith("javascript"))
        assert (name, value) != ("id", "evil")
    assert payload in html.unescape(re.sub(r"<[^>]+>", "", rendered))  # shown as text
    csv_text = out.files[f"generated/validation/set-{first.id}.csv"]
    assert "\n=cmd" not in csv_text and ",=cmd" not in csv_text


# -- the chart ----------------------------------------------------------------------------


def _points(*shapes, labels=()):
    labels = labels or ("",) * len(shapes)
    return [
        Point(s if isinstance(s[0], tuple) else (s,), 1.0, lbl)
        for s, lbl in zip(shapes, labels, strict=True)
    ]


def test_x_axis_is_m_only_for_a_sweep_of_m() -> None:
    sweep = x_axis(_points((1, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096)))
    assert sweep.log2_m and sweep.positions == (0.0, 4.0, 6.0) and "K = 4096" in sweep.label
    square = x_axis(_points((1024,) * 3, (2048,) * 3, (4096,) * 3))
    assert square.log2_m and square.label.startswith("M = K = N")
    mixed = x_axis(_points((1024, 2048, 1024), (4096, 8192, 16384), labels=("a", "b")))
    assert not mixed.log2_m and mixed.tick_labels == ("a", "b")
    varying = x_axis(_points((1, 2, 3), (2, 4, 3), (4, 2, 3)))
    assert not varying.log2_m and varying.tick_labels[0] == "1×2×3"
    multi = x_axis(_points(((1, 2, 3), (4, 5, 6))))
    assert not multi.log2_m and multi.tick_labels == ("2 shapes",)
    backwards = x_axis(_points((64, 8, 8), (16, 8, 8), (1, 8, 8)))
    assert not backwards.log2_m


def test_points_whose_names_would_overlap_are_numbered_in_chart_and_table(report) -> None:
    """A set whose point names do not fit under its chart numbers its ticks 1..n, and
    its table numbers its rows to match (escaped like any cell; the exports show the
    page's cell text, as test_exports checks for every table). A set with short names
    keeps them as ticks."""
    from site_gen.markup import safe
    from site_gen.pages.rows.validation import point_cell, set_table

    results = {r.set.id: r for r in report.sets}
    long = results["aiter-mi355x-fp8-rowwise-gemm-tuned"]
    axis = x_axis([p.point for p in long.points])
    assert axis.tick_labels == tuple(str(i) for i in range(1, len(long.points) + 1))
    assert "numbered" in axis.label
    rows = set_table(long).rows
    for i, (row, point) in enumerate(zip(rows, long.points, strict=True), 1):
        name = point_cell(point)
        assert html.unescape(str(safe.md_text(row[0]))) == safe.plain(row[0]) == f"{i}. {name}"
    points = {r.set.id: [p.point for p in r.points] for r in report.sets}
    short = next(
        r
        for r in report.sets
        if len(r.points) > 1
        and not x_axis(points[r.set.id]).log2_m
        and not numbered(points[r.set.id])
    )
    assert x_axis(points[short.set.id]).tick_labels[0] == point_name(short.points[0].point)
    assert set_table(short).rows[0][0] == point_cell(short.points[0])


def test_charts_draw_deterministic_svg_with_three_series(report) -> None:
    for result in report.sets[:3]:
        job = validation_chart(result, "x.svg")
        assert job.kind == "validation"
        first, again = pool.draw(job)[0][1], pool.draw(job)[0][1]
        assert first == again and first.lstrip().startswith("<?xml")
        for label in ("measured", "torchao model", "calibrated model"):
            assert label in first
        assert chart_key(job.kind, job.kwargs) == chart_key(job.kind, dict(job.kwargs))


# -- the Equations page -----------------------------------------------------------------


def test_calibrated_formulas_are_the_calibrated_terms() -> None:
    from roofline.model.build import build_model

    formulas = equations.calibrated_formulas()
    assert len(formulas) == len(equations.PICKS)
    for pick, formula in zip(equations.PICKS, formulas, strict=True):
        model = build_model(pick.mode, pick.recipe, pick.fusion, calibrated=True)
        assert formula.latex in {symbolic(t.expr) for t in model.terms}, pick.name
        torchao = build_model(pick.mode, pick.recipe, pick.fusion)
        assert formula.latex not in {symbolic(t.expr) for t in torchao.terms}, pick.name
    # The grouped layer's and NVFP4 training's parameters appear in their own sections.
    extra = [*grouped_formulas().values(), *nvfp4_training_formulas().values()]
    used = " ".join(f.latex for f in [*formulas, *extra])
    for hw in MODEL_CALIBRATION_SYMBOLS:  # every model parameter appears in some formula
        assert hw.latex in used, hw.spec_key
    anchors = [f.anchor for f in [*formulas, *extra]]
    anchors += [f.anchor for _, fs in equation_index() for f in fs]
    assert len(anchors) == len(set(anchors))


def test_equations_snippet_has_the_section_and_symbols(small_site) -> None:
    out = equations.render(small_site)
    text = out.files["generated/_snippets/equations.md.txt"]
    assert "## Calibrated model" in text
    assert text.index("## Building blocks") < text.index("## Calibrated model")
    for f in equations.calibrated_formulas():
        assert f'id="{f.anchor}"' in text
    for hw in CALIBRATION_SYMBOLS:
        assert f"${hw.latex}$" in text and hw.spec_key in text
    total = sum(len(f) for _, f in equation_index()) + len(equations.PICKS)
    total += len(grouped_formulas()) + len(nvfp4_training_formulas())
    assert text.startswith(f"{total} formulas")
    assert "generated/equations/calibration-symbols.csv" in out.files


# -- the Methodology page ---------------------------------------------------------------


def test_methodology_describes_the_calibrated_model(bundled_site) -> None:
    out = methodology.render(bundled_site)
    text = html.unescape(out.files["generated/methodology.md"])
    assert "## Calibrated model" in text
    for note in notes.CALIBRATED:
        assert f"**{note.title}.**" in text
    for mset in load_measurements().sets:
        assert f"[{mset.id}](validation.md#{mset.id})" in text
    stored = out.files["generated/methodology/calibration-stored.csv"]
    assert len(stored.strip().splitlines()) == 1 + len(load_calibration().entries())
    for role in (SetRole.HOLDOUT, SetRole.FIT):
        count = len(load_measurements().by_role(role))
        assert f"**{ROLE_TEXT[role].capitalize()}** ({count} sets" in text


def test_cv_sources_read_as_short_names_and_stay_escaped():
    from site_gen.pages.rows.crossval import short_source, source_cell

    assert short_source("https://github.com/pytorch/ao/pull/3306") == "pytorch/ao PR #3306"
    assert short_source("https://github.com/NVIDIA/cutlass/issues/2923") == (
        "NVIDIA/cutlass issue #2923"
    )
    assert (
        short_source("https://github.com/pytorch/ao/commit/46e106b8f30a") == "pytorch/ao @46e106b8"
    )
    assert (
        short_source("https://github.com/pytorch/ao/blob/36027d82d1ad/docs/x/inference.md")
        == "pytorch/ao docs/x/inference.md @36027d82"
    )
    assert short_source("https://example.org/t") == "https://example.org/t"
    # a URL with markup is refused as a link and shown as escaped text, never a tag
    from site_gen.markup import safe

    cell = source_cell("https://github.com/o/r/blob/abc/<b>x</b>.md", short=True)
    assert "<b>" not in str(safe.md_text(cell)) and "href" not in str(safe.md_text(cell))


def test_the_pool_keeps_the_site_database_apart_from_the_bundled_fallback() -> None:
    """The Validation page's data is gathered on a worker (site_gen.pool.validation_of);
    whether its predictions used the site's own database must come back with it: the
    worker's copy of the site's database is never the site's object."""
    for specs, with_site in ((load_specs(None), True), (load_specs(SMALL_SPECS), False)):
        sent = pickle.loads(pickle.dumps((specs, None)))  # as the pool sends the arguments
        validation = pickle.loads(pickle.dumps(pool.validation_of(*sent)))  # and back
        assert validation.site_specs is with_site, specs.origin


def test_the_page_names_another_database_only_when_the_data_says_so(small_site) -> None:
    data = small_site.atlas.validated()
    for site_specs in (True, False):
        out = validation.render_with(small_site, dataclasses.replace(data, site_specs=site_specs))
        shown = "Predicted with the bundled spec database" in _text(out)
        assert shown is not site_specs
