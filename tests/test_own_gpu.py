"""A GPU its owner measured: ``roofline calibrate --gpu NAME -o FILE`` gives it parameters
of its own and the cross-validated error of that fit (``[gpu.cv]``), and every page and
JSON row that rests on them quotes that error as the band.

The measurement files here are written by the model itself from known parameter values
(plumbing data, never presented as measured): a refit must find those values again, and
leaving a shape out must predict it, so the own-fit CV error is ~0.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from roofline.analysis.crossval import OWN_FIT_METHOD, own_fit_cv
from roofline.analysis.error_bands import RowBasis, band_for, model_band
from roofline.analysis.fit import fit, with_gpu_parameters, with_values
from roofline.analysis.validation import predict_set
from roofline.calibration.data import GpuCv, bundled_set_ids, load_calibration, parse_calibration
from roofline.calibration.params import calibration_for
from roofline.calibration.write import add_entry, set_cv
from roofline.cli import main
from roofline.errors import DataFileError
from roofline.measurements import parse_measurements
from roofline.measurements.harness import Environment, Job, Result, measurement_text, summarize
from roofline.model.compiled import compile_model
from roofline.recipes import Mode, get_recipe
from roofline.specs import SpecDatabase, load_specs
from roofline.specs.text import load_toml

GPU = "NVIDIA GeForce RTX 4090"  # no measurement of it is bundled
SHAPES = ((1024, 1024, 1024), (2048, 4096, 4096), (4096, 4096, 4096), (8192, 8192, 8192))
KINDS = (("bf16_gemm", "tensorwise"), ("lowp_gemm", "tensorwise"), ("cast", "tensorwise"))
# The cast kernel's launch latency and a GEMM's fixed time are stored per GPU, so the
# owner's casts and GEMMs fit one each too.
TRUTH = {
    "gemm_efficiency.bf16": 0.66,
    "gemm_efficiency.fp8": 0.58,
    "cast_efficiency.row": 0.71,
    "cast_fixed_latency_s": 1.5e-06,
    "gemm_fixed_latency_s": 5.5e-06,
}
BUNDLED_CALIBRATION = Path(__file__).resolve().parent.parent / "roofline/data/calibration.toml"


def _text(values_us: list[float] | None = None, gpu: str = GPU, prefix: str = "own") -> str:
    env = Environment("cuda", gpu, "torch 2.13.0; CUDA 12.8", ["plumbing data from the model"])
    jobs = [Job(kind, recipe, shape, lambda: None) for kind, recipe in KINDS for shape in SHAPES]
    values = values_us or [1.0] * len(jobs)
    results = [Result(job, summarize([v * 1e-6] * 3)) for job, v in zip(jobs, values, strict=True)]
    return measurement_text(results, env, gpu, prefix=prefix, command="test", warmup=1)


def _model_times(path: Path, gpu: str, specs: SpecDatabase) -> Path:
    """Write to ``path`` a file of the model's own times on ``gpu`` at TRUTH."""
    sets = parse_measurements(_text(gpu=gpu), "dummy.toml", specs).sets
    data = with_gpu_parameters(load_calibration(), gpu, sets, specs)
    truth = with_values(data, [(gpu, k) for k in TRUTH], list(TRUTH.values()))
    values = [float(v) for s in sets for v in predict_set(s, specs, truth)]
    path.write_text(_text(values, gpu=gpu))
    return path


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    """A file of the model's own times on GPU at the TRUTH parameters."""
    pytest.importorskip("scipy")
    return _model_times(tmp_path_factory.mktemp("own") / "m.toml", GPU, load_specs())


@pytest.fixture(scope="module")
def calibrated(measured: Path) -> Path:
    out = measured.parent / "calibration.toml"
    argv = ["calibrate", "--measurements", str(measured), "--gpu", GPU, "-o", str(out)]
    assert main(argv) == 0
    return out


def _ids(measured: Path) -> set[str]:
    return bundled_set_ids() | set(parse_measurements(measured.read_text(), "m").ids())


def test_refit_finds_the_parameters_the_data_came_from(calibrated, measured):
    data = load_calibration(calibrated, set_ids=_ids(measured))
    entries = data.gpus[GPU]
    assert sorted(entries) == sorted(TRUTH)
    for key, value in TRUTH.items():
        assert entries[key].value == pytest.approx(value, rel=1e-3)
        assert entries[key].basis == "fitted"
    cv = data.cv[GPU]
    assert (cv.points, cv.shapes, cv.method) == (12, 4, OWN_FIT_METHOD)
    assert cv.mean_error < 1e-3  # exact data: every left-out shape is predicted exactly
    assert set(cv.sets) == {s for s in _ids(measured) - bundled_set_ids()}


