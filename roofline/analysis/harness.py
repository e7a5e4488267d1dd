"""How the way a measurement was taken enters its prediction (scoring only).

The model predicts kernels of a running model. A published number can hold more, or
less, than that, and the measurement file says how (:mod:`roofline.measurements`):

* a set timed with L2 evicted before every call (``l2 = "cold"``) starts each kernel it
  times on an L2 full of the eviction's dirty lines: :data:`COLD_START` adds a replayed
  GEMM's cold start :data:`roofline.symbols.T_COLD` to each GEMM of a CUDA-graph replay
  and :data:`CAST_COLD_START` a kernel's own, :data:`roofline.symbols.T_COLD_CAST`, to
  each other kernel (:func:`cold_symbol` says which);
* a set timed on rotating operand copies larger than the cache (``l2 = "rotating"``)
  reads its operands from DRAM like every prediction, with no cold start: no flush left
  dirty lines to write back before its first loads;
* a set timed back to back on the same operands (``l2 = "warm"``) finds a kernel's data
  still in the last-level cache when it fits there: :data:`WARM_BANDWIDTH` streams each
  kernel whose bytes fit in the GPU's cache (:data:`roofline.symbols.L2_CAPACITY`) at the
  DRAM bandwidth over :data:`roofline.symbols.PHI_L2` (:func:`warm_times`);
* a set whose timed call also runs kernels no model term has (``[[set.side_kernels]]``:
  a zero fill of an output buffer, a cast of a result) is predicted with them, each timed
  as a pointwise kernel by the model in use (:func:`side_kernel_time`).

Every expression is sympy, like the model's terms; the Validation page prints them.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import sympy

from roofline.calibration.params import CalibratedParameters
from roofline.measurements import L2State, MeasurementSet, SideKernel, Timer
from roofline.model.calibrated import kind_time
from roofline.model.compiled import CompiledModel
from roofline.model.torchao import pointwise_time
from roofline.recipes import CastKind
from roofline.specs import GpuSpec
from roofline.symbol_types import HardwareSymbol
from roofline.symbols import (
    CALIBRATION_SYMBOLS,
    HARDWARE_SYMBOLS,
    KERNEL_BYTES,
    KERNEL_TIME,
    L2_CAPACITY,
    MEM_BW,
    PHI_L2,
    SIDE_BYTES,
    T_COLD,
    T_COLD_CAST,
    G,
    K,
    M,
    N,
)

#: One GEMM's time (:data:`roofline.symbols.KERNEL_TIME`, a term of the set's model),
#: replayed in a CUDA graph right after an L2 flush (a set whose ``l2`` is ``cold`` and
#: whose timer is one of :data:`GRAPH_TIMERS`): it starts on an L2 full of the flush's
#: dirty lines (:data:`roofline.symbols.T_COLD`).
COLD_START = KERNEL_TIME + T_COLD.symbol
#: The same for every other kernel of such a set's timed region (a cast, a scale
#: rearrangement, a side kernel: every other term with a time), and for a GEMM whose own
#: span a profiler or CUDA events time (:data:`roofline.symbols.T_COLD_CAST`).
CAST_COLD_START = KERNEL_TIME + T_COLD_CAST.symbol
#: The term keys that can take :data:`COLD_START`; every other key takes
#: :data:`CAST_COLD_START`.
GEMM_TERM_PREFIX = "gemm."
# Both evaluated from the printed expressions (one source of truth), argument order
# (kernel time, cold start), by the spec key of the cold start cold_symbol picks.
_STARTED = {
    cold.spec_key: sympy.lambdify((KERNEL_TIME, cold.symbol), expr, "numpy")
    for cold, expr in ((T_COLD, COLD_START), (T_COLD_CAST, CAST_COLD_START))
}
_DIMS = {"M": M, "K": K, "N": N, "G": G}


#: The timers whose cold-L2 numbers start each call's kernels right after the flush: a
#: CUDA-graph replay's and a profiler's device time, and CUDA events around an eager call
#: (triton's do_bench): the flush before the call (a 256 MB write, 30 to 140 us of GPU
#: time) runs while the host launches the call, so its kernel starts as the flush ends,
#: on the flush's dirty lines, with no host gap in its span (an RTX 5090 act-quant call
#: spans 6.14 us in all, torchao PR #3306). A host clock spans the host's own work too,
#: so such a set (or one whose timer is unknown) is compared without a cold start.
COLD_START_TIMERS = (Timer.CUDA_GRAPH, Timer.PROFILER, Timer.CUDA_EVENTS)


def starts_cold(mset: MeasurementSet) -> bool:
    """Whether ``mset`` is predicted with the cold starts (:data:`COLD_START`,
    :data:`CAST_COLD_START`): calls timed with L2 evicted before each, by a timer that
    starts with their kernels (:data:`COLD_START_TIMERS`)."""
    return mset.l2 is L2State.COLD and mset.timer in COLD_START_TIMERS


#: The timers whose cold GEMMs take :data:`COLD_START`: a CUDA-graph replay's. The fit
#: data that pin :data:`roofline.symbols.T_COLD` are all such replays (tritonbench's
#: cache-clearing graphs), which time a GEMM from the flush node's end. A profiler's span
#: and CUDA events around an eager call start with the GEMM's own kernel, as they do a
#: cast's: no fit set measures a GEMM so at a size where a start shows, so such a GEMM
#: takes the cold start measured with those timers, :data:`CAST_COLD_START` (the
#: FlashInfer CUPTI and do_bench casts), not the graph replays' value.
GRAPH_TIMERS = (Timer.CUDA_GRAPH,)


def is_gemm_term(key: str) -> bool:
    """Whether the term ``key`` (a model term's, or ``side.<i>``) times a GEMM."""
    return key.startswith(GEMM_TERM_PREFIX)


def cold_symbol(mset: MeasurementSet, key: str) -> HardwareSymbol:
    """The cold start the term ``key`` of ``mset`` (a set that :func:`starts_cold`) takes:
    :data:`roofline.symbols.T_COLD` for a GEMM replayed in a CUDA graph
    (:data:`GRAPH_TIMERS`), :data:`roofline.symbols.T_COLD_CAST` for every other kernel."""
    replayed_gemm = is_gemm_term(key) and mset.timer in GRAPH_TIMERS
    return T_COLD if replayed_gemm else T_COLD_CAST


def cold_started(
    mset: MeasurementSet, times: dict[str, np.ndarray], values: dict[str, float]
) -> dict[str, np.ndarray]:
    """Each term's times of ``mset`` as :data:`COLD_START` and :data:`CAST_COLD_START`
    have them (:func:`cold_symbol` says which, ``values`` maps its key to seconds): the
    cold start added where the term runs a kernel (a time above zero; a term that is zero
    at a shape runs none there)."""
    out = {}
    for key, value in times.items():
        value = np.asarray(value, dtype=np.float64)
        cold = cold_symbol(mset, key).spec_key
        out[key] = np.where(value > 0, _STARTED[cold](value, values[cold]), value)
    return out


#: The bandwidth a kernel moving b_k bytes streams at when a benchmark repeats it without
#: evicting the cache (a set whose ``l2`` is ``warm``): its reads hit the cache the
#: previous call filled when they fit in it, at the DRAM bandwidth over phi_L2; a kernel
#: larger than the cache evicts its own data before it reads it again, so it streams from
#: DRAM. Any timer: the cache state is the benchmark's, not the clock's.
WARM_BANDWIDTH = sympy.Piecewise(
    (MEM_BW.symbol / PHI_L2.symbol, sympy.Le(KERNEL_BYTES, L2_CAPACITY.symbol)),
    (MEM_BW.symbol, True),
)
_warm_bandwidth = sympy.lambdify(
    (KERNEL_BYTES, MEM_BW.symbol, PHI_L2.symbol, L2_CAPACITY.symbol), WARM_BANDWIDTH, "numpy"
)


def streams_warm(mset: MeasurementSet, gpu: GpuSpec) -> bool:
    """Whether ``mset`` is predicted with :data:`WARM_BANDWIDTH`: timed with the cache warm
    on a GPU whose cache size the spec database gives."""
    return mset.l2 is L2State.WARM and gpu.l2_cache_bytes is not None


def warm_times(
    mset: MeasurementSet,
    compiled: CompiledModel,
    gpu: GpuSpec,
    params: CalibratedParameters,
    dims: np.ndarray,
    groups: np.ndarray | None,
    times: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """``times`` (each term's and side kernel's seconds at DRAM bandwidth) with every
    kernel that fits in the cache at the bandwidth :data:`WARM_BANDWIDTH` gives it."""
    phi = params.values[PHI_L2.spec_key].value
    dram_bytes_s = gpu.value(MEM_BW.spec_key)
    # The same GPU streaming at the cache's bandwidth: every term and side kernel timed
    # on it as on the GPU itself.
    cached = dataclasses.replace(gpu, **{MEM_BW.spec_key: dram_bytes_s / phi})
    model_keys = tuple(key for key in times if not key.startswith("side."))
    m, k, n = dims[:, 0], dims[:, 1], dims[:, 2]
    traffic = compiled.traffic_bytes(m, k, n, groups, model_keys)
    fast = compiled.term_times(cached, m, k, n, params, groups, model_keys)
    if mset.side_kernels:
        traffic |= side_kernel_traffic(mset, dims, groups)
        fast |= side_kernel_times(mset, cached, params, dims, groups)
    out = {}
    for key, value in times.items():
        bandwidth = _warm_bandwidth(traffic[key], dram_bytes_s, phi, gpu.l2_cache_bytes)
        out[key] = np.where(bandwidth > dram_bytes_s, fast[key], value)
    return out


def side_kernel_bytes(kernel: SideKernel) -> sympy.Expr:
    """Bytes the kernel moves: (read + write bytes per element) x the product of its
    dimensions (one element for a scalar)."""
    per_element = sympy.Rational(repr(kernel.read_bytes)) + sympy.Rational(repr(kernel.write_bytes))
    return per_element * math.prod((_DIMS[d] for d in kernel.elements), start=sympy.Integer(1))


def side_kernel_time(bytes_moved: sympy.Expr, calibrated: bool) -> sympy.Expr:
    """A pointwise kernel moving ``bytes_moved``, as each model times one: the calibrated
    model's t_cast plus the stream at the row-kernel bandwidth fraction; torchao's the
    larger of its memory time and its launch floor."""
    return kind_time(CastKind.ROW, bytes_moved) if calibrated else pointwise_time(bytes_moved)


#: The formula the Validation page prints for a side kernel.
SIDE_KERNEL_TIME = side_kernel_time(SIDE_BYTES, calibrated=True)


@functools.cache
def _compiled(kernel: SideKernel, calibrated: bool) -> tuple[tuple[sympy.Symbol, ...], object]:
    expr = side_kernel_time(side_kernel_bytes(kernel), calibrated)
    symbols = tuple(sorted(expr.free_symbols, key=lambda s: s.name))
    return symbols, sympy.lambdify(symbols, expr, "numpy")


def side_kernel_times(
    mset: MeasurementSet,
    gpu: GpuSpec,
    params: CalibratedParameters | None,
    dims: np.ndarray,
    groups: np.ndarray | None,
) -> dict[str, np.ndarray]:
    """Seconds of each side kernel of ``mset`` at every shape row of ``dims`` (M, K, N
    columns), keyed ``side.<index>``; ``params``: the calibrated model's (None: torchao's)."""
    hardware = gpu.hardware_values()
    numbers = params.numbers() if params is not None else {}
    values: dict[sympy.Symbol, object] = {M: dims[:, 0], K: dims[:, 1], N: dims[:, 2]}
    if groups is not None:
        values[G] = groups
    values.update({hw.symbol: hardware.get(hw.spec_key, np.nan) for hw in HARDWARE_SYMBOLS})
    values.update({hw.symbol: numbers[hw.spec_key] for hw in CALIBRATION_SYMBOLS if numbers})
    out = {}
    for index, kernel in enumerate(mset.side_kernels):
        symbols, fn = _compiled(kernel, params is not None)
        seconds = fn(*(values[s] for s in symbols))
        out[f"side.{index}"] = np.broadcast_to(np.asarray(seconds, dtype=np.float64), len(dims))
    return out


@functools.cache
def _bytes_function(kernel: SideKernel) -> object:
    return sympy.lambdify((M, K, N, G), side_kernel_bytes(kernel), "numpy")


def side_kernel_traffic(
    mset: MeasurementSet, dims: np.ndarray, groups: np.ndarray | None
) -> dict[str, np.ndarray]:
    """Bytes each side kernel of ``mset`` moves at every shape row of ``dims``, keyed
    ``side.<index>`` (:func:`side_kernel_bytes`)."""
    g = groups if groups is not None else np.ones(len(dims))
    out = {}
    for index, kernel in enumerate(mset.side_kernels):
        moved = _bytes_function(kernel)(dims[:, 0], dims[:, 1], dims[:, 2], g)
        out[f"side.{index}"] = np.broadcast_to(np.asarray(moved, dtype=np.float64), len(dims))
    return out


def side_parameter_symbols(mset: MeasurementSet) -> set[sympy.Symbol]:
    """The calibration symbols the set's side kernels are timed with (none without any)."""
    return {s for kernel in mset.side_kernels for s in _compiled(kernel, True)[0]}
