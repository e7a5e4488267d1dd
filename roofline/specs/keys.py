"""The keys of a spec file, as descriptors (:mod:`roofline.specs.descriptors`).

:data:`GPU_KEYS` (the keys of each ``[[gpu]]`` table) and :data:`TOP_SPECS` (the file's
top-level keys) are the one definition the lint, the JSON Schema and the Specs page read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from roofline.publish.slugs import MAX_NAME_LENGTH
from roofline.recipes import NATIVE_FORMATS, recipe_names
from roofline.specs.descriptors import (
    SOURCE_KEYS,
    Choice,
    KeySpec,
    Name,
    Number,
    NumberTable,
    Prefixes,
    Sources,
    Text,
    TextList,
    TextTable,
)
from roofline.specs.model import PLATFORMS
from roofline.specs.ranges import (
    BANDWIDTH_RANGE_BYTES_PER_S,
    CLOCK_RANGE_MHZ,
    DEFAULT_GEMM_EFFICIENCY,
    DEFAULT_LAUNCH_OVERHEAD_S,
    DEFAULT_MEM_EFFICIENCY,
    EFFICIENCY_RANGE,
    FP8_BLOCK_TO_FP8_RATIO_RANGE,
    L2_CAPACITY_RANGE_BYTES,
    LAUNCH_OVERHEAD_RANGE,
    MAX_BANDWIDTH_BYTES_PER_S,
    MEASURED_MATMUL_TFLOPS_RANGE,
    PEAK_RANGE_FLOP_PER_S,
    SM_COUNT_RANGE,
)
from roofline.specs.text import KeyProblem, describe

__all__ = [
    "EFFICIENCY_BASIS_KEYS",
    "EFFICIENCY_KEYS",
    "GPU_KEYS",
    "PEAK_KEYS",
    "SOURCE_KEYS",
    "TOP_KEYS",
    "TOP_SPECS",
]


def _bandwidth_hint(bandwidth: float) -> str:
    if bandwidth > MAX_BANDWIDTH_BYTES_PER_S:
        return f"{bandwidth / 1e12:g} TB/s is implausible; 1000x too large? ({bandwidth / 1e3:g})"
    return f"{bandwidth / 1e12:g} TB/s is implausible; given in GB/s or TB/s instead of bytes/s?"


def _percentage_hint(fraction: float) -> str:
    return (
        f"a percentage? write {fraction / 100:g} for {fraction:g}%" if 1 < fraction <= 100 else ""
    )


def _peak(key: str, about: str, required: bool = False, requires: tuple[str, ...] = ()) -> Number:
    return Number(
        key,
        about,
        required,
        range=PEAK_RANGE_FLOP_PER_S,
        requires=requires,
        noun="number of FLOP/s",
    )


_BASIS_CHOICES = ("measured", "assumed")


def _basis(key: str, about: str) -> Text:
    return Text(key, about, choices=_BASIS_CHOICES)


def _efficiency(key: str, about: str, default: float) -> Number:
    about = f"{about}, {EFFICIENCY_RANGE.text()}; default {default}"
    return Number(key, about, range=EFFICIENCY_RANGE, noun="fraction", hint=_percentage_hint)


_PEAKS = PEAK_RANGE_FLOP_PER_S.text()
_GPU_KEY_LIST: tuple[KeySpec, ...] = (
    Name(
        "name",
        f"display name, matched by --gpu (any case); at most {MAX_NAME_LENGTH} characters, at "
        "least one letter or digit a-z 0-9, no leading or trailing spaces, page slug unique",
        required=True,
        plain=True,
    ),
    _peak("bf16_peak_tops", f"dense bf16 peak, FLOP/s in {_PEAKS}", required=True),
    Number(
        "peak_mem_bw_bytes_sec",
        f"peak memory bandwidth, bytes/s in {BANDWIDTH_RANGE_BYTES_PER_S.text()} (0.1-50 TB/s)",
        required=True,
        range=BANDWIDTH_RANGE_BYTES_PER_S,
        noun="number of bytes/s",
        hint=_bandwidth_hint,
    ),
    _peak("fp8_peak_tops", f"dense fp8 peak, FLOP/s in {_PEAKS}; absent = no fp8"),
    _peak(
        "fp8_block_scaled_peak_tops",
        f"dense peak of block-scaled fp8 GEMMs (MXFP8: E8M0 scales per 32, FP32 accumulate) "
        f"where it differs from fp8_peak_tops, FLOP/s in {_PEAKS}, "
        f"{FP8_BLOCK_TO_FP8_RATIO_RANGE[0]:g}-{FP8_BLOCK_TO_FP8_RATIO_RANGE[1]:g}x "
        "fp8_peak_tops; needs fp8_peak_tops; absent = fp8_peak_tops",
        requires=("fp8_peak_tops",),
    ),
    _peak("fp4_peak_tops", f"dense fp4 peak, FLOP/s in {_PEAKS}; absent = no fp4"),
    Number(
        "peak_clock_mhz",
        f"the SM clock the printed peaks assume, MHz in {CLOCK_RANGE_MHZ.text()}; only "
        "used with sustained_clock_mhz",
        range=CLOCK_RANGE_MHZ,
        noun="number of MHz",
    ),
    Number(
        "sustained_clock_mhz",
        f"the SM clock the card measurably holds in tensor-core kernels, MHz in "
        f"{CLOCK_RANGE_MHZ.text()}, when it differs from peak_clock_mhz: every peak the "
        "model uses is scaled by sustained / peak clock (so measured efficiencies stay at or "
        "below 1); only used with peak_clock_mhz",
        range=CLOCK_RANGE_MHZ,
        noun="number of MHz",
    ),
    Number(
        "sm_count",
        f"streaming multiprocessors (NVIDIA) or compute units (AMD), a whole number in "
        f"{SM_COUNT_RANGE.text()}: the calibrated model's GEMM tiles run in waves of this "
        "many; absent = waves not modelled",
        range=SM_COUNT_RANGE,
        noun="whole number of SMs",
        integer=True,
    ),
    Number(
        "l2_cache_bytes",
        f"capacity of the last-level cache before DRAM (L2; on AMD Instinct the Infinity "
        f"Cache), bytes in {L2_CAPACITY_RANGE_BYTES.text()}: a kernel that fits in it is "
        "scored as streaming from it in benchmarks that repeat it without evicting the "
        "cache; absent = never",
        range=L2_CAPACITY_RANGE_BYTES,
        noun="number of bytes",
    ),
    _efficiency(
        "pct_achievable_gemm_tops", "achievable fraction of peak in GEMMs", DEFAULT_GEMM_EFFICIENCY
    ),
    _efficiency(
        "pct_achievable_mem_bw", "achievable fraction of bandwidth", DEFAULT_MEM_EFFICIENCY
    ),
    _basis(
        "efficiency_basis",
        "how the efficiencies were obtained: 'measured: who, where, against which peak' or "
        "'assumed: from what'",
    ),
    _basis(
        "gemm_efficiency_basis",
        "the same for pct_achievable_gemm_tops alone; absent = efficiency_basis",
    ),
    _basis(
        "mem_efficiency_basis",
        "the same for pct_achievable_mem_bw alone; absent = efficiency_basis",
    ),
    Text("efficiency_reference", "who measured them, or what they were copied from"),
    Text("vendor", "NVIDIA, AMD, ...", plain=True),
    Text("architecture", "e.g. Hopper, Blackwell, CDNA3", plain=True),
    Text("sku", "the SKU or variant the figures are for", plain=True),
    Text("peak_basis", "dense or sparse peak figures", choices=("dense", "sparse")),
    Text("accumulate_dtype", "accumulate dtype the peaks assume, e.g. fp32", plain=True),
    TextList("native_formats", "formats the hardware runs natively", choices=NATIVE_FORMATS),
    Choice(
        "platform",
        "the software stack's platform; absent = from vendor (NVIDIA: cuda, AMD: rocm; "
        "other vendors: unknown)",
        choices=PLATFORMS,
    ),
    TextTable(
        "software_gaps",
        "recipe name -> one sentence, with its source, on why this GPU's software stack "
        "cannot run a recipe whose format the hardware has",
        choices=tuple(recipe_names()),
        plain=True,
    ),
    TextTable(
        "grouped_software_gaps",
        "recipe name -> one sentence, with its source, on why this GPU's software stack has "
        "no grouped (mixture-of-experts) GEMM kernel for a recipe whose dense GEMMs it runs",
        choices=tuple(recipe_names()),
        plain=True,
    ),
    Prefixes(
        "device_prefixes",
        "torch.cuda.get_device_name() prefixes; non-empty, no leading spaces",
        plain=True,
    ),
    Text("derivation", "how a derived figure was computed"),
    Text("notes", "free text"),
    NumberTable(
        "measured_matmul_tflops",
        "public measured matmul TFLOP/s by dtype, values in "
        f"{MEASURED_MATMUL_TFLOPS_RANGE.text()}; dtype names: no < > or `",
        range=MEASURED_MATMUL_TFLOPS_RANGE,
    ),
    Sources("sources", "array of {url, read_on, figures, note}", figure_keys=lambda: GPU_KEYS),
)
#: The keys of a ``[[gpu]]`` table, in the order the lint checks and the docs list them.
GPU_KEYS: dict[str, KeySpec] = {spec.key: spec for spec in _GPU_KEY_LIST}
PEAK_KEYS = ("bf16_peak_tops", "fp8_peak_tops", "fp4_peak_tops")
EFFICIENCY_KEYS = ("pct_achievable_gemm_tops", "pct_achievable_mem_bw")
#: Efficiency key -> the key saying how it was obtained (falls back to efficiency_basis).
EFFICIENCY_BASIS_KEYS = {
    "pct_achievable_gemm_tops": "gemm_efficiency_basis",
    "pct_achievable_mem_bw": "mem_efficiency_basis",
}


@dataclass(frozen=True)
class SchemaVersion(KeySpec):
    """The format version: 1, the only one so far."""

    kind: ClassVar[str] = "const"

    def validate(self, value: Any) -> list[KeyProblem]:
        return [] if value == 1 else [KeyProblem(self.key, "1", describe(value))]

    def _schema(self) -> dict[str, Any]:
        return {"const": 1}


@dataclass(frozen=True)
class GpuTables(KeySpec):
    """The ``[[gpu]]`` tables: at least one, each with the keys of :data:`GPU_KEYS`."""

    kind: ClassVar[str] = "gpu_tables"

    def validate(self, value: Any) -> list[KeyProblem]:
        if isinstance(value, list) and value and all(isinstance(g, dict) for g in value):
            return []
        return [KeyProblem(self.key, "at least one [[gpu]] table", describe(value))]

    def schema(self) -> dict[str, Any]:
        # No description: each key below carries its own.
        item = {
            "type": "object",
            "additionalProperties": False,
            "required": [k for k, s in GPU_KEYS.items() if s.required],
            "dependentRequired": {k: list(s.requires) for k, s in GPU_KEYS.items() if s.requires},
            "properties": {key: spec.schema() for key, spec in GPU_KEYS.items()},
        }
        return {"type": "array", "minItems": 1, "items": item}


_LAUNCH_EXPECTED = f"a finite number of seconds in {LAUNCH_OVERHEAD_RANGE.text()}"
#: The top-level keys of a spec file.
TOP_SPECS: dict[str, KeySpec] = {
    spec.key: spec
    for spec in (
        SchemaVersion("schema_version", "format version, 1"),
        Number(
            "kernel_launch_overhead_s",
            f"launch floor of every kernel, seconds in {LAUNCH_OVERHEAD_RANGE.text()}; "
            f"default {DEFAULT_LAUNCH_OVERHEAD_S}",
            range=LAUNCH_OVERHEAD_RANGE,
            noun="number of seconds",
            type_expected=_LAUNCH_EXPECTED,
        ),
        GpuTables("gpu", "array of GPU tables", required=True),
    )
}
#: Top-level key -> description (the Specs page's table).
TOP_KEYS: dict[str, str] = {key: spec.description for key, spec in TOP_SPECS.items()}
