"""The CLI's calibrated model (issue #11): eval/latex/specs show --calibrated, validate, calibrate.

Parameter values are provisional (refitted by the lead), so every expected number comes
from the API (roofline.evaluate, roofline.analysis.validation, roofline.calibration), never from a
literal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import re
import sys
from pathlib import Path

import pytest

import roofline
from roofline.analysis.fit import relative_change
from roofline.analysis.validation import ModelKind, SetResult, ValidationReport, validate
from roofline.calibration.data import load_calibration
from roofline.calibration.params import calibration_for
from roofline.cli import main
from roofline.cli.validate_report import LINE_WIDTH, point_name, report_table
from roofline.evaluate import calibration_of, resolve_specs
from roofline.measurements import Point, SetRole, load_measurements
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.publish import latex
from roofline.symbols import CALIBRATION_SYMBOLS, ETA_ROW

DATA = Path(roofline.__file__).resolve().parent / "data"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
B200_MXFP8 = ["--gpu", "NVIDIA B200", "--mode", "inference", "--recipe", "mxfp8_cublas"]
SHAPES = [(1024, 1024, 1024), (16384, 8192, 1280), (4096, 4096, 4096)]
SHAPE_ARGS = [arg for s in SHAPES for arg in ("--shape", ",".join(map(str, s)))]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert CONTROL.search(out + err) is None, repr(out + err)
    return code, out, err


def run_quietly(*argv: str) -> tuple[int, str, str]:
    """main() outside a test's capsys (for module-scoped fixtures)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def failed_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("failed: ")]


# -- eval --calibrated -----------------------------------------------------------------


def eval_json(capsys, *extra: str) -> list[dict[str, float]]:
    code, out, _ = run(capsys, "eval", *B200_MXFP8, *SHAPE_ARGS, "--format", "json", *extra)
    assert code == 0
    return json.loads(out)


def api_columns(calibrated: bool) -> dict[str, list[float]]:
    m, k, n = (list(dim) for dim in zip(*SHAPES, strict=True))
    columns = roofline.evaluate(
        "NVIDIA B200", "inference", "mxfp8_cublas", m, k, n, calibrated=calibrated
    )
    return {name: values.tolist() for name, values in columns.items()}


def test_eval_calibrated_gives_the_calibrated_models_columns(capsys):
    default, calibrated = eval_json(capsys), eval_json(capsys, "--calibrated")
    # the calibrated rows carry their basis and error band besides torchao's columns
    assert [[*row.keys(), "basis", "error_band"] for row in default] == [
        list(row.keys()) for row in calibrated
    ]
    assert {row["basis"] for row in calibrated} == {"measured"}  # B200 has its own data
    assert all(0 < row["error_band"] < 1 for row in calibrated)
    for rows, want in ((default, api_columns(False)), (calibrated, api_columns(True))):
        for name, values in want.items():
            assert [row[name] for row in rows] == values, name
    speedups = [[row["r_fp8_gemm_and_ovhd_spdp"] for row in rows] for rows in (default, calibrated)]
    assert all(a != b for a, b in zip(*speedups, strict=True))


def test_eval_without_the_flag_is_torchaos_model(capsys):
    rows = eval_json(capsys)
    assert [row["r_fp8_gemm_and_ovhd_spdp"] for row in rows] == (
        api_columns(False)["r_fp8_gemm_and_ovhd_spdp"]
    )
    _, table, err = run(capsys, "eval", *B200_MXFP8, *SHAPE_ARGS)
    assert "note:" not in err  # the calibrated model's notes stay out of the default
    _, calibrated_table, _ = run(capsys, "eval", *B200_MXFP8, *SHAPE_ARGS, "--calibrated")
    assert table.splitlines()[:2] == calibrated_table.splitlines()[:2]  # same columns
    assert table != calibrated_table


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_eval_calibrated_in_every_format(capsys, fmt):
    code, out, _ = run(capsys, "eval", *B200_MXFP8, *SHAPE_ARGS, "--calibrated", "--format", fmt)
    assert code == 0 and "16384" in out


