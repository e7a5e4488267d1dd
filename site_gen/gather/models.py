"""Stage 1 for the Models section: every model preset on every GPU, in both models.

For each preset of the bundled models file (:func:`roofline.presets.load_models`) and
each GPU of the build, :func:`roofline.analysis.policy.plan_model` prices one training step's
linear layers at the site's token count (:data:`site_gen.config.SITE_TOKENS`) and expert parallelism
(:func:`site_ep`), once in torchao's model and once in the calibrated one. The formulas
of the largest dense GEMM and of the largest grouped (expert) GEMM, for the recipe the
calibrated model picks for each (:func:`featured_gemms`), are printed here by
:mod:`roofline.publish.latex`, so that the build cache keeps them with the numbers. Nothing here
prints or writes; the pages are :mod:`site_gen.pages.models`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from roofline.analysis.policy import BF16_NAME, GemmResult, ModelPlan, plan_model
from roofline.calibration.params import CalibratedParameters
from roofline.datafiles.core import model_gpus_problem
from roofline.errors import RooflineError
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.presets import ModelDatabase, ModelPreset, load_models
from roofline.publish import cite, site_paths
from roofline.publish.latex import instantiated
from roofline.recipes import Mode
from roofline.specs import GpuSpec, SpecDatabase
from site_gen.cache import BuildCache, digest
from site_gen.config import SITE_EP, SITE_TOKENS
from site_gen.gather import cached, code_digest, gather_key, model_pair
from site_gen.markup.formulas import Formula, instantiated_formula, symbolic_formulas

#: The pages' mode: a training step (forward and backward).
MODE = Mode.TRAINING


def site_ep(preset: ModelPreset) -> int:
    """The expert parallelism the site prices ``preset`` at (:data:`site_gen.config.SITE_EP`,
    else 1); 1 when the named one does not divide the preset's experts."""
    ep = SITE_EP.get(preset.name, 1)
    experts = [b.experts for b in preset.blocks if b.experts is not None]
    return ep if experts and all(e % ep == 0 for e in experts) else 1


@dataclass(frozen=True)
class FeaturedGemm:
    """A GEMM whose formulas a page shows (:func:`featured_gemms`): the recipe the
    calibrated model picks for it, and that recipe's formulas with the GPU's figures."""

    key: str
    recipe: str  # "bf16" when nothing beats it
    grouped: bool
    structured: Formula | None  # the speedup in terms of the totals (None for bf16)
    formulas: tuple[Formula, ...]  # totals, then the speedup (torchao's model)


@dataclass(frozen=True)
class ModelRun:
    """One preset on one GPU at the site's tokens and ep, in both models."""

    preset: ModelPreset
    gpu: GpuSpec
    tokens: int
    ep: int
    torchao: ModelPlan
    calibrated: ModelPlan
    featured: tuple[FeaturedGemm, ...]  # the largest dense GEMM, then the largest grouped

    def plan(self, calibrated: bool) -> ModelPlan:
        """The plan of the calibrated model or of torchao's."""
        return self.calibrated if calibrated else self.torchao


@dataclass
class ModelAtlas:
    """Every run of the build: (preset name, GPU name) -> :class:`ModelRun`."""

    presets: tuple[ModelPreset, ...]
    gpus: tuple[GpuSpec, ...]
    runs: dict[tuple[str, str], ModelRun]
    tokens: int = SITE_TOKENS

    def run(self, model: str, gpu: str) -> ModelRun:
        """The run of one preset on one GPU."""
        return self.runs[(model, gpu)]

    def for_model(self, model: str) -> list[ModelRun]:
        """Every GPU's run of one preset, in spec-file order."""
        return [self.runs[(model, gpu.name)] for gpu in self.gpus]


def featured_gemms(plan: ModelPlan) -> list[GemmResult]:
    """The dense GEMM with the most bf16 time per step, then (in a MoE model) the grouped
    GEMM with the most: the first of equals, in file order."""
    out = []
    for grouped in (False, True):
        gemms = [g for g in plan.gemms if (g.instance.groups > 1) is grouped]
        if gemms:
            out.append(max(gemms, key=lambda g: g.times[BF16_NAME].total_s))
    return out


