"""How far each model's predictions are from published measurements.

For every measurement set (:mod:`roofline.measurements`) and point, predict the measured
quantity with torchao's model and with the calibrated model, and report the relative
error ``predicted / measured - 1`` per point, the mean and worst absolute error per set
and overall. A scored set (fit or holdout) fails when its calibrated mean error rises
above the threshold recorded for it; ``roofline validate`` exits non-zero then.
"""

from __future__ import annotations

import enum
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from roofline.analysis.harness import (
    cold_started,
    cold_symbol,
    side_kernel_times,
    side_parameter_symbols,
    starts_cold,
    streams_warm,
    warm_times,
)
from roofline.calibration.data import GLOBAL_KEYS, CalibrationData, load_calibration
from roofline.calibration.params import CalibratedParameters, calibration_for
from roofline.measurements import (
    MeasuredQuantity,
    MeasurementDatabase,
    MeasurementSet,
    Point,
    SetRole,
    TimedRegion,
    load_measurements,
)
from roofline.model.compiled import compile_model
from roofline.model.terms import LOWP_SIDE, Quantity
from roofline.recipes import Mode, get_recipe
from roofline.specs import GpuSpec, SpecDatabase, load_specs
from roofline.symbols import CALIBRATION_SYMBOLS, PHI_L2, T_COLD, T_COLD_CAST

#: The calibrated model's goal per role: the mean error a set should be within. Fixed in
#: advance (issue #18), never moved to fit a result; a set above it is shown as above it.
#: ``max_mean_error`` in the measurement file is something else: a regression guard for
#: CI, recorded after the last fit, that ``roofline validate`` fails on.
GOALS: dict[SetRole, float] = {SetRole.FIT: 0.10, SetRole.HOLDOUT: 0.15}
#: M x K x N from which a GEMM counts as large (4096^3 = 2**36).
LARGE_GEMM_MKN = 2**36
_NOT_A_LAYER = (TimedRegion.CAST_KERNEL, TimedRegion.END_TO_END)


def mean_abs_error(points: Iterable[PointResult], model: ModelKind) -> float:
    """Mean absolute relative error of ``model`` over ``points`` (nan when empty)."""
    errors = [abs(p.error(model)) for p in points]
    return statistics.fmean(errors) if errors else float("nan")


def worst_error(points: Iterable[PointResult], model: ModelKind) -> float:
    """The largest absolute error of ``model`` over ``points``, sign kept (nan when empty)."""
    errors = [p.error(model) for p in points]
    return max(errors, key=abs) if errors else float("nan")


class ModelKind(enum.StrEnum):
    """The two models every number is shown in."""

    TORCHAO = "torchao"
    CALIBRATED = "calibrated"


@dataclass(frozen=True)
class PointResult:
    """One measured point beside both models' predictions."""

    point: Point
    measured: float
    predicted: dict[ModelKind, float]

    def error(self, model: ModelKind) -> float:
        """Relative error of ``model``: predicted / measured - 1 (0.1 = 10% high)."""
        return self.predicted[model] / self.measured - 1


@dataclass(frozen=True)
class SetResult:
    """A measurement set's points and error summary."""

    set: MeasurementSet
    points: tuple[PointResult, ...]

    def mean_error(self, model: ModelKind) -> float:
        """Mean absolute relative error over the set's points."""
        return mean_abs_error(self.points, model)

    def worst_error(self, model: ModelKind) -> float:
        """The largest absolute relative error (sign kept) of the set."""
        return worst_error(self.points, model)

    @property
    def scored(self) -> bool:
        """True for fit and holdout sets (context sets are shown, not scored)."""
        return self.set.role is not SetRole.CONTEXT

    @property
    def goal(self) -> float | None:
        """The role's goal for the calibrated mean error (None for context sets)."""
        return GOALS.get(self.set.role)

    @property
    def meets_goal(self) -> bool | None:
        """The calibrated mean error is within the role's goal (None: not scored)."""
        goal = self.goal
        return None if goal is None else self.mean_error(ModelKind.CALIBRATED) <= goal

    @property
    def passed(self) -> bool:
        """The calibrated mean error is within the set's regression guard
        (``max_mean_error``; context sets pass)."""
        threshold = self.set.max_mean_error
        return threshold is None or self.mean_error(ModelKind.CALIBRATED) <= threshold


@dataclass(frozen=True)
class ValidationReport:
    """Every set's result, in file order."""

    sets: tuple[SetResult, ...]

    def mean_error(self, model: ModelKind, role: SetRole | None = None) -> float:
        """Mean absolute error over the points of the scored sets (of ``role`` if given)."""
        return mean_abs_error((p for r in self._scored(role) for p in r.points), model)

    def worst_error(self, model: ModelKind, role: SetRole | None = None) -> float:
        """The largest absolute error over the scored sets' points (sign kept)."""
        return worst_error((p for r in self._scored(role) for p in r.points), model)

    def large_training_holdout(self) -> tuple[PointResult, ...]:
        """Held-out training points of a whole layer (not a single cast kernel, not an
        end-to-end step) whose every GEMM is large (M K N >= 2**36, e.g. 4096^3): the
        measurements issue #11 asks the calibrated model to meet within 10% on average."""
        return tuple(
            point
            for result in self.sets
            if result.set.role is SetRole.HOLDOUT
            and result.set.mode is Mode.TRAINING
            and result.set.timed_region not in _NOT_A_LAYER
            for point in result.points
            if all(m * k * n >= LARGE_GEMM_MKN for m, k, n in point.point.shapes)
        )

    def failures(self) -> tuple[SetResult, ...]:
        """Scored sets whose calibrated mean error is above their threshold."""
        return tuple(r for r in self.sets if r.scored and not r.passed)

    def _scored(self, role: SetRole | None) -> Iterable[SetResult]:
        return (r for r in self.sets if r.scored and (role is None or r.set.role is role))


