"""GPU spec files: loading, linting and name matching.

A spec file is TOML whose GPU keys are torchao's (``bf16_peak_tops``,
``peak_mem_bw_bytes_sec`` ...) so an entry of torchao's ``gpu_name_to_specs`` pastes
straight in, plus optional provenance keys. Every load is linted: all problems of a
file are collected and reported together, each naming the file, GPU, key, what was
expected and what was received. The format is documented in ``docs/specs-format.md``
and published as a JSON Schema (:func:`json_schema`).

The package: :mod:`.ranges` (bounds and defaults), :mod:`.text` (quoting and text
rules), :mod:`.descriptors` (one class per kind of key: validate and schema),
:mod:`.keys` (the keys themselves), :mod:`.model` (``GpuSpec``, ``SpecDatabase``),
:mod:`.matching` (which entry a device name means, and variant fallbacks),
:mod:`.lint` (loading) and :mod:`.schema` (the JSON Schema).
"""

from __future__ import annotations

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
from roofline.specs.keys import (
    EFFICIENCY_BASIS_KEYS,
    EFFICIENCY_KEYS,
    GPU_KEYS,
    PEAK_KEYS,
    TOP_KEYS,
    TOP_SPECS,
)
from roofline.specs.lint import ASSUMED_BASIS, BUNDLED_NAME, load_specs, parse_specs
from roofline.specs.matching import GpuMatch, VariantFallbackWarning, match_gpu
from roofline.specs.model import FALLBACK_KEYS, PLATFORMS, GpuSpec, Source, SpecDatabase
from roofline.specs.ranges import (
    BANDWIDTH_RANGE_BYTES_PER_S,
    DEFAULT_GEMM_EFFICIENCY,
    DEFAULT_LAUNCH_OVERHEAD_S,
    DEFAULT_MEM_EFFICIENCY,
    EFFICIENCY_RANGE,
    FP8_BLOCK_TO_FP8_RATIO_RANGE,
    FP8_TO_BF16_RATIO_RANGE,
    LAUNCH_OVERHEAD_RANGE,
    MAX_BANDWIDTH_BYTES_PER_S,
    MEASURED_MATMUL_TFLOPS_RANGE,
    MIN_BANDWIDTH_BYTES_PER_S,
    PEAK_RANGE_FLOP_PER_S,
    NumberRange,
)
from roofline.specs.schema import json_schema
from roofline.specs.text import MAX_URL_LENGTH, NON_FINITE_HINT, URL_EXPECTED

__all__ = [
    "ASSUMED_BASIS",
    "BANDWIDTH_RANGE_BYTES_PER_S",
    "BUNDLED_NAME",
    "DEFAULT_GEMM_EFFICIENCY",
    "DEFAULT_LAUNCH_OVERHEAD_S",
    "DEFAULT_MEM_EFFICIENCY",
    "EFFICIENCY_BASIS_KEYS",
    "EFFICIENCY_KEYS",
    "EFFICIENCY_RANGE",
    "FALLBACK_KEYS",
    "FP8_BLOCK_TO_FP8_RATIO_RANGE",
    "FP8_TO_BF16_RATIO_RANGE",
    "GPU_KEYS",
    "LAUNCH_OVERHEAD_RANGE",
    "MAX_BANDWIDTH_BYTES_PER_S",
    "MAX_URL_LENGTH",
    "MEASURED_MATMUL_TFLOPS_RANGE",
    "MIN_BANDWIDTH_BYTES_PER_S",
    "NON_FINITE_HINT",
    "PEAK_KEYS",
    "PEAK_RANGE_FLOP_PER_S",
    "PLATFORMS",
    "SOURCE_KEYS",
    "TOP_KEYS",
    "TOP_SPECS",
    "URL_EXPECTED",
    "Choice",
    "GpuMatch",
    "GpuSpec",
    "KeySpec",
    "Name",
    "Number",
    "NumberRange",
    "NumberTable",
    "Prefixes",
    "Source",
    "Sources",
    "SpecDatabase",
    "Text",
    "TextList",
    "TextTable",
    "VariantFallbackWarning",
    "json_schema",
    "load_specs",
    "match_gpu",
    "parse_specs",
]
