"""One GPU: headline guidance, calibration, specification, ridge points, roofline, and
recipe guidance per mode.

Guidance leads with the calibrated model (decision maps, break-even M, rankings) and
quotes torchao's model beside each headline number. A GPU whose calibrated efficiencies
are assumed carries a warning naming them, with the plausible range of its headline
speedups (:func:`roofline.analysis.guidance.calibration_corners`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofline import units
from roofline.analysis import guidance
from roofline.calibration.params import Basis, CalibratedParameters
from roofline.capability import classify
from roofline.recipes import RECIPE_LIST, Mode
from roofline.specs import GpuSpec
from roofline.symbols import CALIBRATION_SYMBOLS
from site_gen import config
from site_gen.charts import jobs as charts
from site_gen.context import GEN, SUPPORT_BADGE, Table, gpu_page, rel
from site_gen.gather.decisions import best_at_canonical, decision_map
from site_gen.gather.dense import Atlas, RecipeResult
from site_gen.markup import safe
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import specs as spec_rows
from site_gen.pages.rows import speedup as rows

#: Parameter key -> its symbol (LaTeX name, unit).
SYMBOLS = {hw.spec_key: hw for hw in CALIBRATION_SYMBOLS}


@dataclass(frozen=True)
class ModeGuidance:
    """One mode's part of a GPU page."""

    mode: str
    decision_img: str
    native: tuple[str, ...]  # recipes on the (calibrated) decision map
    best: dict[str, str] | None  # name, speedup, range, link; None = stay in bf16
    torchao_best: str  # torchao's pick at the canonical shape, as text
    break_even: Table
    ranked: Table
    links: list[dict[str, str]]


def _link(result: RecipeResult, page_path: str) -> dict[str, str]:
    speedup = units.speedup(result.canonical_speedup) if result.computable else units.MISSING
    return {
        "name": result.recipe.name,
        "support": result.capability.support.value,
        "badge": SUPPORT_BADGE[result.capability.support],
        "link": rows.result_link(result, page_path),
        "speedup": speedup,
    }


def capability_context(gpu: GpuSpec, page_path: str) -> dict[str, Any]:
    """The page's "why each recipe has its state" list: each recipe's badge and reason on
    ``gpu`` (registry order), its platform, and the link to the Specs page's matrix."""
    verdicts = {recipe.name: classify(gpu, recipe) for recipe in RECIPE_LIST}
    notes = [
        {
            "name": name,
            "support": v.support.value,
            "badge": SUPPORT_BADGE[v.support],
            "reason": v.reason,
        }
        for name, v in verdicts.items()
    ]
    return {
        "capabilities": notes,
        "platform": gpu.platform or "unknown",
        "specs_link": rel(f"{GEN}/specs.md", page_path),
    }


def _torchao_best(atlas: Atlas, gpu: GpuSpec, mode: Mode, calibrated: RecipeResult | None) -> str:
    """torchao's pick at the canonical shape: its speedup alone when it picks the same
    recipe as the calibrated model, else the recipe and its speedup."""
    best = best_at_canonical(atlas, gpu.name, mode, calibrated=False)
    if best is None:
        return "stay in bf16"
    speedup = units.speedup(best.canonical_speedup)
    same = calibrated is not None and calibrated.recipe.name == best.recipe.name
    return speedup if same else f"{best.recipe.name}, {speedup}"


def _mode(
    site: SiteInput, gpu: GpuSpec, mode: Mode, page_path: str
) -> tuple[ModeGuidance, charts.PlotJob]:
    results = site.atlas.for_gpu(gpu.name, mode, calibrated=True)
    dmap = decision_map(site.atlas, gpu.name, mode, calibrated=True)
    best = best_at_canonical(site.atlas, gpu.name, mode, calibrated=True)
    guidance_ = ModeGuidance(
        mode=mode.value,
        decision_img=f"img/decision-{mode.value}.svg",
        native=dmap.recipes,
        best=None
        if best is None
        else {
            "name": best.recipe.name,
            "speedup": units.speedup(best.canonical_speedup),
            "range": rows.speedup_range(best),
            "link": rows.result_link(best, page_path),
            **_band(site, gpu, mode, best.recipe.name),
        },
        torchao_best=_torchao_best(site.atlas, gpu, mode, best),
        break_even=rows.break_even_table(results, page_path, f"{mode.value}-break-even"),
        ranked=rows.ranked_table(results, page_path, f"{mode.value}-ranked"),
        links=[_link(r, page_path) for r in results],
    )
    return guidance_, charts.decision_chart(gpu, dmap)


