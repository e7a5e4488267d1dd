"""One GPU: specification, ridge points, roofline, and recipe guidance per mode."""

from __future__ import annotations

from dataclasses import dataclass

from roofline import units
from roofline.recipes import Mode
from roofline.specs import GpuSpec
from site_gen import charts, config, rows, spec_rows
from site_gen.context import SUPPORT_BADGE, Table, gpu_page
from site_gen.gather import RecipeResult, best_at_canonical, decision_map
from site_gen.pages.base import PageOutput, SiteInput, page


@dataclass(frozen=True)
class ModeGuidance:
    """One mode's part of a GPU page."""

    mode: str
    decision_img: str
    native: tuple[str, ...]  # recipes on the decision map
    best: dict[str, str] | None  # name, speedup, link; None = stay in bf16
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


def _mode(
    site: SiteInput, gpu: GpuSpec, mode: Mode, page_path: str
) -> tuple[ModeGuidance, charts.PlotJob]:
    results = site.atlas.for_gpu(gpu.name, mode)
    dmap = decision_map(site.atlas, gpu.name, mode)
    best = best_at_canonical(site.atlas, gpu.name, mode)
    guidance = ModeGuidance(
        mode=mode.value,
        decision_img=f"img/decision-{mode.value}.svg",
        native=dmap.recipes,
        best=None if best is None else {
            "name": best.recipe.name,
            "speedup": units.speedup(best.canonical_speedup),
            "link": rows.result_link(best, page_path),
        },
        break_even=rows.break_even_table(results, page_path, f"{mode.value}-break-even"),
        ranked=rows.ranked_table(results, page_path, f"{mode.value}-ranked"),
        links=[_link(r, page_path) for r in results],
    )  # fmt: skip
    return guidance, charts.decision_chart(gpu, dmap)


def render(site: SiteInput, gpu: GpuSpec) -> PageOutput:
    """The GPU's page, its tables' exports, its roofline and decision maps."""
    path = gpu_page(gpu)
    jobs = [charts.roofline_chart(gpu)]
    modes = []
    for mode in config.MODES:
        guidance, chart = _mode(site, gpu, mode, path)
        modes.append(guidance)
        jobs.append(chart)
    spec_table, ridge = spec_rows.spec_table(gpu), spec_rows.ridge_table(gpu)
    tables = [spec_table, ridge, *(t for m in modes for t in (m.break_even, m.ranked))]
    out = page(
        path, "gpu.md.j2", tables, gpu=gpu, slug=config.slug(gpu.name), spec_rows=spec_table,
        ridge=ridge, modes=modes, sources=gpu.source_records, basis=spec_rows.basis(gpu),
    )  # fmt: skip
    out.charts = jobs
    return out
