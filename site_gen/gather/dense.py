"""Stage 1: evaluate every GPU x mode x recipe x fusion over the site's grids, once per model.

Each combination is one vectorized call over the concatenation of every point any page
needs (heatmap grid, curves, pow2, llama, canonical shape); the results are sliced back
into typed records. Both models are evaluated: torchao's (:attr:`Atlas.results`) and the
calibrated one (:attr:`Atlas.calibrated_results`), whose records also carry the spread of
their headline speedups when the GPU's parameters are assumed
(:func:`roofline.analysis.guidance.calibration_corners`). Nothing here prints or writes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from roofline.analysis import guidance
from roofline.calibration.params import CalibratedParameters, calibration_for
from roofline.calibration.stack import ParameterStack
from roofline.capability import Capability, Support, classify
from roofline.evaluate import evaluate_columns, evaluate_terms
from roofline.measurements import MeasurementDatabase
from roofline.recipes import RECIPE_LIST, Mode, Recipe
from roofline.shapes import Shape, llama, pow2
from roofline.specs import GpuSpec, SpecDatabase
from site_gen import config
from site_gen.cache import BuildCache
from site_gen.gather import cached, calibration_digest, code_digest, gather_key, model_pair
from site_gen.gather.grouped import GroupedResult, gather_grouped
from site_gen.gather.models import ModelAtlas, gather_models
from site_gen.gather.validation import ValidationData, gather_validation
from site_gen.inputs import ModelInputs, bundled_inputs

Columns = dict[str, np.ndarray]
#: Headline numbers whose spread under assumed parameters is computed (RecipeResult.spread).
SPREAD_KEYS: tuple[str, ...] = ("canonical", "canonical_fused", "llama", "break_even")


@dataclass(frozen=True)
class ShapeSet:
    """A named list of shapes evaluated for tables."""

    name: str
    shapes: tuple[Shape, ...]


def table_sets() -> tuple[ShapeSet, ...]:
    """The shape sets every GPU x recipe page tabulates."""
    canonical = Shape(config.CANONICAL_M, config.CANONICAL_KN, config.CANONICAL_KN, "canonical")
    return (
        ShapeSet("canonical", (canonical,)),
        ShapeSet("llama", tuple(llama())),
        ShapeSet("pow2", tuple(pow2())),
    )


@dataclass
class RecipeResult:
    """Everything the site shows for one GPU x mode x recipe."""

    gpu: GpuSpec
    mode: Mode
    recipe: Recipe
    capability: Capability
    heat: np.ndarray | None = None  # speedup, shape (len(HEAT_KN), len(HEAT_M)), unfused
    curves: dict[int, np.ndarray] = field(default_factory=dict)  # K=N -> speedup over CURVE_M
    curves_fused: dict[int, np.ndarray] = field(default_factory=dict)
    tables: dict[tuple[str, bool], Columns] = field(default_factory=dict)  # (set, fusion)
    term_times: dict[str, np.ndarray] = field(default_factory=dict)  # over BREAKDOWN_SHAPES
    calibrated: bool = False  # the model: torchao's (False) or the calibrated one
    #: Calibrated results of a GPU with assumed parameters: SPREAD_KEYS -> (lowest, highest)
    #: value over the corners of the assumed ranges; break-even M may be None or -inf.
    spread: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    #: On a calibrated result: torchao's result of the same combination (shown beside it).
    reference: RecipeResult | None = field(default=None, repr=False, compare=False)

    @property
    def torchao(self) -> RecipeResult:
        """torchao's result of this combination (itself when it is torchao's)."""
        return self.reference if self.reference is not None else self

    @property
    def computable(self) -> bool:
        """False when the GPU lacks a format the formulas need."""
        return self.capability.support is not Support.IMPOSSIBLE

    @property
    def native(self) -> bool:
        """True when the hardware runs the recipe's format."""
        return self.capability.support is Support.NATIVE

    def table(self, name: str, fusion: bool = False) -> Columns:
        """The columns of shape set ``name``."""
        return self.tables[(name, fusion)]

    def speedup_at(self, name: str, fusion: bool = False) -> np.ndarray:
        """Speedups of shape set ``name``."""
        return self.table(name, fusion)["r_fp8_gemm_and_ovhd_spdp"]

    def aggregate_speedup(self, name: str, fusion: bool = False) -> float:
        """Summed bf16 time over summed low-precision time across a shape set
        (:func:`roofline.analysis.guidance.aggregate_speedup`)."""
        return guidance.aggregate_speedup(self.table(name, fusion))

    def break_even(self, kn: int, fusion: bool = False) -> float | None:
        """Break-even M at K = N = ``kn``
        (:func:`roofline.analysis.guidance.break_even_from_curve`)."""
        curve = (self.curves_fused if fusion else self.curves)[kn]
        return guidance.break_even_from_curve(curve, config.CURVE_M)

    @property
    def canonical_speedup(self) -> float:
        """The speedup at the canonical shape (fusion off)."""
        return float(self.speedup_at("canonical")[0])


