"""Cross-validation by source: how the calibrated model does on data it never saw.

A *source* is one public document, pull request or benchmark table (the measurement
set's source URL, fragment dropped): sets that share one leave together, because numbers
from one table share a harness, a software stack and often a GPU, so a model fitted on
one of them is not blind to the others.

For every source that holds a scored set, the calibration is refitted on the fit sets of
every *other* source (:func:`roofline.analysis.fit.fit_on`); a stored parameter that
only the left-out source informed is dropped, so that GPU falls back to its family or
global value as a GPU without data would, and so does one the refit's data leave
undetermined (:func:`_refit`). The left-out source's scored sets (fit and
holdout alike) are then predicted with that refit. The mean error over those predictions
is the honest estimate of the error on a new source: it is what the Validation page and
``roofline validate --cv source`` lead with.

The refits need scipy (the ``fit`` extra).
"""

from __future__ import annotations

import multiprocessing
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit, urlunsplit

from roofline.analysis.fit import (
    ParameterId,
    fit_on,
    free_parameters,
    gpu_fit_start,
    with_values,
)
from roofline.analysis.validation import (
    ModelKind,
    PointResult,
    SetResult,
    ValidationReport,
    mean_abs_error,
    predict_set,
    validate_set,
)
from roofline.calibration.data import CalibrationData, Entry, GpuCv
from roofline.measurements import MeasurementDatabase, MeasurementSet, Point, SetRole
from roofline.processes import can_fork, ignore_sigint
from roofline.specs import SpecDatabase

#: The scored sets of at least this share of the sources (rounded up) must be held out,
#: chosen before fitting (issue #18); ``tests/test_crossval.py`` checks the bundled file.
MIN_HELD_OUT_SOURCE_SHARE = 1 / 3


