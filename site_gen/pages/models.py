"""The Models section: every model preset, per model an overview across GPUs, and per
model x GPU its linear layers GEMM by GEMM.

Numbers are :func:`roofline.analysis.policy.plan_model`'s (gathered by
:mod:`site_gen.gather.models`), in the calibrated model with torchao's beside it, at the
site's tokens per device and expert parallelism, both stated on every page.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable, Iterator
from typing import Any

from roofline import units
from roofline.analysis.policy import BF16_NAME
from roofline.capability import classify
from roofline.presets.hf import SUPPORTED_TYPES
from roofline.publish import site_paths
from roofline.recipes import RECIPE_LIST, Mode
from roofline.specs import GpuSpec
from site_gen.charts.models import time_chart
from site_gen.context import GEN, SUPPORT_BADGE, gpu_page, recipe_result_page, rel
from site_gen.gather.models import SITE_EP, ModelAtlas, ModelRun
from site_gen.pages.base import PageOutput, SiteInput, page
from site_gen.pages.rows import models as model_rows

FORMAT_PAGE = "models-format.md"


def _ep_rule() -> list[dict[str, Any]]:
    """The bundled presets the site prices at an ep other than 1."""
    return [{"name": name, "ep": ep} for name, ep in SITE_EP.items()]


def index(site: SiteInput, models: ModelAtlas) -> PageOutput:
    """``generated/models/index.md``: every preset with its sources."""
    path = site_paths.models_index()
    table = model_rows.index_table(models.presets, path)
    presets = [
        {"preset": p, "link": rel(site_paths.model_page(p.name), path)} for p in models.presets
    ]
    return page(
        path,
        "models_index.md.j2",
        [table],
        table=table,
        presets=presets,
        tokens=units.count(models.tokens),
        ep_rule=_ep_rule(),
        format_link=rel(FORMAT_PAGE, path),
        hf_types=", ".join(SUPPORTED_TYPES),
    )


def overview(site: SiteInput, models: ModelAtlas, name: str) -> PageOutput:
    """``generated/models/<model>/index.md``: the best recipe per GPU in both models."""
    runs = models.for_model(name)
    preset = runs[0].preset if runs else next(p for p in models.presets if p.name == name)
    path = site_paths.model_page(name)
    table = model_rows.overview_table(site.atlas, runs, path)
    layers = model_rows.preset_table(preset)
    ep = runs[0].ep if runs else 1
    assumed = any(not site.atlas.has_calibration_data(r.gpu.name) for r in runs)
    return page(
        path,
        "model.md.j2",
        [table, layers],
        preset=preset,
        table=table,
        layers=layers,
        notes=model_rows.preset_notes(preset),
        tokens=units.count(models.tokens),
        ep=ep,
        routing=model_rows.routing(preset),
        index_link=rel(site_paths.models_index(), path),
        format_link=rel(FORMAT_PAGE, path),
        gpus_link=rel(f"{GEN}/gpus/index.md", path),
        any_assumed=assumed,
    )


def _capabilities(gpu: GpuSpec) -> list[dict[str, str]]:
    """Each training recipe's state on ``gpu`` and why (the GPU page lists the same)."""
    out = []
    for recipe in RECIPE_LIST:
        if Mode.TRAINING in recipe.plans:
            verdict = classify(gpu, recipe, Mode.TRAINING)
            out.append(
                {
                    "name": recipe.name,
                    "badge": SUPPORT_BADGE[verdict.support],
                    "reason": verdict.reason,
                }
            )
    return out


