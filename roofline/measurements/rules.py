"""The measurement file's schema as data: keys, text limits, value ranges and which timed
regions go with which quantities and modes. :mod:`roofline.measurements.lint` applies them."""

from __future__ import annotations

import re
from typing import Any

from roofline.datafiles import core as datafile
from roofline.datafiles import sources
from roofline.datafiles.sources import SourceRule
from roofline.measurements.model import (
    KernelLibrary,
    L2State,
    MeasuredQuantity,
    SetRole,
    TimedRegion,
    Timer,
)
from roofline.recipes import Mode

SCHEMA_VERSION = 1

# key -> required; max_mean_error and terms are required or refused by other keys' values.
SET_KEYS: dict[str, bool] = {
    "id": True,
    "title": True,
    "gpu": True,
    "mode": True,
    "recipe": True,
    "fusion": True,
    "timed_region": True,
    "quantity": True,
    "timer": False,
    "l2": False,
    "library": False,
    "terms": False,
    "side_kernels": False,
    "groups": False,
    "role": True,
    "max_mean_error": False,
    "software": True,
    "command": False,
    "notes": False,
    "source": True,
    "points": True,
}
SOURCE_KEYS: dict[str, bool] = {"url": True, "read_on": True, "commit": False, "note": False}
#: The ``[set.source]`` table: the one source-entry rule, with these keys.
SOURCE_RULE = SourceRule(SOURCE_KEYS)
SIDE_KERNEL_KEYS: dict[str, bool] = {
    "what": True,
    "read_bytes": False,
    "write_bytes": False,
    "elements": True,
}
#: At most this many side kernels per set, and bytes per element per side (a complex128
#: element is 16 bytes; 64 leaves room for a kernel touching several buffers).
MAX_SIDE_KERNELS = 8
MAX_SIDE_BYTES = 64.0
POINT_KEYS: dict[str, bool] = {"shape": False, "shapes": False, "value": True, "label": False}
TOP_KEYS: dict[str, bool] = {"schema_version": True, "set": True}

SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# A set's id is its anchor on the Validation page, beside the anchors mkdocs makes from
# the page's own headings: an id equal to one would take that heading's link over.
# tests/test_hostile_findings.py keeps this list in step with the page's headings.
RESERVED_IDS = frozenset(
    {
        "validation",
        "overall",
        "by-timed-region",
        "by-timer",
        "cold-start",
        "side-kernels",
        "every-set",
        "held-out-never-used-to-fit",
        "fitted-on",
        "context-shown-not-scored",
        "calibration-parameters",
        "model-wide",
        "gemm-efficiency",
        "gemm-latencies-and-output-store",
        "cast-kernel-bandwidth-efficiency",
        "grouped-gemms-and-nvfp4-training-kernels",
        "every-value-with-its-source",
        "cross-validation-by-source",
        "weakly-determined",
    }
)
MAX_ID_LENGTH = 64
COMMIT = sources.COMMIT
# Longest text per field: long enough for any real entry, short enough that a hostile
# file cannot flood a terminal or a page.
TEXT_LIMITS = {
    "title": 200,
    "software": 500,
    "command": 500,
    "notes": 4000,
    "label": 64,
    "what": 200,
}
SOURCE_NOTE_LIMIT = sources.SOURCE_NOTE_LIMIT
MAX_SETS = datafile.MAX_SETS
MAX_POINTS = datafile.MAX_POINTS_PER_SET
MAX_POINTS_PER_FILE = datafile.MAX_POINTS_PER_FILE
MAX_TERMS = 32  # a model has at most a dozen terms
MAX_SHAPES_PER_POINT = 64
SPEEDUP_RANGE = (0.01, 100.0)
TIME_US_RANGE = (0.01, 1e8)
# What each timed region can be compared with, and in which modes it exists.
REGION_QUANTITIES: dict[TimedRegion, tuple[MeasuredQuantity, ...]] = {
    TimedRegion.GEMM: (MeasuredQuantity.GEMM_SPEEDUP, MeasuredQuantity.TIME_US),
    TimedRegion.GEMM_QUANTIZE: (MeasuredQuantity.SPEEDUP, MeasuredQuantity.TIME_US),
    TimedRegion.RELU_LINEAR: (MeasuredQuantity.SPEEDUP,),
    TimedRegion.LN_LINEAR_ACT: (MeasuredQuantity.SPEEDUP,),
    TimedRegion.LINEAR_FWD_BWD: (MeasuredQuantity.SPEEDUP,),
    TimedRegion.CAST_KERNEL: (MeasuredQuantity.TIME_US,),
    TimedRegion.END_TO_END: (MeasuredQuantity.SPEEDUP,),
}
ENUM_FIELDS: tuple[tuple[str, type[Any]], ...] = (
    ("mode", Mode),
    ("timed_region", TimedRegion),
    ("quantity", MeasuredQuantity),
    ("role", SetRole),
)
#: How a set was timed, and whose kernel it times: optional (absent: ``unknown``), like
#: their enum values.
HARNESS_FIELDS: tuple[tuple[str, type[Any]], ...] = (
    ("timer", Timer),
    ("l2", L2State),
    ("library", KernelLibrary),
)
REGION_MODES: dict[TimedRegion, Mode] = {
    TimedRegion.RELU_LINEAR: Mode.INFERENCE,
    TimedRegion.LN_LINEAR_ACT: Mode.TRAINING,
    TimedRegion.LINEAR_FWD_BWD: Mode.TRAINING,
}
# The model terms a time_us set of each region may sum.
REGION_TERM_PREFIXES: dict[TimedRegion, tuple[str, ...]] = {
    TimedRegion.CAST_KERNEL: ("cast.", "rearrange."),
    TimedRegion.GEMM: ("gemm.",),
    TimedRegion.GEMM_QUANTIZE: ("gemm.", "cast.", "rearrange."),
}
#: The most experts a grouped set may name (a grouped layer's G).
MAX_GROUPS = 4096
