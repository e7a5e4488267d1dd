"""The physical bounds of every calibration parameter, checked when a calibration file
loads and after every fit.

* an efficiency (a GEMM's fraction of its peak, a cast kernel's fraction of the memory
  bandwidth, a grouped GEMM's rate over the dense one) is a fraction in (0, 1]: a GPU
  cannot beat its own peak;
* a fixed latency is the time one kernel of a stated kind takes beyond its roofline time
  (its launch, prologue and epilogue): 0.5 to 15 microseconds. Below that no GPU kernel
  launches; above it the "latency" is another kernel's cost (a quantization pass, a
  framework's dispatch) that belongs in a term of its own. A K-group rearrangement's time
  per serial step is a fraction of one launch: 0.01 to 15 microseconds;
* the share of a GEMM's output store its main loop hides is a fraction in [0, 1]: none of
  it (a kernel that stores each tile after its last K step) to all of it.

``tests/test_calibration.py`` holds the bundled file and every fit to these bounds.
"""

from __future__ import annotations

from roofline.specs.ranges import EFFICIENCY_RANGE, NumberRange
from roofline.symbols import (
    CALIBRATION_SYMBOLS,
    OMEGA_STORE,
    T_KSTEP,
    T_REARRANGE_K,
    HardwareSymbol,
)

MIN_FIXED_LATENCY_S = 0.5e-6
MAX_FIXED_LATENCY_S = 15e-6
FIXED_LATENCY_RANGE = NumberRange(
    MIN_FIXED_LATENCY_S, MAX_FIXED_LATENCY_S, low_inclusive=True, high_inclusive=True
)
STEP_LATENCY_RANGE = NumberRange(0.01e-6, MAX_FIXED_LATENCY_S, True, True)
SHARE_RANGE = NumberRange(0.0, 1.0, low_inclusive=True, high_inclusive=True)
#: One K step of a GEMM tile: 0 where K is split over idle SMs, at most a DRAM round trip.
K_STEP_RANGE = NumberRange(0.0, 1e-6, low_inclusive=True, high_inclusive=True)
#: The fitter's lower end for a fraction: (0, 1] has no least element, and a fraction
#: this small would mean a kernel running at 1% of its peak.
FIT_MIN_FRACTION = 0.01

_SYMBOLS: dict[str, HardwareSymbol] = {hw.spec_key: hw for hw in CALIBRATION_SYMBOLS}
#: The parameters that are neither a fixed latency nor an efficiency in (0, 1].
_OWN_RANGES: dict[str, NumberRange] = {
    T_REARRANGE_K.spec_key: STEP_LATENCY_RANGE,
    OMEGA_STORE.spec_key: SHARE_RANGE,
    T_KSTEP.spec_key: K_STEP_RANGE,
}


def is_latency(key: str) -> bool:
    """True for a parameter in seconds (a fixed latency)."""
    return _SYMBOLS[key].unit == "s"


def bounds_of(key: str) -> NumberRange:
    """The interval parameter ``key`` must lie in."""
    if key in _OWN_RANGES:
        return _OWN_RANGES[key]
    return FIXED_LATENCY_RANGE if is_latency(key) else EFFICIENCY_RANGE


def kernel_of(key: str) -> str:
    """What the parameter times, in words (the symbol's description)."""
    return _SYMBOLS[key].description


def expected_text(key: str) -> str:
    """The expected form of ``key``'s value, for lint messages."""
    if is_latency(key):
        us = bounds_of(key)
        return f"a fixed latency in [{us.low * 1e6:g}, {us.high * 1e6:g}] us ({kernel_of(key)})"
    share = bounds_of(key)
    return f"a finite fraction in {'[' if share.low_inclusive else '('}{share.low:g}, 1]"


def fit_bounds(key: str) -> tuple[float, float]:
    """The closed interval the fitter searches for ``key``."""
    bounds = bounds_of(key)
    low = bounds.low if bounds.low_inclusive else FIT_MIN_FRACTION
    return low, bounds.high


def out_of_bounds(values: dict[str, float]) -> list[str]:
    """``key = value (expected ...)`` for every value outside its bounds."""
    return [
        f"{key} = {value:g} (expected {expected_text(key)})"
        for key, value in values.items()
        if not bounds_of(key).contains(value)
    ]
