"""The calibrated model's wave quantization: GEMM tiles run sm_count at a time."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st
from model_cases import TILE_COLS, TILE_ROWS, waves_by_hand

from roofline.errors import SpecError
from roofline.model.calibrated import GEMM_TILE_M, GEMM_TILE_N, wave_efficiency
from roofline.specs import load_specs
from roofline.symbols import N_SM, M, N

_WAVES = sympy.lambdify((M, N, N_SM.symbol), wave_efficiency(M, N), "numpy")


def waves(m: int, n: int, sms: float) -> float:
    return float(_WAVES(np.array([m]), np.array([n]), sms)[0])


dims = st.integers(1, 1 << 17)
sm_counts = st.integers(1, 400)


def test_the_hand_rule_uses_the_model_tile():
    assert (TILE_ROWS, TILE_COLS) == (GEMM_TILE_M, GEMM_TILE_N)


@given(dims, dims, sm_counts)
def test_wave_efficiency_is_a_fraction_matching_the_rule(m, n, sms):
    w = waves(m, n, sms)
    assert 0 < w <= 1
    assert w == pytest.approx(waves_by_hand(m, n, sms), rel=1e-12)


@given(dims, dims, sm_counts)
def test_time_never_falls_as_the_output_grows(m, n, sms):
    """compute ~ m n / w: one more row or column never makes a GEMM faster."""
    for bigger in ((m + 1, n), (m, n + 1), (m + GEMM_TILE_M, n)):
        assert bigger[0] * bigger[1] / waves(*bigger, sms) >= m * n / waves(m, n, sms) * (1 - 1e-12)


@given(dims, dims)
def test_without_an_sm_count_nothing_changes(m, n):
    assert waves(m, n, N_SM.default) == 1.0


def test_a_partly_filled_last_wave_costs_a_full_one():
    # B200 (148 SMs) at 8192 x 8192: 32 x 64 = 2048 tiles in 14 waves (the last 124/148 full)
    assert waves(8192, 8192, 148) == pytest.approx(2048 / (148 * 14))
    # one tile more than the SMs: two waves for 149 tiles' work
    m, n = GEMM_TILE_M * 149, GEMM_TILE_N
    assert waves(m, n, 148) == pytest.approx(149 / 296)


def test_a_skinny_gemm_runs_tiles_no_taller_than_itself():
    # H100 (132 SMs), a decode step: 1 x 43008 is 336 one-row tiles in 3 waves, not 336
    # tiles of 256 rows of which one is used (0.0033)
    assert waves(1, 43008, 132) == pytest.approx(336 / (132 * 3))
    assert waves(64, 43008, 132) == waves(1, 43008, 132)
    # from 256 rows on, the tile is 256 x 128 again
    assert waves(300, 43008, 132) == pytest.approx(300 * 43008 / (256 * 128 * 132 * 6))


def _spec(tmp_path, line: str):
    text = f"""schema_version = 1
[[gpu]]
name = "X"
bf16_peak_tops = 1e15
peak_mem_bw_bytes_sec = 3e12
{line}
"""
    path = tmp_path / "specs.toml"
    path.write_text(text)
    return path


def test_sm_count_is_read_and_used(tmp_path):
    gpu = load_specs(_spec(tmp_path, "sm_count = 132"))["X"]
    assert gpu.value("sm_count") == 132
    assert "sm_count" not in gpu.as_torchao_dict()  # torchao's dicts have no such key


def test_absent_sm_count_is_the_no_waves_default(tmp_path):
    gpu = load_specs(_spec(tmp_path, ""))["X"]
    assert gpu.given("sm_count") is None
    assert gpu.value("sm_count") == N_SM.default


@pytest.mark.parametrize("bad", ["132.5", "0", "2000", "true", '"132"'])
def test_bad_sm_count_names_file_key_and_expected(tmp_path, bad):
    path = _spec(tmp_path, f"sm_count = {bad}")
    with pytest.raises(SpecError) as err:
        load_specs(path)
    text = str(err.value)
    assert str(path) in text and "sm_count" in text
    assert "whole number" in text or "number" in text
