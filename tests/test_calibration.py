"""The calibrated model: its stored parameters, their resolution per GPU, its terms and
the acceptance numbers of issue #11 (held-out error, M1 error)."""

from __future__ import annotations

import math
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from model_cases import waves_by_hand

from roofline import evaluate, load_specs
from roofline.analysis.validation import GOALS, ModelKind, mean_abs_error, validate
from roofline.calibration.cited import SetRef, bundled_set_refs
from roofline.calibration.data import GLOBAL_KEYS, CalibrationData, load_calibration
from roofline.calibration.params import Basis, Level, calibration_for
from roofline.errors import DataFileError
from roofline.evaluate import calibration_of, evaluate_terms
from roofline.measurements import SetRole, Timer, load_measurements
from roofline.model.build import build_model
from roofline.model.terms import Quantity
from roofline.recipes import RECIPE_LIST, Mode
from roofline.specs import SpecDatabase
from roofline.symbols import CALIBRATION_SYMBOLS, HARDWARE_SYMBOLS, SHAPE_SYMBOLS

SPECS = load_specs()
MEASUREMENTS = load_measurements(specs=SPECS)
M1_SETS = [s.id for s in MEASUREMENTS.sets if s.id.startswith("m1-")]


@pytest.fixture(scope="module")
def report():
    return validate(MEASUREMENTS, SPECS)


# -- the stored file --------------------------------------------------------------------


def test_bundled_calibration_lints_against_the_data_it_names():
    data = load_calibration(gpu_names=set(SPECS), set_ids=set(MEASUREMENTS.ids()))
    assert data.globals and data.gpus


def test_every_stored_value_is_fitted_only_on_fit_sets():
    # Holdout sets must never inform a value: that is what makes them held out.
    fit_ids = {s.id for s in MEASUREMENTS.by_role(SetRole.FIT)}
    for gpu, entry in load_calibration().entries():
        assert set(entry.sets) <= fit_ids, (gpu, entry.key, set(entry.sets) - fit_ids)


@pytest.fixture(scope="module")
def refit():
    """The refit of the bundled calibration on the bundled fit sets (a few seconds)."""
    pytest.importorskip("scipy")
    from roofline.analysis.fit import fit

    return fit(load_calibration(), MEASUREMENTS, SPECS)


def test_stored_values_equal_the_refit(refit):
    # No stored number is tuned by hand: refitting on the fit sets gives them back.
    from roofline.analysis.fit import relative_change

    drift = {
        (gpu, key): (old, new)
        for gpu, key, old, new in refit.rows()
        if abs(relative_change(old, new)) > 0.02
    }
    assert not drift, f"stored values drifted from the refit; run `roofline calibrate`: {drift}"


def test_each_stored_entry_lists_the_sets_its_fit_reads():
    # A fitted value names every fit set that informs it; a measured one is fitted on its
    # listed sets alone, each of which depends on it (tools/refit_calibration.py writes both).
    from roofline.analysis.fit import informing_sets
    from roofline.analysis.validation import set_parameter_keys

    data = load_calibration()
    fit_sets = MEASUREMENTS.by_role(SetRole.FIT)
    informing = informing_sets(data, fit_sets, SPECS)
    by_id = {s.id: s for s in fit_sets}
    for gpu, entry in data.entries():
        assert informing[(gpu, entry.key)], (gpu, entry.key)
        if entry.basis == "fitted":
            assert set(entry.sets) == set(informing[(gpu, entry.key)]), (gpu, entry.key)
            continue
        for set_id in entry.sets:
            mset = by_id[set_id]
            keys = set_parameter_keys(mset, SPECS[mset.gpu], model_wide=True)
            assert entry.key in keys, (entry.key, set_id)
            assert gpu is None or mset.gpu == gpu, (gpu, entry.key, set_id)


def test_a_measured_value_is_pinned_by_its_own_sets_alone(refit):
    # Staged fit: a layer-level set's misfit moves the fitted values, never a kernel's
    # measured one (B200's row-cast fraction is read off its dim0 casts, not the NVFP4
    # ReLU -> Linear set that also runs a row cast).
    from dataclasses import replace

    from roofline.analysis.fit import fit_on

    def off_by(mset, factor):
        points = tuple(replace(p, value=p.value * factor) for p in mset.points)
        return replace(mset, points=points)

    sets = MEASUREMENTS.by_role(SetRole.FIT)
    skewed = [off_by(s, 1.3) if s.id == "m1-b200-relu-linear-nvfp4" else s for s in sets]
    data = load_calibration()
    base = dict(zip(refit.parameters, refit.fitted, strict=True))
    result = fit_on(data, skewed, SPECS)
    moved = dict(zip(result.parameters, result.fitted, strict=True))
    row = ("NVIDIA B200", "cast_efficiency.row")
    assert data.gpus["NVIDIA B200"]["cast_efficiency.row"].basis == "measured"
    # (its own casts' launch term is the fitted t_cast, which may move a little)
    assert moved[row] == pytest.approx(base[row], rel=1e-3)
    fp4 = ("NVIDIA B200", "gemm_efficiency.fp4")
    assert abs(moved[fp4] / base[fp4] - 1) > 0.01


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "calibration.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


