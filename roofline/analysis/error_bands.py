"""The error band of a calibrated number: the cross-validated error of its basis.

A calibrated prediction rests on parameters of three levels
(:class:`roofline.calibration.params.Level`): the GPU's own measurements, its
architecture family's, or every GPU's. Its *basis* is the weakest level among the
per-GPU efficiencies its model uses (fixed latencies and the hidden share of the output
store do not count: see ``_PER_GPU``), and its *error band* the mean absolute error that
cross-validation by source (:mod:`roofline.analysis.crossval`) measured on data of that
basis:

* ``measured``: the cross-validated error of the GPU's own fit when its calibration file
  records one (``[gpu.cv]``, written by ``roofline calibrate --gpu NAME -o FILE`` for a
  GPU its owner measured); else the GPU's own sets in the bundled CV, when it has some;
  else its family's; else all sets;
* ``family``: the family's sets, else all sets;
* ``global``: all sets.

A number at a known shape takes the band of the same data restricted to points of its
size (:data:`SIZE_BUCKETS`, by the largest GEMM's M x K x N) where at least
:data:`MIN_BAND_POINTS` such points were scored: small GEMMs, where fixed latencies and
kernel choices dominate, are far less certain than large ones, and a GPU whose only
measurements are tiny kernels should not lend their error to its large GEMMs. Without
enough points of that size the band falls back, in order, to the family's points of that
size, to every source's points of that size, then to the size-blind bands above.

The bands are data (``roofline/data/error_bands.toml``), written from a cross-validation
run by ``tools/refit_calibration.py`` (a CV refits the calibration a dozen times and
needs scipy, which evaluating must not); ``tests/test_crossval.py`` fails when they are
stale.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import sympy

from roofline import units
from roofline.calibration.bounds import is_latency
from roofline.calibration.data import GpuCv
from roofline.calibration.families import PLATFORM_PARAMS, family_of
from roofline.calibration.params import CalibratedParameters, Level, worst_level
from roofline.datafiles.core import bundled_text
from roofline.errors import DataFileError, DataProblem
from roofline.model.terms import RooflineModel
from roofline.specs import GpuSpec
from roofline.specs.text import TomlProblem, load_toml, toml_string
from roofline.symbols import CALIBRATION_SYMBOLS

BUNDLED_BANDS = "bundled error bands (roofline/data/error_bands.toml)"
# The per-GPU efficiencies, by symbol. The fixed latencies do not count: the model-wide
# ones are the same for every GPU, and the per-GPU cast launch (a microsecond or two,
# resolved like them by family) would mark every number of a GPU that has no tiny-cast
# timing of its own, large shapes included; the size buckets below are where small
# shapes' uncertainty shows.
# Nor do a platform's parameters (PLATFORM_PARAMS: the hidden share of a GEMM's output
# store), whose default would mark every number of a platform without data global.
_PER_GPU = {
    hw.symbol: hw.spec_key
    for hw in CALIBRATION_SYMBOLS
    if not is_latency(hw.spec_key) and hw.spec_key not in PLATFORM_PARAMS
}

#: Shape-size buckets of the bands and the Validation page: a point's largest GEMM,
#: M x K x N, below each limit.
SIZE_BUCKETS: tuple[tuple[str, float], ...] = (
    ("MKN < 2^27", 2.0**27),
    ("2^27 <= MKN < 2^30", 2.0**30),
    ("2^30 <= MKN < 2^33", 2.0**33),
    ("2^33 <= MKN < 2^36", 2.0**36),
    ("2^36 <= MKN < 2^39", 2.0**39),
    ("MKN >= 2^39", math.inf),
)
#: A GPU's or family's band at one size needs at least this many scored points there.
MIN_BAND_POINTS = 3


def size_bucket(mkn: float) -> str:
    """The name of the size bucket of a GEMM (or layer) whose largest M x K x N is ``mkn``."""
    return next(name for name, limit in SIZE_BUCKETS if mkn < limit)


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
    # Per kernel library (roofline.measurements.KernelLibrary): both models' CV errors and
    # the scored points, for the Validation page (no band is quoted by library).
    libraries: Mapping[str, float] = field(default_factory=dict)
    libraries_torchao: Mapping[str, float] = field(default_factory=dict)
    library_points: Mapping[str, int] = field(default_factory=dict)
    # Per GPU and per family: size bucket -> CV error, where MIN_BAND_POINTS points allow.
    gpu_sizes: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    family_sizes: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorBand:
    """One number's basis and band."""

    basis: RowBasis
    fraction: float  # the CV mean absolute error that applies (0.18 = +/-18%)
    of: str  # whose CV error it is: "NVIDIA B200", "CDNA3 family", "all sources"
    size: str | None = None  # the size bucket of the points it is over (None: every size)

    @property
    def fallback(self) -> bool:
        """The number rests on a fallback: no measurement on this GPU for some parameter."""
        return self.basis is not RowBasis.MEASURED

    def short(self) -> str:
        """``±18%``: the band alone, for tables."""
        return units.band(self.fraction)

    def text(self) -> str:
        """``±18% (a parameter not measured on this GPU; CDNA3 family CV at 2^36 <= MKN <
        2^39)``: a GPU with some measurements (MI300X's GEMMs) can still lack others."""
        why = f"{self.of} CV" + (f" at {self.size}" if self.size else "")
        if self.basis is not RowBasis.MEASURED:
            why = f"a parameter not measured on this GPU; {why}"
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


