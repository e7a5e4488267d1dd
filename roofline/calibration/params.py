"""The calibrated model's parameter values for one GPU, each with its basis and source.

Values come, in this order, from:

1. ``roofline/data/calibration.toml``: a value fitted on named measurement sets
   (basis ``fitted``), or read off a kernel-level measurement (basis ``measured``);
2. the spec database's public measured matmul throughput (MAMF) over the peak, for the
   bf16 and fp8 GEMM efficiencies (basis ``measured``);
3. a stated fallback (basis ``assumed``): the mean, over the GPUs that have the value,
   of the ratio or fraction involved; each fallback carries the range those GPUs span,
   which pages use to show how uncertain an assumed GPU's numbers are.
"""

from __future__ import annotations

import enum
import functools
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from roofline.calibration.data import GLOBAL_KEYS, CalibrationData, Entry, load_calibration
from roofline.specs import GpuSpec, SpecDatabase
from roofline.symbols import CALIBRATION_SYMBOLS


class Basis(enum.StrEnum):
    """Where a parameter value comes from."""

    MEASURED = "measured"
    FITTED = "fitted"
    ASSUMED = "assumed"


@dataclass(frozen=True)
class ParameterValue:
    """One parameter's value for one GPU, with where it comes from.

    ``low``/``high`` bound an assumed value: the range the GPUs that have it span.
    """

    value: float
    basis: Basis
    source: str
    sets: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class CalibratedParameters:
    """Every calibration parameter's value for one GPU (keys: the symbols' ``spec_key``)."""

    gpu: str
    values: Mapping[str, ParameterValue]

    def numbers(self) -> dict[str, float]:
        """Parameter key -> value, the arguments the compiled calibrated model takes."""
        return {key: v.value for key, v in self.values.items()}

    def assumed(self) -> tuple[str, ...]:
        """Keys whose value is assumed (a fallback), in symbol order."""
        return tuple(k for k, v in self.values.items() if v.basis is Basis.ASSUMED)

    def with_values(self, overrides: Mapping[str, float]) -> CalibratedParameters:
        """A copy with some values replaced (for ranges: low/high of assumed values)."""
        values = dict(self.values)
        for key, number in overrides.items():
            values[key] = replace(values[key], value=float(number))
        return CalibratedParameters(self.gpu, values)


GEMM_FORMATS = ("bf16", "fp8", "fp8_block", "fp4")
CAST_KINDS = tuple(
    hw.spec_key.removeprefix("cast_efficiency.")
    for hw in CALIBRATION_SYMBOLS
    if hw.spec_key.startswith("cast_efficiency.")
)
GROUPED_LAYOUTS = ("2d3d", "2d2d", "bf16")
_PEAK_KEY = {"bf16": "bf16_peak_tops", "fp8": "fp8_peak_tops"}
# Which resolved value an assumed one scales from, for formats with no data on a GPU.
_GEMM_PARENT = {"fp8": "bf16", "fp8_block": "fp8", "fp4": "fp8"}


def mamf_efficiency(gpu: GpuSpec, fmt: str) -> ParameterValue | None:
    """Measured matmul TFLOP/s over the peak, when the spec database has both."""
    tflops = gpu.measured_matmul_tflops.get(fmt)
    peak = gpu.value(_PEAK_KEY[fmt]) if fmt in _PEAK_KEY else None
    if tflops is None or not peak:
        return None
    source = (
        f"measured matmul throughput (spec database measured_matmul_tflops): "
        f"{tflops:g} TFLOP/s of the {peak / 1e12:g} TFLOP/s {fmt} peak"
    )
    return ParameterValue(tflops * 1e12 / peak, Basis.MEASURED, source)


def _stored(entry: Entry) -> ParameterValue:
    return ParameterValue(entry.value, Basis(entry.basis), entry.note, entry.sets)


