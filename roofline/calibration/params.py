"""The calibrated model's parameter values for one GPU, each with its basis and source,
resolved GPU -> architecture family -> wider groups -> every GPU, in this order:

1. ``roofline/data/calibration.toml``: a value fitted on named measurement sets (basis
   ``fitted``) or read off a kernel-level measurement (``measured``); for the bf16 and fp8
   GEMM efficiencies also the spec database's measured matmul throughput (MAMF) over the
   GPU's own peak (``measured``). Level ``gpu``.
2. the GPU's architecture family (:mod:`roofline.calibration.families`: Hopper, Blackwell
   datacenter, Blackwell consumer, CDNA3, CDNA4, Ada, Ampere): the mean over the family's
   GPUs that have the value, always as a fraction of *this* GPU's own peak figures (an
   efficiency, or a ratio of efficiencies applied to this GPU's own parent efficiency),
   never one other GPU's absolute number. A fixed latency stored per GPU (a cast's launch,
   a GEMM's fixed time: :data:`~roofline.calibration.data.PER_GPU_LATENCY_KEYS`) is a
   time, not a fraction of a peak: its family's mean time. Basis ``assumed``, level ``family``.
3. the GPUs of its market segment on its software platform that have the value, else its
   segment's, else its platform's (:func:`~roofline.calibration.families.pools`), else
   every GPU's, likewise (level ``global``; a software platform's parameter,
   :data:`~roofline.calibration.families.PLATFORM_PARAMS`, pools its platform's GPUs only);
   for the model-wide fixed latencies without a stored value, and a value no GPU has, the
   spec database's own figure (launch floor, ``pct_achievable_*``), else a stated default.

Each assumed value carries the range its GPUs span (``low``/``high``);
:mod:`roofline.analysis.error_bands` turns the level into a cross-validated error band.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from roofline.calibration.data import (
    GLOBAL_KEYS,
    HARNESS_DEFAULTS,
    OPTIONAL_GLOBAL_KEYS,
    PER_GPU_LATENCY_KEYS,
    CalibrationData,
    Entry,
    GpuCv,
    load_calibration,
)
from roofline.calibration.families import PLATFORM_PARAMS, Pool, pools, same_platform, unknown_group
from roofline.calibration.values import Basis, Level, ParameterValue, worst_level
from roofline.specs import GpuSpec, SpecDatabase, load_specs
from roofline.symbols import CALIBRATION_SYMBOLS, OMEGA_STORE


@dataclass(frozen=True)
class _Pool:
    """What an assumed value is the mean of: level, group (as named), GPUs, values."""

    level: Level
    what: str
    names: list[str]
    values: list[float]

    def where(self) -> str:
        """The group and its GPUs, as a source text says them."""
        return f"{self.what} ({', '.join(self.names)})"


@dataclass(frozen=True)
class CalibratedParameters:
    """Every calibration parameter's value for one GPU (keys: the symbols' ``spec_key``)."""

    gpu: str
    values: Mapping[str, ParameterValue]
    #: The cross-validated error of this GPU's own fit, where the calibration file
    #: records one (:class:`roofline.calibration.data.GpuCv`): its error band.
    cv: GpuCv | None = None

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
        return CalibratedParameters(self.gpu, values, self.cv)


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
#: A cast kind no GPU has data for is timed like its parent (else a row kernel): the SR RHT
#: cast is the round-to-nearest one that also draws a random number per element.
_CAST_PARENT = {"hadamard_cast_sr": "hadamard_cast"}
#: Likewise a latency without a stored value takes its parent's (else the launch floor).
_LATENCY_PARENT = {
    "hadamard_cast_sr_fixed_latency_s": "hadamard_cast_fixed_latency_s",
    "reduce_fixed_latency_s": "cast_fixed_latency_s",
    "cast_cold_l2_start_s": "cold_l2_start_s",
}


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
    def _all_specs(self) -> dict[str, GpuSpec]:
        # A value stored for a GPU of the bundled database that this one lacks still has a
        # family and platform (a time pools every GPU the file measured).
        return {**_bundled_specs(), **self.specs}

    @functools.cached_property
    def _pools(self) -> tuple[Pool, ...]:
        return pools(self._all_specs.values())

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

    def _pooled(self, gpu: GpuSpec, known: Mapping[str, float]) -> _Pool | None:
        """The values of the nearest of ``gpu``'s groups (:attr:`_pools`) in which any GPU
        has one, else every GPU's; None when no GPU has one."""
        for kind, what, group in self._pools:
            mine = group[gpu.name]
            if unknown_group(mine):
                continue
            pool = {n: v for n, v in known.items() if group.get(n) == mine}
            if pool:
                level = Level.FAMILY if kind == "family" else Level.GLOBAL
                return _Pool(level, what.format(mine), sorted(pool), list(pool.values()))
        if not known:
            return None
        every = "the mean over every GPU with data"
        return _Pool(Level.GLOBAL, every, sorted(known), list(known.values()))

    def gemm(self, gpu: GpuSpec, fmt: str) -> ParameterValue:
        """The GEMM efficiency of ``fmt`` on ``gpu``."""
        direct = self._gemm_direct(gpu, fmt)
        if direct is not None:
            return direct
        if fmt == "bf16":
            return self._bf16_fallback(gpu)
        parent_fmt = _GEMM_PARENT[fmt]
        parent = self.gemm(gpu, parent_fmt)
        ratios = {
            name: values[fmt] / values[parent_fmt]
            for name, values in self._direct_gemm.items()
            if fmt in values and parent_fmt in values
        }
        pooled = self._pooled(gpu, ratios)
        if pooled is None:
            return replace(
                parent,
                basis=Basis.ASSUMED,
                source=f"assumed equal to eta_{parent_fmt} (no GPU has both measured)",
                level=Level.GLOBAL,
            )
        level, values = pooled.level, pooled.values
        mean = statistics.fmean(values)
        source = (
            f"assumed: this GPU's eta_{parent_fmt} x {mean:.3f}, {pooled.where()}"
            f" of eta_{fmt}/eta_{parent_fmt}"
        )
        return ParameterValue(
            min(parent.value * mean, 1.0),
            Basis.ASSUMED,
            source,
            low=min(_low(parent) * min(values), 1.0),
            high=min(_high(parent) * max(values), 1.0),
            level=worst_level((level, parent.level)),
        )

    def _bf16_fallback(self, gpu: GpuSpec) -> ParameterValue:
        measured = {n: v["bf16"] for n, v in self._direct_gemm.items() if "bf16" in v}
        if not gpu.gemm_efficiency_assumed:
            source = f"spec database pct_achievable_gemm_tops ({gpu.gemm_basis})"
            if gpu.efficiency_reference:
                source += f": {gpu.efficiency_reference}"
            return ParameterValue(gpu.pct_achievable_gemm_tops, Basis.MEASURED, source)
        default = gpu.pct_achievable_gemm_tops
        return self._mean_or(gpu, measured, default, "spec database pct_achievable_gemm_tops")

    def _mean_or(
        self, gpu: GpuSpec, known: Mapping[str, float], default: float, default_key: str
    ) -> ParameterValue:
        """The family's (else every GPU's) mean of ``known``; without any, the spec's own
        ``default_key`` figure (assumed, global)."""
        pooled = self._pooled(gpu, known)
        if pooled is None:
            source = f"assumed: {default_key} (no GPU of this database has data)"
            return ParameterValue(default, Basis.ASSUMED, source, level=Level.GLOBAL)
        level, values = pooled.level, pooled.values
        source = f"assumed: {pooled.where()}"
        return ParameterValue(
            statistics.fmean(values),
            Basis.ASSUMED,
            source,
            low=min(values),
            high=max(values),
            level=level,
        )

    def cast(self, gpu: GpuSpec, kind: str) -> ParameterValue:
        """The bandwidth fraction of cast kernels of ``kind`` on ``gpu``."""
        key = f"cast_efficiency.{kind}"
        entry = self.data.gpu_entry(gpu.name, key)
        if entry is not None:
            return _stored(entry)
        known = self._known(key)
        if not known and kind != "row":  # no GPU measured this kind: like its nearest kind
            parent = _CAST_PARENT.get(kind, "row")
            value = self.cast(gpu, parent)
            return replace(value, basis=Basis.ASSUMED, source=f"assumed equal to eta_{parent}")
        mem = gpu.pct_achievable_mem_bw
        return self._mean_or(gpu, known, mem, "spec database pct_achievable_mem_bw")

    def _known(self, key: str) -> dict[str, float]:
        """GPU -> stored value of ``key``, over the GPUs of this database that have one."""
        return {
            name: entries[key].value
            for name, entries in self.data.gpus.items()
            if key in entries and name in self.specs
        }

    def fraction(self, gpu: GpuSpec, key: str) -> ParameterValue:
        """A fraction with no spec figure behind it (a grouped GEMM's rate, the hidden share
        of a GEMM's output store): stored, else a pooled mean (assumed), else 1."""
        entry = self.data.gpu_entry(gpu.name, key)
        if entry is not None:
            return _stored(entry)
        return self._pooled_value(gpu, key, self._known(key), 1.0, "1")

    def _pooled_value(
        self, gpu: GpuSpec, key: str, known: Mapping[str, float], default: float, what: str
    ) -> ParameterValue:
        """:meth:`_mean_or`, but a platform's parameter (PLATFORM_PARAMS) pools the GPUs
        of ``gpu``'s software platform only, else takes the platform default."""
        if key in PLATFORM_PARAMS:
            known = {n: v for n, v in known.items() if same_platform(self._all_specs[n], gpu)}
            if not known:
                value, source = PLATFORM_PARAMS[key]
                return ParameterValue(value, Basis.ASSUMED, source, level=Level.GLOBAL)
        return self._mean_or(gpu, known, default, what)

    def gpu_latency(self, gpu: GpuSpec, key: str) -> ParameterValue:
        """A fixed latency stored per GPU (:data:`PER_GPU_LATENCY_KEYS`): the GPU's own, else
        a pooled mean (every GPU of the file counts), else the spec's launch floor (assumed)."""
        entry = self.data.gpu_entry(gpu.name, key)
        if entry is not None:
            return _stored(entry)
        # A time needs no spec figure: every GPU the file measured counts at the global
        # level, in the spec database in use or not (a family needs the spec's architecture).
        known = {name: e[key].value for name, e in self.data.gpus.items() if key in e}
        floor_s = gpu.kernel_launch_overhead_s
        return self._pooled_value(gpu, key, known, floor_s, "the spec launch floor")

    def latency(self, gpu: GpuSpec, key: str) -> ParameterValue:
        """A fixed latency: a per-GPU one's :meth:`gpu_latency`; a model-wide one fitted or
        measured on the sets the file names, else its parent kernel's (assumed), else the
        spec database's kernel launch floor."""
        if key in PER_GPU_LATENCY_KEYS:
            return self.gpu_latency(gpu, key)
        entry = self.data.globals.get(key)
        if entry is not None:
            return replace(_stored(entry), level=Level.GLOBAL)
        parent = _LATENCY_PARENT.get(key)
        if parent in PER_GPU_LATENCY_KEYS or parent in self.data.globals:
            value = self.latency(gpu, parent)
            return replace(value, basis=Basis.ASSUMED, source=f"assumed equal to {parent}")
        if key in OPTIONAL_GLOBAL_KEYS:
            value, source = HARNESS_DEFAULTS[key]
            return ParameterValue(value, Basis.ASSUMED, source, level=Level.GLOBAL)
        source = "assumed: the spec database's kernel launch floor (no stored value)"
        floor_s = gpu.kernel_launch_overhead_s
        return ParameterValue(floor_s, Basis.ASSUMED, source, level=Level.GLOBAL)

    def resolve(self, gpu: GpuSpec) -> CalibratedParameters:
        """Every parameter of ``gpu``, keyed like :data:`CALIBRATION_SYMBOLS`."""
        getters: dict[str, Callable[[], ParameterValue]] = {}
        for fmt in GEMM_FORMATS:
            getters[f"gemm_efficiency.{fmt}"] = functools.partial(self.gemm, gpu, fmt)
        for kind in CAST_KINDS:
            getters[f"cast_efficiency.{kind}"] = functools.partial(self.cast, gpu, kind)
        for key in (*(f"grouped_efficiency.{g}" for g in GROUPED_LAYOUTS), OMEGA_STORE.spec_key):
            getters[key] = functools.partial(self.fraction, gpu, key)
        for key in (*GLOBAL_KEYS, *PER_GPU_LATENCY_KEYS):
            getters[key] = functools.partial(self.latency, gpu, key)
        values = {hw.spec_key: getters[hw.spec_key]() for hw in CALIBRATION_SYMBOLS}
        return CalibratedParameters(gpu.name, values, self.data.cv.get(gpu.name))


@functools.cache
def _bundled_specs() -> SpecDatabase:
    """The bundled spec database, read once per process (a resolver is made per fit step)."""
    return load_specs()


def _low(value: ParameterValue) -> float:
    return value.value if value.low is None else value.low


def _high(value: ParameterValue) -> float:
    return value.value if value.high is None else value.high


def calibration_gpu_names(specs: SpecDatabase) -> set[str]:
    """The GPU names a calibration file used with ``specs`` may give: those of ``specs``
    and of the bundled database (a file derived from the bundled calibration names its
    GPUs; entries of GPUs ``specs`` lacks are ignored, as the bundled file's are)."""
    return set(specs) | set(load_specs())


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
