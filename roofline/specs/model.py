"""One GPU's figures and provenance (:class:`GpuSpec`) and a loaded file (:class:`SpecDatabase`).

``GpuSpec``'s fields are the keys of :data:`roofline.specs.keys.GPU_KEYS` (``sources``
becomes ``source_records``) plus what loading derives; a test holds the two in step.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from roofline.errors import SpecProblem, UnknownNameError, nearest
from roofline.recipes import NativeFormat
from roofline.specs.ranges import DEFAULT_LAUNCH_OVERHEAD_S
from roofline.symbols import HARDWARE_SYMBOLS


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

    @property
    def sources(self) -> list[str]:
        """The source URLs, in file order."""
        return [s.url for s in self.source_records]

    @property
    def efficiency_assumed(self) -> bool:
        """True when the efficiency fractions were not measured on this GPU."""
        return self.efficiency_basis.startswith("assumed")

    def value(self, key: str) -> float | None:
        """The number stored under a spec key (None when the GPU lacks it)."""
        return getattr(self, key)

    def hardware_values(self) -> dict[str, float]:
        """Spec key -> number for every hardware symbol this GPU defines."""
        values = {hw.spec_key: self.value(hw.spec_key) for hw in HARDWARE_SYMBOLS}
        return {k: v for k, v in values.items() if v is not None}

    def as_torchao_dict(self) -> dict[str, float]:
        """The entry as torchao's ``gpu_name_to_specs`` holds it."""
        values = self.hardware_values()
        values.pop("kernel_launch_overhead_s")
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
        entry with the longest name or device prefix they start with.
        """
        query = name.strip().lower()
        for gpu in self._gpus.values():
            if gpu.name.strip() and gpu.name.lower() == query:
                return gpu
        matches: dict[str, int] = {}
        for gpu in self._gpus.values():
            for prefix in (gpu.name, *gpu.device_prefixes):
                # An empty prefix would match every query, typos included; the lint refuses
                # them, and this guards databases built without it.
                if prefix.strip() and query.startswith(prefix.lower()):
                    matches[gpu.name] = max(matches.get(gpu.name, 0), len(prefix))
        if matches:
            best = max(matches.values())
            winners = sorted(g for g, n in matches.items() if n == best)
            if len(winners) == 1:
                return self._gpus[winners[0]]
            raise UnknownNameError(
                f"GPU name {name!r} is ambiguous: it matches {', '.join(winners)}; "
                "pass one of those names exactly"
            )
        message = f"unknown GPU {name!r} in {self.origin}; known: {', '.join(self._gpus)}"
        guess = nearest(name, self._gpus)
        if guess:
            message += f". Closest match: {guess!r}"
        raise UnknownNameError(message)