class _Resolver:
    """Resolves parameters for the GPUs of one spec database and one calibration file."""

    def __init__(self, specs: SpecDatabase, data: CalibrationData) -> None:
        self.specs = specs
        self.data = data

    @functools.cached_property
    def _direct_gemm(self) -> dict[str, dict[str, float]]:
        """GPU -> format -> efficiency known without fallbacks (stored or MAMF)."""
        known: dict[str, dict[str, float]] = {}
        for gpu in self.specs.values():
            for fmt in GEMM_FORMATS:
                value = self._gemm_direct(gpu, fmt)
                if value is not None:
                    known.setdefault(gpu.name, {})[fmt] = value.value
        return known

    def _gemm_direct(self, gpu: GpuSpec, fmt: str) -> ParameterValue | None:
        entry = self.data.gpu_entry(gpu.name, f"gemm_efficiency.{fmt}")
        if entry is not None:
            return _stored(entry)
        return mamf_efficiency(gpu, fmt) if fmt in _PEAK_KEY else None

    def _ratio(self, fmt: str) -> tuple[float, float, float, list[str]] | None:
        """Mean, min and max of eta_fmt / eta_parent over GPUs that know both."""
        parent = _GEMM_PARENT[fmt]
        pairs = {
            name: values[fmt] / values[parent]
            for name, values in self._direct_gemm.items()
            if fmt in values and parent in values
        }
        if not pairs:
            return None
        ratios = list(pairs.values())
        return statistics.fmean(ratios), min(ratios), max(ratios), sorted(pairs)

    def gemm(self, gpu: GpuSpec, fmt: str) -> ParameterValue:
        """The GEMM efficiency of ``fmt`` on ``gpu``."""
        direct = self._gemm_direct(gpu, fmt)
        if direct is not None:
            return direct
        if fmt == "bf16":
            return self._spec_fallback(gpu)
        parent = self.gemm(gpu, _GEMM_PARENT[fmt])
        ratio = self._ratio(fmt)
        if ratio is None:
            return replace(
                parent, basis=Basis.ASSUMED, source=f"assumed equal to eta_{_GEMM_PARENT[fmt]}"
            )
        mean, low, high, names = ratio
        source = (
            f"assumed: eta_{_GEMM_PARENT[fmt]} x {mean:.3f}, the mean eta_{fmt}/eta_"
            f"{_GEMM_PARENT[fmt]} ratio where both are known ({', '.join(names)})"
        )
        return ParameterValue(
            min(parent.value * mean, 1.0),
            Basis.ASSUMED,
            source,
            low=min(_low(parent) * low, 1.0),
            high=min(_high(parent) * high, 1.0),
        )

    def _spec_fallback(self, gpu: GpuSpec) -> ParameterValue:
        measured = [v["bf16"] for v in self._direct_gemm.values() if "bf16" in v]
        basis = Basis.ASSUMED if gpu.gemm_efficiency_assumed else Basis.MEASURED
        source = f"spec database pct_achievable_gemm_tops ({gpu.gemm_basis})"
        if gpu.efficiency_reference:
            source += f": {gpu.efficiency_reference}"
        low = min(measured, default=None) if basis is Basis.ASSUMED else None
        high = max(measured, default=None) if basis is Basis.ASSUMED else None
        return ParameterValue(gpu.pct_achievable_gemm_tops, basis, source, low=low, high=high)

    def cast(self, gpu: GpuSpec, kind: str) -> ParameterValue:
        """The bandwidth fraction of cast kernels of ``kind`` on ``gpu``."""
        key = f"cast_efficiency.{kind}"
        entry = self.data.gpu_entry(gpu.name, key)
        if entry is not None:
            return _stored(entry)
        known = self._known(key)
        if not known and kind == "row":  # no cast measured on any GPU of this database
            source = (
                "spec database pct_achievable_mem_bw (no cast kernel measured on any GPU "
                "of this database)"
            )
            return ParameterValue(gpu.pct_achievable_mem_bw, Basis.ASSUMED, source)
        if not known:  # no GPU measured this kind: time it like a row kernel
            row = self.cast(gpu, "row")
            return replace(row, basis=Basis.ASSUMED, source="assumed equal to eta_row")
        values = list(known.values())
        source = f"assumed: the mean measured on {', '.join(sorted(known))}"
        return ParameterValue(
            statistics.fmean(values), Basis.ASSUMED, source, low=min(values), high=max(values)
        )

    def _known(self, key: str) -> dict[str, float]:
        """GPU -> stored value of ``key``, over the GPUs of this database that have one."""
        return {
            name: entries[key].value
            for name, entries in self.data.gpus.items()
            if key in entries and name in self.specs
        }

    def grouped(self, gpu: GpuSpec, layout: str) -> ParameterValue:
        """The grouped-GEMM rate factor of ``layout`` on ``gpu``: stored (measured on the
        GPU), else the mean of the measured GPUs (assumed), else 1 (assumed)."""
        key = f"grouped_efficiency.{layout}"
        entry = self.data.gpu_entry(gpu.name, key)
        if entry is not None:
            return _stored(entry)
        known = self._known(key)
        if not known:
            return ParameterValue(1.0, Basis.ASSUMED, "assumed: no grouped GEMM measured")
        values = list(known.values())
        source = f"assumed: the mean measured on {', '.join(sorted(known))}"
        return ParameterValue(
            statistics.fmean(values), Basis.ASSUMED, source, low=min(values), high=max(values)
        )

    def latency(self, key: str) -> ParameterValue:
        """A model-wide fixed latency (fitted on the sets the file names)."""
        return _stored(self.data.globals[key])

    def resolve(self, gpu: GpuSpec) -> CalibratedParameters:
        """Every parameter of ``gpu``, keyed like :data:`CALIBRATION_SYMBOLS`."""
        getters: dict[str, Callable[[], ParameterValue]] = {}
        for fmt in GEMM_FORMATS:
            getters[f"gemm_efficiency.{fmt}"] = functools.partial(self.gemm, gpu, fmt)
        for kind in CAST_KINDS:
            getters[f"cast_efficiency.{kind}"] = functools.partial(self.cast, gpu, kind)
        for layout in GROUPED_LAYOUTS:
            getters[f"grouped_efficiency.{layout}"] = functools.partial(self.grouped, gpu, layout)
        for key in GLOBAL_KEYS:
            getters[key] = functools.partial(self.latency, key)
        values = {hw.spec_key: getters[hw.spec_key]() for hw in CALIBRATION_SYMBOLS}
        return CalibratedParameters(gpu.name, values)


def _low(value: ParameterValue) -> float:
    return value.value if value.low is None else value.low


def _high(value: ParameterValue) -> float:
    return value.value if value.high is None else value.high


# The last few (specs, data) pairs' resolvers: a fit resolves against a new data value on
# every step, so the cache must not grow with them.
_RESOLVERS: list[tuple[SpecDatabase, CalibrationData, _Resolver]] = []
_CACHED_RESOLVERS = 4


def calibration_for(
    gpu: GpuSpec, specs: SpecDatabase, data: CalibrationData | None = None
) -> CalibratedParameters:
    """The calibrated parameters of ``gpu`` (a GPU of ``specs``), from the bundled
    calibration file unless ``data`` is given."""
    data = data if data is not None else load_calibration()
    for cached_specs, cached_data, resolver in _RESOLVERS:
        if cached_specs is specs and cached_data is data:
            return resolver.resolve(gpu)
    resolver = _Resolver(specs, data)
    _RESOLVERS.insert(0, (specs, data, resolver))
    del _RESOLVERS[_CACHED_RESOLVERS:]
    return resolver.resolve(gpu)