def _band(site: SiteInput, gpu: GpuSpec, mode: Mode, recipe: str) -> dict[str, Any]:
    """The cross-validated error band of ``recipe``'s calibrated numbers on ``gpu`` and
    whether it rests on a fallback."""
    band = rows.error_band(site.atlas, gpu.name, mode, recipe)
    return {"band": band.text(), "fallback": band.fallback}


def _value(key: str, value: float | None) -> str:
    """A parameter value in its unit: efficiencies to three digits, latencies in µs."""
    if value is None:
        return units.MISSING
    return units.microseconds(value) if SYMBOLS[key].unit == "s" else units.significant(value, 3)


def _range(key: str, calibration: CalibratedParameters) -> str:
    value = calibration.values[key]
    if value.basis is not Basis.ASSUMED or value.low is None or value.high is None:
        return ""
    if value.low == value.high:  # one GPU has the value: no spread to show
        return ""
    return f"{_value(key, value.low)}–{_value(key, value.high)}"


def _source(key: str, calibration: CalibratedParameters) -> str:
    value = calibration.values[key]
    sets = f" (sets: {', '.join(value.sets)})" if value.sets else ""
    return f"{value.source}{sets}"


def calibration_table(calibration: CalibratedParameters) -> Table:
    """Every calibrated parameter of one GPU: value, basis, assumed range and source."""
    header = ("parameter", "key", "value", "basis", "assumed range", "source")
    table = Table(header, name="calibration")
    for key, value in calibration.values.items():
        table.rows.append(
            (
                safe.math(SYMBOLS[key].latex),
                safe.code(key),
                _value(key, value.value),
                value.basis.value,
                _range(key, calibration) or units.MISSING,
                _source(key, calibration),
            )
        )
    return table


def calibration_context(site: SiteInput, gpu: GpuSpec, modes: list[ModeGuidance]) -> dict[str, Any]:
    """What the page says about its calibrated parameters: the keys per basis (as math),
    the assumed ones with value, range and source, and the headline ranges per mode."""
    calibration = site.atlas.calibration(gpu.name)
    by_basis: dict[str, list[safe.Md]] = {b.value: [] for b in Basis}
    for key, value in calibration.values.items():
        by_basis[value.basis.value].append(safe.math(SYMBOLS[key].latex))
    assumed = [
        {
            "name": safe.math(SYMBOLS[key].latex),
            "value": _value(key, calibration.values[key].value),
            "range": _range(key, calibration),
            "source": _source(key, calibration),
        }
        for key in calibration.assumed()
    ]
    ranges = [
        {
            "mode": m.mode,
            "recipe": m.best["name"],
            "speedup": m.best["speedup"],
            "range": m.best["range"],
        }
        for m in modes
        if m.best and m.best["range"]
    ]
    return {
        "has_data": guidance.has_calibration_data(calibration),
        "by_basis": by_basis,
        "assumed": assumed,
        "ranges": ranges,
        "groups": [name for name, _ in guidance.CORNER_GROUPS],
        "table": calibration_table(calibration),
    }


def render(site: SiteInput, gpu: GpuSpec) -> PageOutput:
    """The GPU's page, its tables' exports, its roofline and decision maps."""
    path = gpu_page(gpu)
    jobs = [charts.roofline_chart(gpu)]
    modes = []
    for mode in config.MODES:
        mode_guidance, chart = _mode(site, gpu, mode, path)
        modes.append(mode_guidance)
        jobs.append(chart)
    spec_table, ridge = spec_rows.spec_table(gpu), spec_rows.ridge_table(gpu)
    calibration = calibration_context(site, gpu, modes)
    tables = [
        spec_table,
        calibration["table"],
        ridge,
        *(t for m in modes for t in (m.break_even, m.ranked)),
    ]
    out = page(
        path,
        "gpu.md.j2",
        tables,
        gpu=gpu,
        slug=config.slug(gpu.name),
        spec_rows=spec_table,
        **capability_context(gpu, path),
        ridge=ridge,
        modes=modes,
        sources=gpu.source_records,
        basis=spec_rows.basis(gpu),
        efficiencies=spec_rows.efficiency_bases(gpu),
        efficiency_title=spec_rows.assumed_title(gpu),
        calibration=calibration,
    )
    out.charts = jobs
    return out