@dataclass
class Atlas:
    """The gathered results: the spec database and one RecipeResult per combination and
    model (torchao's in ``results``, the calibrated one in ``calibrated_results``)."""

    specs: SpecDatabase
    results: dict[tuple[str, Mode, str], RecipeResult]
    calibrated_results: dict[tuple[str, Mode, str], RecipeResult] = field(default_factory=dict)
    #: GPU name -> its calibrated parameters (resolved against ``specs``).
    calibrations: dict[str, CalibratedParameters] = field(default_factory=dict)
    #: Grouped (MoE) layers per GPU x mode x recipe, calibrated results with torchao's as
    #: their reference (:mod:`site_gen.gather.grouped`).
    grouped: dict[tuple[str, Mode, str], GroupedResult] = field(default_factory=dict)
    #: Every model preset on every GPU, both models (:mod:`site_gen.gather.models`).
    models: ModelAtlas | None = None
    #: The calibration file and measurement sets of the build (:mod:`site_gen.inputs`).
    inputs: ModelInputs = field(default_factory=bundled_inputs)
    #: The measurement sets the site publishes (:meth:`ModelInputs.published`).
    measurements: MeasurementDatabase | None = None
    #: The Validation page's sets, report and error bands (:mod:`site_gen.gather.validation`).
    validation: ValidationData | None = None

    @property
    def gpus(self) -> list[GpuSpec]:
        """GPUs in spec-file order."""
        return list(self.specs.values())

    def recipes(self, mode: Mode) -> list[Recipe]:
        """Recipes modelled in ``mode``, in registry order."""
        return [r for r in RECIPE_LIST if mode in r.plans]

    def get(self, gpu: str, mode: Mode, recipe: str, calibrated: bool = False) -> RecipeResult:
        """The result for one combination, of torchao's model or the calibrated one."""
        results = self.calibrated_results if calibrated else self.results
        return results[(gpu, mode, recipe)]

    def for_gpu(self, gpu: str, mode: Mode, calibrated: bool = False) -> list[RecipeResult]:
        """All recipes of ``mode`` on ``gpu``."""
        return [self.get(gpu, mode, r.name, calibrated) for r in self.recipes(mode)]

    def twin(self, result: RecipeResult) -> RecipeResult:
        """The same combination in the other model (torchao's for a calibrated result)."""
        key = (result.gpu.name, result.mode, result.recipe.name)
        return (self.results if result.calibrated else self.calibrated_results)[key]

    def calibration(self, gpu: str) -> CalibratedParameters:
        """The calibrated parameters of ``gpu``."""
        return self.calibrations[gpu]

    def published(self) -> MeasurementDatabase:
        """The measurement sets the site publishes: gathered by :func:`gather`, or loaded
        now for an atlas made without it (a page rendered alone in a test)."""
        return self.measurements if self.measurements is not None else self.inputs.published()

    def validated(self) -> ValidationData:
        """The Validation page's data: gathered by :func:`gather`, or gathered now for an
        atlas made without it (a page rendered alone in a test)."""
        if self.validation is not None:
            return self.validation
        return gather_validation(self.specs, self.inputs)

    def has_calibration_data(self, gpu: str) -> bool:
        """Whether ``gpu``'s efficiencies come from measurements
        (:func:`roofline.analysis.guidance.has_calibration_data`)."""
        return guidance.has_calibration_data(self.calibrations[gpu])


