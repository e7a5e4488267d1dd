"""``roofline measure``'s timed kernels: the CUDA and CPU timers, the bf16 and fp8 GEMMs and
casts of eager PyTorch, torchao's MX / NVFP4 operands, GEMMs and activation quantization,
the job plan and the environment record (:mod:`roofline.measurements.harness` holds the
jobs, the statistics and the measurement file).

torch (and torchao) are imported only when something runs: the ``torch`` extra.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from roofline.measurements.harness import TORCHAO_RECIPES, Environment, Job, MeasureError

_MXFP8 = ("mxfp8_cublas", "mxfp8_cublas_rceil")
_GLOBAL_SCALE = ("nvfp4", "nvfp4_static")
#: Bytes written between timed runs on CUDA: more than any GPU's L2 cache (B200: 126 MiB).
L2_FLUSH_BYTES = 512 * 1024 * 1024
E4M3_MAX = 448.0


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MeasureError(
            "roofline measure needs torch: pip install roofline-atlas[torch] "
            "(pip install torch==2.13.0 is the CPU build)"
        ) from None
    return torch


class CudaTimer:
    """CUDA events around one call, after a write of :data:`L2_FLUSH_BYTES` that evicts
    the operands from L2."""

    device = "cuda"

    def __init__(self) -> None:
        torch = _torch()
        self._torch = torch
        self._flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device="cuda")

    def time(self, fn: Callable[[], Any]) -> float:
        torch = self._torch
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        self._flush.zero_()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3


class CpuTimer:
    """``perf_counter_ns`` around one call; a 64 MiB write before it evicts the caches."""

    device = "cpu"

    def __init__(self) -> None:
        torch = _torch()
        self._flush = torch.empty(64 * 1024 * 1024, dtype=torch.int8)

    def time(self, fn: Callable[[], Any]) -> float:
        self._flush.zero_()
        start = time.perf_counter_ns()
        fn()
        return (time.perf_counter_ns() - start) / 1e9


def _bf16_gemm(shape: tuple[int, int, int], device: str) -> Callable[[], Any]:
    torch = _torch()
    M, K, N = shape
    a = torch.randn(M, K, device=device, dtype=torch.bfloat16)
    b = torch.randn(N, K, device=device, dtype=torch.bfloat16).t()  # column-major, as a weight
    return lambda: torch.mm(a, b)


def _fp8_operands(shape: tuple[int, int, int], recipe: str) -> tuple[Any, ...]:
    torch = _torch()
    M, K, N = shape
    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
    if recipe == "rowwise":
        scale_a = torch.ones(M, 1, device="cuda", dtype=torch.float32)
        scale_b = torch.ones(1, N, device="cuda", dtype=torch.float32)
    else:
        scale_a = torch.ones((), device="cuda", dtype=torch.float32)
        scale_b = torch.ones((), device="cuda", dtype=torch.float32)
    return a, b, scale_a, scale_b


def _lowp_gemm(shape: tuple[int, int, int], recipe: str) -> Callable[[], Any]:
    torch = _torch()
    rescale = None
    if recipe in TORCHAO_RECIPES:
        a, b, scale_a, scale_b, rescale = torchao_operands(shape, recipe, "cuda")
    else:
        a, b, scale_a, scale_b = _fp8_operands(shape, recipe)
    if rescale is not None:  # torchao multiplies the output by the per-tensor scales
        return lambda: torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16) * rescale
    return lambda: torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)


def _torchao() -> Any:
    try:
        from torchao.prototype.mx_formats import config, mx_tensor, nvfp4_tensor, utils
    except ImportError:
        raise MeasureError(
            f"timing {', '.join(TORCHAO_RECIPES)} needs torchao (pip install torchao)"
        ) from None
    return config, mx_tensor, nvfp4_tensor, utils


def _mx_scaling(config: Any, recipe: str) -> Any:
    mode = config.ScaleCalculationMode
    return mode.RCEIL if recipe == "mxfp8_cublas_rceil" else mode.FLOOR


def _per_tensor_scale(nvfp4_tensor: Any, x: Any) -> Any:
    """torchao's per-tensor NVFP4 scale of ``x`` (from its amax)."""
    torch = _torch()
    return nvfp4_tensor.per_tensor_amax_to_scale(torch.max(torch.abs(x)))


