"""One test per finding F1-F18 of the adversarial pass of issue #19.

Each failed on 1c30984 (the commit the issue was filed against) and passes now; the
all-loaders test over one list of hostile inputs is tests/test_hostile_data.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import markdown.extensions.toc
import pytest

from roofline import units
from roofline.calibration.data import load_calibration
from roofline.cli import main
from roofline.datafiles.core import MAX_GEMMS_PER_FILE, MAX_GPUS, MAX_POINTS_PER_SET, MAX_SETS
from roofline.errors import DataFileError, RooflineError
from roofline.measurements import L2State, MeasurementDatabase, SetRole, load_measurements
from roofline.measurements.rules import RESERVED_IDS
from roofline.presets import load_models
from roofline.specs import load_specs
from roofline.specs.text import url_problem
from site_gen import config
from site_gen import inputs as site_inputs
from site_gen.cache import BuildCache
from site_gen.output.guard import BuildError, check_site_dir


def _value_line(pattern: str) -> str:
    """The bundled calibration file's ``value = ...`` line right after ``pattern`` (the
    values move with every refit; the tests only need one valid line to damage)."""
    text = resources.files("roofline").joinpath("data/calibration.toml").read_text("utf-8")
    match = re.search(re.escape(pattern) + r"\n(value = \S+)", text)
    assert match is not None, pattern
    return match.group(1)


LATENCY_LINE = _value_line("[parameters.reduce_fixed_latency_s]")
FRACTION_LINE = _value_line('[gpu.values."gemm_efficiency.fp8_block"]')


ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
CALCULATOR_JS = ROOT / "docs" / "assets" / "javascripts" / "calculator.js"
GPU_ENTRY = """\
[[gpu]]
name = "Test GPU {i}"
bf16_peak_tops = 1.0e15
peak_mem_bw_bytes_sec = 3.0e12
"""
MODEL = """\
[[model]]
name = "m{i}"
display_name = "{display}"
[[model.sources]]
url = "https://example.com/config.json"
read_on = 2026-01-01
"""
BLOCK = """\
[[model.block]]
name = "b{j}"
layers = 2
"""
GEMM = """\
[[model.block.gemm]]
name = "g{k}"
K = 1024
N = 1024
"""


def _bundled(name: str) -> str:
    return resources.files("roofline").joinpath(f"data/{name}").read_text("utf-8")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def _specs_file(tmp_path: Path, count: int, extra: str = "") -> Path:
    return _write(
        tmp_path, "gpus.toml", "".join(GPU_ENTRY.format(i=i) for i in range(count)) + extra
    )


def _models_file(
    tmp_path: Path, models: int, blocks: int = 1, gemms: int = 1, displays: list[str] | None = None
) -> Path:
    parts = ["schema_version = 1\n"]
    for i in range(models):
        display = displays[i] if displays else f"Model {i}"
        parts.append(MODEL.format(i=i, display=display))
        for j in range(blocks):
            parts.append(BLOCK.format(j=j) + "".join(GEMM.format(k=k) for k in range(gemms)))
    return _write(tmp_path, "models.toml", "".join(parts))


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _one_error(capsys, *argv: str) -> str:
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_f01_a_spec_file_of_2000_gpus_is_refused_in_seconds_with_one_line(capsys, tmp_path):
    path = _specs_file(tmp_path, 2000)
    start = time.perf_counter()
    err = _one_error(capsys, "specs", "check", str(path))
    assert time.perf_counter() - start < 5
    assert f"at most {MAX_GPUS} [[gpu]] entries" in err and "2000 entries" in err
    assert "--max-gpus" in err
    few = _specs_file(tmp_path, MAX_GPUS + 6)  # a team that means it raises the limit
    assert _run(capsys, "specs", "check", str(few))[0] == 2
    assert _run(capsys, "specs", "check", str(few), "--max-gpus", str(MAX_GPUS + 6))[0] == 0
    assert len(load_specs()) <= MAX_GPUS  # the bundled database is within the limit


def test_f02_presets_are_capped_per_file_and_models_x_gpus_per_build(tmp_path):
    from site_gen.gather.models import check_model_gpus

    # 17 models x 61 GEMMs: each model within the per-model limits, the file over the cap.
    with pytest.raises(DataFileError) as info:
        load_models(_models_file(tmp_path, 17, gemms=61))
    (problem,) = info.value.problems
    assert f"at most {MAX_GEMMS_PER_FILE}" in problem.expected and "1037 tables" in problem.received
    with pytest.raises(DataFileError, match="1 to 64"):
        load_models(_models_file(tmp_path, 65))
    specs = load_specs(_specs_file(tmp_path, 200), max_gpus=200)
    with pytest.raises(RooflineError, match="presets x GPUs"):
        check_model_gpus(load_models(), specs)  # 8 bundled presets x 200 GPUs
    check_model_gpus(load_models(), load_specs())  # the bundled build is within it


def _sets(count: int, points: int = 1) -> str:
    point = "{ shape = [1024, 1024, 1024], value = 1.0 }"
    listed = ", ".join([point] * points)
    tables = (f'[[set]]\nid = "s{i}"\npoints = [{listed}]\n' for i in range(count))
    return "schema_version = 1\n" + "".join(tables)


def test_f03_measurement_files_are_capped_and_their_problems_listed_short(capsys, tmp_path):
    many_sets = _write(tmp_path, "sets.toml", _sets(MAX_SETS + 1))
    err = _one_error(capsys, "validate", "--measurements", str(many_sets))
    assert f"at most {MAX_SETS} [[set]] tables" in err
    many_points = _write(tmp_path, "points.toml", _sets(1, MAX_POINTS_PER_SET + 1))
    with pytest.raises(DataFileError) as info:
        load_measurements(many_points)
    assert any(f"at most {MAX_POINTS_PER_SET} points" in p.expected for p in info.value.problems)
    flood = _write(tmp_path, "flood.toml", _sets(200))  # every set misses 14 keys
    code, _, err = _run(capsys, "validate", "--measurements", str(flood))
    lines = err.splitlines()
    assert code == 2 and len(lines) == 51 and all(line.startswith("error: ") for line in lines)
    assert re.search(r"\d+ more problem\(s\), not shown$", lines[-1])


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "--measurements", "{x}"],
        ["calibrate", "--measurements", "{x}"],
        [
            "eval",
            "--gpu",
            "NVIDIA B200",
            "--recipe",
            "rowwise",
            "--shape",
            "16,16,16",
            "--calibrated",
            "--calibration",
            "{x}",
        ],
        [
            "eval",
            "--specs",
            "{x}",
            "--gpu",
            "Test GPU 0",
            "--recipe",
            "rowwise",
            "--shape",
            "16,16,16",
        ],
        ["build", "--specs", "{x}", "--site-dir", "{site}"],
    ],
    ids=["validate", "calibrate", "eval --calibration", "eval --specs", "build --specs"],
)
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_f04_devices_and_fifos_are_refused_before_reading(capsys, tmp_path, argv, kind):
    path = "/dev/zero" if kind == "device" else str(tmp_path / "fifo.toml")
    if kind == "fifo":
        os.mkfifo(path)  # a read would wait for a writer forever
    site = str(tmp_path / "site")
    argv = [a.format(x=path, site=site) for a in argv]
    if argv[0] == "build":  # in its own process: the build's stage timer keeps its stdout
        proc = subprocess.run(
            [sys.executable, "-m", "roofline.cli", *argv],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        code, err = proc.returncode, proc.stderr
    else:
        code, _, err = _run(capsys, *argv)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and path in errors[0], err
    assert "regular file" in errors[0]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("[parameters.reduce_fixed_latency_s]\nvalue", "parameters = 5\n[x]\nvalue"),
        ('[[gpu]]\nname = "NVIDIA B200"\n', '[[gpu]]\nname = "NVIDIA B200"\nvalues = [1, 2]\n'),
        ('[[gpu]]\nname = "NVIDIA B200"\n', '[[gpu]]\nname = "NVIDIA B200"\nvalues = "ab"\n'),
        (LATENCY_LINE, "value = " + "9" * 400),
        (FRACTION_LINE, "value = 5e-324"),
    ],
    ids=["parameters = 5", "values = [1, 2]", 'values = "ab"', "400 digits", "5e-324"],
)
def test_f05_malformed_calibration_files_are_problems_not_tracebacks(capsys, tmp_path, old, new):
    text = _bundled("calibration.toml")
    assert old in text
    if new.startswith("parameters = 5"):  # the whole [parameters.*] section becomes 5
        text = "schema_version = 1\nparameters = 5\n" + text[text.index("[[gpu]]") :]
    else:
        text = text.replace(old, new, 1)
    path = _write(tmp_path, "calibration.toml", text)
    with pytest.raises(DataFileError):
        load_calibration(path)
    code, out, err = _run(
        capsys,
        "eval",
        "--gpu",
        "NVIDIA B200",
        "--recipe",
        "rowwise",
        "--shape",
        "64,64,64",
        "--calibrated",
        "--calibration",
        str(path),
    )
    assert code == 2 and out == "" and err.startswith(f"error: {path}: "), err


def test_f06_a_subnormal_or_overflowing_efficiency_is_refused_naming_the_key(capsys, tmp_path):
    for value in ("1e-320", "1e-300"):
        path = _specs_file(tmp_path, 1, f"pct_achievable_mem_bw = {value}\n")
        err = _one_error(capsys, "specs", "check", str(path))
        assert "key 'pct_achievable_mem_bw'" in err and value in err
        code, out, _ = _run(
            capsys,
            "eval",
            "--specs",
            str(path),
            "--gpu",
            "Test GPU 0",
            "--recipe",
            "rowwise",
            "--shape",
            "16,16,16",
            "--format",
            "json",
        )
        assert code == 2 and out == ""  # never "[" and a traceback about inf
    assert (
        _node_check(
            "inRange", {"low": 0, "high": 1, "low_inclusive": False, "high_inclusive": True}, 1e-320
        )
        is False
    )


def test_f07_bidi_and_invisible_characters_are_refused_in_urls_and_text(tmp_path):
    assert url_problem("https://example.com/a\u202eexe.png") is not None
    assert url_problem("https://example.com/a\u200bb") is not None
    spec = _specs_file(
        tmp_path, 1, '[[gpu.sources]]\nurl = "https://x.org/a\u202egnp.exe"\nread_on = 2026-01-01\n'
    )
    with pytest.raises(RooflineError, match="sources"):
        load_specs(spec)
    text = _bundled("measurements.toml")
    title = re.search(r'^title = "([^"]*)"', text, re.M).group(1)
    path = _write(tmp_path, "m.toml", text.replace(title, title + "\u200b", 1))
    with pytest.raises(DataFileError) as info:
        load_measurements(path)
    assert [p.field for p in info.value.problems] == ["title"]


def _heading_slugs(template: str) -> set[str]:
    """The anchors mkdocs' toc gives the template's fixed headings."""
    slugify = markdown.extensions.toc.slugify
    lines = [line.lstrip("#").strip() for line in template.splitlines() if line.startswith("#")]
    return {slugify(line, "-") for line in lines if "{" not in line}


def test_f08_set_ids_cannot_take_over_the_validation_pages_anchors(tmp_path):
    template = (ROOT / "site_gen" / "templates" / "validation.md.j2").read_text("utf-8")
    slugs = _heading_slugs(template) | {
        "fitted-on",
        "held-out-never-used-to-fit",
        "context-shown-not-scored",
    }  # the role headings
    assert slugs <= RESERVED_IDS
    text = _bundled("measurements.toml")
    first = re.search(r'^id = "([^"]*)"', text, re.M).group(1)
    for taken in ("overall", "fitted-on", "gemm-efficiency"):
        path = _write(tmp_path, "m.toml", text.replace(f'id = "{first}"', f'id = "{taken}"', 1))
        with pytest.raises(DataFileError) as info:
            load_measurements(path)
        assert any(p.field == "id" and "anchor" in p.expected for p in info.value.problems)


@pytest.mark.parametrize(
    "bad", ["../../etc/passwd", "<script>", "m1-b200-relu-linear-mxfp8-cublaz"]
)
def test_f09_calibration_set_ids_are_checked_at_load(capsys, tmp_path, bad):
    text = _bundled("calibration.toml").replace(
        'sets = ["m1-b200-relu-linear-nvfp4", ', f'sets = ["{bad}", ', 1
    )
    path = _write(tmp_path, "calibration.toml", text)
    err = _one_error(
        capsys,
        "eval",
        "--gpu",
        "NVIDIA B200",
        "--recipe",
        "rowwise",
        "--shape",
        "64,64,64",
        "--calibrated",
        "--calibration",
        str(path),
    )
    assert str(path) in err and "fp4_gemm_fixed_latency_s.sets" in err
    load_calibration()  # the bundled file, its set ids checked against the bundled sets


@pytest.mark.parametrize(
    ("cited", "why"),
    [
        ("m4-b200-mxfp8-moe-fwd-dim0-a", "a set of role 'holdout'"),
        ("h100-blockwise-act-quant-lhs", "measured on 'NVIDIA H100 SXM'"),
    ],
)
def test_f09b_a_value_cannot_claim_a_held_out_or_other_gpus_set(capsys, tmp_path, cited, why):
    """A pull request relabelling B200's row-cast fraction as measured on a held-out set
    (which would then count as fitted data on the Validation page) or on another GPU's set
    is refused by every command that loads the file, the site build included."""
    # B200's row-cast entry (the first row-cast section; a model-wide value may cite any
    # GPU's sets, so the edit must land in this one)
    bundled = _bundled("calibration.toml")
    start = bundled.index('[gpu.values."cast_efficiency.row"]')
    text = bundled[:start] + bundled[start:].replace(
        'sets = ["m2-b200-cast-dim0-mxfp8-floor", ', f'sets = ["{cited}", ', 1
    )
    path = _write(tmp_path, "calibration.toml", text)
    err = _one_error(
        capsys,
        *("eval", "--gpu", "NVIDIA B200", "--recipe", "mxfp8_cublas", "--shape", "64,64,64"),
        *("--calibrated", "--calibration", str(path)),
    )
    assert str(path) in err and "cast_efficiency.row.sets[0]" in err and why in err
    with pytest.raises(DataFileError, match=re.escape(why)):
        site_inputs.load_inputs(load_specs(), calibration_path=path)


@pytest.mark.parametrize("note", ["x" * 1_000_000, "fitted \x1b[31m red"], ids=["1 MB", "ESC"])
def test_f10_calibration_notes_are_bounded_and_without_controls(tmp_path, note):
    escaped = note.replace("\x1b", "\\u001b")
    text = _bundled("calibration.toml").replace('note = "fixed latency', f'note = "{escaped}', 1)
    with pytest.raises(DataFileError) as info:
        load_calibration(_write(tmp_path, "calibration.toml", text))
    assert [p.field for p in info.value.problems] == ["reduce_fixed_latency_s.note"]
    assert len(str(info.value)) < 1000


def test_f11_a_staging_name_with_a_huge_pid_is_left_alone(tmp_path):
    from site_gen.output.assets import stale_staging

    huge = tmp_path / ".site.tmp-99999999999999999999-abc"
    huge.mkdir()
    assert stale_staging(tmp_path, "site") == [] and huge.is_dir()


def test_f12_the_site_folder_is_never_inside_the_package_or_git(tmp_path):
    cache = BuildCache(root=tmp_path / "cache", enabled=False)
    for inside in (ROOT / "roofline" / "data" / "x", ROOT / "site_gen" / "x", ROOT / ".git" / "x"):
        with pytest.raises(BuildError, match="inside"):
            check_site_dir(inside, config.REPO_ROOT, cache)
    assert check_site_dir(ROOT / "site", config.REPO_ROOT, cache) == (ROOT / "site").resolve()


def test_f13_output_is_never_one_of_the_inputs(capsys, tmp_path):
    shapes = _write(tmp_path, "shapes.csv", "M,K,N\n1024,1024,1024\n")
    models = tmp_path / "models.toml"
    models.write_text(_bundled("models.toml"), "utf-8")
    calibration = _write(tmp_path, "calibration.toml", _bundled("calibration.toml"))
    before = {p: p.read_bytes() for p in (shapes, models, calibration)}
    eval_args = ["eval", "--gpu", "NVIDIA B200", "--recipe", "rowwise"]
    for argv in (
        [*eval_args, "--shapes-file", str(shapes), "-o", str(shapes)],
        [
            *eval_args,
            "--shape",
            "64,64,64",
            "--calibrated",
            "--calibration",
            str(calibration),
            "-o",
            str(calibration),
        ],
        ["model", "llama3-8b", "--models", str(models), "--gpu", "NVIDIA B200", "-o", str(models)],
    ):
        err = _one_error(capsys, *argv)
        assert "is the input file" in err
    assert all(p.read_bytes() == data for p, data in before.items())


def _node_check(function: str, *args: object) -> object:
    """``window.RooflineCalculator[function](*args)`` in node, as JSON."""
    if NODE is None:
        pytest.skip("node is not installed")
    program = (
        "global.window = {}; global.document = { addEventListener: function () {} };"
        f"require({json.dumps(str(CALCULATOR_JS))});"
        f"var r = window.RooflineCalculator[{json.dumps(function)}]"
        f"(...{json.dumps(list(args))});"
        "process.stdout.write(JSON.stringify(r === undefined ? null : r));"
    )
    result = subprocess.run([NODE, "-e", program], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_f14_the_calculator_applies_the_clis_dimension_rules(capsys):
    from site_gen.markup.calculator import _shape_messages

    shape = _shape_messages()
    for dim, text in (("M", "1e3"), ("K", "1024.0"), ("G", "1e1"), ("N", "+8")):
        assert _node_check("dimProblem", shape, dim, text) is not None, (dim, text)
        code, _, _ = _run(
            capsys,
            "eval",
            "--gpu",
            "NVIDIA B200",
            "--recipe",
            "rowwise",
            *(
                ["--shape", "1024,1024,1024", "--groups", text]
                if dim == "G"
                else ["--shape", ",".join(text if d == dim else "1024" for d in "MKN")]
            ),
        )
        assert code == 2  # the CLI refuses it too
    assert _node_check("dimProblem", shape, "M", "1024") is None
    message = _node_check("groupsProblem", shape, {"M": "16", "G": "32"})
    err = _one_error(
        capsys,
        "eval",
        "--gpu",
        "NVIDIA B200",
        "--recipe",
        "rowwise",
        "--shape",
        "16,1024,1024",
        "--groups",
        "32",
    )
    assert message and err == f"error: {message}\n"
    assert _node_check("groupsProblem", shape, {"M": "32", "G": "32"}) is None


@pytest.mark.parametrize(
    "twin",
    ["Model\u00ad 0", "Model\U000e0041 0", "Model\u3164 0", "Model\u034f 0", "Ｍｏｄｅｌ 0"],
    ids=["soft hyphen", "tag", "Hangul filler", "CGJ", "fullwidth"],
)
def test_f15_look_alike_display_names_are_refused(tmp_path, twin):
    path = _models_file(tmp_path, 2, displays=["Model 0", twin])
    with pytest.raises(DataFileError) as info:
        load_models(path)
    # refused as a duplicate of "Model 0" (and, for the invisible ones, as invisible)
    assert {p.field for p in info.value.problems} == {"display_name"}
    assert any("no other model uses" in p.expected for p in info.value.problems)


def test_f16_each_problem_is_one_line_with_one_error_and_clear_file_messages(capsys, tmp_path):
    path = _specs_file(tmp_path, 1, 'vendor = "a\\u0007"\nsku = 5\n')
    code, _, err = _run(capsys, "specs", "check", str(path))
    lines = err.splitlines()
    assert code == 2 and len(lines) == 2 and all(line.count("error:") == 1 for line in lines)
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + GPU_ENTRY.format(i=0).encode())
    err = _one_error(capsys, "specs", "check", str(bom))
    assert "byte-order mark" in err and "Invalid statement" not in err
    err = _one_error(
        capsys,
        "eval",
        "--gpu",
        "NVIDIA B200",
        "--recipe",
        "rowwise",
        "--shape",
        "64,64,64",
        "--calibrated",
        "--calibration",
        str(tmp_path / "none.toml"),
    )
    assert "[Errno" not in err and "a readable calibration file" in err


def test_f17_model_charts_and_pages_read_for_small_presets():
    import numpy as np

    from site_gen.charts.draw.models import axis_ticks, model_time_svg, short_label, time_unit

    assert time_unit(3e-5) == ("µs", 1e6) and time_unit(0.02) == ("ms", 1e3)
    ticks, decimals = axis_ticks(1.2)
    labels = [f"{t:,.{decimals}f}" for t in ticks]
    assert len(set(labels)) == len(labels) > 2  # never "0 0 0 0 0 0 1"
    svg = model_time_svg(
        "tiny", ["bf16", "rowwise"], ["q_proj"], np.array([[2e-5], [2.2e-5]]), [2.1e-5, 2.3e-5]
    )
    assert "microseconds per step" in svg and " 0 ms" not in svg and "µs, 0.91×" in svg
    assert short_label("x" * 80).endswith("…") and len(short_label("x" * 80)) == 28
    assert units.versus_bf16(0.9) == "0.90× the speed of bf16: slower"
    assert units.versus_bf16(1.25) == "1.25× faster than bf16"


def test_f18_calibrate_says_which_parameters_one_point_cannot_determine(capsys):
    from roofline.analysis.fit import fit
    from roofline.cli.calibrated import _print_fit

    specs = load_specs()
    measurements = load_measurements(specs=specs)
    # One point of a tiny cast kernel: its time is one stored parameter (t_cast) and
    # traffic at an unstored (fallback) bandwidth, so exactly one parameter is determined.
    # (Its L2 state unstated: timed warm, the point would also inform the warm-cache
    # fraction, a second parameter fitted in a stage of its own.)
    (first,) = [
        s for s in measurements.by_role(SetRole.FIT) if s.id == "vllm43658-rtx5090-nvfp4-quant"
    ]
    one = dataclasses.replace(first, points=first.points[:1], l2=L2State.UNKNOWN)
    single = MeasurementDatabase((one,), "one")
    result = fit(load_calibration(), single, specs)
    assert result.rank == 1 and len(result.undetermined()) == len(result.parameters) - 1
    _print_fit(result, 0.02)
    out = capsys.readouterr().out
    assert out.count("undetermined") == len(result.parameters) - 1
