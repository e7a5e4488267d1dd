"""The Validation page: every published measurement set beside torchao's model and the
calibrated model, held-out and fitted sets marked, and the calibration parameters.

Numbers come from :mod:`site_gen.gather.validation` (the sets, their
:func:`roofline.analysis.validation.validate` report and the stored error bands, gathered
before any page); rows from :mod:`site_gen.pages.rows.validation` (errors, parameters),
:mod:`site_gen.pages.rows.crossval` (the cross-validation tables) and
:mod:`site_gen.pages.rows.harness` (timed region, timer, L2, the cold start), chart jobs from
:mod:`site_gen.charts.validation`. A site built from a spec file without the measured GPUs
validates against the bundled spec database and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roofline import units
from roofline.analysis.error_bands import MIN_BAND_POINTS, ErrorBands
from roofline.analysis.validation import (
    GOALS,
    LARGE_GEMM_MKN,
    SetResult,
    ValidationReport,
    mean_abs_error,
    worst_error,
)
from roofline.measurements import MeasurementSet, SetRole, TimedRegion
from roofline.specs import SpecDatabase
from site_gen import config
from site_gen.charts.jobs import PlotJob
from site_gen.charts.validation import (
    SIZE_WIDTH_PX,
    WIDTH_PX,
    cv_size_chart,
    point_name,
    shape_text,
    validation_chart,
    x_axis,
)
from site_gen.context import GEN, Cell, Table, gpu_page, recipe_page, rel
from site_gen.gather.validation import ValidationData
from site_gen.markup import safe
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import crossval as cvrows
from site_gen.pages.rows import harness
from site_gen.pages.rows import validation as vr

PAGE = f"{GEN}/validation.md"
IMG_DIR = f"{GEN}/validation/img"
SIZE_CHART = f"{IMG_DIR}/cv-by-size.svg"  # no set id can clash: ids have no "cv-by-" prefix
HEADINGS: dict[SetRole, str] = {
    SetRole.HOLDOUT: "Held out: never used to fit",
    SetRole.FIT: "Fitted on",
    SetRole.CONTEXT: "Context: shown, not scored",
}


@dataclass(frozen=True)
class SetView:
    """One set's section of the page."""

    anchor: str
    title: str
    role: str
    role_text: str
    gpu: Cell
    recipe: safe.Md
    mode: str
    fusion: str
    region: str
    harness: str  # the timer and the L2 state, in words
    library: str  # whose kernel the set times (KernelLibrary's value)
    side_kernels: list[str]  # kernels its timed call runs besides the model's, in words
    quantity: str
    terms: tuple[str, ...]
    summed: tuple[tuple[str, str], ...]  # (point, "shape + shape ...") of multi-GEMM points
    errors: dict[str, str]
    scored: bool
    threshold: str
    verdict: str
    goal: str
    against_goal: str
    set: MeasurementSet  # software, command, notes, source as the file has them
    source: Cell
    table: Table
    chart: str
    alt: str
    log2_m: bool  # the chart's x axis is M (else the points in order)


