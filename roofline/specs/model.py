"""One GPU's figures and provenance (:class:`GpuSpec`) and a loaded file (:class:`SpecDatabase`).

``GpuSpec``'s fields are the keys of :data:`roofline.specs.keys.GPU_KEYS` (renamed where
:data:`KEY_FIELDS` says) plus what loading derives; a test holds the two in step. Optional
keys with a documented fallback keep the value as given (None or "" when absent); the
properties and :meth:`GpuSpec.value` apply the fallback.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from roofline.errors import SpecProblem
from roofline.recipes import NativeFormat
from roofline.specs.matching import GpuMatch, match_gpu
from roofline.specs.ranges import DEFAULT_LAUNCH_OVERHEAD_S
from roofline.symbols import HARDWARE_SYMBOLS

#: Spec key -> the GpuSpec field that holds it, where the two names differ.
KEY_FIELDS: dict[str, str] = {"sources": "source_records", "platform": "platform_given"}
#: The software platforms a GPU's stack can be (the ``platform`` key's choices).
PLATFORMS = ("cuda", "rocm")
#: Vendor (lower case) -> platform, for entries without a ``platform`` key.
VENDOR_PLATFORMS: dict[str, str] = {"nvidia": "cuda", "amd": "rocm"}
#: The peaks a sustained clock scales (``peak_clock_mhz`` / ``sustained_clock_mhz``).
CLOCKED_PEAK_KEYS = frozenset(
    ("bf16_peak_tops", "fp8_peak_tops", "fp8_block_scaled_peak_tops", "fp4_peak_tops")
)
#: Spec key -> the key whose value stands in when it is absent (per-path peaks).
FALLBACK_KEYS: dict[str, str] = {hw.spec_key: hw.fallback for hw in HARDWARE_SYMBOLS if hw.fallback}
#: Spec key -> the number an absent value stands for (a figure that changes nothing).
DEFAULT_VALUES: dict[str, float] = {
    hw.spec_key: hw.default for hw in HARDWARE_SYMBOLS if hw.default is not None
}


@dataclass(frozen=True)
class Source:
    """Where figures came from: a URL, when it was read and which keys it supports."""

    url: str
    read_on: dt.date | None = None
    figures: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class GpuSpec:
    """One GPU's figures (torchao's key names) and their provenance."""

    name: str
    bf16_peak_tops: float
    peak_mem_bw_bytes_sec: float
    pct_achievable_gemm_tops: float
    pct_achievable_mem_bw: float
    kernel_launch_overhead_s: float = DEFAULT_LAUNCH_OVERHEAD_S
    fp8_peak_tops: float | None = None
    fp4_peak_tops: float | None = None
    efficiency_basis: str = "given"
    efficiency_reference: str = ""
    vendor: str = ""
    architecture: str = ""
    sku: str = ""
    peak_basis: str = "dense"
    accumulate_dtype: str = "fp32"
    native_formats: tuple[NativeFormat, ...] = ()
    native_formats_given: bool = True
    device_prefixes: tuple[str, ...] = ()
    derivation: str = ""
    notes: str = ""
    measured_matmul_tflops: Mapping[str, float] = field(default_factory=dict)
    source_records: tuple[Source, ...] = ()
    # As given (None when absent): value() falls back to fp8_peak_tops.
    fp8_block_scaled_peak_tops: float | None = None
    # As given, or set by loading for a defaulted fraction; "" = efficiency_basis.
    gemm_efficiency_basis: str = ""
    mem_efficiency_basis: str = ""
    # Recipe name -> why this GPU's software stack cannot run it (the hardware could).
    software_gaps: Mapping[str, str] = field(default_factory=dict)
    # Recipe name -> why this GPU's stack has no grouped GEMM kernel for it (dense runs).
    grouped_software_gaps: Mapping[str, str] = field(default_factory=dict)
    platform_given: str | None = None  # the ``platform`` key; see :attr:`platform`
    # The clock the printed peaks assume, and the one the card holds under load.
    peak_clock_mhz: float | None = None
    sustained_clock_mhz: float | None = None
    # Streaming multiprocessors / compute units (None: the calibrated model's GEMMs are
    # timed without wave quantization: value() returns the symbol's default, 10^12 SMs).
    sm_count: float | None = None
    # The last-level cache's capacity: read only when warm benchmarks are scored.
    l2_cache_bytes: float | None = None

    @property
    def clock_scale(self) -> float:
        """sustained / peak clock: the factor on every printed peak (1 without both)."""
        if self.peak_clock_mhz and self.sustained_clock_mhz:
            return self.sustained_clock_mhz / self.peak_clock_mhz
        return 1.0

    @property
    def sources(self) -> list[str]:
        """The source URLs, in file order."""
        return [s.url for s in self.source_records]

    @property
    def gemm_basis(self) -> str:
        """How ``pct_achievable_gemm_tops`` was obtained (its own basis, else the entry's)."""
        return self.gemm_efficiency_basis or self.efficiency_basis

    @property
    def mem_basis(self) -> str:
        """How ``pct_achievable_mem_bw`` was obtained (its own basis, else the entry's)."""
        return self.mem_efficiency_basis or self.efficiency_basis

    @property
    def gemm_efficiency_assumed(self) -> bool:
        """True when the GEMM fraction was not measured on this GPU."""
        return self.gemm_basis.startswith("assumed")

    @property
    def mem_efficiency_assumed(self) -> bool:
        """True when the memory-bandwidth fraction was not measured on this GPU."""
        return self.mem_basis.startswith("assumed")

    @property
    def efficiency_assumed(self) -> bool:
        """True when either efficiency fraction was not measured on this GPU."""
        return self.gemm_efficiency_assumed or self.mem_efficiency_assumed

    @property
    def platform(self) -> str | None:
        """The software platform, ``cuda`` or ``rocm``: the ``platform`` key, else derived
        from the vendor (NVIDIA, AMD); None when neither says (another vendor, or none)."""
        if self.platform_given:
            return self.platform_given
        return VENDOR_PLATFORMS.get(self.vendor.strip().lower())

    def given(self, key: str) -> float | None:
        """The number stored under a spec key as the file gave it (no fallback)."""
        return getattr(self, key)

    def value(self, key: str) -> float | None:
        """The number under a spec key (None when the GPU lacks it); an absent per-path
        peak (:data:`FALLBACK_KEYS`) is the value of the key it falls back to."""
        number = getattr(self, key)
        if number is None and key in FALLBACK_KEYS:
            return self.value(FALLBACK_KEYS[key])
        if number is None and key in DEFAULT_VALUES:
            return DEFAULT_VALUES[key]
        if number is not None and key in CLOCKED_PEAK_KEYS:
            return number * self.clock_scale  # the peak at the clock the card holds
        return number

    def hardware_values(self) -> dict[str, float]:
        """Spec key -> number for every hardware symbol this GPU defines."""
        values = {hw.spec_key: self.value(hw.spec_key) for hw in HARDWARE_SYMBOLS}
        return {k: v for k, v in values.items() if v is not None}

    def as_torchao_dict(self) -> dict[str, float]:
        """The entry as torchao's ``gpu_name_to_specs`` holds it (torchao's keys, plus a
        per-path peak only where the entry gives one)."""
        values = self.hardware_values()
        values.pop("kernel_launch_overhead_s")
        for key in DEFAULT_VALUES:  # not torchao's: only the calibrated model reads them
            values.pop(key, None)
        for key in FALLBACK_KEYS:
            if self.given(key) is None:
                values.pop(key, None)
        return values

    def ridge_point_flop_per_byte(self, peak_key: str) -> float | None:
        """Arithmetic intensity where compute and memory time meet, at peak figures."""
        peak = self.value(peak_key)
        return None if peak is None else peak / self.peak_mem_bw_bytes_sec


class SpecDatabase(Mapping[str, GpuSpec]):
    """The GPUs of one spec file, by name, with the warnings its lint raised."""

    def __init__(
        self, gpus: Mapping[str, GpuSpec], origin: str, warnings: tuple[SpecProblem, ...] = ()
    ) -> None:
        self._gpus = dict(gpus)
        self.origin = origin
        self.warnings = warnings

    def __getitem__(self, name: str) -> GpuSpec:
        return self._gpus[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._gpus)

    def __len__(self) -> int:
        return len(self._gpus)

    def find(self, name: str) -> GpuSpec:
        """The GPU called ``name``: the exact name (any case), or a device-name prefix match.

        ``torch.cuda.get_device_name()`` strings such as "NVIDIA H100 80GB HBM3" match the
        entry with the longest name or device prefix they start with. Silent about a
        variant fallback: callers that should warn use :meth:`match`.
        """
        return self.match(name).gpu

    def match(self, name: str) -> GpuMatch:
        """How ``name`` resolves (:func:`roofline.specs.matching.match_gpu`): the entry, and
        whether it matched by name, a listed device prefix, or only by the entry's name
        (``fallback``: an unlisted variant, with a ``warning`` line to show)."""
        return match_gpu(self._gpus.values(), name, self.origin)
