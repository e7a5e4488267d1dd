"""How a cross-validation's errors group (per GPU, GPU family, recipe family, kernel
library and shape size), and the error-band file those groups make
(:func:`bands_from`, written by ``tools/refit_calibration.py``):
:mod:`roofline.analysis.crossval` computes the folds, this module reads them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from roofline.analysis.crossval import CrossValidation
from roofline.analysis.error_bands import MIN_BAND_POINTS, SIZE_BUCKETS, bands_toml, size_bucket
from roofline.analysis.validation import ModelKind
from roofline.calibration.families import family_of
from roofline.measurements import MeasurementSet, Point
from roofline.recipes import get_recipe
from roofline.specs import SpecDatabase


def gpu_of(mset: MeasurementSet) -> str:
    """A set's GPU (a grouping key for :meth:`CrossValidation.by`)."""
    return mset.gpu


def recipe_family_of(mset: MeasurementSet) -> str:
    """A set's recipe family: float8, blockwise, mx, nvfp4."""
    return get_recipe(mset.recipe, mset.mode).family.value


def library_of(mset: MeasurementSet) -> str:
    """Whose kernel a set times (:class:`roofline.measurements.KernelLibrary`)."""
    return mset.library.value


@dataclass(frozen=True)
class LibraryError:
    """Both models' CV errors over the scored points of one kernel library."""

    library: str
    points: int
    cv_mean_error: float
    torchao_mean_error: float


def by_library(cv: CrossValidation) -> tuple[LibraryError, ...]:
    """Per kernel library (most points first): the calibrated model's CV error and
    torchao's on the same points. The model has no library term, so this shows which
    libraries' kernels its numbers hold for."""
    calibrated = cv.by(library_of)
    torchao = cv.by_point(lambda mset, _point: library_of(mset), ModelKind.TORCHAO)
    rows = [
        LibraryError(name, count, error, torchao[name][0])
        for name, (error, count) in calibrated.items()
    ]
    return tuple(sorted(rows, key=lambda row: (-row.points, row.library)))


def gpu_family_key(specs: SpecDatabase) -> Callable[[MeasurementSet], str]:
    """A set's GPU architecture family (:func:`~roofline.calibration.params.family_of`)."""
    return lambda mset: family_of(specs[mset.gpu])


def size_of(_mset: MeasurementSet, point: Point) -> str:
    """The size bucket of a point (its largest GEMM's M x K x N); a key for
    :meth:`CrossValidation.by_point`."""
    return size_bucket(max(float(m) * k * n for m, k, n in point.shapes))


def by_size(cv: CrossValidation, model: ModelKind = ModelKind.CALIBRATED) -> dict[str, float]:
    """Mean CV error per shape-size bucket, smallest first (empty buckets left out);
    ``model=TORCHAO``: torchao's error over the same points."""
    errors = cv.by_point(size_of, model)
    return {name: errors[name][0] for name, _ in SIZE_BUCKETS if name in errors}


def points_by_size(cv: CrossValidation) -> dict[str, int]:
    """Scored points per shape-size bucket, smallest first (empty buckets left out)."""
    errors = cv.by_point(size_of)
    return {name: errors[name][1] for name, _ in SIZE_BUCKETS if name in errors}


def by_group_and_size(
    cv: CrossValidation, group: Callable[[MeasurementSet], str]
) -> dict[str, dict[str, float]]:
    """Group -> size bucket -> mean CV error, where the group has at least
    :data:`MIN_BAND_POINTS` scored points of that size (``group``: :func:`gpu_of`, or a
    GPU family via :func:`gpu_family_key`)."""
    out: dict[str, dict[str, float]] = {}
    errors = cv.by_point(lambda mset, point: f"{group(mset)}\0{size_of(mset, point)}")
    for key, (error, count) in errors.items():
        name, bucket = key.split("\0")
        if count >= MIN_BAND_POINTS:
            out.setdefault(name, {})[bucket] = error
    return out


def bands_from(cv: CrossValidation, specs: SpecDatabase) -> str:
    """The error-band file (:mod:`roofline.analysis.error_bands`) of a cross-validation."""
    gpus = {name: error for name, (error, _) in cv.by(gpu_of).items()}
    families = {name: error for name, (error, _) in cv.by(gpu_family_key(specs)).items()}
    libraries = by_library(cv)
    tables = {
        "source": {f.source: f.cv_mean_error() for f in cv.folds},
        "source_torchao": {f.source: f.torchao_mean_error() for f in cv.folds},
        "recipe_family": {n: e for n, (e, _) in cv.by(recipe_family_of).items()},
        "size": by_size(cv),
        "size_torchao": by_size(cv, ModelKind.TORCHAO),
        "library": {row.library: row.cv_mean_error for row in libraries},
        "library_torchao": {row.library: row.torchao_mean_error for row in libraries},
    }
    extra = {"fit": cv.fit_mean_error(), "torchao": cv.torchao_mean_error()}
    nested = {
        "gpu_size": by_group_and_size(cv, gpu_of),
        "family_size": by_group_and_size(cv, gpu_family_key(specs)),
    }
    counts = {
        "size_points": points_by_size(cv),
        "library_points": {row.library: row.points for row in libraries},
    }
    return bands_toml(cv.cv_mean_error(), gpus, families, extra, tables, counts, nested)