def model_band(
    gpu: GpuSpec, params: CalibratedParameters, model: RooflineModel, mkn: float | None = None
) -> ErrorBand:
    """The error band of a number a calibrated ``model`` gives for ``gpu`` at a shape whose
    largest GEMM has M x K x N = ``mkn`` (None: size-blind)."""
    return band_for(gpu, _basis(params, _model_keys(model)), own=params.cv, mkn=mkn)


#: Whose CV error an own-fit band is, after the GPU's name ("NVIDIA L40S own-fit CV").
OWN_FIT = "own-fit"


def band_for(
    gpu: GpuSpec,
    basis: RowBasis,
    bands: ErrorBands | None = None,
    own: GpuCv | None = None,
    mkn: float | None = None,
) -> ErrorBand:
    """The error band of a number of ``basis`` on ``gpu``; ``own``: the cross-validated
    error of the GPU's own fit (its calibration file's ``[gpu.cv]``), which a number
    resting on the GPU's own parameters takes before any bundled band; ``mkn``: the
    number's largest M x K x N, for the band of points of its size (module docstring)."""
    bands = bands if bands is not None else load_error_bands()
    family = family_of(gpu)
    if basis is RowBasis.MEASURED and own is not None:
        return ErrorBand(basis, own.mean_error, f"{gpu.name} {OWN_FIT}")
    if mkn is not None:
        sized = _sized_band(gpu.name, family, basis, bands, size_bucket(mkn))
        if sized is not None:
            return sized
    if basis is RowBasis.MEASURED and gpu.name in bands.gpus:
        return ErrorBand(basis, bands.gpus[gpu.name], gpu.name)
    if basis is not RowBasis.GLOBAL and family in bands.families:
        return ErrorBand(basis, bands.families[family], f"{family} family")
    return ErrorBand(basis, bands.overall, "all sources")


def bands_per_size(
    gpu: GpuSpec, basis: RowBasis, own: GpuCv | None = None
) -> tuple[ErrorBand, ...]:
    """:func:`band_for` at each bucket of :data:`SIZE_BUCKETS`, in order: the bands a
    table of numbers at many shapes looks up by size."""
    starts = [1.0, *(limit for _, limit in SIZE_BUCKETS[:-1])]  # each bucket's lower end
    return tuple(band_for(gpu, basis, own=own, mkn=start) for start in starts)


def model_bands_per_size(
    gpu: GpuSpec, params: CalibratedParameters, model: RooflineModel
) -> tuple[ErrorBand, ...]:
    """:func:`model_band` at each bucket of :data:`SIZE_BUCKETS`, in order."""
    return bands_per_size(gpu, _basis(params, _model_keys(model)), params.cv)


def _sized_band(
    gpu: str, family: str, basis: RowBasis, bands: ErrorBands, bucket: str
) -> ErrorBand | None:
    """The band of the points of one size: the GPU's, the family's, every source's."""
    candidates = (
        (basis is RowBasis.MEASURED, bands.gpu_sizes.get(gpu, {}), gpu),
        (basis is not RowBasis.GLOBAL, bands.family_sizes.get(family, {}), f"{family} family"),
        (True, bands.sizes, "all sources"),
    )
    for allowed, table, whose in candidates:
        if allowed and bucket in table:
            return ErrorBand(basis, table[bucket], whose, bucket)
    return None


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

    def nested(key: str) -> dict[str, dict[str, float]]:
        raw = doc.get(key, {})
        if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
            expected = "a table of name = {size bucket = fraction}"
            problems.append(DataProblem(origin, None, key, expected, "?"))
            return {}
        names = [name for name, _ in SIZE_BUCKETS]
        expected = f"a size bucket: one of {', '.join(names)}"
        out: dict[str, dict[str, float]] = {}
        for name, sizes in raw.items():
            for bucket in sorted(sizes.keys() - set(names)):
                problems.append(
                    DataProblem(origin, f"{key}.{name}", bucket, expected, repr(bucket))
                )
            out[name] = {b: fraction(f"{key}.{name}", b, v) for b, v in sizes.items() if b in names}
        return out

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
        libraries=table("library"),
        libraries_torchao=table("library_torchao"),
        library_points=counts("library_points"),
        gpu_sizes=nested("gpu_size"),
        family_sizes=nested("family_size"),
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
    counts: Mapping[str, Mapping[str, int]] | None = None,
    nested: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
) -> str:
    """The error-band file's text (written by ``tools/refit_calibration.py``): ``extra``
    holds more top-level numbers (``fit``, ``torchao``), ``tables`` more name -> fraction
    tables (``source``, ``source_torchao``, ``recipe_family``, ``size``, ``size_torchao``,
    ``library``, ``library_torchao``); ``counts`` name -> count tables (``size_points``,
    ``library_points``: the scored points per size bucket and per kernel library);
    ``nested`` the per-size tables
    (``gpu_size``, ``family_size``: name -> size bucket -> fraction)."""
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
    for key, table in (counts or {}).items():
        lines += ["", f"[{key}]"]
        lines += [f"{toml_string(name)} = {count}" for name, count in sorted(table.items())]
    order = [name for name, _ in SIZE_BUCKETS]
    for key, groups in (nested or {}).items():
        for name, sizes in sorted(groups.items()):
            lines += ["", f"[{key}.{toml_string(name)}]"]
            lines += [f"{toml_string(b)} = {sizes[b]:.4f}" for b in order if b in sizes]
    return "\n".join(lines) + "\n"