def test_calibration_file_needs_calibrated(capsys, tmp_path):
    for command in (["eval", *B200_MXFP8, *SHAPE_ARGS], ["latex", *B200_MXFP8]):
        code, out, err = run(capsys, *command, "--calibration", str(tmp_path / "c.toml"))
        assert code == 2 and out == "" and "--calibration FILE needs --calibrated" in err


def write_calibration(tmp_path: Path, factor: float) -> Path:
    """The bundled calibration with every stored value times ``factor``."""
    text = (DATA / "calibration.toml").read_text("utf-8")
    scaled = re.sub(
        r"^value = (\S+)", lambda m: f"value = {float(m[1]) * factor!r}", text, flags=re.M
    )
    assert scaled != text
    path = tmp_path / "calibration.toml"
    path.write_text(scaled, "utf-8")
    return path


def test_eval_with_another_calibration_file(capsys, tmp_path):
    path = write_calibration(tmp_path, 0.6)
    bundled = eval_json(capsys, "--calibrated")
    other = eval_json(capsys, "--calibrated", "--calibration", str(path))
    assert bundled != other


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("schema_version = [", "valid TOML"),
        ("schema_version = 2\n", "schema_version"),
        ("\xff", None),
    ],
)
def test_a_broken_calibration_file_exits_2(capsys, tmp_path, content, message):
    path = tmp_path / "broken.toml"
    path.write_bytes(content.encode("latin-1"))
    code, out, err = run(
        capsys, "eval", *B200_MXFP8, *SHAPE_ARGS, "--calibrated", "--calibration", str(path)
    )
    assert code == 2 and out == "" and err.startswith("error: ") and str(path) in err
    assert message is None or message in err


def test_a_calibration_path_that_is_a_folder(capsys, tmp_path):
    code, out, err = run(capsys, "validate", "--calibration", str(tmp_path))
    assert code == 2 and out == "" and str(tmp_path) in err


def test_eval_calibrated_notes_assumed_parameters(capsys):
    # H100 SXM has no measured block-scaled GEMM efficiency: the blockwise model assumes one.
    specs = resolve_specs(None)
    params = calibration_of(specs["NVIDIA H100 SXM"])
    code, _, err = run(
        capsys,
        "eval",
        "--gpu",
        "NVIDIA H100 SXM",
        "--recipe",
        "blockwise",
        "--shape",
        "4096,4096,4096",
        "--calibrated",
    )
    assert code == 0
    if "gemm_efficiency.fp8_block" in params.assumed():
        assert "gemm_efficiency.fp8_block" in err and "assumed" in err


# -- latex --calibrated ----------------------------------------------------------------


def test_latex_symbolic_calibrated_uses_the_calibration_symbols(capsys):
    args = (
        "latex",
        "--recipe",
        "mxfp8_cublas",
        "--mode",
        "inference",
        "--quantity",
        "speedup",
        "--symbolic",
    )
    _, torchao, _ = run(capsys, *args)
    _, calibrated, _ = run(capsys, *args, "--calibrated")
    assert ETA_ROW.latex not in torchao
    assert ETA_ROW.latex in calibrated and r"\eta_{\mathrm{row}}" in calibrated
    expr = build_model("inference", "mxfp8_cublas", False, calibrated=True).total(Quantity.SPEEDUP)
    assert calibrated.strip() == latex.symbolic(expr)


def test_latex_instantiated_calibrated_prints_the_gpus_calibration_values(capsys):
    code, out, _ = run(capsys, "latex", *B200_MXFP8, "--quantity", "overhead", "--calibrated")
    assert code == 0
    for hw in CALIBRATION_SYMBOLS:
        assert hw.latex not in out  # every symbol became a number
    specs = resolve_specs(None)
    gpu = specs["NVIDIA B200"]
    params = calibration_of(gpu)
    model = build_model("inference", "mxfp8_cublas", False, calibrated=True)
    assert out.strip() == latex.instantiated(model.total(Quantity.OVERHEAD), gpu, params)
    assert latex.format_number_latex(params.numbers()["cast_efficiency.row"]) in out