def test_own_band_is_quoted_where_the_numbers_rest_on_the_own_fit(calibrated, measured):
    specs = load_specs()
    data = load_calibration(calibrated, set_ids=_ids(measured))
    params = calibration_for(specs[GPU], specs, data)
    assert params.cv == data.cv[GPU]
    model = compile_model(
        Mode.INFERENCE, get_recipe("tensorwise", Mode.INFERENCE), False, True
    ).model
    band = model_band(specs[GPU], params, model)
    assert band.basis is RowBasis.MEASURED and band.fraction == params.cv.mean_error
    assert band.text().endswith(f"({GPU} own-fit CV)")
    # Training uses parameters the owner did not measure: the family band stays.
    training = compile_model(
        Mode.TRAINING, get_recipe("blockwise", Mode.TRAINING), False, True
    ).model
    assert model_band(specs[GPU], params, training).basis is not RowBasis.MEASURED
    # Without [gpu.cv], a measured number takes the bundled bands as before.
    assert band_for(specs[GPU], RowBasis.MEASURED).of != f"{GPU} own-fit"


def test_eval_json_rows_carry_the_own_band(calibrated, capsys):
    argv = [
        "eval",
        "--gpu",
        GPU,
        "--mode",
        "inference",
        "--recipe",
        "tensorwise",
        "--shape",
        "8192,4096,4096",
        "--calibrated",
        "--calibration",
        str(calibrated),
        "--format",
        "json",
    ]
    assert main(argv) == 0
    (row,) = json.loads(capsys.readouterr().out)
    cv = load_toml(calibrated.read_text())["gpu"][-1]["cv"]
    # Rows carry the band to 4 digits.
    band = round(cv["mean_error"], 4)
    assert row["basis"] == "measured" and row["error_band"] == pytest.approx(band)


def test_one_shape_gives_no_cv(measured):
    specs = load_specs()
    sets = parse_measurements(measured.read_text(), "m", specs).sets
    one = [dataclasses.replace(s, points=s.points[:1]) for s in sets]
    assert own_fit_cv(load_calibration(), GPU, one, specs) is None
    result = fit(
        load_calibration(),
        dataclasses.replace(parse_measurements(measured.read_text(), "m", specs), sets=tuple(one)),
        specs,
        GPU,
    )
    assert len(result.parameters) == len(TRUTH)  # still fitted, only not cross-validated


# -- the [gpu.cv] table as a linter sees it -----------------------------------------------


def _doc(cv: object) -> dict:
    doc = load_toml(BUNDLED_CALIBRATION.read_text())
    doc["gpu"].append({"name": GPU, "cv": cv})
    return doc


GOOD_CV = {
    "mean_error": 0.08,
    "points": 12,
    "shapes": 4,
    "method": "leave one shape out",
    "sets": ["own-bf16-gemm"],
}


def test_a_good_cv_table_loads():
    data = parse_calibration(_doc(GOOD_CV), "c.toml", set_ids=bundled_set_ids() | {"own-bf16-gemm"})
    assert data.cv[GPU] == GpuCv(0.08, 12, 4, "leave one shape out", ("own-bf16-gemm",))


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"mean_error": -0.1}, "cv.mean_error", "a fraction in [0, 1000]"),
        ({"mean_error": math.nan}, "cv.mean_error", "a fraction in [0, 1000]"),
        ({"mean_error": True}, "cv.mean_error", "a fraction in [0, 1000]"),
        ({"mean_error": "8%"}, "cv.mean_error", "a fraction in [0, 1000]"),
        ({"points": 0}, "cv.points", "a whole number in [1, 1000000]"),
        ({"shapes": 2.5}, "cv.shapes", "a whole number in [1, 1000000]"),
        ({"method": ""}, "cv.method", "how the folds were cut"),
        ({"method": "x" * 201}, "cv.method", "at most 200 characters"),
        ({"method": "leave <script> out"}, "cv.method", "plain text"),
        ({"method": "leave\u202eone out"}, "cv.method", "invisible"),
        ({"sets": []}, "cv.sets", "a non-empty list of measurement set ids"),
        ({"sets": ["Bad Id"]}, "cv.sets[0]", "a measurement set id"),
        ({"sets": ["not-a-set"]}, "cv.sets", "ids of measurement sets"),
        ({"folds": 3}, "cv.folds", "one of mean_error"),
    ],
)
def test_a_bad_cv_table_names_the_field(change, field, expected):
    with pytest.raises(DataFileError) as caught:
        parse_calibration(
            _doc({**GOOD_CV, **change}), "c.toml", set_ids=bundled_set_ids() | {"own-bf16-gemm"}
        )
    problems = [p for p in caught.value.problems if p.field == field]
    assert problems and expected.lower() in problems[0].expected.lower(), caught.value.problems
    assert problems[0].file == "c.toml" and problems[0].entry == f"gpu {GPU!r}"


def test_cv_not_a_table():
    with pytest.raises(DataFileError, match="cv"):
        parse_calibration(_doc(0.08), "c.toml")


# -- writing: entries and the CV table land in the GPU's own [[gpu]] table ---------------


