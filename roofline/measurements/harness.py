"""``roofline measure``'s harness: time bf16 and low-precision GEMMs and cast kernels on
this machine and write them as a measurement file (docs/measurements-format.md).

Each timed *job* is one kernel call on preallocated operands: the bf16 GEMM
``M x K @ K x N`` (``torch.mm``, row-major A, column-major B as ``nn.Linear`` stores its
weight), the fp8 GEMM of a recipe that ``torch._scaled_mm`` runs (``tensorwise``: one
fp32 scale per operand; ``rowwise``: one per row of A and column of B), and that recipe's
activation cast (amax, scale, cast to e4m3 in eager PyTorch, as separate kernels); where
torchao is installed also the MXFP8 and NVFP4 GEMMs and activation quantization of
torchao's MX formats (:data:`TORCHAO_RECIPES`). A
:class:`Timer` runs a job ``warmup`` times, then ``repeats`` times, each run timed on its
own: on CUDA between two CUDA events after writing a buffer larger than the L2 cache
(so no run finds its operands cached), on the CPU with ``time.perf_counter_ns`` around
the call. :func:`summarize` gives the median and the spread (min, p10, p90, max).

torch is imported only when a job runs (the ``torch`` extra), by the timers and kernels of
:mod:`roofline.measurements.torch_jobs`; the statistics and the file
(:func:`measurement_text`, linted by the measurement loader before it is returned) are
plain Python, so tests can plant a timer and check both. A CPU run labels every set as
CPU timings (title, notes, ``role = "context"``: shown by ``roofline validate``, never
scored or fitted).
"""

from __future__ import annotations

import datetime as dt
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from roofline.errors import RooflineError
from roofline.specs.text import toml_string

#: Recipes whose inference GEMM ``torch._scaled_mm`` runs directly, and their cast terms.
SCALED_MM_RECIPES = ("tensorwise", "rowwise")
#: Recipes timed with torchao's MX / NVFP4 code where torchao is installed: torchao's
#: quantize functions make the operands and its ``to_blocked`` swizzles their scales
#: before timing; the timed GEMM is the ``torch._scaled_mm`` call torchao's MXTensor /
#: NVFP4Tensor dispatch makes (for NVFP4 with per-tensor scales, with the output rescale
#: by their product that follows it, as the model's GEMM term has it), and the timed cast
#: torchao's activation quantization: ``MXTensor.to_mx`` (1 x 32 blocks, floor or rceil
#: scales) or ``NVFP4Tensor.to_nvfp4`` (1 x 16 blocks; ``nvfp4``: after the activation's
#: amax and per-tensor scale, ``nvfp4_static``: with a given per-tensor scale,
#: ``nvfp4_no_global_scale``: without one).
TORCHAO_RECIPES = (
    "mxfp8_cublas",
    "mxfp8_cublas_rceil",
    "nvfp4",
    "nvfp4_static",
    "nvfp4_no_global_scale",
)
DEFAULT_URL = "https://example.invalid/unpublished-roofline-measure"
#: The model term each kind of job is compared with (inference mode, unfused).
BF16_TERMS = ("gemm.output.bf16",)
LOWP_TERMS = ("gemm.output.lowp",)


class MeasureError(RooflineError):
    """A measurement cannot run here (no CUDA, no torch, a recipe it cannot time)."""


@dataclass(frozen=True)
class Stats:
    """The runs of one job, in seconds: median and spread."""

    runs: int
    median_s: float
    min_s: float
    p10_s: float
    p90_s: float
    max_s: float

    def spread_label(self) -> str:
        """``n=20 p10-p90 11.9-12.4 us`` (at most 64 characters: a point label)."""
        return (
            f"n={self.runs} p10-p90 {_us(self.p10_s)}-{_us(self.p90_s)} us (min {_us(self.min_s)})"
        )[:64]


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.4g}"


def summarize(times_s: Sequence[float]) -> Stats:
    """Median and spread of ``times_s`` (at least one positive, finite time)."""
    times = sorted(float(t) for t in times_s)
    if not times or not all(math.isfinite(t) and t > 0 for t in times):
        raise MeasureError(f"timer: expected positive finite times, received {times[:5]}")
    if len(times) == 1:
        p10 = p90 = times[0]
    else:
        deciles = statistics.quantiles(times, n=10, method="inclusive")
        p10, p90 = deciles[0], deciles[-1]
    return Stats(len(times), statistics.median(times), times[0], p10, p90, times[-1])