def _set_view(result: SetResult, site_specs: SpecDatabase) -> SetView:
    """One set's section; its GPU links to the GPU's page when this site has one."""
    mset = result.set
    gpu: Cell = mset.gpu
    if mset.gpu in site_specs:
        gpu = safe.link(mset.gpu, rel(gpu_page(site_specs[mset.gpu]), PAGE))
    summed = tuple(
        (point_name(p.point), " + ".join(shape_text(s) for s in p.point.shapes))
        for p in result.points
        if len(p.point.shapes) > 1
    )
    t, c = vr.TORCHAO, vr.CALIBRATED
    errors = {
        "mean_t": vr.percent(result.mean_error(t)),
        "mean_c": vr.percent(result.mean_error(c)),
        "worst_t": vr.signed_percent(result.worst_error(t)),
        "worst_c": vr.signed_percent(result.worst_error(c)),
    }
    quantity = vr.QUANTITY_TEXT[mset.quantity]
    alt = (
        f"Chart of {quantity} for set {mset.id} on {mset.gpu}: the measured values, "
        f"torchao's model and the calibrated model for each point"
    )
    return SetView(
        anchor=mset.id,
        title=mset.title,
        role=mset.role.value,
        role_text=vr.ROLE_TEXT[mset.role],
        gpu=gpu,
        recipe=safe.link(mset.recipe, rel(recipe_page(mset.recipe), PAGE)),
        mode=mset.mode.value,
        fusion="on" if mset.fusion else "off",
        region=harness.REGION_TEXT[mset.timed_region],
        harness=harness.harness_text(mset),
        library=mset.library.value,
        side_kernels=harness.side_kernel_text(mset),
        quantity=quantity,
        terms=mset.terms,
        summed=summed,
        errors=errors,
        scored=result.scored,
        threshold=vr.threshold_text(result),
        verdict=vr.verdict(result),
        goal="" if result.goal is None else vr.percent(result.goal),
        against_goal=vr.goal_text(result),
        set=mset,
        source=cvrows.source_cell(mset.source.url),
        table=vr.set_table(result),
        chart=f"validation/img/{mset.id}.svg",
        alt=alt,
        log2_m=x_axis([p.point for p in result.points]).log2_m,
    )


def _reading(report: ValidationReport) -> dict[str, Any]:
    """The numbers of the page's one-paragraph reading, each from the report."""
    t, c = vr.TORCHAO, vr.CALIBRATED
    scored = [s for s in report.sets if s.scored]
    out: dict[str, Any] = {"small": None, "region_t": None, "region_c": None}
    for role in (SetRole.HOLDOUT, SetRole.FIT, SetRole.CONTEXT):
        points = vr.points_of(vr.of_role(report, role))
        out[role.value] = {
            "sets": len(vr.of_role(report, role)),
            "points": len(points),
            "t": vr.percent(mean_abs_error(points, t)),
            "c": vr.percent(mean_abs_error(points, c)),
            "worst_c": vr.signed_percent(worst_error(points, c)),
        }
    small = [p for p in vr.points_of(scored) if vr.small(p)]
    large = [p for p in vr.points_of(scored) if not vr.small(p)]
    if small and large:
        out["small"] = {
            name: (vr.percent(mean_abs_error(group, t)), vr.percent(mean_abs_error(group, c)))
            for name, group in (("small", small), ("large", large))
        }
    out["small_m"] = vr.SMALL_M
    large_training = report.large_training_holdout()
    out["large_training"] = {
        "points": len(large_training),
        "t": vr.percent(mean_abs_error(large_training, t)),
        "c": vr.percent(mean_abs_error(large_training, c)),
        "log2_mkn": LARGE_GEMM_MKN.bit_length() - 1,
    }
    regions: dict[TimedRegion, list] = {}
    for s in scored:
        regions.setdefault(s.set.timed_region, []).extend(s.points)
    for key, model in (("region_t", t), ("region_c", c)):
        if regions:
            region, points = max(regions.items(), key=lambda kv: mean_abs_error(kv[1], model))
            out[key] = (harness.REGION_TEXT[region], vr.percent(mean_abs_error(points, model)))
    out["failures"] = [safe.link(f.set.id, f"#{f.set.id}") for f in report.failures()]
    context = vr.of_role(report, SetRole.CONTEXT)
    out["end_to_end"] = sum(s.set.timed_region is TimedRegion.END_TO_END for s in context)
    return out


def _parameters(site: SiteInput) -> dict[str, Table]:
    """The calibration parameters of every GPU of the site's spec database."""
    gpus = [(g, site.atlas.calibration(g.name)) for g in site.atlas.gpus]
    return {
        "model_wide": vr.model_wide_table(gpus[0][1]),
        "gemm": vr.compact_table(gpus, vr.GEMM_SYMBOLS, "gemm-efficiency", PAGE),
        "gemm_time": vr.compact_table(gpus, vr.GEMM_TIME_SYMBOLS, "gemm-time", PAGE),
        "cast": vr.compact_table(gpus, vr.CAST_SYMBOLS, "cast-efficiency", PAGE),
        "grouped": vr.compact_table(gpus, vr.GROUPED_SYMBOLS, "grouped-and-nvfp4", PAGE),
        "details": vr.details_table(gpus, PAGE),
    }


