"""Number ranges and defaults of spec keys: one source for the lint, the JSON Schema and
the site's calculator (which range-checks its overrides with the same bounds)."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

DEFAULT_LAUNCH_OVERHEAD_S = 2e-6
# torchao's measured H100 efficiencies, the default for entries that give none.
DEFAULT_GEMM_EFFICIENCY = 0.78
DEFAULT_MEM_EFFICIENCY = 0.92

MIN_BANDWIDTH_BYTES_PER_S = 0.1e12
MAX_BANDWIDTH_BYTES_PER_S = 50e12
FP8_TO_BF16_RATIO_RANGE = (1.6, 2.4)
# A block-scaled fp8 peak runs at least the plain fp8 rate; GeForce Blackwell runs it at 2x
# (its FP16-accumulate rate), and no part is known beyond that: 4x leaves room, no more.
FP8_BLOCK_TO_FP8_RATIO_RANGE = (1.0, 4.0)


@dataclass(frozen=True)
class NumberRange:
    """The values a number key accepts: an interval, each end open or closed."""

    low: float
    high: float
    low_inclusive: bool
    high_inclusive: bool

    def contains(self, x: object) -> bool:
        """True when ``x`` is a finite, normal number (not a bool) within the interval.

        Subnormal numbers (non-zero, closer to 0 than ``sys.float_info.min``) are refused:
        they have lost their precision and any division by one overflows to infinity."""
        if not isinstance(x, int | float) or isinstance(x, bool):
            return False
        try:
            if not math.isfinite(x) or (x != 0 and abs(x) < sys.float_info.min):
                return False
        except OverflowError:  # an int beyond float range: finite, but far out of any range
            return False
        above_low = x >= self.low if self.low_inclusive else x > self.low
        below_high = x <= self.high if self.high_inclusive else x < self.high
        return above_low and below_high

    def text(self) -> str:
        """Interval notation: ``(0, 1]``, ``[1e+11, 5e+13]``."""
        left = "[" if self.low_inclusive else "("
        right = "]" if self.high_inclusive else ")"
        return f"{left}{self.low:g}, {self.high:g}{right}"

    def schema(self) -> dict[str, float]:
        """The JSON Schema bounds: ``minimum``/``exclusiveMinimum`` and the maximum. An
        interval open at 0 starts at the smallest normal float, as :meth:`contains`
        refuses subnormal numbers (every range of a spec key is open at 0 or above it)."""
        high = "maximum" if self.high_inclusive else "exclusiveMaximum"
        if self.low == 0 and not self.low_inclusive:
            return {"minimum": sys.float_info.min, high: self.high}
        low = "minimum" if self.low_inclusive else "exclusiveMinimum"
        return {low: self.low, high: self.high}


# 1 EFLOP/s: about 60x the largest dense peak of any GPU today (fp4 on B300, ~15e15),
# small enough that a figure typed in the wrong unit or with a stray exponent is caught.
PEAK_RANGE_FLOP_PER_S = NumberRange(0, 1e18, low_inclusive=False, high_inclusive=True)
BANDWIDTH_RANGE_BYTES_PER_S = NumberRange(
    MIN_BANDWIDTH_BYTES_PER_S, MAX_BANDWIDTH_BYTES_PER_S, low_inclusive=True, high_inclusive=True
)
EFFICIENCY_RANGE = NumberRange(0, 1, low_inclusive=False, high_inclusive=True)
#: The file-level ``kernel_launch_overhead_s``: positive, below a millisecond.
LAUNCH_OVERHEAD_RANGE = NumberRange(0, 1e-3, low_inclusive=False, high_inclusive=False)
#: Values of ``measured_matmul_tflops`` (TFLOP/s, not FLOP/s): 1e6 TFLOP/s = 1 EFLOP/s.
MEASURED_MATMUL_TFLOPS_RANGE = NumberRange(0, 1e6, low_inclusive=False, high_inclusive=True)
#: ``peak_clock_mhz`` / ``sustained_clock_mhz``: a GPU's SM clock, 100 MHz to 5 GHz.
CLOCK_RANGE_MHZ = NumberRange(100, 5000, low_inclusive=True, high_inclusive=True)
# Streaming multiprocessors (NVIDIA) or compute units (AMD): today's GPUs have 40-320.
SM_COUNT_RANGE = NumberRange(1, 1024, low_inclusive=True, high_inclusive=True)
#: ``l2_cache_bytes``: today's last-level caches hold 4 MB (small GPUs) to 256 MiB (the
#: Infinity Cache of AMD Instinct): 1e6 to 4e9 bytes catches a figure typed in MB or KB.
L2_CAPACITY_RANGE_BYTES = NumberRange(1e6, 4e9, low_inclusive=True, high_inclusive=True)