class Timer(Protocol):
    """Times one call of ``fn`` (already warmed up); returns seconds."""

    device: str

    def time(self, fn: Callable[[], Any]) -> float: ...


@dataclass(frozen=True)
class Job:
    """One kernel to time: which set it belongs to, its shape and how to run it."""

    kind: str  # "bf16_gemm" | "lowp_gemm" | "cast"
    recipe: str  # the recipe whose model term it is compared with
    shape: tuple[int, int, int]
    make: Callable[[], Callable[[], Any]]  # allocates operands, returns the call to time


@dataclass(frozen=True)
class Result:
    job: Job
    stats: Stats


@dataclass
class Environment:
    """What the numbers were measured on, as the file records it."""

    device: str  # "cuda" | "cpu"
    device_name: str
    software: str
    details: list[str] = field(default_factory=list)
    # Whose GEMM kernels torch.mm and torch._scaled_mm run (KernelLibrary's value):
    # cuBLAS on CUDA, hipBLASLt on ROCm; "unknown" on a CPU.
    gemm_library: str = "unknown"


def run_jobs(
    jobs: Sequence[Job],
    timer: Timer,
    *,
    warmup: int,
    repeats: int,
    progress: Callable[[int, int, Job], None] | None = None,
) -> list[Result]:
    """Time every job: ``warmup`` untimed calls, then ``repeats`` timed ones."""
    results = []
    for index, job in enumerate(jobs):
        if progress is not None:
            progress(index, len(jobs), job)
        call = job.make()
        for _ in range(warmup):
            call()
        times = [timer.time(call) for _ in range(repeats)]
        results.append(Result(job, summarize(times)))
    if progress is not None and jobs:
        progress(len(jobs), len(jobs), jobs[-1])
    return results


# -- the measurement file ---------------------------------------------------------------

_TITLES = {
    "bf16_gemm": "bf16 GEMM (torch.mm)",
    "lowp_gemm": "{recipe} fp8 GEMM (torch._scaled_mm)",
    "cast": "{recipe} activation cast to e4m3 (eager PyTorch)",
}
_TORCHAO_TITLES = {
    "lowp_gemm": "{recipe} GEMM (torch._scaled_mm on torchao-quantized operands, scales "
    "swizzled by torchao's to_blocked before timing)",
    "cast": "{recipe} activation quantization (torchao {how}, eager)",
}
_LOWP_OPERANDS = {
    "mxfp8_cublas": "e4m3 with e8m0 1 x 32 block scales (floor)",
    "mxfp8_cublas_rceil": "e4m3 with e8m0 1 x 32 block scales (rceil)",
    "nvfp4": "e2m1 with e4m3 1 x 16 block scales and fp32 per-tensor scales, the output "
    "rescaled by their product",
    "nvfp4_static": "e2m1 with e4m3 1 x 16 block scales and fp32 per-tensor scales, the "
    "output rescaled by their product",
    "nvfp4_no_global_scale": "e2m1 with e4m3 1 x 16 block scales",
}
_TORCHAO_CASTS = {
    "mxfp8_cublas": "MXTensor.to_mx, floor scales",
    "mxfp8_cublas_rceil": "MXTensor.to_mx, rceil scales",
    "nvfp4": "amax, per_tensor_amax_to_scale and NVFP4Tensor.to_nvfp4",
    "nvfp4_static": "NVFP4Tensor.to_nvfp4 with a given per-tensor scale",
    "nvfp4_no_global_scale": "NVFP4Tensor.to_nvfp4",
}


def _library(kind: str, env: Environment) -> str:
    """Whose kernel a set of ``kind`` times: the casts are eager PyTorch (its own GPU
    kernels), the GEMMs the platform's BLAS (:attr:`Environment.gemm_library`)."""
    if env.device == "cpu":
        return "unknown"
    return "cuda" if kind == "cast" else env.gemm_library


def _operands(kind: str, recipe: str) -> str:
    if kind != "lowp_gemm":
        return "bf16"
    return _LOWP_OPERANDS.get(recipe, "e4m3")


