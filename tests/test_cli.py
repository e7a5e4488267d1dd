"""The roofline command: every output format, shape source and error path."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from roofline.cli import main

GPU = ["--gpu", "NVIDIA H100"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_is_the_default(capsys):
    code, out, _ = run(capsys, "eval", *GPU, "--recipe", "rowwise", "--shape", "1024,2048,4096")
    assert code == 0
    header, _rule, row = out.splitlines()
    assert header.split() == [
        "fwd_M",
        "fwd_K",
        "fwd_N",
        "r_bf16_gemm_s",
        "r_fp8_gemm_s",
        "r_fp8_ovhd_s",
        "r_fp8_gemm_and_ovhd_s",
        "r_fp8_gemm_and_ovhd_spdp",
    ]
    assert row.split()[:3] == ["1024", "2048", "4096"]


def test_csv_full_precision_matches_json(capsys):
    args = (
        "eval",
        *GPU,
        "--mode",
        "inference",
        "--recipe",
        "tensorwise",
        "--fusion",
        "--shape-gen",
        "llama",
    )
    _, csv_out, _ = run(capsys, *args, "--format", "csv")
    _, json_out, _ = run(capsys, *args, "--format", "json")
    rows = list(csv.DictReader(io.StringIO(csv_out)))
    objects = json.loads(json_out)
    assert [r["name"] for r in rows] == ["attn.wqkv", "attn.w0", "ffn.w13", "ffn.w2"]
    assert "r_bf16_ovhd_s" in rows[0]
    for row, obj in zip(rows, objects, strict=True):
        assert float(row["r_fp8_gemm_and_ovhd_spdp"]) == obj["r_fp8_gemm_and_ovhd_spdp"]
        assert int(row["fwd_M"]) == obj["fwd_M"] == 16384


@pytest.mark.parametrize(
    ("gen", "count"), [("llama", 4), ("pow2", 5), ("pow2_extended", 10), ("sweep", 512)]
)
def test_shape_generators(capsys, gen, count):
    _, out, _ = run(
        capsys, "eval", *GPU, "--recipe", "tensorwise", "--shape-gen", gen, "--format", "json"
    )
    assert len(json.loads(out)) == count


def test_shapes_file_and_output_file(capsys, tmp_path):
    shapes = tmp_path / "shapes.csv"
    shapes.write_text("M,K,N,name\n4096,4096,4096,square\n8192,1024,2048,wide\n")
    target = tmp_path / "out" / "result.json"
    code, out, _ = run(
        capsys,
        "eval",
        *GPU,
        "--recipe",
        "rowwise",
        "--shapes-file",
        str(shapes),
        "--format",
        "json",
        "-o",
        str(target),
    )
    assert code == 0 and out == ""
    rows = json.loads(target.read_text())
    assert [r["name"] for r in rows] == ["square", "wide"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--recipe", "rowwse", "--shape", "1,1,1"], "Did you mean 'rowwise'"),
        (["--recipe", "rowwise", "--mode", "serving", "--shape", "1,1,1"], "unknown mode"),
        (["--recipe", "rowwise", "--shape", "0,1,1"], "shape '0,1,1'"),
        (["--recipe", "rowwise", "--shape", "1,2"], "expected M,K,N"),
        (["--recipe", "mxfp4_cutlass", "--shape", "64,64,64"], "needs fp4, which NVIDIA H100"),
        (["--recipe", "blockwise", "--shape", "64,100,128"], "multiple of 128; got K=100"),
    ],
)
def test_bad_input_exits_2_with_a_message(capsys, argv, message):
    code, out, err = run(capsys, "eval", *GPU, *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_unknown_gpu_lists_known_names(capsys):
    code, _, err = run(capsys, "eval", "--gpu", "H100", "--recipe", "rowwise", "--shape", "1,1,1")
    assert code == 2 and "known: NVIDIA H100 SXM" in err and "Closest match" in err


def test_bad_shapes_file_names_line_and_column(capsys, tmp_path):
    shapes = tmp_path / "s.csv"
    shapes.write_text("M,K,N\n1,2,3\n4,x,6\n")
    code, _, err = run(capsys, "eval", *GPU, "--recipe", "rowwise", "--shapes-file", str(shapes))
    assert code == 2 and "line 3: column K" in err


def test_bad_spec_file_lists_every_problem(capsys):
    code, _, err = run(
        capsys,
        "eval",
        "--gpu",
        "A",
        "--recipe",
        "rowwise",
        "--shape",
        "1,1,1",
        "--specs",
        "tests/data/broken/many_problems.toml",
    )
    assert code == 2 and err.count("many_problems.toml") == 6


def test_hypothetical_warns_on_stderr(capsys):
    code, out, err = run(capsys, "eval", *GPU, "--recipe", "mxfp8_cublas", "--shape", "64,64,64")
    assert code == 0 and out and "hypothetical" in err


def test_latex_symbolic_and_instantiated(capsys):
    _, symbolic, _ = run(
        capsys,
        "latex",
        "--recipe",
        "rowwise",
        "--mode",
        "inference",
        "--quantity",
        "overhead",
        "--symbolic",
    )
    assert symbolic.strip() == (
        r"\max\left(t_{\mathrm{launch}}, \frac{3 K M + 4 M}{B_{\mathrm{mem}} \eta_{\mathrm{mem}}}\right)"
    )
    _, numbers, _ = run(
        capsys,
        "latex",
        *GPU,
        "--recipe",
        "rowwise",
        "--mode",
        "inference",
        "--quantity",
        "overhead",
    )
    assert r"2.4 \cdot 10^{12} \cdot 0.92" in numbers


def test_latex_quantity_absent_from_model(capsys):
    code, _, err = run(capsys, "latex", *GPU, "--recipe", "rowwise", "--quantity", "bf16_overhead")
    assert code == 2 and "not part of this model" in err


def test_specs_list_prints_the_capability_matrix(capsys):
    code, out, _ = run(capsys, "specs", "list")
    assert code == 0
    assert "NVIDIA A100 SXM" in out and "Capability" in out
    line = next(r for r in out.splitlines() if r.strip().startswith("mxfp4_cutlass"))
    assert line.split()[1:4] == ["-", "-", "-"]  # H100 SXM, H100, H200 lack fp4


def test_specs_check(capsys):
    assert run(capsys, "specs", "check")[0] == 0
    assert run(capsys, "specs", "check", "tests/data/broken/sparse_fp8.toml")[0] == 1
    assert run(capsys, "specs", "check", "tests/data/broken/syntax_error.toml")[0] == 2


def test_recipes(capsys):
    _, out, _ = run(capsys, "recipes")
    assert "mxfp4_cutlass" in out and "alias: mxfp4" in out


def test_console_script_runs_without_torch_import():
    code = (
        "import sys; from roofline.cli import main; main(['recipes']); "
        "assert 'torch' not in sys.modules"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_specs_schema_is_json(capsys):
    code, out, _ = run(capsys, "specs", "schema")
    assert code == 0 and json.loads(out)["title"] == "Roofline Atlas GPU spec file"


def test_specs_show_prints_sources_and_basis(capsys):
    code, out, _ = run(capsys, "specs", "show", "NVIDIA H200")
    assert code == 0
    assert "efficiency basis           assumed" in out
    assert "https://" in out and "read 2026-" in out


@pytest.mark.parametrize("index", [0, 41, 90])
def test_eval_with_reference_specs_equals_pinned_reference(capsys, tmp_path, index):
    """The CLI path (--specs, --shapes-file, json) reproduces the reference's numbers."""
    case = json.loads(Path("tests/data/parity_seed.json").read_text())[index]
    shapes = tmp_path / "shapes.csv"
    shapes.write_text("M,K,N\n" + "".join(f"{m},{k},{n}\n" for m, k, n in case["shapes"]))
    fusion = ["--fusion"] if case["fusion"] else []
    code, out, _ = run(
        capsys,
        "eval",
        "--gpu",
        case["gpu"],
        "--mode",
        case["mode"],
        "--recipe",
        case["recipe"],
        *fusion,
        "--specs",
        "tests/data/seed_specs.toml",
        "--shapes-file",
        str(shapes),
        "--format",
        "json",
    )
    assert code == 0
    rows = json.loads(out)
    for column, expected in case["columns"].items():
        got = [row[column] for row in rows]
        assert got == pytest.approx(expected, rel=1e-12)