def test_add_entry_and_set_cv_keep_the_file_and_replace_an_old_cv():
    text = BUNDLED_CALIBRATION.read_text()
    ids = bundled_set_ids() | {"own-a"}
    for gpu in ("NVIDIA H100 SXM", GPU):  # a GPU with a [[gpu]] table, and one without
        out = add_entry(text, gpu, "gemm_efficiency.fp4", 0.5, ["own-a"], "note")
        out = set_cv(out, gpu, 0.2, 3, 2, "leave one shape out", ["own-a"])
        out = set_cv(out, gpu, 0.1, 4, 3, "leave one shape out", ["own-a"])  # replaces
        data = parse_calibration(load_toml(out), "c.toml", set_ids=ids)
        assert data.gpus[gpu]["gemm_efficiency.fp4"].value == 0.5
        assert data.cv[gpu] == GpuCv(0.1, 4, 3, "leave one shape out", ("own-a",))
        assert out.count("[gpu.cv]") == 1
        before = load_calibration()
        assert {
            k: e
            for g, e in data.entries()
            if (g, e.key) != (gpu, "gemm_efficiency.fp4")
            for k in [(g, e.key)]
        } == {(g, e.key): e for g, e in before.entries()}


# -- roofline build --calibration FILE --measurements FILE ---------------------------------


def test_a_site_publishes_the_owners_gpu_with_its_own_band(tmp_path, tmp_path_factory):
    """The owner's GPU (the small spec file's Test H100, without bundled data) is shown as
    measured with its own-fit band; its sets are on the Validation page; bad inputs stop
    the build before anything is written, naming the file and what to pass."""
    pytest.importorskip("scipy")
    from roofline.errors import RooflineError
    from site_gen.build import build
    from site_gen.cache import BuildCache
    from site_gen.inputs import DataPaths
    from tests.browser.site_fixtures import (
        SMALL_SPECS,
        copy_of_warm_cache,
        make_root,
        require_katex,
        shared_small_build,
    )

    require_katex()
    specs = load_specs(SMALL_SPECS)
    measured = _model_times(tmp_path / "m.toml", "Test H100", specs)
    calibration = tmp_path / "calibration.toml"
    assert (
        main(
            [
                "calibrate",
                "--specs",
                str(SMALL_SPECS),
                "--measurements",
                str(measured),
                "--gpu",
                "Test H100",
                "-o",
                str(calibration),
            ]
        )
        == 0
    )
    root, site = make_root(tmp_path), tmp_path / "site"
    data = DataPaths(calibration, measured)
    # From the shared small site's warm cache: what the owner's data does not change
    # (the hand-written pages, the other GPU's charts) is reused, as a reader's rebuild would.
    cache = BuildCache(root=copy_of_warm_cache(shared_small_build(tmp_path_factory), tmp_path))
    build(str(SMALL_SPECS), site, root=root, cache=cache, data=data)

    generated = root / "docs" / "generated"
    gpu_page = (generated / "gpus" / "test-h100" / "index.md").read_text()
    assert "(Test H100 own-fit CV)" in gpu_page
    assert (
        "(Test H100 own-fit CV)" not in (generated / "gpus" / "test-b200" / "index.md").read_text()
    )
    validation = (generated / "validation.md").read_text()
    assert "cv-own-fit.csv" in validation and "leave one shape out" in validation
    html = (site / "generated" / "validation" / "index.html").read_text()
    for set_id in parse_measurements(measured.read_text(), "m", specs).ids():
        assert f'id="{set_id}"' in html
    assert '"measured": [' in (generated / "calculator" / "data.js").read_text()
    before = sorted((p.relative_to(site), p.stat().st_mtime_ns) for p in site.rglob("*"))

    # The owner's sets under a bundled id, and a calibration citing sets not passed:
    clash = tmp_path / "clash.toml"
    clash.write_text(
        measured.read_text().replace('id = "own-bf16-gemm"', 'id = "m1-b200-relu-linear-nvfp4"')
    )
    for bad, message in (
        (DataPaths(calibration, clash), "already bundled set ids"),
        (DataPaths(calibration, None), "--measurements FILE"),
    ):
        with pytest.raises(RooflineError, match=message):
            build(str(SMALL_SPECS), site, root=root, cache=BuildCache(enabled=False), data=bad)
    assert sorted((p.relative_to(site), p.stat().st_mtime_ns) for p in site.rglob("*")) == before


def test_rewrite_stays_inside_the_gpus_own_table():
    """A key the GPU's [[gpu]] table lacks is refused, never taken from a later GPU's
    table (H100 SXM has no fp4_tile entry; GB200, after it in the file, has one)."""
    from roofline.calibration.write import rewrite_value
    from roofline.errors import RooflineError

    text = BUNDLED_CALIBRATION.read_text()
    assert "cast_efficiency.fp4_tile" not in load_calibration().gpus["NVIDIA H100 SXM"]
    with pytest.raises(
        RooflineError, match=r"no entry 'cast_efficiency\.fp4_tile' for NVIDIA H100"
    ):
        rewrite_value(text, "NVIDIA H100 SXM", "cast_efficiency.fp4_tile", 0.5)
