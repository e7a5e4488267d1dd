"""Single sources in the core: spec-key descriptors, the recipe registry's block sizes,
and the Python speedup taken from the expression the calculator prints."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import sympy

from roofline.errors import RooflineError, UnknownNameError
from roofline.evaluate import evaluate_terms
from roofline.model import torchao_compat as compat
from roofline.model.build import build_model
from roofline.model.compiled import compile_model
from roofline.model.terms import QUANTITY_SYMBOLS, Quantity
from roofline.recipes import (
    FP8,
    NATIVE_FORMATS,
    RECIPE_LIST,
    NativeFormat,
    Scaling,
    float8_kernels,
    get_recipe,
)
from roofline.recipes import kernels as recipe_kernels
from roofline.specs import GPU_KEYS, TOP_KEYS, TOP_SPECS, GpuSpec, json_schema, load_specs
from roofline.specs.model import KEY_FIELDS
from roofline.specs.text import KeyProblem
from roofline.symbols import DIM0, DIM1

# -- spec keys as descriptors ----------------------------------------------------------


def test_gpu_spec_fields_cover_every_gpu_key():
    fields = {f.name for f in dataclasses.fields(GpuSpec)}
    assert {KEY_FIELDS.get(key, key) for key in GPU_KEYS} <= fields
    assert KEY_FIELDS["sources"] == "source_records"
    assert set(KEY_FIELDS) <= set(GPU_KEYS)  # no stale renames


def test_the_json_schema_is_the_descriptors_own():
    gpu_props = json_schema()["properties"]["gpu"]["items"]["properties"]
    assert gpu_props == {key: spec.schema() for key, spec in GPU_KEYS.items()}
    assert set(json_schema()["properties"]) == set(TOP_SPECS) == set(TOP_KEYS)
    assert all(p["description"] == GPU_KEYS[k].description for k, p in gpu_props.items())


@pytest.mark.parametrize("key", sorted(GPU_KEYS))
def test_every_descriptor_validates_and_reports_problems_with_its_key(key):
    spec = GPU_KEYS[key]
    problems = spec.validate(object())  # no kind accepts an arbitrary object
    assert problems and all(isinstance(p, KeyProblem) for p in problems)
    assert all(p.key.startswith(key) for p in problems)
    assert spec.kind in {"number", "string", "string_list", "table", "sources"}


def test_plain_keys_state_the_markup_rule_in_their_description():
    for spec in GPU_KEYS.values():
        assert spec.description.endswith("; no < > or `") == spec.plain


def test_number_descriptor_range_messages():
    (problem,) = GPU_KEYS["pct_achievable_mem_bw"].validate(92)
    assert problem.expected == "a finite fraction in (0, 1]"
    assert problem.hint == "a percentage? write 0.92 for 92%"
    (problem,) = TOP_SPECS["kernel_launch_overhead_s"].validate("fast")
    assert problem.expected == "a finite number of seconds in (0, 0.001)"


# -- native formats --------------------------------------------------------------------


def test_native_formats_are_an_enum_that_compares_with_strings():
    assert tuple(NativeFormat) == NATIVE_FORMATS
    assert GPU_KEYS["native_formats"].choices == NATIVE_FORMATS
    gpu = load_specs()["NVIDIA B200"]
    assert all(isinstance(f, NativeFormat) for f in gpu.native_formats)
    assert "nvfp4" in gpu.native_formats and NativeFormat.MXFP8 in gpu.native_formats
    assert {r.native_format for r in RECIPE_LIST} <= set(NativeFormat)
    enum = json_schema()["properties"]["gpu"]["items"]["properties"]["native_formats"]
    assert enum["items"]["enum"] == ["fp8", "mxfp8", "mxfp4", "nvfp4"]


# -- block sizes from the recipe's scaling -----------------------------------------------


def test_kernel_builders_take_block_sizes_from_the_scaling():
    scaling = Scaling("1x64 blocks", "e8m0", block_size=64, gemm_reads_scales=True)
    plan = recipe_kernels.block_inference(scaling, FP8, "mxfp8")
    (kernel,) = plan.kernels
    assert kernel.description == "x_bf16 -> x_mxfp8, e8m0 scale per 64"
    assert kernel.write_bytes == DIM0 * DIM1 + DIM0 * sympy.floor(DIM1 / 64)
    blockwise = float8_kernels.blockwise_training(Scaling("b", "fp32", block_size=64))
    assert "1x64" in blockwise.kernels[0].description
    assert "64x64" in blockwise.kernels[1].description


@pytest.mark.parametrize("recipe", RECIPE_LIST, ids=lambda r: r.name)
def test_block_scaled_recipes_state_their_block_once(recipe):
    block = recipe.scaling.block_size
    if block is None:
        return
    assert f"1x{block}" in recipe.scaling.layout
    if recipe.scaling.gemm_reads_scales:
        assert recipe.scaling.gemm_scale_block == block
    for mode in recipe.modes:
        for kernel in recipe.plan(mode).kernels:
            for number in {16, 32, 128} - {block}:
                assert f"per {number}" not in kernel.description


def test_torchao_scale_reads_come_from_the_registry():
    for recipe in RECIPE_LIST:
        if recipe.scaling.gemm_scale_block is None:
            with pytest.raises(RooflineError, match="unsupported recipe"):
                compat.get_individual_gemm_time_sympy(1, 1, 1, "fp8", recipe.name, "NVIDIA H100")
        else:
            compat.get_individual_gemm_time_sympy(1, 1, 1, "fp8", recipe.name, "NVIDIA B200")
    with pytest.raises(UnknownNameError):
        compat.get_individual_gemm_time_sympy(1, 1, 1, "fp8", "mxfp8_bogus", "NVIDIA B200")
    assert get_recipe("blockwise").scaling.block_size == compat.BLOCKWISE_FP8_BLOCK_SIZE


# -- the speedup from the expression the calculator prints --------------------------------


@pytest.mark.parametrize(("mode", "fusion"), [("training", False), ("inference", True)])
def test_python_speedup_is_the_structured_speedup(mode, fusion):
    gpu = load_specs()["NVIDIA B200"]
    model = build_model(mode, "mxfp8_cublas", fusion)
    compiled = compile_model(mode, "mxfp8_cublas", fusion)
    m, k, n = (np.array([16.0, 4096.0, 65536.0]) for _ in range(3))
    totals = compiled.totals(evaluate_terms(gpu, mode, "mxfp8_cublas", m, k, n, fusion=fusion))
    by_symbol = {QUANTITY_SYMBOLS[q]: totals[q] for q in QUANTITY_SYMBOLS}
    expected = sympy.lambdify(list(by_symbol), model.structured_speedup)(*by_symbol.values())
    np.testing.assert_array_equal(totals[Quantity.SPEEDUP], expected)
    baseline = totals[Quantity.BF16_GEMM] + totals[Quantity.BF16_OVERHEAD]
    hand = baseline / (totals[Quantity.LOWP_GEMM] + totals[Quantity.OVERHEAD])
    np.testing.assert_allclose(totals[Quantity.SPEEDUP], hand, rtol=1e-12)
