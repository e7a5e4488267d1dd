"""Cross-validation by source, bounded parameters, architecture families and error bands
(issue #18)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline import Support, classify
from roofline.analysis.crossval import (
    MIN_HELD_OUT_SOURCE_SHARE,
    cross_validate,
    fold_for,
    source_key,
    sources,
    without_sets,
)
from roofline.analysis.cv_groups import bands_from, gpu_family_key, gpu_of
from roofline.analysis.error_bands import (
    RowBasis,
    band_for,
    load_error_bands,
    parse_error_bands,
    row_basis,
)
from roofline.analysis.validation import GOALS, ModelKind, validate
from roofline.calibration.bounds import (
    MAX_FIXED_LATENCY_S,
    MIN_FIXED_LATENCY_S,
    bounds_of,
    out_of_bounds,
)
from roofline.calibration.data import load_calibration, parse_calibration
from roofline.calibration.families import family_of
from roofline.calibration.params import Level, calibration_for
from roofline.cli import main
from roofline.errors import DataFileError, ShapeError
from roofline.evaluate import evaluate_terms
from roofline.measurements import MeasurementDatabase, SetRole, load_measurements
from roofline.model.compiled import compile_model
from roofline.processes import usable_cpus
from roofline.recipes import RECIPE_LIST, Mode
from roofline.specs import load_specs
from roofline.specs.text import load_toml
from roofline.symbols import CALIBRATION_SYMBOLS

SPECS = load_specs()
MEASUREMENTS = load_measurements(specs=SPECS)
DATA = load_calibration()


@pytest.fixture(scope="module")
def cv():
    pytest.importorskip("scipy")
    report = validate(MEASUREMENTS, SPECS, DATA)
    return cross_validate(MEASUREMENTS, SPECS, DATA, report, usable_cpus())


# -- sources and folds --------------------------------------------------------------------


def test_sets_of_one_document_share_a_source_and_fragments_do_not_split_it():
    by_source = sources(MEASUREMENTS.sets)
    inference = [k for k in by_source if k.endswith("docs/source/workflows/inference.md")]
    assert len(inference) == 1 and len(by_source[inference[0]]) == 3  # the three M1 sets
    mset = MEASUREMENTS.sets[0]
    assert source_key(mset) == mset.source.url.split("#")[0].rstrip("/")


def test_without_sets_drops_what_only_the_left_out_sets_informed():
    m1 = {s.id for s in MEASUREMENTS.sets if s.id.startswith("m1-")}
    # the B200 fp4 GEMM efficiency rests on M1 and the NVFP4 GEMMs of helion #3046: gone
    pruned = without_sets(DATA, m1 | {"helion3046-b200-nvfp4-gemm-cutlass"})
    assert pruned.gpu_entry("NVIDIA B200", "gemm_efficiency.fp4") is None
    pruned = without_sets(DATA, m1)
    # B200's GEMM latency has other sets (M4, the grouped layers): kept, without M1
    kept = pruned.gpu_entry("NVIDIA B200", "gemm_fixed_latency_s")
    assert kept is not None and kept.sets and not set(kept.sets) & m1
    # a per-GPU cast latency resting on one source goes with it: its GPU falls back
    pruned = without_sets(DATA, {"vllm43658-rtx5090-nvfp4-quant"})
    assert pruned.gpu_entry("NVIDIA GeForce RTX 5090", "cast_fixed_latency_s") is None


def test_a_fold_never_sees_its_own_source(cv):
    for fold in cv.folds:
        left_out = {r.set.id for r in fold.results}
        assert left_out and all(source_key(r.set) == fold.source for r in fold.results)
        for entry in fold.dropped:
            assert ": " in entry


def test_held_out_sources_are_at_least_a_third():
    scored = {
        key: sets
        for key, sets in sources(MEASUREMENTS.sets).items()
        if any(s.role is not SetRole.CONTEXT for s in sets)
    }
    held = [k for k, sets in scored.items() if all(s.role is not SetRole.FIT for s in sets)]
    assert len(held) >= math.ceil(MIN_HELD_OUT_SOURCE_SHARE * len(scored))


def test_cv_beats_torchao_overall_and_is_worse_than_the_fit(cv):
    # The CV error is the honest one: never better than the error on data fitted on.
    assert cv.fit_mean_error() <= cv.cv_mean_error() < cv.torchao_mean_error()
    assert cv.worst_source() is not None


def test_validate_cv_json_has_the_fields(capsys, cv, monkeypatch):
    # The command's cross-validation of the bundled files is the module's ``cv``: handed
    # over instead of refitting 22 folds a second time (a minute of the suite); the table
    # test below runs the command's own cross-validation end to end.
    import roofline.cli.validate as command

    calls = []
    monkeypatch.setattr(command, "cross_validate", lambda *args: calls.append(args) or cv)
    assert main(["validate", "--cv", "source", "--format", "json"]) == 0
    assert len(calls) == 1 and len(calls[0][0].sets) == len(MEASUREMENTS.sets)
    doc = json.loads(capsys.readouterr().out)
    overall = doc["overall"]
    for key in ("cv_mean_error", "fit_mean_error", "torchao_mean_error"):
        assert 0 < overall[key] < 1
    assert set(overall["worst_source"]) == {"source", "cv_mean_error"}
    assert overall["cv_mean_error"] == pytest.approx(cv.cv_mean_error())
    scored = [s for s in doc["sets"] if s["scored"]]
    assert all(s["library"] != "unknown" for s in scored)
    assert scored and all("cv_mean_error" in s and "fit_mean_error" in s for s in scored)
    assert all(s["goal"] == GOALS[SetRole(s["role"])] for s in scored)
    assert {row["source"] for row in doc["sources"]} == {f.source for f in cv.folds}
    libraries = doc["libraries"]
    assert sum(row["points"] for row in libraries) == len(cv.cv_points())
    assert [row["points"] for row in libraries] == sorted(
        (row["points"] for row in libraries), reverse=True
    )


def test_forked_folds_are_the_serial_ones_in_the_same_order():
    pytest.importorskip("scipy")
    ids = (
        "m1-b200-relu-linear-nvfp4",
        "vllm43658-b200-nvfp4-quant",
        "fi2025-b200-nvfp4-quantize-small",
    )
    subset = MeasurementDatabase(tuple(MEASUREMENTS.get(i) for i in ids), MEASUREMENTS.origin)
    report = validate(subset, SPECS, DATA)
    serial = cross_validate(subset, SPECS, DATA, report)
    forked = cross_validate(subset, SPECS, DATA, report, workers=2)
    assert len(serial.folds) == 3
    assert [f.source for f in forked.folds] == [f.source for f in serial.folds]
    assert [f.cv_mean_error() for f in forked.folds] == [f.cv_mean_error() for f in serial.folds]
    assert [f.dropped for f in forked.folds] == [f.dropped for f in serial.folds]


def test_a_held_out_source_shares_the_full_refit_and_a_fit_source_never_does():
    pytest.importorskip("scipy")
    from roofline.analysis.crossval import full_refit

    ids = ("m1-b200-relu-linear-nvfp4", "fi2025-b200-nvfp4-quantize-small")
    held = next(
        s for s in MEASUREMENTS.sets if s.role is SetRole.HOLDOUT and s.gpu == "NVIDIA B200"
    )
    subset = MeasurementDatabase((*(MEASUREMENTS.get(i) for i in ids), held), MEASUREMENTS.origin)
    shared = full_refit(subset, SPECS, DATA)
    own = fold_for(source_key(held), [held], subset, SPECS, DATA)
    assert fold_for(source_key(held), [held], subset, SPECS, DATA, shared) == own
    # a source the fit reads refits on its own: a stand-in "full refit" with every
    # latency doubled would show in its predictions if it were taken
    from roofline.analysis.fit import free_parameters, with_values

    fit_set = MEASUREMENTS.get(ids[0])
    latencies = [p for p in free_parameters(DATA) if p[1].endswith("_latency_s")]
    doubled = [2 * (DATA.globals[k] if g is None else DATA.gpus[g][k]).value for g, k in latencies]
    wrong = with_values(without_sets(DATA, set()), latencies, doubled)
    served = fold_for(source_key(fit_set), [fit_set], subset, SPECS, DATA, (wrong, ()))
    assert served == fold_for(source_key(fit_set), [fit_set], subset, SPECS, DATA)
    assert fold_for(source_key(held), [held], subset, SPECS, DATA, (wrong, ())) != own


def test_a_parameter_the_other_sources_leave_undetermined_falls_back():
    pytest.importorskip("scipy")
    # Left with helion #3046's NVFP4 GEMMs at M = 1 alone (latency and a weight read), the
    # fit cannot pin B200's fp4 GEMM efficiency: it falls back, named as undetermined,
    # instead of drifting to a 1% efficiency that stands in for a latency.
    ids = ("m1-b200-relu-linear-nvfp4", "helion3046-b200-nvfp4-gemm-cutlass")
    subset = MeasurementDatabase(tuple(MEASUREMENTS.get(i) for i in ids), MEASUREMENTS.origin)
    left = MEASUREMENTS.get(ids[0])
    fold = fold_for(source_key(left), [left], subset, SPECS, DATA)
    assert "NVIDIA B200: gemm_efficiency.fp4 (undetermined without it)" in fold.dropped
    assert all(0 < p.predicted[ModelKind.CALIBRATED] < math.inf for p in fold.points)
    assert fold.cv_mean_error() < 0.5


def test_validate_cv_table_prints_the_overall_line(capsys):
    pytest.importorskip("scipy")
    assert main(["validate", "--cv", "source", "--set", "m1-b200-relu-linear-nvfp4"]) == 0
    out = capsys.readouterr().out
    assert "cross-validation by source" in out and "overall (mean |error|" in out
    assert "kernel library" in out and "cublas" in out  # the M1 set's GEMM library


def test_error_bands_are_the_current_cross_validation(cv):
    expected = bands_from(cv, SPECS)
    bands = load_error_bands()
    assert bands.overall == pytest.approx(cv.cv_mean_error(), abs=1e-4)
    assert set(bands.gpus) == set(cv.by(gpu_of)) and set(bands.families) == set(
        cv.by(gpu_family_key(SPECS))
    )
    from importlib import resources

    stored = resources.files("roofline").joinpath("data/error_bands.toml").read_text("utf-8")
    assert stored == expected, "stale: run python tools/refit_calibration.py"


# -- bounds ---------------------------------------------------------------------------------


def test_every_bundled_parameter_is_within_its_physical_bounds():
    for gpu in SPECS.values():
        values = calibration_for(gpu, SPECS).numbers()
        assert out_of_bounds(values) == [], gpu.name


def test_fixed_latencies_are_between_half_and_fifteen_microseconds():
    # (a serial step's latency is not a fixed one: a rearrangement's, a GEMM's K step's)
    steps = ("rearrange_k_step_latency_s", "gemm_k_step_latency_s")
    for hw in CALIBRATION_SYMBOLS:
        if hw.unit == "s" and hw.spec_key not in steps:
            bounds = bounds_of(hw.spec_key)
            assert (bounds.low, bounds.high) == (MIN_FIXED_LATENCY_S, MAX_FIXED_LATENCY_S)


@pytest.mark.parametrize("value", [1.8e-5, 1e-7, -1e-6])
def test_a_latency_outside_its_bounds_is_refused_at_load(value):
    doc = {
        "schema_version": 1,
        "parameters": {
            key: {"value": 2e-6, "basis": "fitted", "sets": ["x"]} for key in DATA.globals
        },
        "gpu": [],
    }
    doc["parameters"]["reduce_fixed_latency_s"]["value"] = value
    with pytest.raises(DataFileError, match=r"reduce_fixed_latency_s\.value.*0\.5, 15\] us"):
        parse_calibration(doc, "test.toml")


def test_no_fp4_gemm_latency_absorbs_the_rescale_kernel():
    # The fp4 GEMM's own fixed latency rests on GEMM-only fp4 measurements (a GEMM timed
    # alone, its operands quantized before timing), not only on layers whose quantize
    # kernels it could absorb.
    entry = load_calibration().gpu_entry("NVIDIA B200", "fp4_gemm_fixed_latency_s")
    assert entry is not None
    by_id = {s.id: s for s in MEASUREMENTS.sets}
    gemm_only = [
        by_id[i]
        for i in entry.sets
        if by_id[i].timed_region.value == "gemm" and by_id[i].role is SetRole.FIT
    ]
    assert gemm_only and all(s.recipe.startswith(("nvfp4", "mxfp4")) for s in gemm_only)
    gpu = SPECS["NVIDIA B200"]
    params = calibration_for(gpu, SPECS)
    # A pre-quantized NVFP4 GEMM without a per-tensor scale (no rescale kernel) beats
    # bf16 at 2048^3 on B200; with one, the GEMM term carries torchao's output rescale
    # kernel as its epilogue, a kernel of its own with its own launch and traffic.
    plain = evaluate_terms(
        gpu, "inference", "nvfp4_no_global_scale", 2048, 2048, 2048, calibration=params
    )
    assert plain["gemm.output.lowp"] < plain["gemm.output.bf16"]
    model = compile_model("inference", "nvfp4", calibrated=True).model
    gemm = next(t for t in model.terms if t.key == "gemm.output.lowp").gemm
    assert gemm.epilogue is not None and "t_cast" in str(gemm.epilogue)
    plain_model = compile_model("inference", "nvfp4_no_global_scale", calibrated=True).model
    assert all(t.gemm is None or t.gemm.epilogue is None for t in plain_model.terms)


_CASES = [(r, mode) for r in RECIPE_LIST for mode in Mode if mode in r.modes]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(SPECS)),
    st.sampled_from(_CASES),
    st.integers(1, 1 << 15),
    st.integers(1, 1 << 15),
    st.integers(1, 1 << 15),
)
def test_no_gemm_or_cast_is_faster_than_its_roofline_floor(name, case, m, k, n):
    recipe, mode = case
    gpu = SPECS[name]
    if classify(gpu, recipe, mode).support is Support.IMPOSSIBLE:
        return
    model = compile_model(mode, recipe, calibrated=True).model
    params = calibration_for(gpu, SPECS)
    try:
        times = evaluate_terms(gpu, mode, recipe, m, k, n, calibration=params)
    except ShapeError:  # a shape the recipe cannot run (block divisibility)
        return
    hw = gpu.hardware_values()
    top_peak = max(v for key, v in hw.items() if key.endswith("_peak_tops"))
    launch = MIN_FIXED_LATENCY_S
    for term in model.terms:
        t = float(times[term.key])
        assert np.isfinite(t) and t >= 0, term.key
        if term.gemm is not None:
            # its FLOPs at the GPU's highest peak at full efficiency, plus a launch
            assert t >= 2.0 * m * k * n / top_peak + launch * (1 - 1e-9), term.key
        elif t > 0:  # a kernel that runs (not fused away) takes at least one launch
            assert t >= launch * (1 - 1e-9), term.key


# -- families and bands ----------------------------------------------------------------------


def test_families_cover_every_bundled_gpu():
    families = {family_of(g) for g in SPECS.values()}
    assert families == {
        "Hopper",
        "Blackwell datacenter",
        "Blackwell consumer",
        "CDNA3",
        "CDNA4",
        "Ada",
        "Ampere",
    }


def test_a_gpu_without_data_falls_back_to_its_family_scaled_by_its_own_peaks():
    h200 = calibration_for(SPECS["NVIDIA H200"], SPECS).values["gemm_efficiency.bf16"]
    assert h200.level is Level.FAMILY and "Hopper family" in h200.source
    mi350 = calibration_for(SPECS["AMD Instinct MI350X"], SPECS).values["gemm_efficiency.bf16"]
    mi355 = calibration_for(SPECS["AMD Instinct MI355X"], SPECS).values["gemm_efficiency.bf16"]
    assert mi350.level is Level.FAMILY and mi350.value == pytest.approx(mi355.value)


def test_rows_of_a_gpu_without_measurements_carry_the_family_or_global_band(capsys):
    args = [
        "eval",
        "--gpu",
        "AMD Instinct MI350X",
        "--mode",
        "training",
        "--recipe",
        "tensorwise",
        "--shape",
        "4096,4096,4096",
        "--calibrated",
        "--format",
        "json",
    ]
    assert main(args) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["basis"] in ("family", "global")
    # the band of the CV points of the row's size (4096^3 = 2^36)
    band = band_for(SPECS["AMD Instinct MI350X"], RowBasis(row["basis"]), mkn=4096.0**3)
    assert band.size == "2^36 <= MKN < 2^39"
    assert row["error_band"] == pytest.approx(round(band.fraction, 4))


def test_band_text_names_the_basis():
    gpu = SPECS["AMD Instinct MI300X"]
    params = calibration_for(gpu, SPECS)
    model = compile_model("training", "rowwise", calibrated=True).model
    basis = row_basis(params, [t.expr for t in model.terms])
    band = band_for(gpu, basis)
    assert basis is not RowBasis.MEASURED
    assert "a parameter not measured on this GPU" in band.text()


def test_support_flags_parameters_pinned_by_one_point_or_one_shape():
    from roofline.analysis.support import support

    rows = {(s.gpu, s.key): s for s in support(DATA, MEASUREMENTS)}
    one_point = rows[("NVIDIA H100 SXM", "grouped_efficiency.2d3d")]  # one M3 kernel
    assert (one_point.points, one_point.shapes) == (1, 1) and one_point.weak
    gemm = rows[("NVIDIA B200", "gemm_fixed_latency_s")]  # M1 sweeps, the grouped GEMMs
    assert gemm.points >= 3 and gemm.shapes >= 2 and not gemm.weak
    # FlyDSL #327's five shapes, aiter's 12 bf16 and 7 fp8 GEMMs (the fp8 ones at bf16 shapes)
    amd = rows[("AMD Instinct MI355X", "gemm_fixed_latency_s")]
    assert amd.points == 24 and amd.shapes == 17 and not amd.weak
    cast = rows[("NVIDIA GeForce RTX 5090", "cast_fixed_latency_s")]  # vLLM #43658's sweep
    assert cast.points >= 3 and cast.shapes >= 2 and not cast.weak


# -- size-aware bands ---------------------------------------------------------------------

_SIZED = """
overall = 0.3
[gpu]
"NVIDIA B200" = 0.25
[family]
"Blackwell datacenter" = 0.28
[size]
"MKN < 2^27" = 0.6
"2^36 <= MKN < 2^39" = 0.12
[gpu_size."NVIDIA B200"]
"2^36 <= MKN < 2^39" = 0.08
[family_size."Blackwell datacenter"]
"MKN < 2^27" = 0.5
"""


def test_a_band_at_a_shape_is_the_cv_error_of_points_of_its_size():
    bands = parse_error_bands(load_toml(_SIZED), "test")
    b200, gb200 = SPECS["NVIDIA B200"], SPECS["NVIDIA GB200"]
    big, tiny, middle = 8192.0 * 4096 * 4096, 16.0 * 1024 * 1024, 2.0**31
    own = band_for(b200, RowBasis.MEASURED, bands, mkn=big)
    assert (own.fraction, own.of, own.size) == (0.08, "NVIDIA B200", "2^36 <= MKN < 2^39")
    assert "NVIDIA B200 CV at 2^36 <= MKN < 2^39" in own.text()
    # no B200 points that small: its family's points of that size, then every source's
    family = band_for(b200, RowBasis.MEASURED, bands, mkn=tiny)
    assert (family.fraction, family.of) == (0.5, "Blackwell datacenter family")
    assert band_for(gb200, RowBasis.GLOBAL, bands, mkn=tiny).fraction == 0.6
    assert band_for(gb200, RowBasis.FAMILY, bands, mkn=big).of == "all sources"
    # a size no table has: the size-blind bands, as without a shape
    blind = band_for(b200, RowBasis.MEASURED, bands, mkn=middle)
    assert blind == band_for(b200, RowBasis.MEASURED, bands) and blind.size is None


def test_the_stored_bands_hold_sizes_only_where_enough_points_were_scored(cv):
    from roofline.analysis.cv_groups import by_group_and_size, size_of
    from roofline.analysis.error_bands import MIN_BAND_POINTS

    counts: dict[tuple[str, str], int] = {}
    for fold in cv.folds:
        for result in fold.results:
            for p in result.points:
                key = (result.set.gpu, size_of(result.set, p.point))
                counts[key] = counts.get(key, 0) + 1
    sized = by_group_and_size(cv, gpu_of)
    assert sized, "no GPU has enough points at any size"
    for gpu, sizes in sized.items():
        for bucket in sizes:
            assert counts[(gpu, bucket)] >= MIN_BAND_POINTS
    stored = load_error_bands().gpu_sizes
    assert stored.keys() == sized.keys()
    for gpu, sizes in sized.items():
        assert stored[gpu] == pytest.approx(sizes, abs=1e-4), gpu


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[gpu_size."NVIDIA B200"]\n"MKN < 2^99" = 0.1\n', "MKN < 2^99"),
        ('[gpu_size."NVIDIA B200"]\n"MKN < 2^27" = 11.0\n', "MKN < 2^27"),
        ('[family_size]\n"Hopper" = 0.2\n', "family_size"),
    ],
)
def test_a_damaged_size_table_is_refused_naming_the_key(text, field):
    with pytest.raises(DataFileError, match=re.escape(field)):
        parse_error_bands(load_toml("overall = 0.3\n" + text), "test.toml")


def test_a_band_file_with_sizes_reads_back_as_written():
    from roofline.analysis.error_bands import bands_toml

    nested = {"gpu_size": {'Acme "X1"': {"MKN >= 2^39": 0.05, "MKN < 2^27": 0.7}}}
    text = bands_toml(0.3, {}, {}, nested=nested)
    bands = parse_error_bands(load_toml(text), "test")
    assert bands.gpu_sizes == {'Acme "X1"': {"MKN < 2^27": 0.7, "MKN >= 2^39": 0.05}}


def test_a_band_file_with_libraries_reads_back_and_counts_every_scored_point():
    from roofline.analysis.error_bands import bands_toml

    tables = {"library": {"cublas": 0.12, "cute_dsl": 0.5}, "library_torchao": {"cublas": 0.4}}
    counts = {"library_points": {"cublas": 100, "cute_dsl": 7}}
    bands = parse_error_bands(load_toml(bands_toml(0.3, {}, {}, tables=tables, counts=counts)), "t")
    assert bands.libraries == {"cublas": 0.12, "cute_dsl": 0.5}
    assert bands.libraries_torchao == {"cublas": 0.4} and bands.library_points["cute_dsl"] == 7
    with pytest.raises(DataFileError, match="library_points"):
        parse_error_bands(load_toml("overall = 0.2\n[library_points]\ncublas = -1\n"), "t")
    # The bundled file: every scored point sits in one library's row and one size's.
    stored = load_error_bands()
    assert sum(stored.library_points.values()) == sum(stored.size_points.values())
    assert stored.libraries.keys() == stored.library_points.keys()


def test_each_json_row_carries_the_band_of_its_own_size(capsys):
    shapes = ["16,4096,4096", "8192,4096,4096", "16384,16384,16384"]
    args = ["eval", "--gpu", "NVIDIA B200", "--mode", "inference", "--recipe", "mxfp8_cublas"]
    args += [a for s in shapes for a in ("--shape", s)] + ["--calibrated", "--format", "json"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)
    gpu = SPECS["NVIDIA B200"]
    for row in rows:
        mkn = float(row["fwd_M"]) * row["fwd_K"] * row["fwd_N"]
        band = band_for(gpu, RowBasis(row["basis"]), mkn=mkn)
        assert row["error_band"] == pytest.approx(round(band.fraction, 4))
    assert len({row["error_band"] for row in rows}) > 1  # small shapes are less certain


def test_segments_split_hbm_datacenter_parts_from_gddr_cards():
    from roofline.calibration.families import segment_of

    gddr = {"NVIDIA GeForce RTX 5090", "NVIDIA RTX PRO 6000 Blackwell Server Edition"}
    gddr |= {"NVIDIA GeForce RTX 4090", "NVIDIA L40S"}
    for gpu in SPECS.values():
        expected = "GDDR workstation/consumer" if gpu.name in gddr else "HBM datacenter"
        assert segment_of(gpu) == expected, gpu.name


def test_a_gpu_without_family_data_pools_its_own_segment_first():
    """The cast launch latency of a GPU whose family has none: its segment's mean (MI300X:
    the datacenter GPUs'; L40S: the GDDR cards'), never a mean across both segments."""
    import statistics

    from roofline.calibration.data import load_calibration
    from roofline.calibration.families import segment_of

    data = load_calibration()
    key = "cast_fixed_latency_s"
    stored = {n: e[key].value for n, e in data.gpus.items() if key in e and n in SPECS}
    for name in ("AMD Instinct MI300X", "NVIDIA L40S"):
        gpu = SPECS[name]
        same = [v for n, v in stored.items() if segment_of(SPECS[n]) == segment_of(gpu)]
        value = calibration_for(gpu, SPECS, data).values[key]
        assert same and value.value == pytest.approx(statistics.fmean(same)), name
        assert value.level is Level.GLOBAL


def test_a_gemm_latency_pools_the_gpus_of_the_same_platform_first():
    """A GEMM's fixed time is the vendor library's: a GPU without its own takes its
    family's (GB200: B200's, the same chip; H800: H100's; MI350X: MI355X's), else its
    segment's on its own platform (A100: the CUDA datacenter GPUs'), never a CUDA and ROCm
    mean."""
    from roofline.calibration.data import load_calibration

    data = load_calibration()
    key = "gemm_fixed_latency_s"
    b200 = data.gpu_entry("NVIDIA B200", key).value
    h100 = data.gpu_entry("NVIDIA H100 SXM", key).value
    cuda = (b200 + h100) / 2
    mi300x = data.gpu_entry("AMD Instinct MI300X", key).value
    mi355x = data.gpu_entry("AMD Instinct MI355X", key).value
    assert min(mi300x, mi355x) > b200  # ROCm's small GEMMs start later than cuBLAS's
    expected = {
        "NVIDIA GB200": (b200, Level.FAMILY),
        "NVIDIA H800": (h100, Level.FAMILY),
        "NVIDIA A100 SXM": (cuda, Level.GLOBAL),
        "AMD Instinct MI350X": (mi355x, Level.FAMILY),
    }
    for name, (value, level) in expected.items():
        got = calibration_for(SPECS[name], SPECS, data).values[key]
        assert (got.value, got.level) == (pytest.approx(value), level), name
    # a GDDR card pools the GDDR cards (none have one here), then the CUDA GPUs'
    card = calibration_for(SPECS["NVIDIA L40S"], SPECS, data).values[key]
    assert card.value == pytest.approx(cuda) and "every GPU on CUDA" in card.source


def test_a_gpu_of_no_known_platform_pools_no_platform():
    import dataclasses

    from roofline.calibration.families import platform_of

    assert platform_of(SPECS["AMD Instinct MI300X"]) == "ROCm"
    assert platform_of(SPECS["NVIDIA L40S"]) == "CUDA"
    other = dataclasses.replace(SPECS["NVIDIA L40S"], name="Other Card", vendor="Imaginary")
    assert platform_of(other) is None
    specs = {**SPECS, other.name: other}
    got = calibration_for(other, specs).values["gemm_fixed_latency_s"]
    assert "on CUDA" not in got.source and "on None" not in got.source
