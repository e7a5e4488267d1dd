"""Whole-model guidance: every linear GEMM of a model preset on one GPU, per recipe.

For a preset (:mod:`roofline.presets`), a GPU and a token count, each GEMM of one training
step (every layer's projections, the experts' grouped GEMMs, the output head) is evaluated
in bf16 and in every candidate recipe, in torchao's model or the calibrated one. From
those times come:

* per GEMM, the best recipe: the one with the least forward + backward time, bf16
  included (so small GEMMs stay in bf16 when casting costs more than it saves, torchao's
  practice for e.g. attention wk / wv);
* per recipe, the whole model's linear-layer time and speedup if every GEMM ran it; a
  GEMM the recipe cannot run (its shape breaks the recipe's divisibility, or the GPU has
  no kernel for it, e.g. no grouped kernel for expert GEMMs) runs in bf16 instead, and
  the total lists it;
* the best per-GEMM mix, each GEMM in its best recipe.

Every time is split into forward and backward (:class:`~roofline.recipes.Phase`). Times
are seconds per training step on one device: a GEMM's time times how often it runs
(:attr:`~roofline.presets.GemmInstance.count`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from roofline.calibration.params import CalibratedParameters
from roofline.capability import Capability, Support, classify
from roofline.errors import ShapeError
from roofline.evaluate import calibration_of, check_shapes, evaluate_terms, resolve_match
from roofline.model.build import build_model
from roofline.model.terms import LOWP_SIDE, Quantity
from roofline.presets import GemmInstance, ModelDatabase, ModelPreset, load_models
from roofline.recipes import Mode, Phase, Recipe, get_recipe, recipe_names
from roofline.specs import GpuSpec, SpecDatabase, VariantFallbackWarning

#: The name the bf16 baseline goes by among the recipes.
BF16_NAME = "bf16"
#: Supports a recipe must have on a GPU to be a candidate by default.
RUNNABLE = (Support.NATIVE,)
# The bf16 baseline's terms are the same in every recipe's model (bf16 GEMMs read no
# scales); they are taken from this one, which has no shape rule.
_BASELINE_RECIPE = "tensorwise"


@dataclass(frozen=True)
class StepTime:
    """Seconds per training step, forward and backward."""

    forward_s: float
    backward_s: float

    @property
    def total_s(self) -> float:
        """Forward plus backward."""
        return self.forward_s + self.backward_s

    def __add__(self, other: StepTime) -> StepTime:
        return StepTime(self.forward_s + other.forward_s, self.backward_s + other.backward_s)


ZERO = StepTime(0.0, 0.0)


@dataclass(frozen=True)
class GemmResult:
    """One GEMM of the model: its time per step in bf16 and in each recipe that runs it,
    and why each other recipe does not."""

    instance: GemmInstance
    times: dict[str, StepTime]  # recipe name (and "bf16") -> time per step
    excluded: dict[str, str]  # recipe name -> why it cannot run this GEMM

    @property
    def best(self) -> str:
        """The recipe with the least step time (bf16 when nothing beats it)."""
        return min(self.times, key=lambda name: (self.times[name].total_s, name != BF16_NAME))

    def time_in(self, recipe: str) -> StepTime:
        """This GEMM's time when the model runs ``recipe``: bf16 where it cannot."""
        return self.times.get(recipe, self.times[BF16_NAME])

    def speedup(self, recipe: str) -> float:
        """bf16 time over the time in ``recipe`` (1 where it cannot run)."""
        return self.times[BF16_NAME].total_s / self.time_in(recipe).total_s


@dataclass(frozen=True)
class ModelTotal:
    """The whole model's linear-layer time in one recipe (or the best mix)."""

    recipe: str
    time: StepTime
    baseline: StepTime
    fallbacks: tuple[str, ...] = ()  # GEMM keys that ran in bf16 instead

    @property
    def speedup(self) -> float:
        """bf16 step time over this one."""
        return self.baseline.total_s / self.time.total_s


@dataclass(frozen=True)
class ModelPlan:
    """A model preset on one GPU at one token count: every GEMM and every total."""

    model: ModelPreset
    gpu: GpuSpec
    tokens: int
    ep: int
    calibrated: bool
    fusion: bool
    recipes: tuple[str, ...]  # candidate recipes, registry order
    gemms: tuple[GemmResult, ...]

    @property
    def baseline(self) -> ModelTotal:
        """Every GEMM in bf16."""
        return self.total(BF16_NAME)

    def total(self, recipe: str) -> ModelTotal:
        """Every GEMM in ``recipe`` (bf16 where it cannot run)."""
        time = sum((g.time_in(recipe) for g in self.gemms), ZERO)
        base = sum((g.times[BF16_NAME] for g in self.gemms), ZERO)
        fallbacks = tuple(g.instance.key for g in self.gemms if recipe not in g.times)
        return ModelTotal(recipe, time, base, fallbacks if recipe != BF16_NAME else ())

    def singles(self) -> tuple[ModelTotal, ...]:
        """The total of each candidate recipe, in registry order."""
        return tuple(self.total(name) for name in self.recipes)

    def mix(self) -> ModelTotal:
        """Each GEMM in its best recipe."""
        time = sum((g.times[g.best] for g in self.gemms), ZERO)
        return ModelTotal("best per-GEMM mix", time, self.baseline.time)

    def best_single(self) -> ModelTotal | None:
        """The single recipe with the least total, or None without candidates."""
        singles = self.singles()
        return min(singles, key=lambda t: t.time.total_s) if singles else None


