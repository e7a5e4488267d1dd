"""``roofline eval --groups``: grouped (mixture-of-experts) layers from the command line."""

from __future__ import annotations

import json
import warnings

import pytest

from roofline.capability import CapabilityWarning
from roofline.cli import main
from roofline.evaluate import evaluate

B200 = ["--gpu", "NVIDIA B200"]
SHAPE = ["--shape", "131072,7168,2048"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse errors
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("calibrated", [False, True])
def test_groups_match_the_python_api(capsys: pytest.CaptureFixture[str], calibrated: bool) -> None:
    extra = ["--calibrated"] if calibrated else []
    args = ("eval", *B200, "--recipe", "mxfp8_cublas", *SHAPE, "--groups", "8", *extra)
    code, out, _ = run(capsys, *args, "--format", "json")
    assert code == 0
    (row,) = json.loads(out)
    expected = evaluate(
        "NVIDIA B200",
        "training",
        "mxfp8_cublas",
        131072,
        7168,
        2048,
        calibrated=calibrated,
        groups=8,
    )
    for column, value in expected.items():
        assert row[column] == pytest.approx(float(value), rel=1e-15)
    dense = evaluate(
        "NVIDIA B200", "training", "mxfp8_cublas", 131072, 7168, 2048, calibrated=calibrated
    )
    assert row["r_fp8_gemm_and_ovhd_spdp"] != pytest.approx(
        float(dense["r_fp8_gemm_and_ovhd_spdp"])
    )


def test_one_group_is_the_dense_layer(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("eval", *B200, "--recipe", "mxfp8_cublas", *SHAPE, "--format", "json")
    _, dense, _ = run(capsys, *args)
    _, grouped, _ = run(capsys, *args, "--groups", "1")
    for column, value in json.loads(dense)[0].items():
        assert json.loads(grouped)[0][column] == pytest.approx(value, rel=1e-12)


def test_a_recipe_without_grouped_kernels_warns(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "eval", *B200, "--recipe", "rowwise", *SHAPE, "--groups", "8")
    assert code == 0
    assert "no grouped GEMM kernel" in err and "hypothetical" in err
    with warnings.catch_warnings():
        warnings.simplefilter("error", CapabilityWarning)
        main(["eval", *B200, "--recipe", "mxfp8_cublas", *SHAPE, "--groups", "8"])


@pytest.mark.parametrize("bad", ["0", "-3", "1.5", "x", "8e0", "99999999999", "\x1b[31m"])
def test_bad_groups_are_one_line_errors(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    code, out, err = run(capsys, "eval", *B200, "--recipe", "mxfp8_cublas", *SHAPE, "--groups", bad)
    assert code == 2 and out == ""
    assert "--groups" in err and "Traceback" not in err and "\x1b" not in err
