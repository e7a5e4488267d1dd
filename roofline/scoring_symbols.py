"""The symbols of how measurements are scored, not of any model's terms: a benchmark's cold
start after an L2 flush and its warm cache's bandwidth (roofline.analysis.harness).
:mod:`roofline.symbols` lists them among the calibration parameters."""

from __future__ import annotations

from roofline.symbol_types import hardware_symbol as _hw

# Not terms of any model, but of how measurements are scored: a benchmark that evicts L2
# before every timed call (a measurement set's l2 = "cold": tritonbench's cache-clearing
# CUDA graphs, FlashInfer's cold-L2 CUPTI spans, triton's do_bench) starts each kernel on
# an L2 full of the flush's dirty lines, so its first loads wait for DRAM and for
# write-backs. The calibrated prediction of such a set, timed by a clock that starts with
# its kernels (roofline.analysis.harness.COLD_START_TIMERS), adds a cold start to every
# kernel it times
# (roofline.analysis.harness); the site's own predictions, for kernels in a running model,
# do not. A GEMM pays it on every load its pipeline must fill before the first MMA (its
# operands' first tiles for every SM, block scales, descriptors), a memory-bound kernel
# (a cast, a rearrangement) on its first loads only: measured, tiny casts start about
# 1-1.5 us later cold than warm on B200 (FlashInfer PRs #2025 and #4820 against vLLM PR
# #43658, CUPTI spans), small GEMMs replayed in CUDA graphs about 3 us (helion PRs #3209
# and #3046), so each has its own. Those GEMMs are all graph replays, timed from the flush
# node's end, so a GEMM timed by its own span (a profiler, CUDA events) takes the start
# measured with those timers, the casts' (roofline.analysis.harness.cold_symbol).
T_COLD = _hw(
    "t_cold",
    "cold_l2_start_s",
    r"t_{\mathrm{cold}}",
    "start latency of a GEMM kernel replayed in a CUDA graph right after an L2 flush (how "
    "cold-cache benchmarks are scored; not in the site's predictions)",
    "s",
)
T_COLD_CAST = _hw(
    "t_cold_cast",
    "cast_cold_l2_start_s",
    r"t_{\mathrm{cold,cast}}",
    "start latency of a memory-bound kernel (a cast, a scale rearrangement, a side kernel) "
    "timed right after an L2 flush, and of a GEMM whose own span a profiler or CUDA events "
    "time so (how cold-cache benchmarks are scored; not in the site's predictions)",
    "s",
)

# A benchmark that calls the same kernel back to back without evicting L2 (a measurement
# set's l2 = "warm") finds the operands of a kernel that fits in the last-level cache
# still there from the previous call, so the kernel streams them from that cache, not
# from DRAM (roofline.analysis.harness). How much faster is a property of the cache
# (its bandwidth over DRAM's), fitted on the warm measurements of the fit sets; which
# kernels fit rests on the cache's size, a spec figure (l2_cache_bytes). Like the cold
# starts it is how benchmarks are scored: the site's predictions, of kernels in a running
# model whose other layers evict the cache between calls, stream from DRAM.
PHI_L2 = _hw(
    "phi_L2",
    "warm_l2_bandwidth_fraction",
    r"\varphi_{\mathrm{L2}}",
    "DRAM bandwidth as a fraction of the bandwidth a kernel streams a working set held in "
    "the last-level cache at, in a benchmark that repeats it without evicting the cache "
    "(how warm-cache benchmarks are scored; not in the site's predictions)",
    "1",
)
#: The last-level cache's capacity (L2 on NVIDIA GPUs, the Infinity Cache on AMD CDNA3 and
#: CDNA4): a spec figure that only the scoring of warm benchmarks reads, so not an argument
#: of any model (not in HARDWARE_SYMBOLS). Absent: no kernel counts as cache-resident.
L2_CAPACITY = _hw(
    "C_L2",
    "l2_cache_bytes",
    r"C_{\mathrm{L2}}",
    "capacity of the last-level cache before DRAM (L2; the Infinity Cache on AMD Instinct)",
    "bytes",
)