def resolve_model(
    model: ModelPreset | str, models: ModelDatabase | str | os.PathLike[str] | None = None
) -> ModelPreset:
    """The preset called ``model`` in ``models`` (a file path, a loaded database, or None
    for the bundled presets)."""
    if isinstance(model, ModelPreset):
        return model
    database = models if isinstance(models, ModelDatabase) else load_models(models)
    return database.get(model)


def candidate_recipes(
    gpu: GpuSpec, recipes: Sequence[str] | None = None, include: Iterable[Support] = RUNNABLE
) -> tuple[str, ...]:
    """Training recipes to try on ``gpu``: the given names (checked), or every recipe
    whose dense GEMMs have a support in ``include`` (native by default)."""
    if recipes is not None:
        return tuple(get_recipe(name, Mode.TRAINING).name for name in recipes)
    wanted = set(include)
    return tuple(
        name
        for name in recipe_names(Mode.TRAINING)
        if classify(gpu, get_recipe(name, Mode.TRAINING), Mode.TRAINING).support in wanted
    )


def plan_model(
    model: ModelPreset | str,
    gpu: str | GpuSpec,
    tokens: int,
    *,
    ep: int = 1,
    calibrated: bool = False,
    fusion: bool = False,
    recipes: Sequence[str] | None = None,
    include: Iterable[Support] = RUNNABLE,
    specs: str | os.PathLike[str] | SpecDatabase | None = None,
    models: ModelDatabase | str | os.PathLike[str] | None = None,
    calibration: CalibratedParameters | None = None,
) -> ModelPlan:
    """Evaluate every GEMM of ``model`` on ``gpu`` at ``tokens`` tokens per step (M =
    micro-batch x sequence length) with expert parallelism ``ep``, in bf16 and in each
    candidate training recipe (:func:`candidate_recipes`), in torchao's model or, with
    ``calibrated``, the calibrated one (``calibration``: the GPU's parameters from another
    calibration file than the bundled one; it implies ``calibrated``). A GPU name that
    matches only an entry's name warns with :class:`~roofline.specs.VariantFallbackWarning`."""
    preset = resolve_model(model, models)
    match = resolve_match(gpu, specs)
    if match.warning is not None:
        warnings.warn(match.warning, VariantFallbackWarning, stacklevel=2)
    spec = match.gpu
    names = candidate_recipes(spec, recipes, include)
    allowed = set(include)
    calibrated = calibrated or calibration is not None
    if calibrated and calibration is None:
        calibration = calibration_of(spec, specs)
    instances = preset.gemm_instances(tokens, ep)
    gemms = tuple(
        _gemm_result(spec, inst, names, allowed, calibration, fusion) for inst in instances
    )
    return ModelPlan(preset, spec, tokens, ep, calibrated, fusion, names, gemms)


def _gemm_result(
    spec: GpuSpec,
    instance: GemmInstance,
    names: Sequence[str],
    allowed: set[Support],
    calibration: CalibratedParameters | None,
    fusion: bool,
) -> GemmResult:
    grouped = instance.groups > 1
    base = get_recipe(_BASELINE_RECIPE, Mode.TRAINING)
    terms = _terms(spec, base, instance, calibration, fusion)
    times = {BF16_NAME: _phase_time(base, terms, grouped, fusion, calibration, lowp=False)}
    excluded: dict[str, str] = {}
    for name in names:
        recipe = get_recipe(name, Mode.TRAINING)
        reason = _exclusion(spec, recipe, instance, grouped, allowed)
        if reason:
            excluded[name] = reason
            continue
        terms = _terms(spec, recipe, instance, calibration, fusion)
        times[name] = _phase_time(recipe, terms, grouped, fusion, calibration, lowp=True)
    scaled = {name: _scaled(t, instance.count) for name, t in times.items()}
    return GemmResult(instance, scaled, excluded)


def _exclusion(
    spec: GpuSpec, recipe: Recipe, instance: GemmInstance, grouped: bool, allowed: set[Support]
) -> str:
    """Why ``recipe`` cannot run this GEMM on ``spec`` ("" when it can)."""
    verdict: Capability = classify(spec, recipe, Mode.TRAINING, grouped)
    if verdict.support not in allowed:
        return f"{verdict.support}: {verdict.reason}"
    try:
        check_shapes(recipe, instance.M, instance.K, instance.N)
    except ShapeError as error:
        return str(error)
    return ""


def _terms(
    spec: GpuSpec,
    recipe: Recipe,
    instance: GemmInstance,
    calibration: CalibratedParameters | None,
    fusion: bool,
) -> dict[str, float]:
    """Seconds per term of one run of this GEMM (dense, or grouped over its experts)."""
    groups = instance.groups if instance.groups > 1 else None
    dims = (instance.M, instance.K, instance.N)
    times = evaluate_terms(
        spec, Mode.TRAINING, recipe, *dims, fusion=fusion, calibration=calibration, groups=groups
    )
    return {key: float(np.asarray(value)) for key, value in times.items()}


def _phase_time(
    recipe: Recipe,
    times: dict[str, float],
    grouped: bool,
    fusion: bool,
    calibration: CalibratedParameters | None,
    lowp: bool,
) -> StepTime:
    """The recipe's (``lowp``) or the bf16 baseline's time, split by phase."""
    model = build_model(
        Mode.TRAINING, recipe, fusion, calibrated=calibration is not None, grouped=grouped
    )
    wanted = LOWP_SIDE if lowp else (Quantity.BF16_GEMM,)
    forward = backward = 0.0
    for term in model.terms:
        if term.quantity in wanted:
            if term.phase is Phase.FORWARD:
                forward += times[term.key]
            else:
                backward += times[term.key]
    return StepTime(forward, backward)


def _scaled(time: StepTime, count: int) -> StepTime:
    return StepTime(time.forward_s * count, time.backward_s * count)
