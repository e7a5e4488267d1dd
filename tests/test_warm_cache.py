"""How a warm-cache benchmark is scored (roofline.analysis.harness.WARM_BANDWIDTH): each
kernel whose bytes fit in the GPU's last-level cache streams at B / phi_L2, the rest from
DRAM; the bytes come from the model's own terms (CompiledModel.traffic_bytes)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.analysis.harness import streams_warm
from roofline.analysis.validation import predict_set, set_parameter_keys
from roofline.calibration.data import load_calibration
from roofline.calibration.params import calibration_for
from roofline.errors import SpecError
from roofline.measurements import L2State, load_measurements
from roofline.model.compiled import compile_model
from roofline.model.terms import gemm_bytes
from roofline.recipes import BF16, FP8
from roofline.specs import load_specs
from roofline.symbols import PHI_L2, K, M, N

SPECS = load_specs()
MEASUREMENTS = load_measurements(specs=SPECS)
dims = st.integers(1, 65536).map(float)


@settings(max_examples=40, deadline=None)
@given(dims, dims, dims)
def test_a_gemm_term_moves_the_bytes_of_the_traffic_rule(m, k, n):
    """On the unit machine a tensorwise fp8 GEMM's term is its operands at one byte, its
    bf16 output at two: gemm_bytes, the one traffic rule."""
    compiled = compile_model("inference", "tensorwise", False, calibrated=True)
    traffic = compiled.traffic_bytes(np.array([m]), np.array([k]), np.array([n]))
    values = {M: m, K: k, N: n}
    assert traffic["gemm.output.lowp"][0] == pytest.approx(
        float(gemm_bytes(M, K, N, FP8).subs(values))
    )
    assert traffic["gemm.output.bf16"][0] == pytest.approx(
        float(gemm_bytes(M, K, N, BF16).subs(values))
    )


def _warm_twins():
    """Every scored time_us set, as it is and timed warm (the sets whose GPU has a cache
    size in the spec database)."""
    for mset in MEASUREMENTS.sets:
        if mset.quantity.value == "time_us" and SPECS[mset.gpu].l2_cache_bytes:
            yield mset, dataclasses.replace(mset, l2=L2State.WARM)


def test_a_warm_set_is_never_slower_and_small_kernels_are_faster() -> None:
    """phi_L2 <= 1, so a kernel that fits streams at least as fast; the bundled sets have
    kernels that fit, and those get faster."""
    data = load_calibration()
    faster = 0
    for mset, warm in _warm_twins():
        base = predict_set(dataclasses.replace(mset, l2=L2State.UNKNOWN), SPECS, data)
        warm_us = predict_set(warm, SPECS, data)
        assert np.all(warm_us <= base * (1 + 1e-12)), mset.id
        faster += int(np.any(warm_us < base * (1 - 1e-6)))
    assert faster >= 5


def test_with_phi_one_or_no_cache_size_nothing_changes() -> None:
    """phi_L2 = 1 (no stored value) or a GPU without l2_cache_bytes: warm sets are scored
    at DRAM bandwidth, exactly as before."""
    data = load_calibration()
    without = dataclasses.replace(
        data, globals={k: v for k, v in data.globals.items() if k != PHI_L2.spec_key}
    )
    assert calibration_for(SPECS["NVIDIA B200"], SPECS, without).values[PHI_L2.spec_key].value == 1
    for mset, warm in list(_warm_twins())[:15]:
        plain = dataclasses.replace(mset, l2=L2State.UNKNOWN)
        assert list(predict_set(warm, SPECS, without)) == list(predict_set(plain, SPECS, without))
        gpu = dataclasses.replace(SPECS[mset.gpu], l2_cache_bytes=None)
        assert not streams_warm(warm, gpu)


def test_only_warm_sets_on_a_gpu_with_a_cache_size_depend_on_phi() -> None:
    """The fit counts a set toward phi_L2 only when it was timed warm on a GPU whose cache
    size the spec database gives (elsewhere phi changes nothing): RTX PRO 6000, without
    one, has warm sets that do not count."""
    without = 0
    for mset in MEASUREMENTS.sets:
        gpu = SPECS[mset.gpu]
        keys = set_parameter_keys(mset, gpu, model_wide=True)
        warm = mset.l2 is L2State.WARM
        assert (PHI_L2.spec_key in keys) == (warm and gpu.l2_cache_bytes is not None), mset.id
        without += warm and gpu.l2_cache_bytes is None
    assert without >= 1


def test_torchao_model_ignores_the_cache() -> None:
    """torchao's model has no cache: a warm twin predicts the same under it."""
    for mset, warm in list(_warm_twins())[:10]:
        plain = dataclasses.replace(mset, l2=L2State.UNKNOWN)
        assert list(predict_set(warm, SPECS, None)) == list(predict_set(plain, SPECS, None))


@pytest.mark.parametrize("bad", ["0", "-1", "1000", "1e12", '"50 MB"', "nan"])
def test_bad_l2_cache_bytes_names_file_key_and_expected(tmp_path, bad):
    path = tmp_path / "specs.toml"
    path.write_text(
        'schema_version = 1\n[[gpu]]\nname = "X"\nbf16_peak_tops = 1e15\n'
        f"peak_mem_bw_bytes_sec = 3e12\nl2_cache_bytes = {bad}\n",
        "utf-8",
    )
    with pytest.raises(SpecError) as err:
        load_specs(path)
    text = str(err.value)
    assert str(path) in text and "l2_cache_bytes" in text and "bytes" in text


def test_every_term_of_every_model_has_a_finite_traffic():
    """No term divides a peak by a peak or multiplies one by zero: on the unit machine
    every term of every calibrated model (dense and grouped, fused or not) is a finite,
    non-negative number of bytes."""
    from roofline.recipes import Mode, recipe_names

    m, k, n = np.array([1.0, 4096, 65536]), np.array([4096.0, 8192, 2048]), np.array([4096.0] * 3)
    groups = np.array([1.0, 8, 64])
    checked = 0
    for mode in Mode:
        for name in recipe_names(mode):
            for grouped in (False, True):
                for fusion in (False, True):
                    compiled = compile_model(mode, name, fusion, calibrated=True, grouped=grouped)
                    traffic = compiled.traffic_bytes(m, k, n, groups if grouped else None)
                    for key, moved in traffic.items():
                        assert np.all(np.isfinite(moved)) and np.all(moved >= 0), (name, key)
                        checked += 1
    assert checked > 500
