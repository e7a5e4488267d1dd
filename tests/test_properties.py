"""Model invariants, checked with hypothesis over GPUs, recipes and shapes."""

from __future__ import annotations

import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from model_cases import align, supported_cases

from roofline import HypotheticalWarning, evaluate, get_recipe, load_specs
from roofline.evaluate import evaluate_terms
from roofline.recipes import BF16, RECIPE_LIST, Mode

SPECS = load_specs()
CASES = [(gpu, recipe.name, mode) for gpu, recipe, mode in supported_cases(SPECS)]
TIME_COLUMNS = ("r_bf16_gemm_s", "r_fp8_gemm_s", "r_fp8_ovhd_s", "r_fp8_gemm_and_ovhd_s")

dims = st.integers(min_value=1, max_value=1 << 17)
cases = st.sampled_from(CASES)


def _eval(case, m, k, n, fusion):
    gpu, recipe, mode = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypotheticalWarning)
        return evaluate(gpu, mode, recipe, m, k, n, fusion=fusion)


@settings(max_examples=150, deadline=None)
@given(cases, dims, dims, dims, st.booleans())
def test_every_term_is_at_least_the_launch_floor(case, m, k, n, fusion):
    gpu, recipe, mode = case
    k, n = align(recipe, k, n)
    terms = evaluate_terms(gpu, mode, recipe, m, k, n, fusion=fusion)
    floor = gpu.kernel_launch_overhead_s
    assert all(float(t) >= floor for t in terms.values())


@settings(max_examples=150, deadline=None)
@given(cases, dims, dims, dims, st.booleans(), st.sampled_from("MKN"), st.integers(1, 1 << 12))
def test_times_never_decrease_as_a_dimension_grows(case, m, k, n, fusion, dim, step):
    recipe = case[1]
    k, n = align(recipe, k, n)
    if dim == "M":
        grown = (m + step, k, n)
    else:
        multiple = dict(get_recipe(recipe).divisibility).get(dim, 1)
        delta = step * multiple
        grown = (m, k + delta, n) if dim == "K" else (m, k, n + delta)
    before = _eval(case, m, k, n, fusion)
    after = _eval(case, *grown, fusion)
    for column in TIME_COLUMNS:
        assert after[column] >= before[column] * (1 - 1e-12)


@settings(max_examples=150, deadline=None)
@given(cases, dims, dims, dims, st.booleans())
def test_overhead_nonnegative_and_speedup_bounded(case, m, k, n, fusion):
    gpu, recipe_name, mode = case
    k, n = align(recipe_name, k, n)
    out = _eval(case, m, k, n, fusion)
    assert out["r_fp8_ovhd_s"] >= 0
    # Per GEMM, low precision gains at most the peak ratio (compute-bound) or the
    # operand-bytes ratio (memory-bound); the casts only add time.
    recipe = get_recipe(recipe_name)
    bound = 1.0
    for fmt in recipe.formats(Mode(mode)):
        if fmt is not BF16:
            peak_ratio = gpu.value(fmt.peak.spec_key) / gpu.bf16_peak_tops
            bytes_ratio = float(BF16.bytes_per_element / fmt.bytes_per_element)
            bound = max(bound, peak_ratio, bytes_ratio)
    assert 0 < out["r_fp8_gemm_and_ovhd_spdp"] <= bound * (1 + 1e-12)


def test_cases_cover_every_recipe_and_mode():
    covered = {(recipe, mode) for _, recipe, mode in CASES}
    expected = {(r.name, m) for r in RECIPE_LIST for m in r.modes}
    assert covered == expected
    with_fp8 = {g.name for g in SPECS.values() if g.fp8_peak_tops is not None}
    assert with_fp8 <= {g.name for g, _, _ in CASES}  # every GPU with fp8 is exercised
