"""Published measurements as sourced data, linted like the spec database.

The bundled file ``roofline/data/measurements.toml`` holds public measured sets (torchao
benchmark tables, Transformer Engine GEMM profiles, vLLM kernel benchmarks ...), each with
its source URL, the date it was read, the GPU and software, what the timed region contains
and which model (mode, recipe, fusion) it is compared with. Calibration fits on the
``fit`` sets; ``holdout`` sets are only scored; ``context`` sets are shown, not scored.

The package: :mod:`.model` (the types and the error), :mod:`.rules` (the schema as data:
keys, limits, ranges), :mod:`.fields` (field and point checks) and :mod:`.lint` (set rules
and loading).
"""

from __future__ import annotations

from roofline.measurements.lint import BUNDLED_NAME, load_measurements, parse_measurements
from roofline.measurements.model import (
    KernelLibrary,
    L2State,
    MeasuredQuantity,
    MeasurementDatabase,
    MeasurementError,
    MeasurementProblem,
    MeasurementSet,
    Point,
    SetRole,
    SideKernel,
    Source,
    TimedRegion,
    Timer,
)
from roofline.measurements.rules import SCHEMA_VERSION, SPEEDUP_RANGE, TIME_US_RANGE

__all__ = [
    "BUNDLED_NAME",
    "SCHEMA_VERSION",
    "SPEEDUP_RANGE",
    "TIME_US_RANGE",
    "KernelLibrary",
    "L2State",
    "MeasuredQuantity",
    "MeasurementDatabase",
    "MeasurementError",
    "MeasurementProblem",
    "MeasurementSet",
    "Point",
    "SetRole",
    "SideKernel",
    "Source",
    "TimedRegion",
    "Timer",
    "load_measurements",
    "parse_measurements",
]