def _size_chart(bands: ErrorBands) -> PlotJob | None:
    """The chart of CV error against shape size (None when the bands have no sizes)."""
    sizes = cvrows.by_size(bands.sizes)
    if not sizes:
        return None
    return cv_size_chart(
        list(sizes),
        list(sizes.values()),
        [bands.sizes_torchao.get(b, math.nan) for b in sizes],
        [bands.size_points.get(b, 0) for b in sizes],
        SIZE_CHART,
    )


def render(site: SiteInput) -> PageOutput:
    """The Validation page, its tables' exports and one chart per set."""
    return render_with(site, site.atlas.validated())


def render_with(site: SiteInput, data: ValidationData) -> PageOutput:
    """The page for ``data``: its sets predicted with ``data.specs`` (the site's, or the
    bundled database when the site's lacks the measured GPUs)."""
    calibration, report, specs, bands = data.calibration, data.report, data.specs, data.bands
    views = {r.set.id: _set_view(r, site.atlas.specs) for r in report.sets}
    groups = [
        (role, HEADINGS[role], [views[r.set.id] for r in vr.of_role(report, role)])
        for role in vr.ROLE_ORDER
    ]
    summary = {
        "overall": vr.overall_table(report),
        "regions": harness.region_table(report),
        "timers": harness.timer_table(report),
        "sets": vr.sets_table(report.sets),
    }
    parameters = {**_parameters(site), "weak": cvrows.weak_table(data.support)}
    cv = cvrows.cv_tables(bands)
    own_cv = cvrows.own_cv_table(calibration)
    tables = [
        *cv.values(),
        *([own_cv] if own_cv.rows else []),
        *summary.values(),
        *(v.table for v in views.values()),
        *parameters.values(),
    ]
    worst = max(bands.sources.items(), key=lambda kv: kv[1], default=None)
    headline = {
        "cv": vr.percent(bands.overall),
        "fit": vr.percent(bands.fit if bands.fit is not None else math.nan),
        "torchao": vr.percent(bands.torchao if bands.torchao is not None else math.nan),
        "worst": cvrows.source_cell(worst[0], short=True) if worst else units.MISSING,
        "worst_cv": vr.percent(worst[1]) if worst else units.MISSING,
        "sources": len(bands.sources),
        "goals": {role.value: vr.percent(goal) for role, goal in GOALS.items()},
    }
    out = page(
        PAGE,
        "validation.md.j2",
        tables,
        cv=cv,
        headline=headline,
        summary=summary,
        groups=groups,
        own_cv=own_cv if own_cv.rows else None,
        calibration_origin=Path(calibration.origin).name,
        reading=_reading(report),
        cold=harness.cold_start(calibration, report),
        warm=harness.warm_cache(calibration, report),
        parameters=parameters,
        fallback=not data.site_specs,
        site_origin=site.atlas.specs.origin,
        used_origin=specs.origin,
        methodology=rel(f"{GEN}/methodology.md", PAGE),
        chart_px=WIDTH_PX,
        size_chart=rel(SIZE_CHART, PAGE) if bands.sizes else None,
        size_chart_px=SIZE_WIDTH_PX,
        min_band_points=MIN_BAND_POINTS,
        canonical={
            "m": config.CANONICAL_M,
            "kn": config.CANONICAL_KN,
            "log2_mkn": math.log2(config.CANONICAL_M * config.CANONICAL_KN**2),
        },
    )
    out.charts = [validation_chart(r, f"{IMG_DIR}/{r.set.id}.svg") for r in report.sets]
    size_chart = _size_chart(bands)
    if size_chart is not None:
        out.charts.append(size_chart)
    return out