def _points(sets: tuple[ShapeSet, ...]) -> tuple[np.ndarray, np.ndarray, list[slice]]:
    """All (M, K=N or K, N) points of one call and the slices that cut them apart."""
    heat_m, heat_kn = np.meshgrid(config.HEAT_M, config.HEAT_KN)
    blocks_m = [heat_m.ravel()]
    blocks_k = [heat_kn.ravel()]
    blocks_n = [heat_kn.ravel()]
    for kn in config.BREAK_EVEN_KN:
        blocks_m.append(config.CURVE_M)
        blocks_k.append(np.full_like(config.CURVE_M, kn))
        blocks_n.append(np.full_like(config.CURVE_M, kn))
    for shape_set in sets:
        blocks_m.append(np.array([s.M for s in shape_set.shapes], dtype=float))
        blocks_k.append(np.array([s.K for s in shape_set.shapes], dtype=float))
        blocks_n.append(np.array([s.N for s in shape_set.shapes], dtype=float))
    slices, start = [], 0
    for block in blocks_m:
        slices.append(slice(start, start + len(block)))
        start += len(block)
    m = np.concatenate(blocks_m)
    return m, (np.concatenate(blocks_k), np.concatenate(blocks_n)), slices


def _cut(columns: Columns, part: slice) -> Columns:
    return {k: v[part] for k, v in columns.items()}


def gather_one(
    gpu: GpuSpec, mode: Mode, recipe: Recipe, calibration: CalibratedParameters | None = None
) -> RecipeResult:
    """Evaluate one GPU x mode x recipe (both fusion settings); with ``calibration``, in
    the calibrated model (and the spread under its assumed parameters)."""
    result = RecipeResult(
        gpu, mode, recipe, classify(gpu, recipe, mode), calibrated=calibration is not None
    )
    if not result.computable:
        return result
    sets = table_sets()
    m, (k, n), slices = _points(sets)
    n_curves = len(config.BREAK_EVEN_KN)
    for fusion in config.FUSIONS:
        cols = evaluate_columns(gpu, mode, recipe, m, k, n, fusion=fusion, calibration=calibration)
        speedup = cols["r_fp8_gemm_and_ovhd_spdp"]
        curves = {kn: speedup[slices[1 + i]] for i, kn in enumerate(config.BREAK_EVEN_KN)}
        if fusion:
            result.curves_fused = curves
        else:
            result.heat = speedup[slices[0]].reshape(len(config.HEAT_KN), len(config.HEAT_M))
            result.curves = curves
        for i, shape_set in enumerate(sets):
            result.tables[(shape_set.name, fusion)] = _cut(cols, slices[1 + n_curves + i])
    bm, bk, bn = (np.array(v, dtype=float) for v in zip(*config.BREAKDOWN_SHAPES, strict=True))
    result.term_times = evaluate_terms(gpu, mode, recipe, bm, bk, bn, calibration=calibration)
    if calibration is not None:
        result.spread = _spread(gpu, mode, recipe, calibration)
    return result


def _headlines(
    gpu: GpuSpec, mode: Mode, recipe: Recipe, calibrations: Sequence[CalibratedParameters]
) -> list[dict[str, float | None]]:
    """The SPREAD_KEYS numbers of one combination with each of ``calibrations``: one
    stacked call per fusion setting (canonical, the llama shapes, the curve at the
    canonical K = N), a row per calibration (:class:`ParameterStack`)."""
    shapes = [
        (config.CANONICAL_M, config.CANONICAL_KN, config.CANONICAL_KN),
        *((s.M, s.K, s.N) for s in llama()),
    ]
    kn = config.CANONICAL_KN
    m = np.concatenate([[s[0] for s in shapes], config.CURVE_M])
    k = np.concatenate([[s[1] for s in shapes], np.full_like(config.CURVE_M, kn)])
    n = np.concatenate([[s[2] for s in shapes], np.full_like(config.CURVE_M, kn)])
    stack = ParameterStack(calibrations)
    cols = evaluate_columns(gpu, mode, recipe, m, k, n, calibration=stack)
    fused = evaluate_columns(
        gpu, mode, recipe, m[:1], k[:1], n[:1], fusion=True, calibration=stack
    )[guidance.SPEEDUP]
    runs = []
    for row in range(len(stack)):
        one = {name: values[row] if values.ndim == 2 else values for name, values in cols.items()}
        speedup = one[guidance.SPEEDUP]
        runs.append(
            {
                "canonical": float(speedup[0]),
                "canonical_fused": float(fused[row][0]),
                "llama": guidance.aggregate_speedup(one, slice(1, len(shapes))),
                "break_even": guidance.break_even_from_curve(
                    speedup[len(shapes) :], config.CURVE_M
                ),
            }
        )
    return runs