def _featured(site: SiteInput, run: ModelRun, path: str) -> list[dict[str, Any]]:
    """The featured GEMMs (:func:`~site_gen.gather.models.featured_gemms`): each one's
    shape, the recipe the calibrated model picks for it, its speedup in both models, its
    formulas and the page that evaluates them for every shape. The structured speedup
    (the same for every recipe) is shown once."""
    out, shown = [], set()
    for info in run.featured:
        gemm = next(g for g in run.calibrated.gemms if g.instance.key == info.key)
        twin = next(g for g in run.torchao.gemms if g.instance.key == info.key)
        recipe = info.recipe
        target = ""
        if recipe != BF16_NAME and not info.grouped:
            target = rel(recipe_result_page(run.gpu, Mode.TRAINING, recipe), path)
        elif recipe != BF16_NAME and (run.gpu.name, Mode.TRAINING, recipe) in site.atlas.grouped:
            target = rel(site_paths.grouped_result_page(run.gpu.name, Mode.TRAINING, recipe), path)
        structured = info.structured
        if structured is not None and structured.anchor in shown:
            structured = None
        if structured is not None:
            shown.add(structured.anchor)
        out.append(
            {
                "info": info,
                "gemm": gemm.instance,
                "structured": structured,
                "shape": {k: units.count(getattr(gemm.instance, k)) for k in ("M", "K", "N")},
                "speedup": units.speedup(gemm.speedup(recipe)),
                "versus": units.versus_bf16(gemm.speedup(recipe)),
                "torchao_speedup": units.speedup(twin.speedup(recipe)),
                "torchao_best": twin.best,
                "page": target,
            }
        )
    return out


def _grouped_links(site: SiteInput, run: ModelRun, path: str) -> list[dict[str, str]]:
    """Links to the grouped-GEMM page of each candidate recipe on the run's GPU, for a MoE
    model (the pages the build has)."""
    if not run.preset.is_moe:
        return []
    keys = [(run.gpu.name, Mode.TRAINING, r) for r in run.calibrated.recipes]
    return [
        {"name": r, "link": rel(site_paths.grouped_result_page(g, mode, r), path)}
        for g, mode, r in keys
        if (g, mode, r) in site.atlas.grouped
    ]


def model_gpu(site: SiteInput, run: ModelRun) -> PageOutput:
    """``generated/models/<model>/<gpu>/index.md``: per GEMM and per recipe, with the
    stacked time chart and the featured GEMMs' formulas."""
    path = site_paths.model_gpu_page(run.preset.name, run.gpu.name)
    tables = {
        "totals-calibrated": model_rows.totals_table(run, path, site.atlas),
        "totals": model_rows.totals_table(run, path),
        "gemms-calibrated": model_rows.gemm_table(run, True),
        "gemms": model_rows.gemm_table(run, False),
    }
    recipes = [
        {"name": r, "link": rel(recipe_result_page(run.gpu, Mode.TRAINING, r), path)}
        for r in run.calibrated.recipes
    ]
    experts = [g.instance.groups for g in run.calibrated.gemms if g.instance.groups > 1]
    out = page(
        path,
        "model_gpu.md.j2",
        list(tables.values()),
        run=run,
        preset=run.preset,
        tokens=units.count(run.tokens),
        gpu=run.gpu,
        tables=tables,
        calibrated=model_rows.headline(run.calibrated),
        torchao=model_rows.headline(run.torchao),
        recipes=recipes,
        grouped=_grouped_links(site, run, path),
        experts_per_device=sorted(set(experts)),
        exclusions=model_rows.exclusions(run.calibrated.gemms),
        capabilities=_capabilities(run.gpu),
        featured=_featured(site, run, path),
        calibration_data=site.atlas.has_calibration_data(run.gpu.name),
        gpu_link=rel(gpu_page(run.gpu), path),
        overview_link=rel(site_paths.model_page(run.preset.name), path),
        index_link=rel(site_paths.models_index(), path),
        equations_link=rel(site_paths.EQUATIONS_PAGE, path),
        methodology_link=rel(f"{GEN}/methodology.md", path),
    )
    out.charts = [time_chart(run, f"{posixpath.dirname(path)}/img/time.svg")]
    return out


def page_makers(site: SiteInput) -> Iterator[tuple[str, Callable[[], PageOutput], ModelRun | None]]:
    """Every page of the Models section in order, as (name, maker, the run of a model x
    GPU page, which is that GPU's alone): the build renders and caches them one by one."""
    models = site.atlas.models
    if models is None:
        return
    yield "models index", functools.partial(index, site, models), None
    for preset in models.presets:
        yield f"model {preset.name}", functools.partial(overview, site, models, preset.name), None
        for run in models.for_model(preset.name):
            name = f"model {preset.name} {run.gpu.name}"
            yield name, functools.partial(model_gpu, site, run), run


def render(site: SiteInput) -> PageOutput:
    """Every page of the Models section (none when the atlas carries no model runs)."""
    out = PageOutput()
    for _, make, _ in page_makers(site):
        out.add(make())
    return out