def test_instantiated_without_calibration_is_unchanged():
    gpu = resolve_specs(None)["NVIDIA B200"]
    params = calibration_of(gpu)
    torchao = build_model("inference", "mxfp8_cublas", False).total(Quantity.SPEEDUP)
    assert latex.instantiated(torchao, gpu) == latex.instantiated(torchao, gpu, None)
    # calibration values only replace calibration symbols: torchao's formula has none
    assert latex.instantiated(torchao, gpu, params) == latex.instantiated(torchao, gpu)
    calibrated = build_model("inference", "mxfp8_cublas", False, calibrated=True).speedup
    assert ETA_ROW.latex in latex.instantiated(calibrated, gpu)  # names kept without values


def test_latex_cite_is_refused_with_calibrated(capsys):
    code, out, err = run(capsys, "latex", *B200_MXFP8, "--calibrated", "--cite")
    assert code == 2 and out == "" and "--cite" in err


# -- specs show --calibrated -------------------------------------------------------------


def test_specs_show_calibrated_lists_every_parameter(capsys):
    _, plain, _ = run(capsys, "specs", "show", "NVIDIA B200")
    code, out, _ = run(capsys, "specs", "show", "NVIDIA B200", "--calibrated")
    assert code == 0 and out.startswith(plain) and "calibrated" not in plain
    for hw in CALIBRATION_SYMBOLS:
        assert hw.spec_key in out


# -- validate ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled_report():
    return validate()


@pytest.fixture(scope="module")
def bundled_runs():
    return {fmt: run_quietly("validate", "--format", fmt) for fmt in ("table", "json")}


def test_validate_exit_status_on_the_bundled_data(bundled_report, bundled_runs):
    failing = {r.set.id for r in bundled_report.failures()}
    for code, _, err in bundled_runs.values():
        assert code == (1 if failing else 0)
        lines = failed_lines(err)
        assert len(lines) == len(failing)
        assert {re.search(r"set '([^']+)'", line)[1] for line in lines} == failing


def test_validate_table_shows_every_set_and_fits_100_columns(bundled_report, bundled_runs):
    _, out, _ = bundled_runs["table"]
    assert max(map(len, out.splitlines())) <= LINE_WIDTH
    for result in bundled_report.sets:
        assert result.set.id in out
    for role in ("fit", "holdout", "context", "scored"):
        assert re.search(rf"^  {role} ", out, flags=re.M), role
    mean = bundled_report.mean_error(ModelKind.CALIBRATED, SetRole.FIT)
    fit_line = next(line for line in out.splitlines() if line.startswith("  fit "))
    assert f"{mean:.1%}" in fit_line