def _grouped_formula(gpu: GpuSpec, recipe: str, quantity: Quantity, page: str) -> Formula:
    """One total of the grouped model with ``gpu``'s figures, cited from ``page``."""
    model = build_model(MODE, recipe, grouped=True)
    anchor = cite.formula_id(MODE, recipe, f"grouped-{quantity.value}", gpu=gpu.name)
    caption = f"{cite.instantiated_caption(gpu.name, quantity)}, grouped GEMMs of G experts"
    url = f"{cite.site_url()}{site_paths.url_path(page)}#{anchor}"
    latex = instantiated(model.total(quantity), gpu)
    return Formula(anchor, caption, cite.quantity_lhs(quantity), latex, url)


def _featured(plan: ModelPlan, gemm: GemmResult) -> FeaturedGemm:
    """One featured GEMM of ``plan`` and its best recipe's formulas (torchao's model)."""
    grouped = gemm.instance.groups > 1
    recipe = gemm.best
    gpu = plan.gpu
    page = site_paths.model_gpu_page(plan.model.name, gpu.name)
    if recipe == BF16_NAME:
        # The bf16 baseline is the same in every recipe's model; tensorwise has no shape rule.
        base = "tensorwise"
        quantity = Quantity.BF16_GEMM
        formula = (
            _grouped_formula(gpu, base, quantity, page)
            if grouped
            else instantiated_formula(gpu, MODE, base, quantity)
        )
        return FeaturedGemm(gemm.instance.key, recipe, grouped, None, (formula,))
    quantities = build_model(MODE, recipe, grouped=grouped).quantities()
    if grouped:
        totals = [_grouped_formula(gpu, recipe, q, page) for q in quantities]
    else:
        totals = [instantiated_formula(gpu, MODE, recipe, q) for q in quantities]
    structured = symbolic_formulas(MODE, recipe)[0]
    # Totals first, the (wide) speedup last, as the GPU x recipe pages show them.
    return FeaturedGemm(gemm.instance.key, recipe, grouped, structured, (*totals[1:], totals[0]))


def _run_key(preset: ModelPreset, gpu: GpuSpec, ep: int, calibration_key: str) -> str:
    # This module and the formula records it stores.
    return gather_key(
        "model-run",
        code_digest("gather/models.py", "markup/formulas.py"),
        gpu,
        calibration_key,
        digest(dataclasses.asdict(preset)),
        SITE_TOKENS,
        ep,
        cite.site_url(),
    )


def _run(
    preset: ModelPreset,
    gpu: GpuSpec,
    specs: SpecDatabase,
    ep: int,
    calibration: CalibratedParameters,
) -> ModelRun:
    torchao, calibrated = model_pair(
        lambda c: plan_model(preset, gpu, SITE_TOKENS, ep=ep, specs=specs, calibration=c),
        calibration,
    )
    featured = tuple(_featured(calibrated, g) for g in featured_gemms(calibrated))
    return ModelRun(preset, gpu, SITE_TOKENS, ep, torchao, calibrated, featured)


def check_model_gpus(models: ModelDatabase, specs: SpecDatabase) -> None:
    """RooflineError when presets x GPUs exceed :data:`roofline.datafiles.core.MAX_MODEL_GPUS`:
    neither file is too big alone, their product is (each pair is a page and two plans)."""
    too_many = model_gpus_problem(len(models), len(specs))
    if too_many:
        raise RooflineError(f"{models.origin} with {specs.origin}: {too_many}")


def gather_models(
    specs: SpecDatabase,
    calibrations: Mapping[str, CalibratedParameters],
    calibration_keys: Mapping[str, str],
    cache: BuildCache | None = None,
    models: ModelDatabase | None = None,
    gpus: Sequence[GpuSpec] | None = None,
) -> ModelAtlas:
    """Plan every preset of ``models`` (None: the bundled file) on every GPU of ``gpus``
    (None: of ``specs``) in both models (``calibrations``: each GPU's calibrated
    parameters), reusing cached runs. ``calibration_keys`` (GPU name -> digest of its
    calibrated parameters) key the cache: those parameters depend on other GPUs of the
    database too."""
    cache = cache or BuildCache(enabled=False)
    database = models if models is not None else load_models()
    check_model_gpus(database, specs)
    runs: dict[tuple[str, str], ModelRun] = {}
    gpus = tuple(gpus if gpus is not None else specs.values())
    for preset in database:
        ep = site_ep(preset)
        for gpu in gpus:
            key = _run_key(preset, gpu, ep, calibration_keys.get(gpu.name, ""))
            runs[(preset.name, gpu.name)] = cached(
                cache,
                "model-runs",
                key,
                lambda preset=preset, gpu=gpu, ep=ep: _run(
                    preset, gpu, specs, ep, calibrations[gpu.name]
                ),
            )
    return ModelAtlas(tuple(database), gpus, runs)
