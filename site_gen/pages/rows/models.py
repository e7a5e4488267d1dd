"""The Models section's tables, from the runs of :mod:`site_gen.gather.models`.

Every number comes from :func:`roofline.analysis.policy.plan_model` (a :class:`ModelRun` holds
one plan per model); this module lays the numbers out as
:class:`~site_gen.context.Table` cells, with full-precision values for the exports.
Preset text (names, notes) comes from files users can edit: it only ever enters a page
as a plain cell or through :mod:`site_gen.markup.safe`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from roofline import units
from roofline.analysis.policy import BF16_NAME, GemmResult, ModelPlan, ModelTotal
from roofline.presets import LinearKind, ModelPreset
from roofline.publish import site_paths
from roofline.recipes import RECIPES, Mode
from site_gen.context import Table, gpu_page, recipe_result_page, rel
from site_gen.gather.dense import Atlas
from site_gen.gather.models import ModelAtlas, ModelRun, site_ep
from site_gen.markup import safe
from site_gen.pages.rows import speedup as rows

MODEL_NAMES = {True: "calibrated model", False: "torchao model"}
MIX = "best per-GEMM mix"
#: What the overview names a GPU's best recipe when no recipe is a candidate on it.
BF16_ONLY = "bf16 only"


def to_ms(seconds: float) -> float:
    """Seconds as milliseconds (the unit of every time of the section, exports included)."""
    return seconds * 1e3


def ms(seconds: float) -> str:
    """Seconds as milliseconds to four significant digits, whole from 1,000 on:
    ``1,058`` / ``304.2`` / ``1.581``."""
    value = to_ms(seconds)
    return units.magnitude(value)


def rounded_speedup(value: float) -> float:
    """A speedup as the page shows it (:func:`roofline.units.speedup`, two decimals): the
    exports carry the times in full, from which the exact ratio follows."""
    return round(value, 2)


def linear_weights(preset: ModelPreset) -> int:
    """Weights of every linear layer of the model (routed experts counted each)."""
    total = 0
    for block in preset.blocks:
        for gemm in block.gemms:
            copies = block.experts if gemm.kind is LinearKind.EXPERT and block.experts else 1
            total += gemm.K * gemm.N * gemm.count * block.layers * copies
    return total


def layers(preset: ModelPreset) -> str:
    """The layers of each block, as the file names them: ``3 dense_layers, 58 moe_layers,
    1 output``."""
    return ", ".join(f"{b.layers} {b.name}" for b in preset.blocks)


def routing(preset: ModelPreset) -> str:
    """``256 experts, top-8`` per MoE block (joined when blocks differ); dense: a dash."""
    parts = dict.fromkeys(f"{b.experts} experts, top-{b.top_k}" for b in preset.blocks if b.is_moe)
    return "; ".join(parts) or units.MISSING


# -- the index ---------------------------------------------------------------------------


def index_table(presets: Sequence[ModelPreset], page: str) -> Table:
    """Every preset: name (linking to its overview, which gives its id), kind, layers,
    routing, the ep the site uses, linear-layer weights and distinct GEMMs."""
    header = (
        "model",
        "type",
        "layers",
        "experts",
        "ep on these pages",
        "linear-layer weights (billions)",
        "distinct GEMMs",
    )
    table = Table(header, name="models", raw=[], align=("---",) * 4 + ("--:",) * 3)
    for p in presets:
        link = safe.link(p.display_name, rel(site_paths.model_page(p.name), page))
        gemms = sum(len(b.gemms) for b in p.blocks)
        weights = linear_weights(p)
        kind = "MoE" if p.is_moe else "dense"
        table.rows.append(
            (
                link,
                kind,
                layers(p),
                routing(p),
                str(site_ep(p)),
                units.significant(weights / 1e9, 4),
                str(gemms),
            )
        )
        table.raw.append(
            (p.display_name, kind, layers(p), routing(p), site_ep(p), weights / 1e9, gemms)
        )
    return table


def preset_table(preset: ModelPreset) -> Table:
    """The preset's linear layers as the file lists them, per block; the experts column
    only for a MoE model (notes apart: :func:`preset_notes`)."""
    moe = preset.is_moe
    header = ("block", "GEMM", "kind", "K", "N", "per layer", "layers") + (("experts",) * moe)
    table = Table(header, name="preset", raw=[], align=("---",) * 3 + ("--:",) * (4 + moe))
    for block in preset.blocks:
        for g in block.gemms:
            routed = g.kind is LinearKind.EXPERT
            experts = (f"{block.experts}, top-{block.top_k}" if routed else units.MISSING,) * moe
            cells = (
                block.name,
                g.name,
                g.kind.value,
                str(g.K),
                str(g.N),
                str(g.count),
                str(block.layers),
                *experts,
            )
            table.rows.append(cells)
            table.raw.append(
                (block.name, g.name, g.kind.value, g.K, g.N, g.count, block.layers, *experts)
            )
    return table


def preset_notes(preset: ModelPreset) -> list[dict[str, str]]:
    """``block.gemm`` and its note, for every GEMM of the preset that has one."""
    return [
        {"key": f"{b.name}.{g.name}", "note": g.note}
        for b in preset.blocks
        for g in b.gemms
        if g.note
    ]


# -- the overview across GPUs ------------------------------------------------------------


def best_text(plan: ModelPlan) -> tuple[str, str, str]:
    """(best single recipe, its speedup, the best mix's speedup) of a plan; bf16 only
    when no recipe is a candidate."""
    best = plan.best_single()
    if best is None:
        return (BF16_ONLY, units.speedup(1.0), units.speedup(1.0))
    return (best.recipe, units.speedup(best.speedup), units.speedup(plan.mix().speedup))


def overview_table(atlas: Atlas, runs: Sequence[ModelRun], page: str) -> Table:
    """Per GPU: the best single recipe and the best mix, in both models."""
    header = (
        "GPU",
        "best recipe (calibrated)",
        "speedup (calibrated)",
        "CV error band",
        "best mix (calibrated)",
        "best recipe (torchao)",
        "speedup (torchao)",
        "best mix (torchao)",
    )
    table = Table(
        header, name="gpus", raw=[], align=("---", "---", "--:", "--:", "--:", "---", "--:", "--:")
    )
    for run in runs:
        link = rel(site_paths.model_gpu_page(run.preset.name, run.gpu.name), page)
        recipe, speedup, mix = best_text(run.calibrated)
        band = _band(atlas, run, recipe)
        cells = (recipe, speedup, band, mix, *best_text(run.torchao))
        gpu = rows.gpu_cell(atlas, run.gpu.name, link)
        table.rows.append((gpu, *cells))
        calibrated = _raw_best(run.calibrated)
        table.raw.append((gpu.plain, *calibrated[:2], band, calibrated[2], *_raw_best(run.torchao)))
    return table


def _band(atlas: Atlas, run: ModelRun, recipe: str) -> str:
    """The cross-validated error band of a recipe's calibrated numbers on the run's GPU
    (a training step); — for bf16 and the best mix, which are no one recipe."""
    if recipe not in RECIPES:
        return units.MISSING
    return rows.band_text(rows.error_band(atlas, run.gpu.name, Mode.TRAINING, recipe))


def _raw_best(plan: ModelPlan) -> tuple[str, float, float]:
    best = plan.best_single()
    if best is None:
        return (BF16_ONLY, 1.0, 1.0)
    return (best.recipe, rounded_speedup(best.speedup), rounded_speedup(plan.mix().speedup))


# -- one model on one GPU ----------------------------------------------------------------


def gemm_table(run: ModelRun, calibrated: bool) -> Table:
    """Per GEMM of a step: shape, experts, count, bf16 time, the best recipe, its
    speedup, and its time split into forward and backward (milliseconds per step).

    The recipe name is not breakable here: the table scrolls sideways anyway, and rows
    of one line read better than names broken over two."""
    header = (
        "GEMM",
        "M",
        "K",
        "N",
        "G",
        "count",
        "bf16 ms",
        "best recipe",
        "speedup",
        "forward ms",
        "backward ms",
    )
    name = "gemms-calibrated" if calibrated else "gemms"
    table = Table(
        header, name=name, raw=[], align=("---",) + ("--:",) * 6 + ("---",) + ("--:",) * 3
    )
    for g in run.plan(calibrated).gemms:
        i, best = g.instance, g.times[g.best]
        bf16 = g.times[BF16_NAME].total_s
        table.rows.append(
            (
                i.key,
                str(i.M),
                str(i.K),
                str(i.N),
                str(i.groups),
                str(i.count),
                ms(bf16),
                g.best,
                units.speedup(g.speedup(g.best)),
                ms(best.forward_s),
                ms(best.backward_s),
            )
        )
        table.raw.append(
            (
                i.key,
                i.M,
                i.K,
                i.N,
                i.groups,
                i.count,
                to_ms(bf16),
                g.best,
                rounded_speedup(g.speedup(g.best)),
                to_ms(best.forward_s),
                to_ms(best.backward_s),
            )
        )
    return table


def _recipe_cell(run: ModelRun, recipe: str, page: str) -> safe.Md | str:
    if recipe in (BF16_NAME, MIX):
        return recipe
    target = rel(recipe_result_page(run.gpu, Mode.TRAINING, recipe), page)
    return safe.link(safe.breakable(recipe), target)


def totals(plan: ModelPlan) -> list[ModelTotal]:
    """bf16, every candidate recipe, then the best mix."""
    return [plan.baseline, *plan.singles(), plan.mix()]


def totals_table(run: ModelRun, page: str, atlas: Atlas | None = None) -> Table:
    """The whole model's linear layers per recipe (bf16 where it cannot run a GEMM) and
    for the best mix: forward, backward and total milliseconds per step, the speedup;
    with ``atlas``, the calibrated model's table with each recipe's cross-validated error
    band, else torchao's."""
    header = ("recipe", "forward ms", "backward ms", "total ms", "speedup", "GEMMs in bf16")
    if atlas is not None:
        header = (*header, "CV error band")
    name = "totals-calibrated" if atlas is not None else "totals"
    table = Table(header, name=name, raw=[], align=("---",) + ("--:",) * (len(header) - 1))
    for t in totals(run.plan(atlas is not None)):
        cells = (
            ms(t.time.forward_s),
            ms(t.time.backward_s),
            ms(t.time.total_s),
            units.speedup(t.speedup),
            str(len(t.fallbacks)),
        )
        raw = (
            t.recipe,
            to_ms(t.time.forward_s),
            to_ms(t.time.backward_s),
            to_ms(t.time.total_s),
            rounded_speedup(t.speedup),
            len(t.fallbacks),
        )
        band = () if atlas is None else (_band(atlas, run, t.recipe),)
        table.rows.append((_recipe_cell(run, t.recipe, page), *cells, *band))
        table.raw.append((*raw, *band))
    return table


@dataclass(frozen=True)
class Exclusion:
    """A recipe that cannot run some GEMMs, why, and which (it runs them in bf16)."""

    recipe: str
    reason: str
    gemms: tuple[str, ...]


def exclusions(gemms: Sequence[GemmResult]) -> list[Exclusion]:
    """Each (recipe, reason) once, with the GEMMs it applies to, in first-seen order."""
    found: dict[tuple[str, str], list[str]] = {}
    for g in gemms:
        for recipe, reason in g.excluded.items():
            found.setdefault((recipe, reason), []).append(g.instance.key)
    return [Exclusion(r, why, tuple(keys)) for (r, why), keys in found.items()]


def headline(plan: ModelPlan) -> dict[str, Any]:
    """The numbers a page quotes for one model: bf16 time, the best single recipe's name,
    time and speedup, the mix's time and speedup (None for the best without candidates)."""
    best, mix, base = plan.best_single(), plan.mix(), plan.baseline
    return {
        "bf16": ms(base.time.total_s),
        "best": None
        if best is None
        else {
            "recipe": best.recipe,
            "time": ms(best.time.total_s),
            "speedup": units.speedup(best.speedup),
            "fallbacks": len(best.fallbacks),
            "versus": units.versus_bf16(best.speedup),
        },
        "mix": {"time": ms(mix.time.total_s), "speedup": units.speedup(mix.speedup)},
    }


# -- navigation ----------------------------------------------------------------------------


def nav_section(models: ModelAtlas) -> list[Any]:
    """The Models section of ``nav.json``: the index, the format page, then each model's
    overview page (titles escaped: mkdocs prints them as they are). A model's page per GPU
    is linked from its overview, not listed (see site_gen/pages/nav.py)."""
    section: list[Any] = [site_paths.models_index(), {"Model preset files": "models-format.md"}]
    section += [
        {str(safe.md_text(preset.display_name)): site_paths.model_page(preset.name)}
        for preset in models.presets
    ]
    return section


def gpu_link(run: ModelRun, page: str) -> str:
    """Link from ``page`` to the run's GPU page."""
    return rel(gpu_page(run.gpu), page)