def test_validate_json_numbers_are_validations(bundled_report, bundled_runs):
    _, out, _ = bundled_runs["json"]
    doc = json.loads(out)
    assert doc["format"] == "roofline-validate" and doc["version"] == 1
    assert doc["passed"] is (not bundled_report.failures())
    assert [s["id"] for s in doc["sets"]] == [r.set.id for r in bundled_report.sets]
    for entry, result in zip(doc["sets"], bundled_report.sets, strict=True):
        assert entry["role"] == result.set.role.value
        assert entry["max_mean_error"] == result.set.max_mean_error
        assert (entry["timer"], entry["l2"]) == (result.set.timer.value, result.set.l2.value)
        assert [
            (k["what"], k["read_bytes"], k["write_bytes"], tuple(k["elements"]))
            for k in entry["side_kernels"]
        ] == [(k.what, k.read_bytes, k.write_bytes, k.elements) for k in result.set.side_kernels]
        for model in ModelKind:
            assert entry["mean_error"][model.value] == result.mean_error(model)
            assert entry["worst_error"][model.value] == result.worst_error(model)
        for point, want in zip(entry["points"], result.points, strict=True):
            assert point["measured"] == want.measured
            assert [tuple(s) for s in point["shapes"]] == list(want.point.shapes)
            for model in ModelKind:
                assert point["predicted"][model.value] == want.predicted[model]
                assert point["error"][model.value] == want.error(model)
                assert isinstance(point["error"][model.value], float)
    for role in (SetRole.FIT, SetRole.HOLDOUT):
        for model in ModelKind:
            got = doc["overall"][role.value]["mean_error"][model.value]
            assert got == pytest.approx(bundled_report.mean_error(model, role), rel=1e-12)
    scored = doc["overall"]["scored"]["mean_error"]["calibrated"]
    assert scored == pytest.approx(bundled_report.mean_error(ModelKind.CALIBRATED), rel=1e-12)


def one_set_file(tmp_path: Path, set_id: str, threshold: float) -> Path:
    """A measurement file holding the bundled set ``set_id`` with another threshold."""
    text = (DATA / "measurements.toml").read_text("utf-8")
    block = next(b for b in text.split("\n[[set]]\n")[1:] if f'\nid = "{set_id}"\n' in "\n" + b)
    block, count = re.subn(
        r"^max_mean_error = .*$", f"max_mean_error = {threshold!r}", block, flags=re.M
    )
    assert count == 1
    path = tmp_path / "measurements.toml"
    path.write_text(f"schema_version = 1\n\n[[set]]\n{block}", "utf-8")
    return path


@pytest.fixture(scope="module")
def scored_set(bundled_report):
    """A scored set whose calibrated error is between 0.0001 and 1 (its mean)."""
    for result in bundled_report.sets:
        error = result.mean_error(ModelKind.CALIBRATED)
        if result.scored and 1e-4 < error < 1:
            return result
    pytest.skip("no scored set with a calibrated error in (0.0001, 1)")


def test_validate_fails_a_set_above_a_tiny_threshold(capsys, tmp_path, scored_set):
    path = one_set_file(tmp_path, scored_set.set.id, 0.0001)
    code, out, err = run(capsys, "validate", "--measurements", str(path))
    assert code == 1 and scored_set.set.id in out and "FAIL" in out
    assert len(failed_lines(err)) == 1 and scored_set.set.id in failed_lines(err)[0]
    assert "0.0%" in failed_lines(err)[0]  # the threshold, as a percentage


def test_validate_passes_the_same_set_under_a_loose_threshold(capsys, tmp_path, scored_set):
    path = one_set_file(tmp_path, scored_set.set.id, 1.0)
    code, out, err = run(capsys, "validate", "--measurements", str(path), "--format", "json")
    assert code == 0 and failed_lines(err) == []
    doc = json.loads(out)
    assert doc["passed"] is True and doc["sets"][0]["passed"] is True


@pytest.mark.parametrize(
    "content",
    [
        "schema_version = 1\n[[set]]\nid = 3\n",
        "not toml [",
        'schema_version = 1\n[[set]]\nid = "x\x1b[2J"\n',
    ],
)
def test_validate_exits_2_on_a_broken_measurement_file(capsys, tmp_path, content):
    path = tmp_path / "broken.toml"
    path.write_text(content, "utf-8")
    code, out, err = run(capsys, "validate", "--measurements", str(path))
    assert code == 2 and out == "" and err.startswith("error: ")


def test_validate_missing_measurement_file(capsys, tmp_path):
    code, out, err = run(capsys, "validate", "--measurements", str(tmp_path / "none.toml"))
    assert code == 2 and out == "" and "none.toml" in err