def title_of(kind: str, recipe: str) -> str:
    """What a job of ``kind`` and ``recipe`` times, as the file's titles and notes say."""
    if recipe in TORCHAO_RECIPES and kind in _TORCHAO_TITLES:
        return _TORCHAO_TITLES[kind].format(recipe=recipe, how=_TORCHAO_CASTS[recipe])
    return _TITLES[kind].format(recipe=recipe)


def _text(value: str, limit: int) -> str:
    """Plain one-line text within ``limit`` (the file's text rules refuse control and
    markup characters)."""
    clean = "".join(" " if ord(c) < 32 or c in "<>`" else c for c in value)
    clean = " ".join(clean.split())
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."


def _terms(kind: str, recipe: str) -> tuple[str, ...]:
    if kind == "bf16_gemm":
        return BF16_TERMS
    if kind == "lowp_gemm":
        return LOWP_TERMS
    return ("cast.input.1", "cast.input.2") if recipe == "tensorwise" else ("cast.input.1",)


def measurement_text(
    results: Sequence[Result],
    env: Environment,
    gpu: str,
    *,
    prefix: str,
    command: str,
    url: str = DEFAULT_URL,
    role: str = "fit",
    max_mean_error: float = 0.25,
    warmup: int,
    read_on: dt.date | None = None,
) -> str:
    """The measurement file of ``results``: one ``time_us`` set per job kind and recipe,
    a point per shape with its median and its spread as the label."""
    cpu = env.device == "cpu"
    role = "context" if cpu else role
    read_on = read_on or dt.date.today()
    groups: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        groups.setdefault((result.job.kind, result.job.recipe), []).append(result)
    lines = ["schema_version = 1", ""]
    for (kind, recipe), group in groups.items():
        name = kind + ("" if kind == "bf16_gemm" else f"-{recipe}")
        name = name.replace("_", "-")  # ids are slugs: recipe names have underscores
        title = title_of(kind, recipe)
        label = "CPU, not a GPU" if cpu else env.device_name
        how = (
            "perf_counter_ns around one call after a 64 MiB write that evicts the caches"
            if cpu
            else "two CUDA events around one call after a 512 MiB write that evicts L2"
        )
        warning = (
            f"CPU TIMINGS, NOT A GPU MEASUREMENT: shown for the plumbing, never scored; {gpu}"
            " is named only so that the file loads. "
            if cpu
            else ""
        )
        notes = (
            f"{warning}Measured by roofline measure on {env.device_name}. Timed: {title}, "
            "one call on "
            f"preallocated operands ({_operands(kind, recipe)}, A row-major, "
            f"B column-major); {how}; {warmup} warm-up calls, then the median of "
            f"{group[0].stats.runs} runs (each point's label: its spread). " + " ".join(env.details)
        )
        region = "cast_kernel" if kind == "cast" else "gemm"
        lines += [
            "[[set]]",
            f"id = {toml_string(f'{prefix}-{name}'[:64].strip('-'))}",
            f"title = {toml_string(_text(f'{label}: {title}, measured', 200))}",
            f"gpu = {toml_string(gpu)}",
            'mode = "inference"',
            f"recipe = {toml_string(recipe)}",
            "fusion = false",
            f"timed_region = {toml_string(region)}",
            'quantity = "time_us"',
            # Both timers evict the caches before every call (CudaTimer, CpuTimer).
            f'timer = "{"wall_clock" if cpu else "cuda_events"}"',
            'l2 = "cold"',
            f"library = {toml_string(_library(kind, env))}",
            "terms = [" + ", ".join(toml_string(t) for t in _terms(kind, recipe)) + "]",
            f"role = {toml_string(role)}",
            *([f"max_mean_error = {max_mean_error!r}"] if role != "context" else []),
            f"software = {toml_string(_text(env.software, 500))}",
            f"command = {toml_string(_text(command, 500))}",
            f"notes = {toml_string(_text(notes, 4000))}",
            "",
            "[set.source]",
            f"url = {toml_string(url)}",
            f"read_on = {read_on.isoformat()}",
            "",
        ]
        for result in group:
            M, K, N = result.job.shape
            lines += [
                "[[set.points]]",
                f"shape = [{M}, {K}, {N}]",
                f"value = {result.stats.median_s * 1e6!r}",
                f"label = {toml_string(result.stats.spread_label())}",
                "",
            ]
    return "\n".join(lines)