def _extent(values: list[float | None]) -> tuple[float | None, float | None]:
    """Lowest and highest of values where None means +inf (a break-even M of "never")."""
    finite = [np.inf if v is None else v for v in values]
    low, high = min(finite), max(finite)
    return (None if low == np.inf else low), (None if high == np.inf else high)


def _spread(
    gpu: GpuSpec, mode: Mode, recipe: Recipe, calibration: CalibratedParameters
) -> dict[str, tuple[float | None, float | None]]:
    """SPREAD_KEYS -> (lowest, highest) value over the nominal parameters and every corner
    of :func:`roofline.analysis.guidance.calibration_corners`; empty when there is no corner."""
    corners = guidance.calibration_corners(calibration)
    if not corners:
        return {}
    runs = _headlines(gpu, mode, recipe, (calibration, *corners))
    return {key: _extent([run[key] for run in runs]) for key in SPREAD_KEYS}


_CACHED_FIELDS = ("heat", "curves", "curves_fused", "tables", "term_times", "spread")


def _gathered(
    gpu: GpuSpec,
    mode: Mode,
    recipe: Recipe,
    cache: BuildCache,
    calibration: CalibratedParameters | None,
    calibration_key: str,
) -> RecipeResult:
    """One combination in one model, from the cache or evaluated (and then cached);
    ``calibration_key``: :func:`calibration_digest` of ``calibration``."""
    # The grids and what is evaluated on them live in this module and config.
    key = gather_key(
        "evaluation",
        code_digest("gather/dense.py", "config.py"),
        gpu,
        calibration_key,
        mode.value,
        recipe.name,
    )
    return cached(
        cache,
        "evaluations",
        key,
        lambda: gather_one(gpu, mode, recipe, calibration),
        stored=lambda result: {f: getattr(result, f) for f in _CACHED_FIELDS},
        restored=lambda fields: RecipeResult(
            gpu,
            mode,
            recipe,
            classify(gpu, recipe, mode),
            calibrated=calibration is not None,
            **fields,
        ),
    )


def gather(
    specs: SpecDatabase,
    cache: BuildCache | None = None,
    inputs: ModelInputs | None = None,
    only: Collection[str] | None = None,
    validation: ValidationData | None = None,
) -> Atlas:
    """Evaluate every GPU x mode x recipe x fusion of ``specs`` in both models, and their
    grouped layers (:mod:`site_gen.gather.grouped`) and every model preset on every GPU
    (:mod:`site_gen.gather.models`), reusing cached results; the calibrated model's
    parameters come from ``inputs`` (None: the bundled calibration file). The published
    measurement sets and the Validation page's data (:mod:`site_gen.gather.validation`)
    are gathered here too, so no page reads a file or evaluates a model.

    ``only`` (GPU names): evaluate just those GPUs (their calibrations still read the whole
    database) and skip the database-wide parts; :func:`site_gen.pool.warm` runs one such
    share per worker to fill ``cache``, from which the whole gather then reads.
    ``validation``: the Validation page's data when it was gathered already (on the
    pool, beside the evaluations)."""
    cache = cache or BuildCache(enabled=False)
    inputs = inputs if inputs is not None else bundled_inputs()
    atlas = Atlas(specs, {}, inputs=inputs)
    gpus = [g for g in specs.values() if only is None or g.name in only]
    keys: dict[str, str] = {}
    for gpu in gpus:
        calibration = calibration_for(gpu, specs, inputs.calibration)
        atlas.calibrations[gpu.name] = calibration
        keys[gpu.name] = calibration_digest(calibration)
        for mode in config.MODES:
            for recipe in RECIPE_LIST:
                if mode not in recipe.plans:
                    continue
                key = (gpu.name, mode, recipe.name)
                torchao, calibrated = model_pair(
                    lambda c, gpu=gpu, mode=mode, recipe=recipe: _gathered(
                        gpu, mode, recipe, cache, c, "" if c is None else keys[gpu.name]
                    ),
                    calibration,
                )
                atlas.results[key] = torchao
                calibrated.reference = torchao
                atlas.calibrated_results[key] = calibrated
    atlas.grouped = gather_grouped(specs, atlas.calibrations, keys, cache, gpus)
    atlas.models = gather_models(specs, atlas.calibrations, keys, cache, gpus=gpus)
    if only is not None:
        return atlas
    atlas.measurements = inputs.published()
    atlas.validation = validation if validation is not None else gather_validation(specs, inputs)
    return atlas