def test_validate_selected_sets(capsys, bundled_report):
    ids = [r.set.id for r in bundled_report.sets[:2]]
    code, out, _ = run(
        capsys, "validate", "--format", "json", "--set", ids[1], ids[0], "--set", ids[1]
    )
    assert [s["id"] for s in json.loads(out)["sets"]] == [ids[1], ids[0]]
    expected = 1 if any(not r.passed for r in bundled_report.sets[:2] if r.scored) else 0
    assert code == expected


def test_validate_unknown_set(capsys):
    code, out, err = run(capsys, "validate", "--set", "no-such-set")
    assert code == 2 and out == "" and "no-such-set" in err


def test_long_ids_labels_and_titles_stay_within_100_columns(scored_set):
    label, slug = "L" * 64, "-".join(["abcdefg"] * 8)
    points = tuple(
        dataclasses.replace(p, point=dataclasses.replace(p.point, label=label))
        for p in scored_set.points
    )
    mset = dataclasses.replace(scored_set.set, id=slug, title="word " * 40, gpu="G" * 60)
    text = report_table(ValidationReport((SetResult(mset, points),)))
    assert max(map(len, text.splitlines())) <= LINE_WIDTH
    assert slug in text and "LLL..." in text


def test_point_names():
    assert point_name(Point(((16384, 8192, 1280),), 1.0)) == "16384x8192x1280"
    assert point_name(Point(((1, 2, 3),), 1.0, "wqkv")) == "1x2x3 wqkv"
    shapes = ((1, 2, 3), (4, 5, 6), (7, 8, 9), (1, 1, 1))
    assert point_name(Point(shapes, 1.0)) == "4 shapes"
    assert point_name(Point(shapes, 1.0, "llama block")) == "llama block"


# -- calibrate -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def perturbed_calibration(tmp_path_factory):
    return write_calibration(tmp_path_factory.mktemp("calibration"), 0.6)


def test_calibrate_check_fails_on_a_perturbed_calibration(capsys, perturbed_calibration):
    code, out, err = run(
        capsys, "calibrate", "--check", "--calibration", str(perturbed_calibration)
    )
    assert code == 1
    changed = [line for line in err.splitlines() if line.startswith("changed: ")]
    assert changed and all("tolerance 2.00%" in line for line in changed)
    data = load_calibration(perturbed_calibration)
    for gpu, entry in data.entries():
        assert entry.key in out and (gpu or "all GPUs") in out


def test_calibrate_check_passes_with_a_loose_tolerance(capsys, perturbed_calibration):
    code, _, err = run(
        capsys,
        "calibrate",
        "--check",
        "--tolerance",
        "1e9",
        "--calibration",
        str(perturbed_calibration),
    )
    assert code == 0 and "changed:" not in err


def test_calibrate_without_check_exits_0(capsys, perturbed_calibration):
    code, out, _ = run(capsys, "calibrate", "--calibration", str(perturbed_calibration))
    assert code == 0 and "stored" in out and "fitted" in out


@pytest.mark.parametrize("tolerance", ["-0.1", "nan", "inf", "two"])
def test_calibrate_refuses_a_bad_tolerance(capsys, tolerance):
    code, out, err = run(capsys, "calibrate", "--tolerance", tolerance)
    assert code == 2 and out == "" and "tolerance" in err


def test_calibrate_without_scipy_says_how_to_install_it(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)  # import raises ImportError
    code, out, err = run(capsys, "calibrate")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "pip install roofline-atlas[fit]" in err


def test_relative_change():
    assert relative_change(2.0, 2.2) == pytest.approx(0.1)
    assert relative_change(0.0, 0.0) == 0.0
    assert math.isinf(relative_change(0.0, 1e-6))


def test_calibration_for_matches_calibration_of():
    specs = resolve_specs(None)
    gpu = specs["NVIDIA B200"]
    assert calibration_for(gpu, specs).numbers() == calibration_of(gpu).numbers()


def test_measurements_load(bundled_report):
    assert len(bundled_report.sets) == len(load_measurements().sets)