def predict_set(
    mset: MeasurementSet,
    specs: SpecDatabase,
    calibration: CalibrationData | None,
    params: CalibratedParameters | None = None,
) -> np.ndarray:
    """The model's prediction of every point of ``mset``: torchao's model when
    ``calibration`` is None, else the calibrated model with those parameters (``params``:
    the set's GPU's, already resolved from ``calibration``; a fit passes them to resolve
    each GPU once per evaluation, not once per set)."""
    gpu = specs[mset.gpu]
    recipe = get_recipe(mset.recipe, mset.mode)
    calibrated = calibration is not None
    grouped = mset.groups is not None
    compiled = compile_model(mset.mode, recipe, mset.fusion, calibrated, grouped)
    if calibrated and params is None:
        params = calibration_for(gpu, specs, calibration)
    owner = np.array([i for i, p in enumerate(mset.points) for _ in p.shapes])
    dims = np.array([s for p in mset.points for s in p.shapes], dtype=np.float64)
    groups = np.full(len(owner), float(mset.groups)) if grouped else None
    # A time_us set sums the terms it names: only those are evaluated.
    keys = mset.terms if mset.quantity is MeasuredQuantity.TIME_US else None
    times = compiled.term_times(gpu, dims[:, 0], dims[:, 1], dims[:, 2], params, groups, keys)
    if mset.side_kernels:
        times = {**times, **side_kernel_times(mset, gpu, params, dims, groups)}
    if calibrated and streams_warm(mset, gpu):
        times = warm_times(mset, compiled, gpu, params, dims, groups, times)
    if calibrated and starts_cold(mset):
        seconds = {s.spec_key: params.values[s.spec_key].value for s in (T_COLD, T_COLD_CAST)}
        times = cold_started(mset, times, seconds)
    count = len(mset.points)

    def total(keys: Iterable[str]) -> np.ndarray:
        summed = sum((times[key] for key in keys), np.zeros(len(owner)))
        return np.bincount(owner, weights=summed, minlength=count)

    def quantity(*wanted: Quantity) -> np.ndarray:
        return total(t.key for t in compiled.model.terms if t.quantity in wanted)

    if mset.quantity is MeasuredQuantity.TIME_US:
        side = tuple(f"side.{i}" for i in range(len(mset.side_kernels)))
        return total(mset.terms + side) * 1e6
    if mset.quantity is MeasuredQuantity.GEMM_SPEEDUP:
        return quantity(Quantity.BF16_GEMM) / quantity(Quantity.LOWP_GEMM)
    baseline = quantity(Quantity.BF16_GEMM, Quantity.BF16_OVERHEAD)
    if mset.terms:  # the low-precision terms the benchmark timed (e.g. a static cast)
        return baseline / total(mset.terms)
    return baseline / quantity(*LOWP_SIDE)


def set_parameter_keys(
    mset: MeasurementSet, gpu: GpuSpec, model_wide: bool = False
) -> frozenset[str]:
    """The per-GPU calibration parameters a prediction of ``mset`` depends on: those of
    the terms a ``time_us`` set names, else of every term of its model (with
    ``model_wide``, the model-wide ones, the fixed latencies, too, and the cold starts
    of a set timed after an L2 flush, as :func:`roofline.analysis.harness.cold_symbol`
    gives them to its kernels, and the warm cache's fraction
    :data:`roofline.symbols.PHI_L2` of a warm set on ``gpu``, its GPU, when the spec
    database gives that GPU a cache size)."""
    recipe = get_recipe(mset.recipe, mset.mode)
    model = compile_model(mset.mode, recipe, mset.fusion, True, mset.groups is not None).model
    terms = [
        t
        for t in model.terms
        if mset.quantity is not MeasuredQuantity.TIME_US or t.key in mset.terms
    ]
    used = set().union(*(t.expr.free_symbols for t in terms))
    used |= side_parameter_symbols(mset)
    if starts_cold(mset):
        keys = [t.key for t in terms] + [f"side.{i}" for i in range(len(mset.side_kernels))]
        used |= {cold_symbol(mset, k).symbol for k in keys}
    if streams_warm(mset, gpu):
        used.add(PHI_L2.symbol)
    return frozenset(
        hw.spec_key
        for hw in CALIBRATION_SYMBOLS
        if hw.symbol in used and (model_wide or hw.spec_key not in GLOBAL_KEYS)
    )


def validate_set(
    mset: MeasurementSet, specs: SpecDatabase, calibration: CalibrationData
) -> SetResult:
    """Both models' predictions for one set."""
    torchao = predict_set(mset, specs, None)
    calibrated = predict_set(mset, specs, calibration)
    points = tuple(
        PointResult(
            point,
            point.value,
            {ModelKind.TORCHAO: float(t), ModelKind.CALIBRATED: float(c)},
        )
        for point, t, c in zip(mset.points, torchao, calibrated, strict=True)
    )
    return SetResult(mset, points)


def validate(
    measurements: MeasurementDatabase | None = None,
    specs: SpecDatabase | None = None,
    calibration: CalibrationData | None = None,
) -> ValidationReport:
    """Every set of ``measurements`` (bundled by default) against both models."""
    specs = specs if specs is not None else load_specs()
    measurements = measurements if measurements is not None else load_measurements(specs=specs)
    calibration = calibration if calibration is not None else load_calibration()
    return ValidationReport(tuple(validate_set(s, specs, calibration) for s in measurements.sets))
