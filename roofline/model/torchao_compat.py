"""torchao's roofline API (``torchao.testing.training.roofline_utils``), backed by this model.

Code written against torchao runs unchanged: the same names and signatures, sympy
expressions with the GPU's numbers substituted (as torchao returns them), torch dtypes
or dtype names as strings. The numbers come from the recipe registry and torchao 0.18's
own GPU table (``roofline/data/torchao018_specs.toml``), so torchao's GPUs give torchao's
numbers even where the bundled database carries corrected vendor figures (GB200, B300,
the AMD parts); a GPU torchao lacks is looked up in the bundled database.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import sympy

from roofline.device import current_device_name, dtype_name
from roofline.errors import RooflineError
from roofline.model.torchao import bf16_activation_time, cast_kernel_time, gemm_time
from roofline.recipes import (
    BF16,
    FP4,
    FP8,
    FP8_BLOCK,
    FP32_BYTES,
    Format,
    Gemm,
    Mode,
    Role,
    get_recipe,
)
from roofline.specs import (
    DEFAULT_LAUNCH_OVERHEAD_S,
    FALLBACK_KEYS,
    VariantFallbackWarning,
    load_specs,
)
from roofline.symbols import HARDWARE_SYMBOLS, T_LAUNCH, K, M, N

# torchao's constants, read from the registry's formats.
BYTES_PER_EL_FLOAT4 = float(FP4.bytes_per_element)
BYTES_PER_EL_FLOAT8 = int(FP8.bytes_per_element)
BYTES_PER_EL_BF16 = int(BF16.bytes_per_element)
BYTES_PER_EL_FLOAT32 = int(FP32_BYTES)
#: torchao's constant, read from the registry's blockwise scaling.
BLOCKWISE_FP8_BLOCK_SIZE = get_recipe("blockwise").scaling.block_size
KERNEL_LAUNCH_OVERHEAD_SEC = DEFAULT_LAUNCH_OVERHEAD_S

#: torchao 0.18's GPU table in this project's spec format (also the parity tests' table).
TORCHAO_SPECS_PATH = Path(str(resources.files("roofline").joinpath("data/torchao018_specs.toml")))
_TORCHAO_SPECS = load_specs(TORCHAO_SPECS_PATH)

#: torchao's table (torchao key names), then the bundled GPUs torchao lacks.
gpu_name_to_specs: dict[str, dict[str, float]] = {
    name: spec.as_torchao_dict() for name, spec in _TORCHAO_SPECS.items()
} | {
    name: spec.as_torchao_dict()
    for name, spec in load_specs().items()
    if name not in _TORCHAO_SPECS
}

_DTYPES: dict[str, Format] = {
    "bfloat16": BF16,
    "bf16": BF16,
    "float8_e4m3fn": FP8,
    "float8_e5m2": FP8,
    "float8_e4m3fnuz": FP8,
    "float8_e5m2fnuz": FP8,
    "fp8": FP8,
    "float4_e2m1fn_x2": FP4,
    "fp4": FP4,
}


def get_specs(gpu_name: str | None = None) -> dict[str, float]:
    """The spec dict of ``gpu_name`` (the current CUDA device when None).

    A device that matches an entry only by the entry's name (an unlisted variant) warns
    with :class:`~roofline.specs.VariantFallbackWarning`; torchao would be silent."""
    name = current_device_name() if gpu_name is None else gpu_name
    if name in _TORCHAO_SPECS:  # torchao's own entry: torchao's numbers
        return _TORCHAO_SPECS[name].as_torchao_dict()
    match = load_specs().match(name)
    if match.warning is not None:
        warnings.warn(match.warning, VariantFallbackWarning, stacklevel=2)
    return match.gpu.as_torchao_dict()


def _format(dtype: Any) -> Format:
    name = dtype_name(dtype)
    try:
        return _DTYPES[name]
    except KeyError:
        raise RooflineError(f"unsupported dtype {name!r}; valid: {', '.join(_DTYPES)}") from None


def _numbers(specs: Mapping[str, float]) -> dict[sympy.Symbol, sympy.Float]:
    values = {**specs, T_LAUNCH.spec_key: KERNEL_LAUNCH_OVERHEAD_SEC}
    # torchao's dicts have no per-path peaks: an absent one is the peak it falls back to.
    for key, fallback in FALLBACK_KEYS.items():
        if key not in values and fallback in values:
            values[key] = values[fallback]
    return {
        hw.symbol: sympy.Float(values[hw.spec_key])
        for hw in HARDWARE_SYMBOLS
        if hw.spec_key in values
    }


def _instantiate(
    expr: sympy.Expr, specs: Mapping[str, float], m: Any, k: Any, n: Any
) -> sympy.Expr:
    """Substitute a GPU's numbers and the caller's M, K, N into a model expression."""
    shape = {M: sympy.sympify(m), K: sympy.sympify(k), N: sympy.sympify(n)}
    return expr.xreplace(_numbers(specs)).xreplace(shape)


def _recipe_name(float8_recipe_name: str | None, mx_recipe_name: str | None) -> str:
    name = float8_recipe_name or mx_recipe_name
    if name is None:
        raise RooflineError("one of float8_recipe_name and mx_recipe_name is required")
    return name


def _role_instantiate(
    expr: sympy.Expr, role: Role, specs: Mapping[str, float], dim0: Any, dim1: Any
) -> sympy.Expr:
    d0, d1 = {Role.WEIGHT: (K, N), Role.GRAD_OUTPUT: (M, N), Role.INPUT: (M, K)}[role]
    expr = expr.xreplace(_numbers(specs))
    return expr.xreplace({d0: sympy.sympify(dim0), d1: sympy.sympify(dim1)})


def get_tensor_memory_traffic_ovhd_s(
    specs: Mapping[str, float],
    dim0: Any,
    dim1: Any,
    tensor_role: str,
    float8_recipe_name: str | None,
    mx_recipe_name: str | None,
    fuse_with_prev: bool = False,
) -> list[sympy.Expr]:
    """Seconds per cast kernel of one tensor in training (torchao's signature)."""
    name = _recipe_name(float8_recipe_name, mx_recipe_name)
    recipe = get_recipe(name, Mode.TRAINING)
    kernels = recipe.plan(Mode.TRAINING).kernels_for(Role(tensor_role))
    return [
        _role_instantiate(cast_kernel_time(k, fuse_with_prev), Role(tensor_role), specs, dim0, dim1)
        for k in kernels
    ]


def get_individual_gemm_time_sympy(
    M: Any,
    K: Any,
    N: Any,
    dtype: Any,
    mx_recipe_name: str | None,
    gpu_name: str | None = None,
) -> sympy.Expr:
    """One GEMM: max(compute, memory, launch floor), with MX/NV scale reads when named."""
    fmt = _gemm_format(_format(dtype), mx_recipe_name)
    scale_block = _gemm_scale_block(mx_recipe_name)
    time = gemm_time(*(sympy.sympify(d) for d in (M, K, N)), fmt, scale_block).total
    return time.xreplace(_numbers(get_specs(gpu_name)))


def _gemm_format(fmt: Format, recipe_name: str | None) -> Format:
    """fp8 as the registry times it for ``recipe_name``: block-scaled for native MX fp8
    recipes (their own peak, which falls back to the fp8 peak), plain otherwise."""
    if fmt is not FP8 or recipe_name is None:
        return fmt
    recipe = get_recipe(recipe_name)
    formats = {f for plan in recipe.plans.values() for f in plan.gemm_formats.values()}
    return FP8_BLOCK if FP8_BLOCK in formats else fmt


def _gemm_scale_block(recipe_name: str | None) -> int | None:
    """Elements per scale the GEMM reads for ``recipe_name`` (None: no scale reads)."""
    if recipe_name is None:
        return None
    block = get_recipe(recipe_name).scaling.gemm_scale_block
    if block is None:
        raise RooflineError(f"unsupported recipe {recipe_name!r} for scale reads")
    return block


def _grad_weight_dtype(float8_recipe_name: str | None, dtype: Any) -> Any:
    """The grad_weight GEMM's dtype: bf16 where the registry keeps that GEMM in bf16."""
    if float8_recipe_name is None:
        return dtype
    gemms = get_recipe(float8_recipe_name, Mode.TRAINING).plan(Mode.TRAINING).gemm_formats
    return "bfloat16" if gemms[Gemm.GRAD_WEIGHT] is BF16 else dtype


def get_gemm_time_sympy(
    M: Any,
    K: Any,
    N: Any,
    dtype: Any,
    float8_recipe_name: str | None,
    mx_recipe_name: str | None,
    gpu_name: str | None,
) -> sympy.Expr:
    """The three training GEMMs; rowwise_with_gw_hp keeps grad_weight in bf16."""
    grad_weight_dtype = _grad_weight_dtype(float8_recipe_name, dtype)
    return (
        get_individual_gemm_time_sympy(M, K, N, dtype, mx_recipe_name, gpu_name)
        + get_individual_gemm_time_sympy(M, N, K, dtype, mx_recipe_name, gpu_name)
        + get_individual_gemm_time_sympy(K, M, N, grad_weight_dtype, mx_recipe_name, gpu_name)
    )


def get_float8_mem_sympy(
    M: Any,
    K: Any,
    N: Any,
    float8_recipe_name: str | None,
    mx_recipe_name: str | None,
    enable_fusion_modeling: bool,
    gpu_name: str | None = None,
) -> sympy.Expr:
    """All training cast kernels: input and grad_output may fuse, the weight never does."""
    specs = get_specs(gpu_name)
    parts = [
        *get_tensor_memory_traffic_ovhd_s(
            specs, M, K, "input", float8_recipe_name, mx_recipe_name, enable_fusion_modeling
        ),
        *get_tensor_memory_traffic_ovhd_s(
            specs, K, N, "weight", float8_recipe_name, mx_recipe_name, False
        ),
        *get_tensor_memory_traffic_ovhd_s(
            specs, M, N, "grad_output", float8_recipe_name, mx_recipe_name, enable_fusion_modeling
        ),
    ]
    return sympy.Add(*parts)


def get_inference_tensor_memory_traffic_ovhd_s(
    specs: Mapping[str, float],
    dim0: Any,
    dim1: Any,
    tensor_role: str,
    recipe_name: str | None,
    fuse_with_prev: bool = False,
) -> list[sympy.Expr]:
    """Seconds per activation-quantize kernel in inference (torchao's signature)."""
    if fuse_with_prev:
        raise RooflineError("fuse_with_prev is not modelled for inference quantization")
    if tensor_role != "input":
        raise RooflineError("inference only quantizes the input activation")
    recipe = get_recipe(recipe_name or "", Mode.INFERENCE)
    return [
        _role_instantiate(cast_kernel_time(k, False), Role.INPUT, specs, dim0, dim1)
        for k in recipe.plan(Mode.INFERENCE).kernels
    ]


def get_inference_float8_mem_sympy(
    M: Any, K: Any, N: Any, recipe_name: str | None, gpu_name: str | None = None
) -> sympy.Expr:
    """The activation-quantize time of an inference linear."""
    specs = get_specs(gpu_name)
    return sympy.Add(*get_inference_tensor_memory_traffic_ovhd_s(specs, M, K, "input", recipe_name))


def get_inference_gemm_time_sympy(
    M: Any, K: Any, N: Any, dtype: Any, recipe_name: str | None, gpu_name: str | None = None
) -> sympy.Expr:
    """The inference GEMM (torchao's signature)."""
    return get_individual_gemm_time_sympy(M, K, N, dtype, recipe_name, gpu_name)


def get_inference_bf16_activation_mem_sympy(
    M: Any, K: Any, N: Any, gpu_name: str | None = None
) -> sympy.Expr:
    """The bf16 activation kernel of inference fusion modelling (torchao 0.18)."""
    return _instantiate(bf16_activation_time(), get_specs(gpu_name), M, K, N)


def get_blockwise_gemm_time_sympy(
    M: Any, K: Any, N: Any, gpu_name: str | None = None
) -> sympy.Expr:
    """The three blockwise fp8 GEMMs, scale reads ignored (torchao 0.18)."""
    return get_gemm_time_sympy(M, K, N, "float8_e4m3fn", None, None, gpu_name)


def get_blockwise_float8_mem_sympy(
    M: Any,
    K: Any,
    N: Any,
    enable_fusion_modeling: bool,
    gpu_name: str | None = None,
    block_size: int = BLOCKWISE_FP8_BLOCK_SIZE,
) -> sympy.Expr:
    """The six blockwise quantize kernels (torchao 0.18)."""
    if block_size != BLOCKWISE_FP8_BLOCK_SIZE:
        raise RooflineError(f"only block_size={BLOCKWISE_FP8_BLOCK_SIZE} is modelled")
    specs = get_specs(gpu_name)
    kernels = get_recipe("blockwise").plan(Mode.TRAINING).kernels
    parts = [
        _instantiate(
            cast_kernel_time(k, enable_fusion_modeling and k.role is not Role.WEIGHT),
            specs,
            M,
            K,
            N,
        )
        for k in kernels
    ]
    return sympy.Add(*parts)