_GLOBALS = """
schema_version = 1
[parameters.reduce_fixed_latency_s]
value = 5e-6
basis = "fitted"
sets = ["a"]
"""


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            '[[gpu]]\nname = "NVIDIA B200"\n[gpu.values."cast_efficiency.row"]\nvalue = 1.5\n'
            'basis = "measured"\nsets = ["a"]\n',
            "key 'cast_efficiency.row.value': expected a finite fraction",
        ),
        (
            '[[gpu]]\nname = "NVIDIA B200"\n[gpu.values."cast_efficiency.row"]\nvalue = 0.8\n'
            'basis = "guessed"\nsets = ["a"]\n',
            "key 'cast_efficiency.row.basis'",
        ),
        (
            '[[gpu]]\nname = "NVIDIA B200"\n[gpu.values."warp_speed"]\nvalue = 0.8\n'
            'basis = "measured"\nsets = ["a"]\n',
            "key 'warp_speed': expected one of",
        ),
        ('[[gpu]]\nname = "Imaginary GPU"\n', "gpu 'Imaginary GPU': key 'name'"),
        (
            '[[gpu]]\nname = "NVIDIA B200"\n[gpu.values."cast_efficiency.row"]\nvalue = 0.8\n'
            'basis = "measured"\nsets = []\n',
            "non-empty list of measurement set ids",
        ),
        (
            '[[gpu]]\nname = "NVIDIA B200"\n[gpu.values."cast_efficiency.row"]\nvalue = nan\n'
            'basis = "measured"\nsets = ["a"]\n',
            "finite fraction",
        ),
        # the cast launch latency is per GPU: a model-wide entry (the old form) is refused
        # with the form it takes now
        (
            '[parameters.cast_fixed_latency_s]\nvalue = 1e-6\nbasis = "fitted"\nsets = ["a"]\n',
            'stored per GPU: [gpu.values."cast_fixed_latency_s"]',
        ),
        (
            '[parameters.gemm_fixed_latency_s]\nvalue = 5e-6\nbasis = "fitted"\nsets = ["a"]\n',
            'stored per GPU: [gpu.values."gemm_fixed_latency_s"]',
        ),
        (
            '[[gpu]]\nname = "NVIDIA B200"\n[gpu.values."cast_fixed_latency_s"]\nvalue = 5e-5\n'
            'basis = "measured"\nsets = ["a"]\n',
            "expected a fixed latency in [0.5, 15] us",
        ),
    ],
)
def test_lint_names_file_entry_and_field(tmp_path, extra, expected):
    path = _write(tmp_path, _GLOBALS + extra)
    with pytest.raises(DataFileError) as caught:
        load_calibration(path, gpu_names=set(SPECS), set_ids={"a"})
    message = str(caught.value)
    assert str(path) in message
    assert expected in message