def torchao_operands(shape: tuple[int, int, int], recipe: str, device: str) -> tuple[Any, ...]:
    """The ``torch._scaled_mm`` arguments of a torchao MX / NVFP4 GEMM of ``shape``: A
    (M x K) and the weight (N x K, passed transposed, as torchao's dispatch passes it),
    quantized by torchao, and their scales swizzled by torchao's ``to_blocked`` and
    viewed as the dtype the kernel takes (e8m0 for MXFP8, e4m3 for NVFP4); last, the
    product of the two per-tensor scales the output is multiplied by (NVFP4 with
    per-tensor scales), else None."""
    torch = _torch()
    config, mx_tensor, nvfp4_tensor, utils = _torchao()
    M, K, N = shape
    x = torch.randn(M, K, device=device, dtype=torch.bfloat16)
    w = torch.randn(N, K, device=device, dtype=torch.bfloat16)
    rescale = None
    if recipe in _MXFP8:
        block, scale_dtype = 32, torch.float8_e8m0fnu
        mode = _mx_scaling(config, recipe)
        (sa, qa), (sb, qb) = (mx_tensor.to_mx(t, torch.float8_e4m3fn, block, mode) for t in (x, w))
    else:
        block, scale_dtype = 16, torch.float8_e4m3fn
        scales = [
            _per_tensor_scale(nvfp4_tensor, t) if recipe in _GLOBAL_SCALE else None for t in (x, w)
        ]
        a_nv, b_nv = (
            nvfp4_tensor.NVFP4Tensor.to_nvfp4(t, per_tensor_scale=s)
            for t, s in zip((x, w), scales, strict=True)
        )
        qa, qb = (t.qdata.view(torch.float4_e2m1fn_x2) for t in (a_nv, b_nv))
        sa, sb = a_nv.scale, b_nv.scale
        if recipe in _GLOBAL_SCALE:
            rescale = (scales[0] * scales[1]).to(torch.bfloat16)
    scale_a = utils.to_blocked(sa.view(M, K // block)).view(scale_dtype)
    scale_b = utils.to_blocked(sb.view(N, K // block)).view(scale_dtype)
    return qa, qb.t(), scale_a, scale_b, rescale


def torchao_cast(shape: tuple[int, int, int], recipe: str, device: str) -> Callable[[], Any]:
    """torchao's dynamic quantization of the M x K activation, as its inference linear
    runs it for ``recipe`` (eager PyTorch)."""
    torch = _torch()
    config, mx_tensor, nvfp4_tensor, _ = _torchao()
    M, K, _n = shape
    x = torch.randn(M, K, device=device, dtype=torch.bfloat16)
    to_nvfp4 = nvfp4_tensor.NVFP4Tensor.to_nvfp4
    if recipe in _MXFP8:
        mode = _mx_scaling(config, recipe)
        return lambda: mx_tensor.MXTensor.to_mx(x, torch.float8_e4m3fn, 32, mode)
    if recipe == "nvfp4":  # dynamic: the amax and per-tensor scale are part of the cast
        return lambda: to_nvfp4(x, per_tensor_scale=_per_tensor_scale(nvfp4_tensor, x))
    if recipe == "nvfp4_static":  # a per-tensor scale known in advance
        scale = _per_tensor_scale(nvfp4_tensor, x)
        return lambda: to_nvfp4(x, per_tensor_scale=scale)
    return lambda: to_nvfp4(x)


def _cast(shape: tuple[int, int, int], recipe: str) -> Callable[[], Any]:
    """The activation's dynamic quantization: to e4m3 per tensor or per row (eager
    PyTorch), or torchao's MX / NVFP4 quantization (:func:`torchao_cast`)."""
    if recipe in TORCHAO_RECIPES:
        return torchao_cast(shape, recipe, "cuda")
    torch = _torch()
    M, K, _ = shape
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)

    def tensorwise() -> Any:
        amax = x.abs().amax().float()
        scale = E4M3_MAX / torch.clamp(amax, min=1e-12)
        return (x.float() * scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), scale

    def rowwise() -> Any:
        amax = x.abs().amax(dim=1, keepdim=True).float()
        scale = E4M3_MAX / torch.clamp(amax, min=1e-12)
        return (x.float() * scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), scale

    return rowwise if recipe == "rowwise" else tensorwise


def plan_jobs(
    shapes: Sequence[tuple[int, int, int]], recipes: Sequence[str], device: str
) -> list[Job]:
    """The jobs for ``shapes``: bf16 GEMMs, then per recipe its GEMMs and casts (CUDA)."""
    jobs = [Job("bf16_gemm", "tensorwise", s, lambda s=s: _bf16_gemm(s, device)) for s in shapes]
    if device == "cpu":
        return jobs
    for recipe in recipes:
        jobs += [
            Job("lowp_gemm", recipe, s, lambda s=s, r=recipe: _lowp_gemm(s, r)) for s in shapes
        ]
        jobs += [Job("cast", recipe, s, lambda s=s, r=recipe: _cast(s, r)) for s in shapes]
    return jobs


def environment(device: str) -> Environment:
    """The device name, clocks, power limit, driver and library versions."""
    torch = _torch()
    versions = [f"torch {torch.__version__}"]
    try:  # the version only: importing torchao costs seconds and loads its kernels
        versions.append(f"torchao {metadata.version('torchao')}")
    except metadata.PackageNotFoundError:
        versions.append("torchao not installed")
    if device == "cpu":
        import platform

        name = platform.processor() or platform.machine() or "CPU"
        details = [f"CPU: {name}, {torch.get_num_threads()} torch threads"]
        return Environment("cpu", name, "; ".join(versions), details)
    versions.append(f"CUDA {torch.version.cuda}")
    name = torch.cuda.get_device_name()
    capability = ".".join(map(str, torch.cuda.get_device_capability()))
    details = [f"{name} (compute capability {capability})", *_nvidia_smi()]
    library = "hipblaslt" if getattr(torch.version, "hip", None) else "cublas"
    return Environment("cuda", name, "; ".join(versions), details, library)


def _nvidia_smi() -> list[str]:
    """Driver, clocks and power limit from nvidia-smi, when it is on PATH."""
    query = "driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,temperature.gpu"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader", "-i", "0"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ["nvidia-smi not available: driver, clocks and power limit not recorded"]
    names = ("driver", "SM clock", "memory clock", "max SM clock", "power limit", "temperature")
    values = [v.strip() for v in out.split(",")]
    return [", ".join(f"{n} {v}" for n, v in zip(names, values, strict=False))]