def source_key(mset: MeasurementSet) -> str:
    """The source a set belongs to: its source URL without a fragment or query."""
    parts = urlsplit(mset.source.url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def sources(measurements: Iterable[MeasurementSet]) -> dict[str, tuple[MeasurementSet, ...]]:
    """Source -> its sets, in file order (sources in order of first appearance)."""
    grouped: dict[str, list[MeasurementSet]] = {}
    for mset in measurements:
        grouped.setdefault(source_key(mset), []).append(mset)
    return {key: tuple(sets) for key, sets in grouped.items()}


def without_sets(data: CalibrationData, left_out: set[str]) -> CalibrationData:
    """``data`` as if the sets ``left_out`` did not exist: each entry forgets them, and an
    entry that rested on them alone is dropped (its parameter falls back)."""

    def keep(entries: Mapping[str, Entry]) -> dict[str, Entry]:
        kept: dict[str, Entry] = {}
        for key, entry in entries.items():
            remaining = tuple(s for s in entry.sets if s not in left_out)
            if remaining:
                kept[key] = replace(entry, sets=remaining)
        return kept

    gpus = {name: keep(entries) for name, entries in data.gpus.items()}
    return CalibrationData(keep(data.globals), gpus, data.origin, cv=data.cv)


@dataclass(frozen=True)
class Fold:
    """One left-out source: the refit without it and its sets' predictions under it."""

    source: str
    # "GPU: key" of each parameter only this source informed, then "GPU: key (undetermined
    # without it)" of each the refit's data could not pin (both fall back)
    dropped: tuple[str, ...]
    results: tuple[SetResult, ...]  # the source's scored sets, predicted by the refit

    @property
    def points(self) -> tuple[PointResult, ...]:
        """Every scored point of the source."""
        return tuple(p for r in self.results for p in r.points)

    def cv_mean_error(self) -> float:
        """Mean absolute error of the refit (calibrated) model on the source's points."""
        return mean_abs_error(self.points, ModelKind.CALIBRATED)

    def torchao_mean_error(self) -> float:
        """Mean absolute error of torchao's model on the source's points."""
        return mean_abs_error(self.points, ModelKind.TORCHAO)


@dataclass(frozen=True)
class CrossValidation:
    """The full-data validation and, per source, the refit that never saw it."""

    report: ValidationReport
    folds: tuple[Fold, ...]

    def cv_result(self, set_id: str) -> SetResult | None:
        """The set predicted by the refit without its source (None: not scored)."""
        for fold in self.folds:
            for result in fold.results:
                if result.set.id == set_id:
                    return result
        return None

    def cv_points(self) -> tuple[PointResult, ...]:
        """Every scored point, each predicted without its source."""
        return tuple(p for fold in self.folds for p in fold.points)

    def cv_mean_error(self) -> float:
        """Mean absolute CV error over every scored point (the headline error)."""
        return mean_abs_error(self.cv_points(), ModelKind.CALIBRATED)

    def fit_mean_error(self) -> float:
        """Mean absolute error of the full-data calibration over the same points."""
        return self.report.mean_error(ModelKind.CALIBRATED)

    def torchao_mean_error(self) -> float:
        """Mean absolute error of torchao's model over the same points."""
        return self.report.mean_error(ModelKind.TORCHAO)

    def worst_source(self) -> Fold | None:
        """The source the refit predicts worst (None without scored sets)."""
        return max(self.folds, key=lambda f: f.cv_mean_error(), default=None)

    def by(self, key: Callable[[MeasurementSet], str]) -> dict[str, tuple[float, int]]:
        """Mean CV error and point count per group of sets (``key`` names a set's group:
        :func:`~roofline.analysis.cv_groups.gpu_of`, ``recipe_family_of``, ``library_of``, or a
        GPU family via ``gpu_family_key``)."""
        return self.by_point(lambda mset, _point: key(mset))

    def by_point(
        self,
        key: Callable[[MeasurementSet, Point], str],
        model: ModelKind = ModelKind.CALIBRATED,
    ) -> dict[str, tuple[float, int]]:
        """Mean CV error and point count per group of points (``key``: a point's group);
        ``model=TORCHAO``: torchao's error on the same points (it is never refitted)."""
        groups: dict[str, list[float]] = {}
        for fold in self.folds:
            for result in fold.results:
                for p in result.points:
                    groups.setdefault(key(result.set, p.point), []).append(abs(p.error(model)))
        return {name: (statistics.fmean(v), len(v)) for name, v in sorted(groups.items())}


def _scored(sets: Sequence[MeasurementSet]) -> tuple[MeasurementSet, ...]:
    return tuple(s for s in sets if s.role is not SetRole.CONTEXT)


#: A refit calibration and the parameters it dropped as undetermined (:func:`_refit`).
Refit = tuple[CalibrationData, tuple[ParameterId, ...]]


def fold_for(
    source: str,
    sets: Sequence[MeasurementSet],
    measurements: MeasurementDatabase,
    specs: SpecDatabase,
    data: CalibrationData,
    shared: Refit | None = None,
) -> Fold:
    """Refit without ``source`` and predict its scored ``sets``. ``shared``, where given,
    is :func:`full_refit` of the same inputs, which a fold whose sets the fit never reads
    (:func:`_fit_reads`) makes all the same: taken instead of refitting once per fold."""
    left_out = {s.id for s in sets}
    dropped = tuple(
        _named(gpu, entry.key) for gpu, entry in data.entries() if not set(entry.sets) - left_out
    )
    if shared is not None and not _fit_reads(left_out, measurements, data):
        refit, loose = shared
    else:
        train = [s for s in measurements.by_role(SetRole.FIT) if s.id not in left_out]
        refit, loose = _refit(without_sets(data, left_out), train, specs)
    results = tuple(validate_set(s, specs, refit) for s in _scored(sets))
    undetermined = tuple(f"{_named(gpu, key)} (undetermined without it)" for gpu, key in loose)
    return Fold(source, dropped + undetermined, results)


def _fit_reads(
    left_out: set[str], measurements: MeasurementDatabase, data: CalibrationData
) -> bool:
    """Whether the refit reads a set of ``left_out``: a fit set, or one a stored entry lists."""
    fit_ids = {s.id for s in measurements.by_role(SetRole.FIT)}
    return bool(left_out & fit_ids) or any(left_out & set(e.sets) for _, e in data.entries())


def full_refit(
    measurements: MeasurementDatabase, specs: SpecDatabase, data: CalibrationData
) -> Refit:
    """The refit every fold of a held-out-only source makes (see :func:`fold_for`)."""
    return _refit(without_sets(data, set()), list(measurements.by_role(SetRole.FIT)), specs)


def _refit(data: CalibrationData, train: Sequence[MeasurementSet], specs: SpecDatabase) -> Refit:
    """``data`` refitted on ``train``, and the parameters it dropped: a parameter the
    fit's data leave undetermined (:attr:`FitResult.determined`, a direction of the
    scaled Jacobian the data do not constrain) falls back as a GPU without data would,
    and the rest are refitted without it. Held at its stored value, it would carry the
    left-out source into the fold; left free, it drifts to wherever the optimizer's path
    ends (a 1% GEMM efficiency standing in for a latency)."""
    if not (data.entries() and train):
        return data, ()
    result = fit_on(data, train, specs)
    loose = tuple(result.undetermined())
    if loose:
        data = data.without(set(loose))
        if not data.entries():
            return data, loose
        result = fit_on(data, train, specs)
    return with_values(data, result.parameters, result.fitted), loose


def _named(gpu: str | None, key: str) -> str:
    return f"{gpu or 'all GPUs'}: {key}"


def cross_validate(
    measurements: MeasurementDatabase,
    specs: SpecDatabase,
    data: CalibrationData,
    report: ValidationReport,
    workers: int = 1,
) -> CrossValidation:
    """Leave each source out in turn (see the module docstring); with ``workers`` > 1 (the
    commands pass :func:`roofline.processes.usable_cpus`) the folds run in that many forked
    processes, each refit independent of the others, in the order of :func:`sources`."""
    jobs = [(source, sets) for source, sets in sources(measurements.sets).items() if _scored(sets)]
    workers = min(workers, len(jobs))
    blind = any(not _fit_reads({s.id for s in sets}, measurements, data) for _, sets in jobs)
    shared = full_refit(measurements, specs, data) if blind else None
    inputs = (measurements, specs, data, shared)
    if workers > 1 and can_fork():
        folds = _forked_folds(jobs, inputs, workers)
    else:
        folds = tuple(fold_for(source, sets, *inputs) for source, sets in jobs)
    return CrossValidation(report, folds)


# measurements, specs, calibration, its full refit (None: no fold takes it)
_FoldInputs = tuple[MeasurementDatabase, SpecDatabase, CalibrationData, Refit | None]
# The inputs every forked fold reads: set before the pool forks, so a worker inherits them
# (with the models the parent compiled) instead of unpickling them per fold.
_FOLD_INPUTS: _FoldInputs | None = None


def _forked_fold(job: tuple[str, Sequence[MeasurementSet]]) -> Fold:
    assert _FOLD_INPUTS is not None, "a fold worker runs only under _forked_folds"
    return fold_for(job[0], job[1], *_FOLD_INPUTS)


def _forked_folds(
    jobs: list[tuple[str, tuple[MeasurementSet, ...]]],
    inputs: _FoldInputs,
    workers: int,
) -> tuple[Fold, ...]:
    global _FOLD_INPUTS
    _FOLD_INPUTS = inputs
    # The folds that refit start first, the most fit points left out first (the longest
    # refits, as a rule): a long fold started last would leave the other workers idle.
    order = sorted(range(len(jobs)), key=lambda i: -_fit_points(jobs[i][1]))
    try:
        with multiprocessing.get_context("fork").Pool(workers, ignore_sigint) as pool:
            done = pool.map(_forked_fold, [jobs[i] for i in order], chunksize=1)
    finally:
        _FOLD_INPUTS = None
    by_job = dict(zip(order, done, strict=True))
    return tuple(by_job[i] for i in range(len(jobs)))


def _fit_points(sets: Sequence[MeasurementSet]) -> int:
    return sum(len(s.points) for s in sets if s.role is SetRole.FIT)


#: How :func:`own_fit_cv` cuts its folds (``method`` of the calibration file's ``[gpu.cv]``).
OWN_FIT_METHOD = "leave one shape out"


def own_fit_cv(
    data: CalibrationData, gpu: str, sets: Sequence[MeasurementSet], specs: SpecDatabase
) -> GpuCv | None:
    """The cross-validated error of refitting ``gpu`` on its own ``sets`` (what
    ``roofline calibrate --gpu NAME`` fits): for each distinct shape, the GPU's parameters
    are refitted from their starting values (``data``'s, or the fallbacks for parameters
    it lacks) on the points at every other shape, and the points at that shape predicted.
    One owner's file is one source, so the folds are cut by shape, the next-coarsest unit;
    None with fewer than two distinct shapes (nothing to leave out)."""
    start = gpu_fit_start(data, gpu, sets, specs)  # as `roofline calibrate --gpu` fits
    parameters = [p for p in free_parameters(start) if p[0] == gpu]
    shapes = sorted({p.shapes for s in sets for p in s.points})
    if len(shapes) < 2 or not parameters:
        return None
    errors: list[float] = []
    for shape in shapes:
        train = [
            replace(s, points=kept)
            for s in sets
            if (kept := tuple(p for p in s.points if p.shapes != shape))
        ]
        test = [
            replace(s, points=left)
            for s in sets
            if (left := tuple(p for p in s.points if p.shapes == shape))
        ]
        result = fit_on(start, train, specs, parameters)
        refit = with_values(start, result.parameters, result.fitted)
        for mset in test:
            predicted = predict_set(mset, specs, refit)
            pairs = zip(predicted, mset.points, strict=True)
            errors += [abs(float(v) / p.value - 1) for v, p in pairs]
    ids = tuple(s.id for s in sets)
    return GpuCv(statistics.fmean(errors), len(errors), len(shapes), OWN_FIT_METHOD, ids)
