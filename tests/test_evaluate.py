"""Vectorized evaluation: agreement with exact sympy, shapes, capabilities."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
import sympy

from roofline import (
    HypotheticalWarning,
    ShapeError,
    UnsupportedError,
    build_model,
    evaluate,
    load_specs,
)
from roofline.evaluate import INFERENCE_COLUMNS, TRAINING_COLUMNS, evaluate_terms
from roofline.model.terms import Quantity
from roofline.recipes import RECIPE_LIST
from roofline.symbols import HARDWARE_SYMBOLS, K, M, N

CASES = [(r.name, mode.value) for r in RECIPE_LIST for mode in r.modes]


def _exact(expr: sympy.Expr, gpu, shape: tuple[int, int, int]) -> float:
    """Exact rational evaluation: hardware figures as Rationals, then evalf."""
    hw = gpu.hardware_values()
    numbers = {
        h.symbol: sympy.Rational(repr(hw[h.spec_key])) for h in HARDWARE_SYMBOLS if h.spec_key in hw
    }
    concrete = expr.xreplace(numbers).xreplace(dict(zip((M, K, N), shape, strict=True)))
    return float(concrete.evalf(30))


@pytest.mark.parametrize(("recipe", "mode"), CASES)
@pytest.mark.parametrize("fusion", [False, True])
def test_compiled_equals_exact_sympy(bundled, recipe, mode, fusion):
    gpu = bundled["NVIDIA B200"]
    model = build_model(mode, recipe, fusion)
    shapes = [(16384, 8192, 1280), (96, 4224, 2176)]  # blockwise needs K, N % 128 == 0
    m, k, n = (np.array(col) for col in zip(*shapes, strict=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypotheticalWarning)
        got = evaluate(gpu, mode, recipe, m, k, n, fusion=fusion)
    for i, shape in enumerate(shapes):
        for column, quantity in [
            ("r_bf16_gemm_s", Quantity.BF16_GEMM),
            ("r_fp8_gemm_s", Quantity.LOWP_GEMM),
            ("r_fp8_ovhd_s", Quantity.OVERHEAD),
            ("r_fp8_gemm_and_ovhd_spdp", Quantity.SPEEDUP),
        ]:
            exact = _exact(model.total(quantity), gpu, shape)
            assert got[column][i] == pytest.approx(exact, rel=1e-12, abs=0)


def test_columns_per_mode(bundled):
    train = evaluate("NVIDIA H100", "training", "rowwise", 1024, 1024, 1024)
    infer = evaluate("NVIDIA H100", "inference", "rowwise", 1024, 1024, 1024)
    assert tuple(train) == TRAINING_COLUMNS
    assert tuple(infer) == INFERENCE_COLUMNS
    assert infer["r_bf16_ovhd_s"] == 0.0


def test_inference_fusion_charges_the_bf16_baseline():
    out = evaluate("NVIDIA H100", "inference", "rowwise", 16384, 8192, 8192, fusion=True)
    act_s = 4 * 16384 * 8192 / (2.4e12 * 0.92)
    assert out["r_bf16_ovhd_s"] == pytest.approx(act_s, rel=1e-14)
    speedup = (out["r_bf16_gemm_s"] + out["r_bf16_ovhd_s"]) / out["r_fp8_gemm_and_ovhd_s"]
    assert out["r_fp8_gemm_and_ovhd_spdp"] == pytest.approx(speedup, rel=1e-14)


def test_broadcasting_and_scalars():
    out = evaluate("NVIDIA H100", "training", "tensorwise", [1024, 2048, 4096], 4096, 4096)
    assert out["r_bf16_gemm_s"].shape == (3,)
    assert list(out["fwd_K"]) == [4096] * 3


@pytest.mark.parametrize("bad", [0, -5, 3.5, "x", [1, 0], np.nan])
def test_bad_shapes_name_the_dimension(bad):
    with pytest.raises(ShapeError, match="shape dimension K"):
        evaluate("NVIDIA H100", "training", "tensorwise", 1024, bad, 1024)


def test_blockwise_divisibility_names_the_shape():
    with pytest.raises(ShapeError, match="multiple of 128; got K=1000"):
        evaluate("NVIDIA H100", "training", "blockwise", 1024, 1000, 1024)


def test_missing_format_is_a_clear_error():
    with pytest.raises(UnsupportedError, match="needs fp4, which NVIDIA H100 does not have"):
        evaluate("NVIDIA H100", "training", "mxfp4_cutlass", 1024, 1024, 1024)
    with pytest.raises(UnsupportedError, match="needs fp8, which NVIDIA A100 SXM"):
        evaluate("NVIDIA A100 SXM", "inference", "rowwise", 1024, 1024, 1024)


def test_hypothetical_recipes_warn():
    with pytest.warns(HypotheticalWarning, match="no native mxfp8"):
        evaluate("NVIDIA H100", "training", "mxfp8_cublas", 1024, 1024, 1024)


def test_specs_path(tmp_path):
    path = tmp_path / "one.toml"
    path.write_text(
        '[[gpu]]\nname = "Half H100"\nbf16_peak_tops = 494.5e12\nfp8_peak_tops = 989e12\n'
        "peak_mem_bw_bytes_sec = 1.2e12\n"
    )
    half = evaluate("half h100", "training", "rowwise", 16384, 16384, 16384, specs=path)
    full = evaluate("NVIDIA H100", "training", "rowwise", 16384, 16384, 16384)
    # Every rate halved: every time doubles (well above the launch floor).
    assert half["r_bf16_gemm_s"] == pytest.approx(2 * full["r_bf16_gemm_s"], rel=1e-12)


def test_terms_sum_to_the_columns(bundled):
    gpu = bundled["NVIDIA B200"]
    terms = evaluate_terms(gpu, "training", "mxfp8_cublas", 8192, 4096, 4096)
    cols = evaluate(gpu, "training", "mxfp8_cublas", 8192, 4096, 4096)
    ovhd = sum(v for k, v in terms.items() if k.startswith("cast."))
    assert ovhd == pytest.approx(cols["r_fp8_ovhd_s"], rel=1e-14)


def test_million_shapes_evaluate():
    rng = np.random.default_rng(0)
    m, k, n = (rng.integers(1, 1 << 16, 1_000_000) for _ in range(3))
    out = evaluate("NVIDIA H100", "training", "tensorwise", m, k, n)
    assert out["r_fp8_gemm_and_ovhd_spdp"].shape == (1_000_000,)
    assert np.all(np.isfinite(out["r_fp8_gemm_and_ovhd_spdp"]))


def test_bundled_specs_loaded_once():
    assert load_specs() is not load_specs()  # load_specs reads afresh...
    from roofline.evaluate import resolve_specs

    assert resolve_specs(None) is resolve_specs(None)  # ...evaluate caches


def test_as_frame_has_torchaos_columns_and_the_same_numbers(monkeypatch):
    pd = pytest.importorskip("pandas")
    from roofline import Columns, columns_for, evaluate
    from roofline.errors import RooflineError

    rows = np.array([1024, 4096, 16384])
    cols = evaluate("NVIDIA H100 SXM", "training", "rowwise", rows, 4096, 8192)
    assert isinstance(cols, Columns) and isinstance(cols, dict)
    frame = cols.as_frame()
    assert isinstance(frame, pd.DataFrame)
    assert tuple(frame.columns) == columns_for("training")
    assert len(frame) == 3 and frame["fwd_N"].tolist() == [8192] * 3
    for name in frame.columns:
        np.testing.assert_array_equal(frame[name].to_numpy(), cols[name])
    one = evaluate("NVIDIA B200", "inference", "nvfp4", 8192, 4096, 4096, calibrated=True)
    assert len(one.as_frame()) == 1  # a scalar shape is one row
    monkeypatch.setitem(sys.modules, "pandas", None)  # pandas not installed
    with pytest.raises(RooflineError, match=r"pandas: pip install roofline-atlas\[frame\]"):
        cols.as_frame()


@pytest.mark.parametrize("calibrated", [False, True])
def test_a_subset_of_terms_equals_the_same_terms_of_the_whole_model(calibrated):
    from roofline.evaluate import calibration_of
    from roofline.model.compiled import compile_model

    gpu = load_specs()["NVIDIA B200"]
    compiled = compile_model("training", "mxfp8_cublas", calibrated=calibrated)
    params = calibration_of(gpu) if calibrated else None
    m, k, n = np.array([1024.0, 8192.0]), np.array([4096.0, 4096.0]), np.array([512.0, 14336.0])
    whole = compiled.term_times(gpu, m, k, n, params)
    keys = ("cast.weight.1", "gemm.grad_weight.lowp")
    part = compiled.term_times(gpu, m, k, n, params, keys=keys)
    assert list(part) == list(keys)
    for key in keys:  # the same expressions; lambdify's shared subexpressions may differ
        np.testing.assert_allclose(part[key], whole[key], rtol=1e-13)
    with pytest.raises(KeyError, match=r"no term 'cast\.nothing\.1'"):
        compiled.term_times(gpu, m, k, n, params, keys=("cast.nothing.1",))


@pytest.mark.parametrize(
    ("mode", "recipe", "calibrated", "grouped"),
    [
        ("training", "rowwise", False, False),
        ("training", "nvfp4", True, False),
        ("training", "mxfp8_cublas", True, True),
        ("inference", "nvfp4_static", True, False),
    ],
)
def test_unevaluated_cse_computes_what_sympys_own_does_bit_for_bit(
    mode, recipe, calibrated, grouped
):
    """The compiled model's common subexpressions are rebuilt unevaluated (fast); the
    function sympy's own ``cse=True`` prints gives the very same floats."""
    from roofline.model.compiled import _arguments, compile_model

    compiled = compile_model(mode, recipe, calibrated=calibrated, grouped=grouped)
    arguments = _arguments(compiled.model)
    exprs = [term.expr for term in compiled.model.terms]
    reference = sympy.lambdify(arguments, exprs, modules="numpy", cse=True)
    rng = np.random.default_rng(7)
    # Shapes, peaks, bandwidths, efficiencies and latencies over many orders of magnitude.
    values = [rng.uniform(1, 10, 4096) * 10.0 ** rng.integers(-7, 16, 4096) for _ in arguments]
    got = np.broadcast_arrays(*map(np.asarray, compiled._fn(*values)))
    want = np.broadcast_arrays(*map(np.asarray, reference(*values)))
    for ours, theirs in zip(got, want, strict=True):
        np.testing.assert_array_equal(ours, theirs)