def test_lint_refuses_unknown_sets_missing_globals_and_bad_toml(tmp_path):
    path = _write(tmp_path, _GLOBALS.replace('sets = ["a"]', 'sets = ["nope"]', 1))
    with pytest.raises(DataFileError, match="ids of measurement sets, received str 'nope'"):
        load_calibration(path, set_ids={"a"})
    path = _write(tmp_path, "schema_version = 1\n")
    with pytest.raises(DataFileError, match="reduce_fixed_latency_s"):
        load_calibration(path)
    path = _write(tmp_path, "schema_version = [\n")
    with pytest.raises(DataFileError, match="valid TOML"):
        load_calibration(path)
    # Hostile TOML that tomllib itself cannot take: one clear error, never a traceback.
    path = _write(tmp_path, "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DataFileError, match="nested too deeply"):
        load_calibration(path)
    path = _write(tmp_path, "x = " + "9" * 5000 + "\n")
    with pytest.raises(DataFileError, match="unreadable number"):
        load_calibration(path)
    with pytest.raises(DataFileError, match="a readable calibration file"):
        load_calibration(tmp_path / "missing.toml")


#: Every model-wide latency, fitted on one H100 fit set.
_ALL_GLOBALS = "schema_version = 1\n" + "".join(
    f'[parameters.{key}]\nvalue = 5e-6\nbasis = "fitted"\nsets = ["a"]\n' for key in GLOBAL_KEYS
)
_B200_ROW = (
    '[[gpu]]\nname = "NVIDIA B200"\n[gpu.values."cast_efficiency.row"]\nvalue = 0.8\n'
    'basis = "measured"\nsets = ["b200-fit", "b200-held", "h100-fit", "b200-context"]\n'
)
_REFS = {
    "a": SetRef("fit", "NVIDIA H100 SXM"),
    "b200-fit": SetRef("fit", "NVIDIA B200"),
    "b200-held": SetRef("holdout", "NVIDIA B200"),
    "b200-context": SetRef("context", "NVIDIA B200"),
    "h100-fit": SetRef("fit", "NVIDIA H100 SXM"),
}


def test_cited_sets_are_fit_sets_of_the_values_gpu(tmp_path):
    """A value may cite only fit sets, and a GPU's value only that GPU's sets: a file
    saying a B200 fraction was measured on a held-out set or on H100 is refused, each
    cited set by its index; a model-wide latency may cite any GPU's fit set."""
    path = _write(tmp_path, _ALL_GLOBALS + _B200_ROW)
    with pytest.raises(DataFileError) as caught:
        load_calibration(path, gpu_names=set(SPECS), set_ids=_REFS)
    problems = {(p.field, p.received) for p in caught.value.problems}
    assert problems == {
        ("cast_efficiency.row.sets[1]", "<'b200-held', a set of role 'holdout'>"),
        ("cast_efficiency.row.sets[2]", "<'h100-fit', measured on 'NVIDIA H100 SXM'>"),
        ("cast_efficiency.row.sets[3]", "<'b200-context', a set of role 'context'>"),
    }
    assert str(path) in str(caught.value)
    fixed = _B200_ROW.replace('"b200-fit", "b200-held", "h100-fit", "b200-context"', '"b200-fit"')
    data = load_calibration(
        _write(tmp_path, _ALL_GLOBALS + fixed), gpu_names=set(SPECS), set_ids=_REFS
    )
    assert data.gpu_entry("NVIDIA B200", "cast_efficiency.row").sets == ("b200-fit",)
    # Ids alone (no roles known) check existence only.
    load_calibration(path, gpu_names=set(SPECS), set_ids=set(_REFS))


def test_a_gpus_cv_table_cites_only_its_own_sets(tmp_path):
    """A [gpu.cv] table states the error of that GPU's own fit: another GPU's set is
    refused (its role is not checked: an own-fit CV reads the owner's sets)."""
    cv = (
        '[gpu.cv]\nmean_error = 0.1\npoints = 4\nshapes = 2\nmethod = "leave one shape out"\n'
        'sets = ["b200-held", "h100-fit"]\n'
    )
    fixed = _B200_ROW.replace('"b200-fit", "b200-held", "h100-fit", "b200-context"', '"b200-fit"')
    with pytest.raises(DataFileError) as caught:
        load_calibration(
            _write(tmp_path, _ALL_GLOBALS + fixed + cv), gpu_names=set(SPECS), set_ids=_REFS
        )
    problems = {(p.field, p.received) for p in caught.value.problems}
    assert problems == {("cv.sets[1]", "<'h100-fit', measured on 'NVIDIA H100 SXM'>")}


def test_bundled_refs_carry_roles_and_gpus():
    refs = bundled_set_refs()
    assert set(refs) == set(MEASUREMENTS.ids())
    for s in MEASUREMENTS.sets:
        assert refs[s.id] == SetRef(s.role.value, s.gpu)


def test_hostile_note_is_kept_as_text_and_errors_escape_controls(tmp_path):
    hostile = _GLOBALS + ('[[gpu]]\nname = "NVIDIA B200\\u001b[2J"\n')
    with pytest.raises(DataFileError) as caught:
        load_calibration(_write(tmp_path, hostile), gpu_names=set(SPECS))
    assert "\x1b" not in str(caught.value)


# -- resolution per GPU -----------------------------------------------------------------


def test_every_gpu_gets_every_parameter_with_a_basis_and_source():
    keys = [hw.spec_key for hw in CALIBRATION_SYMBOLS]
    for gpu in SPECS.values():
        params = calibration_of(gpu)
        assert list(params.values) == keys
        for key, value in params.values.items():
            assert value.source, (gpu.name, key)
            assert math.isfinite(value.value) and value.value >= 0
            if value.basis is Basis.ASSUMED and value.low is not None:
                assert value.low <= value.value <= value.high, (gpu.name, key)


def test_measured_matmul_throughput_sets_the_bf16_and_fp8_efficiency():
    h100 = SPECS["NVIDIA H100 SXM"]
    params = calibration_of(h100)
    bf16 = params.values["gemm_efficiency.bf16"]
    assert bf16.basis is Basis.MEASURED
    assert bf16.value == pytest.approx(
        h100.measured_matmul_tflops["bf16"] * 1e12 / h100.bf16_peak_tops
    )
    assert params.values["gemm_efficiency.fp8"].value == pytest.approx(
        h100.measured_matmul_tflops["fp8"] * 1e12 / h100.fp8_peak_tops
    )


def test_gpu_without_measurements_falls_back_and_says_assumed():
    gpu = SPECS["NVIDIA GeForce RTX 4090"]
    params = calibration_of(gpu)
    # No Ada GPU has a measured bf16 efficiency: the mean over every GPU that has one,
    # with the range those GPUs span.
    bf16 = params.values["gemm_efficiency.bf16"]
    assert bf16.level is Level.GLOBAL and bf16.basis is Basis.ASSUMED
    assert bf16.low is not None and bf16.high is not None
    assert bf16.low <= bf16.value <= bf16.high
    assert "gemm_efficiency.fp8" in params.assumed()
    assert "cast_efficiency.row" in params.assumed()
    fp8 = params.values["gemm_efficiency.fp8"]
    assert fp8.low is not None and fp8.low < fp8.high


def test_cast_launch_latency_is_per_gpu_then_family_then_segment_then_every_gpu():
    from roofline.calibration.families import segment_of

    # Stored per GPU: tiny casts launch sooner on GeForce / RTX PRO Blackwell than on B200.
    data = load_calibration()
    stored = {
        name: entries["cast_fixed_latency_s"].value
        for name, entries in data.gpus.items()
        if "cast_fixed_latency_s" in entries
    }
    assert len(stored) >= 3
    for name, value in stored.items():
        own = calibration_of(SPECS[name]).values["cast_fixed_latency_s"]
        assert own.value == value and own.level is Level.GPU and own.basis is Basis.MEASURED
    # a GPU without one takes its family's mean (GB200: B200's) ...
    gb200 = calibration_of(SPECS["NVIDIA GB200"]).values["cast_fixed_latency_s"]
    assert gb200.level is Level.FAMILY and gb200.basis is Basis.ASSUMED
    assert gb200.value == pytest.approx(stored["NVIDIA B200"])
    # ... else its segment's (MI300X: the HBM datacenter GPUs'), with their range ...
    datacenter = [v for n, v in stored.items() if segment_of(SPECS[n]) == "HBM datacenter"]
    assert 0 < len(datacenter) < len(stored)
    mi300 = calibration_of(SPECS["AMD Instinct MI300X"]).values["cast_fixed_latency_s"]
    assert mi300.level is Level.GLOBAL and mi300.basis is Basis.ASSUMED
    assert mi300.value == pytest.approx(sum(datacenter) / len(datacenter))
    assert (mi300.low, mi300.high) == (min(datacenter), max(datacenter))
    # ... else every measured GPU's. A latency is a time, not a fraction of a peak: a spec
    # database without any measured GPU still gets the measured GPUs' values, not its
    # launch floor; the bundled database tells their segments (an RTX 4090 alone: the
    # GDDR cards' mean)
    alone = SpecDatabase({"NVIDIA GeForce RTX 4090": SPECS["NVIDIA GeForce RTX 4090"]}, "one")
    gpu = alone["NVIDIA GeForce RTX 4090"]
    value = calibration_for(gpu, alone, data).values["cast_fixed_latency_s"]
    cards = [v for n, v in stored.items() if segment_of(SPECS[n]) != "HBM datacenter"]
    assert value.value == pytest.approx(sum(cards) / len(cards))
    assert value.level is Level.GLOBAL
    # a part of no known family or platform: its segment's (the HBM datacenter GPUs')
    odd = replace(gpu, name="Strange Accelerator", architecture="Imaginary", vendor="Other")
    value = calibration_for(odd, SpecDatabase({odd.name: odd}, "odd"), data)
    datacenter_mean = sum(datacenter) / len(datacenter)
    assert value.values["cast_fixed_latency_s"].value == pytest.approx(datacenter_mean)
    # the amax reduction's latency, unstored, would take its GPU's cast latency
    reduce = calibration_for(SPECS["NVIDIA GeForce RTX 5090"], SPECS, _without_reduce(data))
    assert reduce.values["reduce_fixed_latency_s"].value == stored["NVIDIA GeForce RTX 5090"]


def _without_reduce(data: CalibrationData) -> CalibrationData:
    globals_ = {k: v for k, v in data.globals.items() if k != "reduce_fixed_latency_s"}
    return replace(data, globals=globals_)


def test_grouped_rates_are_measured_on_b200_and_h100_and_assumed_elsewhere():
    for layout in ("2d3d", "2d2d"):
        key = f"grouped_efficiency.{layout}"
        # 2D-3D is also measured on GB200 (Marin's TE benchmark), 2D-2D only on the two
        measured = ("NVIDIA B200", "NVIDIA H100 SXM") + (
            ("NVIDIA GB200",) if layout == "2d3d" else ()
        )
        values = [calibration_of(SPECS[name]).values[key] for name in measured]
        # measured, and never faster than the dense GEMM of the same format
        assert all(v.basis is Basis.MEASURED and 0 < v.value <= 1 for v in values)
        # elsewhere the family's measured GPUs (B300: B200 and, for 2D-3D, GB200) ...
        blackwell = [
            v.value for name, v in zip(measured, values, strict=True) if name != "NVIDIA H100 SXM"
        ]
        b300 = calibration_of(SPECS["NVIDIA B300 SXM6 AC"]).values[key]
        assert b300.basis is Basis.ASSUMED and b300.level is Level.FAMILY
        assert b300.value == pytest.approx(sum(blackwell) / len(blackwell))
        # ... and where the family has none, every measured GPU's mean, with their range
        mi300 = calibration_of(SPECS["AMD Instinct MI300X"]).values[key]
        assert mi300.basis is Basis.ASSUMED and mi300.level is Level.GLOBAL
        assert mi300.value == pytest.approx(sum(v.value for v in values) / len(values))
        assert (mi300.low, mi300.high) == (
            min(v.value for v in values),
            max(v.value for v in values),
        )
    # the 2D-2D (grad_weight) grouped GEMM is the slow one on both GPUs at the measured
    # shapes (M3, M4): its rate rho x waves (the dense K x N output's few waves: 448 tiles
    # on 132 or 148 SMs) is below the 2D-3D one's (the M x N output's many waves)
    shapes = {"NVIDIA B200": (131072, 7168, 2048), "NVIDIA H100 SXM": (32768, 7168, 2048)}
    for name in measured:
        gpu = SPECS[name]
        params = calibration_of(gpu).values
        m, k, n = shapes[name]
        sms = gpu.value("sm_count")
        rate_2d3d = params["grouped_efficiency.2d3d"].value * waves_by_hand(m, n, sms)
        rate_2d2d = params["grouped_efficiency.2d2d"].value * waves_by_hand(k, n, sms)
        assert rate_2d2d < rate_2d3d


def test_a_stored_value_wins_over_the_fallbacks():
    data = load_calibration()
    b200 = calibration_of(SPECS["NVIDIA B200"])
    for key, entry in data.gpus["NVIDIA B200"].items():
        assert b200.values[key].value == entry.value
        assert b200.values[key].basis is Basis(entry.basis)


# -- the terms ---------------------------------------------------------------------------


def _values(gpu_name: str) -> dict[sympy.Symbol, float]:
    gpu = SPECS[gpu_name]
    hardware = gpu.hardware_values()
    numbers = calibration_of(gpu).numbers()
    values = {
        hw.symbol: hardware[hw.spec_key] for hw in HARDWARE_SYMBOLS if hw.spec_key in hardware
    }
    values.update({hw.symbol: numbers[hw.spec_key] for hw in CALIBRATION_SYMBOLS})
    return values


@pytest.mark.parametrize("recipe", [r.name for r in RECIPE_LIST])
@pytest.mark.parametrize("mode", list(Mode))
def test_each_calibrated_term_equals_its_sympy_expression(recipe, mode):
    if mode not in next(r for r in RECIPE_LIST if r.name == recipe).modes:
        pytest.skip("recipe not modelled in this mode")
    gpu = SPECS["NVIDIA B200"]
    shape = (4096, 2048, 8192)
    for fusion in (False, True):
        model = build_model(mode, recipe, fusion, calibrated=True)
        times = evaluate_terms(
            gpu, mode, recipe, *shape, fusion=fusion, calibration=calibration_of(gpu)
        )
        subs = _values(gpu.name) | dict(zip(SHAPE_SYMBOLS, shape, strict=True))
        for term in model.terms:
            expected = float(term.expr.xreplace(subs))
            assert float(times[term.key]) == pytest.approx(expected, rel=1e-12), term.key


def test_calibrated_model_keeps_torchaos_term_keys():
    for recipe in RECIPE_LIST:
        for mode in recipe.modes:
            for fusion in (False, True):
                plain = build_model(mode, recipe, fusion)
                calibrated = build_model(mode, recipe, fusion, calibrated=True)
                assert [t.key for t in plain.terms] == [t.key for t in calibrated.terms]
                assert [t.quantity for t in plain.terms] == [t.quantity for t in calibrated.terms]
                assert calibrated.calibrated and not plain.calibrated


def test_default_evaluation_is_torchaos_model():
    shape = ([1024, 8192], [1024, 8192], [1024, 8192])
    default = evaluate("NVIDIA B200", "inference", "mxfp8_cublas", *shape, fusion=True)
    explicit = evaluate(
        "NVIDIA B200", "inference", "mxfp8_cublas", *shape, fusion=True, calibrated=False
    )
    calibrated = evaluate(
        "NVIDIA B200", "inference", "mxfp8_cublas", *shape, fusion=True, calibrated=True
    )
    for column, values in default.items():
        np.testing.assert_array_equal(values, explicit[column])
    assert not np.allclose(
        default["r_fp8_gemm_and_ovhd_spdp"], calibrated["r_fp8_gemm_and_ovhd_spdp"]
    )


@pytest.mark.parametrize("mode", list(Mode))
def test_emulated_gemms_are_timed_as_the_bf16_gemms_that_run(mode):
    # mxfp8_emulated dequantizes and calls a bf16 GEMM: the calibrated model times each of
    # its low-precision GEMMs exactly as the bf16 baseline's, while torchao's model keeps
    # timing them at the fp8 peak (parity), as fast as mxfp8_cublas's at plain fp8 rates.
    gpu = SPECS["NVIDIA H100 SXM"]
    params = calibration_of(gpu)
    shape = (8192, 4096, 4096)
    terms = evaluate_terms(gpu, mode, "mxfp8_emulated", *shape, calibration=params)
    model = build_model(mode, "mxfp8_emulated", False, calibrated=True)
    gemms = [t for t in model.terms if t.gemm is not None]
    bf16 = sorted(float(terms[t.key]) for t in gemms if t.quantity is Quantity.BF16_GEMM)
    lowp = sorted(float(terms[t.key]) for t in gemms if t.quantity is Quantity.LOWP_GEMM)
    assert bf16 and lowp == pytest.approx(bf16, rel=1e-12)
    calibrated = evaluate(gpu, mode, "mxfp8_emulated", *shape, calibrated=True)
    assert calibrated["r_fp8_gemm_s"] == pytest.approx(calibrated["r_bf16_gemm_s"], rel=1e-12)
    assert calibrated["r_fp8_gemm_and_ovhd_spdp"] < 1  # the casts come on top: slower than bf16
    torchao = evaluate(gpu, mode, "mxfp8_emulated", *shape)
    assert torchao["r_fp8_gemm_s"] < 0.6 * torchao["r_bf16_gemm_s"]  # at the fp8 peak


dims = st.integers(min_value=1, max_value=2**20).map(lambda d: d * 128)


@settings(max_examples=60, deadline=None)
@given(m=dims, k=dims, n=dims, factor=st.integers(min_value=2, max_value=8))
def test_calibrated_times_are_positive_and_grow_with_every_dimension(m, k, n, factor):
    gpu = SPECS["NVIDIA H100 SXM"]
    params = calibration_of(gpu)
    base = evaluate_terms(gpu, "training", "rowwise", m, k, n, calibration=params)
    for bigger in ((m * factor, k, n), (m, k * factor, n), (m, k, n * factor)):
        grown = evaluate_terms(gpu, "training", "rowwise", *bigger, calibration=params)
        for key, seconds in base.items():
            assert float(seconds) >= 0
            assert float(grown[key]) >= float(seconds) * (1 - 1e-12), key


@settings(max_examples=40, deadline=None)
@given(eta=st.floats(min_value=0.3, max_value=1.0))
def test_a_faster_low_precision_gemm_never_lowers_the_speedup(eta):
    gpu = SPECS["NVIDIA B200"]
    params = calibration_for(gpu, SPECS)
    shape = (8192, 8192, 8192)
    slow = params.with_values({"gemm_efficiency.fp8_block": eta * 0.9})
    fast = params.with_values({"gemm_efficiency.fp8_block": eta})
    from roofline.evaluate import evaluate_columns
    from roofline.recipes import get_recipe

    recipe = get_recipe("mxfp8_cublas")
    low = evaluate_columns(gpu, Mode.TRAINING, recipe, *shape, calibration=slow)
    high = evaluate_columns(gpu, Mode.TRAINING, recipe, *shape, calibration=fast)
    assert high["r_fp8_gemm_and_ovhd_spdp"] >= low["r_fp8_gemm_and_ovhd_spdp"]


# -- issue #11's acceptance numbers --------------------------------------------------------


def test_m1_calibrated_mean_error_is_at_most_15_percent(report):
    points = [p for r in report.sets if r.set.id in M1_SETS for p in r.points]
    assert len(points) == 15
    calibrated = np.mean([abs(p.error(ModelKind.CALIBRATED)) for p in points])
    torchao = np.mean([abs(p.error(ModelKind.TORCHAO)) for p in points])
    assert calibrated <= 0.15
    assert torchao > calibrated  # the reason the calibrated model exists


def test_held_out_training_layers_at_large_shapes_within_the_holdout_goal(report):
    points = report.large_training_holdout()
    sets = {r.set.id: r.set for r in report.sets}
    owners = [sets[r.set.id] for r in report.sets for p in r.points if p in points]
    generations = {SPECS[mset.gpu].architecture.split()[0] for mset in owners}
    assert {"Hopper", "Blackwell"} <= generations  # both generations are held out
    assert len(points) >= 10
    # Issue #11 asked for 10% on the held-out sets of its day; the sources added since
    # (torchao PR #3342 on H100 PCIe among them) are held out too and raise the mean, so
    # the bound is the fixed holdout goal (roofline.analysis.validation.GOALS), never a fitted one.
    calibrated = mean_abs_error(points, ModelKind.CALIBRATED)
    assert calibrated <= GOALS[SetRole.HOLDOUT]
    assert calibrated < mean_abs_error(points, ModelKind.TORCHAO)


def test_every_scored_set_is_within_its_threshold(report):
    assert not [r.set.id for r in report.failures()]


def test_a_database_without_any_calibrated_gpu_still_resolves(tmp_path):
    # A user's own spec file may share no GPU with the calibration file: every value then
    # falls back to the spec's own fractions, marked assumed (no recursion, no crash).
    text = (Path(__file__).parent / "data" / "site_small_specs.toml").read_text("utf-8")
    path = tmp_path / "specs.toml"
    path.write_text(text.replace('name = "', 'name = "Own '), encoding="utf-8")
    own = load_specs(path)
    for gpu in own.values():
        params = calibration_for(gpu, own)
        assert params.values["cast_efficiency.row"].value == gpu.pct_achievable_mem_bw
        assert "cast_efficiency.column" in params.assumed()


def test_a_cast_kind_no_gpu_measured_takes_its_nearest_measured_kind():
    """Without any SR data, the stochastic-rounding RHT cast is timed as the
    round-to-nearest RHT cast (efficiency and latency); a kind without a parent, as a
    row kernel."""
    import dataclasses

    from roofline.calibration.data import load_calibration
    from roofline.calibration.params import Basis, calibration_for
    from roofline.specs import load_specs

    specs, data = load_specs(), load_calibration()
    sr, sr_latency = "cast_efficiency.hadamard_cast_sr", "hadamard_cast_sr_fixed_latency_s"
    gpus = {
        g: {k: e for k, e in v.items() if k not in (sr, "cast_efficiency.fp4_tile")}
        for g, v in data.gpus.items()
    }
    globals_ = {k: e for k, e in data.globals.items() if k != sr_latency}
    without = dataclasses.replace(data, gpus=gpus, globals=globals_)
    values = calibration_for(specs["NVIDIA GB200"], specs, without).values
    assert values[sr].value == values["cast_efficiency.hadamard_cast"].value
    assert values[sr].basis is Basis.ASSUMED and "eta_hadamard_cast" in values[sr].source
    assert values[sr_latency].value == values["hadamard_cast_fixed_latency_s"].value
    assert values[sr_latency].basis is Basis.ASSUMED
    assert values["cast_efficiency.fp4_tile"].value == values["cast_efficiency.row"].value


# -- the cold start of L2-flushed benchmarks --------------------------------------------


def test_a_cold_l2_set_adds_the_cold_start_to_every_kernel_it_times() -> None:
    """A set timed in device time with L2 evicted before each call is predicted with a
    cold start added to each timed kernel (each term with a time, side kernels included):
    t_cold to a GEMM replayed in a CUDA graph, t_cold,cast to any other kernel and to a
    GEMM a profiler or CUDA events around eager calls time (do_bench: the host launches
    while the GPU flushes); the same set timed warm, or by a host clock, is not, nor is
    any set under torchao's model."""
    from dataclasses import replace

    from roofline.analysis.harness import starts_cold
    from roofline.analysis.validation import predict_set
    from roofline.measurements import L2State
    from roofline.symbols import T_COLD, T_COLD_CAST

    data = load_calibration()
    gemm_s = data.globals[T_COLD.spec_key].value
    cast_s = data.globals[T_COLD_CAST.spec_key].value
    assert 0.5e-6 <= cast_s < gemm_s <= 15e-6
    checked = set()
    for mset in MEASUREMENTS.sets:
        if not starts_cold(mset) or mset.quantity.value != "time_us":
            continue
        cold_us = predict_set(mset, SPECS, data)
        graph = mset.timer is Timer.CUDA_GRAPH
        gemms = sum(key.startswith("gemm.") for key in mset.terms) if graph else 0
        others = len(mset.terms) - gemms + len(mset.side_kernels)  # all run at these shapes
        assert starts_cold(replace(mset, timer=Timer.CUDA_EVENTS))
        for twin in (replace(mset, l2=L2State.UNKNOWN), replace(mset, timer=Timer.WALL_CLOCK)):
            assert not starts_cold(twin)
            warm_us = predict_set(twin, SPECS, data)
            expected = np.full(len(cold_us), (gemms * gemm_s + others * cast_s) * 1e6)
            assert cold_us - warm_us == pytest.approx(expected)
            assert list(predict_set(mset, SPECS, None)) == list(predict_set(twin, SPECS, None))
        checked.add("gemm" if gemms else "cast")
        checked.add(mset.id)
    assert {"gemm", "cast"} <= checked and len(checked) >= 10


def test_a_rotating_operand_set_reads_from_dram_without_a_cold_start() -> None:
    """A set timed on rotating operand copies larger than the cache (aiter's and FlyDSL's
    run_perftest) reads its operands from DRAM with no flush before the call: no cold start
    (its prediction equals the unknown-L2 one, timed the same way) and no warm-cache
    bandwidth; flushed like a cold set, the same points would be slower."""
    from dataclasses import replace

    from roofline.analysis.harness import starts_cold, streams_warm
    from roofline.analysis.validation import predict_set
    from roofline.measurements import L2State

    data = load_calibration()
    rotating = [s for s in MEASUREMENTS.sets if s.l2 is L2State.ROTATING]
    assert {s.id for s in rotating} >= {
        "flydsl327-mi355x-bf16-mm-small-m",
        "aiter-mi355x-mxfp4-gemm-tuned",
    }
    for mset in rotating:
        assert not starts_cold(mset) and not streams_warm(mset, SPECS[mset.gpu])
        plain = predict_set(replace(mset, l2=L2State.UNKNOWN), SPECS, data)
        assert list(predict_set(mset, SPECS, data)) == list(plain)
        if starts_cold(replace(mset, l2=L2State.COLD)):
            flushed = predict_set(replace(mset, l2=L2State.COLD), SPECS, data)
            assert all(flushed > plain)


def _model_wide_keys(set_id: str) -> frozenset[str]:
    from roofline.analysis.validation import set_parameter_keys

    mset = MEASUREMENTS.get(set_id)
    return set_parameter_keys(mset, SPECS[mset.gpu], model_wide=True)


def test_a_cold_set_depends_on_the_cold_start_of_the_kernels_it_times() -> None:
    """The fit counts a cold device-timed set toward the cold starts its kernels take
    only: a graph-replayed GEMM-only set toward t_cold, a cast-only set and a GEMM-only
    set timed by a profiler toward t_cold,cast."""
    from roofline.symbols import T_COLD, T_COLD_CAST

    gemm = _model_wide_keys("helion3209-gb200-rowwise-gemm-torch")
    cast = _model_wide_keys("fi2025-b200-nvfp4-quantize-small")
    profiled_gemm = _model_wide_keys("cutlass2923-b200-fp16-linear-gemm")
    assert T_COLD.spec_key in gemm and T_COLD_CAST.spec_key not in gemm
    assert T_COLD_CAST.spec_key in cast and T_COLD.spec_key not in cast
    assert T_COLD_CAST.spec_key in profiled_gemm and T_COLD.spec_key not in profiled_gemm
    warm = _model_wide_keys("vllm43658-b200-nvfp4-quant")
    assert not {T_COLD.spec_key, T_COLD_CAST.spec_key} & warm


@pytest.mark.parametrize(
    ("timer", "gemm_start_s"),
    [(Timer.CUDA_GRAPH, 3e-6), (Timer.PROFILER, 1e-6), (Timer.CUDA_EVENTS, 1e-6)],
)
def test_a_term_without_a_time_gets_no_cold_start(timer: Timer, gemm_start_s: float) -> None:
    """A GEMM replayed in a CUDA graph gets t_cold, a GEMM timed by its own span (a
    profiler, CUDA events) and every other kernel t_cold,cast, and a term that runs no
    kernel at a shape (time 0) gets none."""
    from roofline.analysis.harness import cold_started
    from roofline.symbols import T_COLD, T_COLD_CAST

    mset = replace(MEASUREMENTS.get("helion3209-gb200-rowwise-gemm-torch"), timer=timer)
    times = {
        "gemm.output.lowp": np.array([1e-6, 2e-6]),
        "cast.input.1": np.array([1e-6, 0.0]),
        "side.0": np.array([1e-6, 1e-6]),
        "rearrange.output.lhs": np.array([0.0, 0.0]),
    }
    seconds = {T_COLD.spec_key: 3e-6, T_COLD_CAST.spec_key: 1e-6}
    started = cold_started(mset, times, seconds)
    gemm = [1e-6 + gemm_start_s, 2e-6 + gemm_start_s]
    assert list(started["gemm.output.lowp"]) == pytest.approx(gemm)
    assert list(started["cast.input.1"]) == pytest.approx([2e-6, 0.0])
    assert list(started["side.0"]) == pytest.approx([2e-6, 2e-6])
    assert list(started["rearrange.output.lhs"]) == [0.0, 0.0]


def test_a_calibration_file_without_the_cold_start_scores_cold_sets_without_it(tmp_path):
    """cold_l2_start_s and cast_cold_l2_start_s are optional (files written before them
    stay valid): without either, both resolve to 0, assumed, and say so; with the GEMMs'
    alone, the other kernels take it (assumed)."""
    from roofline.symbols import T_COLD, T_COLD_CAST

    def file_without(*left_out: str) -> str:
        return "schema_version = 1\n" + "".join(
            f'[parameters.{key}]\nvalue = 5e-6\nbasis = "fitted"\nsets = ["a"]\n'
            for key in GLOBAL_KEYS
            if key not in left_out
        )

    data = load_calibration(_write(tmp_path, file_without(T_COLD.spec_key, T_COLD_CAST.spec_key)))
    values = calibration_for(SPECS["NVIDIA B200"], SPECS, data).values
    for key in (T_COLD.spec_key, T_COLD_CAST.spec_key):
        assert values[key].value == 0.0 and values[key].basis is Basis.ASSUMED
        assert "no stored value" in values[key].source
    data = load_calibration(_write(tmp_path, file_without(T_COLD_CAST.spec_key)))
    value = calibration_for(SPECS["NVIDIA B200"], SPECS, data).values[T_COLD_CAST.spec_key]
    assert value.value == 5e-6 and value.basis is Basis.ASSUMED
    assert value.source == f"assumed equal to {T_COLD.spec_key}"


def test_side_kernels_add_a_pointwise_kernel_each() -> None:
    """A set's side kernels add their pointwise time to its prediction: the calibrated
    model's t_cast + bytes / (eta_row B), torchao's max(bytes / (eta_mem B), launch floor);
    the M3 wgrad set's fill and cast move 10 bytes per G x K x N element."""
    from dataclasses import replace

    from roofline.analysis.harness import starts_cold
    from roofline.analysis.validation import predict_set
    from roofline.symbols import ETA_ROW, T_CAST

    mset = MEASUREMENTS.get("m3-h100-blockwise-moe-bwd-grouped-gemm-wgrad")
    assert [(k.read_bytes, k.write_bytes, k.elements) for k in mset.side_kernels] == [
        (0.0, 4.0, ("G", "K", "N")),
        (4.0, 2.0, ("G", "K", "N")),
    ]
    gpu = SPECS[mset.gpu]
    data = load_calibration()
    bare = replace(mset, side_kernels=())
    params = calibration_for(gpu, SPECS, data).values
    (_, k, n), groups = mset.points[0].shape, mset.groups
    elements = groups * k * n
    bandwidth = gpu.value("peak_mem_bw_bytes_sec")
    calibrated_s = sum(
        params[T_CAST.spec_key].value + b * elements / (params[ETA_ROW.spec_key].value * bandwidth)
        for b in (4, 6)
    )
    if starts_cold(mset):
        calibrated_s += 2 * data.globals["cast_cold_l2_start_s"].value
    added_us = predict_set(mset, SPECS, data)[0] - predict_set(bare, SPECS, data)[0]
    assert added_us == pytest.approx(calibrated_s * 1e6)
    torchao_s = sum(
        max(b * elements / (gpu.value("pct_achievable_mem_bw") * bandwidth), 2e-6) for b in (4, 6)
    )
    added_us = predict_set(mset, SPECS, None)[0] - predict_set(bare, SPECS, None)[0]
    assert added_us == pytest.approx(torchao_s * 1e6)
