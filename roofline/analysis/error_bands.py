"""The error band of a calibrated number: the cross-validated error of its basis.

A calibrated prediction rests on parameters of three levels
(:class:`roofline.calibration.params.Level`): the GPU's own measurements, its
architecture family's, or every GPU's. Its *basis* is the weakest level among the
per-GPU efficiencies its model uses (the model-wide fixed latencies are the same for every
GPU and do not count), and its *error band* the mean absolute error that
cross-validation by source (:mod:`roofline.analysis.crossval`) measured on data of that basis:

* ``measured``: the cross-validated error of the GPU's own fit when its calibration file
  records one (``[gpu.cv]``, written by ``roofline calibrate --gpu NAME -o FILE`` for a
  GPU its owner measured); else the GPU's own sets in the bundled CV, when it has some;
  else its family's; else all sets;
* ``family``: the family's sets, else all sets;
* ``global``: all sets.

The bands are data (``roofline/data/error_bands.toml``), written from a cross-validation
run by ``tools/refit_calibration.py`` (a CV refits the calibration a dozen times and
needs scipy, which evaluating must not); ``tests/test_crossval.py`` fails when they are
stale.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import sympy

from roofline import units
from roofline.calibration.data import GLOBAL_KEYS, GpuCv
from roofline.calibration.params import CalibratedParameters, Level, family_of, worst_level
from roofline.datafiles.core import bundled_text
from roofline.errors import DataFileError, DataProblem
from roofline.model.terms import RooflineModel
from roofline.specs import GpuSpec
from roofline.specs.text import TomlProblem, load_toml, toml_string
from roofline.symbols import CALIBRATION_SYMBOLS

BUNDLED_BANDS = "bundled error bands (roofline/data/error_bands.toml)"
# The per-GPU parameters, by symbol: the model-wide latencies (GLOBAL_KEYS) are the same
# for every GPU and say nothing about how much of its own data a number rests on.
_PER_GPU = {hw.symbol: hw.spec_key for hw in CALIBRATION_SYMBOLS if hw.spec_key not in GLOBAL_KEYS}


class RowBasis(enum.StrEnum):
    """What a calibrated number rests on (the ``basis`` of ``eval --format json`` rows)."""

    MEASURED = "measured"
    FAMILY = "family"
    GLOBAL = "global"


_BASIS_OF_LEVEL = {
    Level.GPU: RowBasis.MEASURED,
    Level.FAMILY: RowBasis.FAMILY,
    Level.GLOBAL: RowBasis.GLOBAL,
}


@dataclass(frozen=True)
class ErrorBands:
    """Cross-validated mean absolute errors: over every scored point, per GPU, per family;
    for the Validation page also per source (with torchao's error beside it), per recipe
    family and per shape size, and the full-data fit's and torchao's overall errors."""

    overall: float
    gpus: Mapping[str, float]
    families: Mapping[str, float]
    origin: str = BUNDLED_BANDS
    fit: float | None = None
    torchao: float | None = None
    sources: Mapping[str, float] = field(default_factory=dict)
    sources_torchao: Mapping[str, float] = field(default_factory=dict)
    recipe_families: Mapping[str, float] = field(default_factory=dict)
    sizes: Mapping[str, float] = field(default_factory=dict)
    sizes_torchao: Mapping[str, float] = field(default_factory=dict)
    size_points: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorBand:
    """One number's basis and band."""

    basis: RowBasis
    fraction: float  # the CV mean absolute error that applies (0.18 = +/-18%)
    of: str  # whose CV error it is: "NVIDIA B200", "CDNA3 family", "all sources"

    @property
    def fallback(self) -> bool:
        """The number rests on a fallback: no measurement on this GPU for some parameter."""
        return self.basis is not RowBasis.MEASURED

    def short(self) -> str:
        """``±18%``: the band alone, for tables."""
        return units.band(self.fraction)

    def text(self) -> str:
        """``±18% (no measurement on this GPU; CDNA3 family CV)``."""
        if self.basis is RowBasis.MEASURED:
            why = f"{self.of} CV"
        else:
            why = f"no measurement on this GPU; {self.of} CV"
        return f"{units.band(self.fraction)} ({why})"


def per_gpu_keys(exprs: Iterable[sympy.Expr]) -> frozenset[str]:
    """The per-GPU calibration parameters ``exprs`` use (model-wide latencies left out)."""
    used = set().union(*(e.free_symbols for e in exprs))
    return frozenset(_PER_GPU[s] for s in used if s in _PER_GPU)


def _basis(params: CalibratedParameters, keys: Iterable[str]) -> RowBasis:
    return _BASIS_OF_LEVEL[worst_level(params.values[key].level for key in keys)]


def row_basis(params: CalibratedParameters, exprs: Iterable[sympy.Expr]) -> RowBasis:
    """The weakest level among the per-GPU parameters ``exprs`` use."""
    return _basis(params, per_gpu_keys(exprs))


@functools.cache
def _model_keys(model: RooflineModel) -> frozenset[str]:
    # Once per model (models are built once): a site asks for hundreds of bands.
    return per_gpu_keys(t.expr for t in model.terms)


def model_band(gpu: GpuSpec, params: CalibratedParameters, model: RooflineModel) -> ErrorBand:
    """The error band of every number a calibrated ``model`` gives for ``gpu``."""
    return band_for(gpu, _basis(params, _model_keys(model)), own=params.cv)


#: Whose CV error an own-fit band is, after the GPU's name ("NVIDIA L40S own-fit CV").
OWN_FIT = "own-fit"


def band_for(
    gpu: GpuSpec, basis: RowBasis, bands: ErrorBands | None = None, own: GpuCv | None = None
) -> ErrorBand:
    """The error band of a number of ``basis`` on ``gpu``; ``own``: the cross-validated
    error of the GPU's own fit (its calibration file's ``[gpu.cv]``), which a number
    resting on the GPU's own parameters takes before any bundled band."""
    bands = bands if bands is not None else load_error_bands()
    family = family_of(gpu)
    if basis is RowBasis.MEASURED and own is not None:
        return ErrorBand(basis, own.mean_error, f"{gpu.name} {OWN_FIT}")
    if basis is RowBasis.MEASURED and gpu.name in bands.gpus:
        return ErrorBand(basis, bands.gpus[gpu.name], gpu.name)
    if basis is not RowBasis.GLOBAL and family in bands.families:
        return ErrorBand(basis, bands.families[family], f"{family} family")
    return ErrorBand(basis, bands.overall, "all sources")


def parse_error_bands(doc: Mapping[str, object], origin: str) -> ErrorBands:
    """Check a parsed error-band file: fractions in (0, 10], tables of name -> fraction."""
    problems: list[DataProblem] = []

    def fraction(where: str, key: str, value: object) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 10
        if not ok:
            problems.append(DataProblem(origin, where, key, "a fraction in (0, 10]", repr(value)))
            return 1.0
        return float(value)  # type: ignore[arg-type]

    def table(key: str) -> dict[str, float]:
        raw = doc.get(key, {})
        if not isinstance(raw, dict):
            problems.append(DataProblem(origin, None, key, "a table of name = fraction", "?"))
            return {}
        return {name: fraction(key, name, value) for name, value in raw.items()}

    def counts(key: str) -> dict[str, int]:
        raw = doc.get(key, {})
        if not isinstance(raw, dict):
            problems.append(DataProblem(origin, None, key, "a table of name = count", "?"))
            return {}
        good = {n: v for n, v in raw.items() if type(v) is int and 0 < v <= 1_000_000}
        for name in raw.keys() - good.keys():
            expected = "a count in [1, 1000000]"
            problems.append(DataProblem(origin, key, name, expected, repr(raw[name])))
        return good

    overall = fraction("", "overall", doc.get("overall"))
    optional = {key: fraction("", key, doc[key]) for key in ("fit", "torchao") if key in doc}
    bands = ErrorBands(
        overall,
        table("gpu"),
        table("family"),
        origin,
        sources=table("source"),
        sources_torchao=table("source_torchao"),
        recipe_families=table("recipe_family"),
        sizes=table("size"),
        sizes_torchao=table("size_torchao"),
        size_points=counts("size_points"),
        **optional,
    )
    if problems:
        raise DataFileError("error-band file", problems)
    return bands


@functools.cache
def load_error_bands() -> ErrorBands:
    """The bundled error bands."""
    text = bundled_text("error_bands.toml")
    try:
        doc = load_toml(text)
    except TomlProblem as exc:
        problem = DataProblem(BUNDLED_BANDS, None, None, "valid TOML", str(exc))
        raise DataFileError("error-band file", [problem]) from None
    return parse_error_bands(doc, BUNDLED_BANDS)


def bands_toml(
    overall: float,
    gpus: Mapping[str, float],
    families: Mapping[str, float],
    extra: Mapping[str, float] | None = None,
    tables: Mapping[str, Mapping[str, float]] | None = None,
    size_points: Mapping[str, int] | None = None,
) -> str:
    """The error-band file's text (written by ``tools/refit_calibration.py``): ``extra``
    holds more top-level numbers (``fit``, ``torchao``), ``tables`` more name -> fraction
    tables (``source``, ``source_torchao``, ``recipe_family``, ``size``, ``size_torchao``);
    ``size_points`` the scored points per size bucket."""
    lines = [
        "# Roofline Atlas: cross-validated error bands (roofline.analysis.error_bands).",
        "# Written by `python tools/refit_calibration.py` from `roofline validate --cv source`:",
        "# the mean |predicted / measured - 1| of the calibrated model refitted without each",
        "# point's source, over all scored points, per GPU and per architecture family.",
        "# tests/test_crossval.py fails when these are stale. Do not edit by hand.",
        "",
        f"overall = {overall:.4f}",
        *(f"{key} = {value:.4f}" for key, value in (extra or {}).items()),
    ]
    all_tables = {"gpu": gpus, "family": families, **(tables or {})}
    for key, table in all_tables.items():
        lines += ["", f"[{key}]"]
        lines += [f"{toml_string(name)} = {value:.4f}" for name, value in sorted(table.items())]
    if size_points:
        lines += ["", "[size_points]"]
        lines += [f"{toml_string(name)} = {count}" for name, count in sorted(size_points.items())]
    return "\n".join(lines) + "\n"
