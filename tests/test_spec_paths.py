"""Per-path spec keys: the block-scaled fp8 peak, per-fraction efficiency bases, software
gaps and the platform: their lint (good and hostile values), fallbacks, JSON Schema and
what the block-scaled peak does to both models."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import numpy as np
import pytest

from roofline import SpecError, load_specs
from roofline.evaluate import calibration_of, evaluate_terms
from roofline.model.torchao_compat import TORCHAO_SPECS_PATH
from roofline.recipes import recipe_names
from roofline.specs import ASSUMED_BASIS, GpuSpec, json_schema, parse_specs

jsonschema = pytest.importorskip("jsonschema")

ORIGIN = "paths.toml"
BLOCK = "fp8_block_scaled_peak_tops"
BASE: dict[str, Any] = {
    "name": "Acme G1",
    "bf16_peak_tops": 200e12,
    "fp8_peak_tops": 400e12,
    "fp4_peak_tops": 1600e12,
    "peak_mem_bw_bytes_sec": 1.8e12,
    "pct_achievable_gemm_tops": 0.7,
    "pct_achievable_mem_bw": 0.9,
    "vendor": "NVIDIA",
}
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # JSON escapes are TOML basic-string escapes (C1 aside)
        text = json.dumps(value, ensure_ascii=False)
        return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return repr(value)


def document(*entries: dict[str, Any]) -> str:
    """A spec file with one [[gpu]] table per entry."""
    lines = []
    for entry in entries:
        lines.append("[[gpu]]")
        lines += [f"{_toml(k)} = {_toml(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def entry(drop: tuple[str, ...] = (), **changes: Any) -> dict[str, Any]:
    """BASE with ``changes`` applied and the keys in ``drop`` left out."""
    return {k: v for k, v in {**BASE, **changes}.items() if k not in drop}


def load(**changes: Any) -> GpuSpec:
    return parse_specs(document(entry(**changes)), ORIGIN)[BASE["name"]]


def problems(text: str) -> list[Any]:
    """Every problem (errors and warnings) of ``text``, loaded or refused."""
    try:
        return list(parse_specs(text, ORIGIN).warnings)
    except SpecError as exc:
        return list(exc.problems)


def refused(key: str, expected: str, **changes: Any) -> Any:
    """The error on ``key`` of an entry with ``changes``, checked to name file/GPU/key."""
    with pytest.raises(SpecError) as info:
        parse_specs(document(entry(**changes)), ORIGIN)
    found = [p for p in info.value.problems if p.key == key and p.severity == "error"]
    assert found, str(info.value)
    problem = found[0]
    assert expected in problem.expected or expected in problem.received, str(problem)
    line = str(problem)
    assert line.startswith(ORIGIN) and f"gpu {BASE['name']!r}" in line and f"key {key!r}" in line
    assert not RAW_CONTROL.search(str(info.value)), repr(str(info.value))
    return problem


def warned(key: str, text: str) -> Any:
    found = [p for p in problems(text) if p.key == key]
    assert found and all(p.severity == "warning" for p in found), found
    return found[0]


# -- the block-scaled fp8 peak ---------------------------------------------------------


def test_block_peak_loads_and_falls_back_to_the_fp8_peak():
    gpu = load(**{BLOCK: 800e12})
    assert gpu.given(BLOCK) == gpu.value(BLOCK) == 800e12
    assert gpu.hardware_values()[BLOCK] == 800e12 and gpu.as_torchao_dict()[BLOCK] == 800e12
    plain = load()
    assert plain.given(BLOCK) is None and plain.fp8_block_scaled_peak_tops is None
    assert plain.value(BLOCK) == plain.fp8_peak_tops == plain.hardware_values()[BLOCK]
    assert BLOCK not in plain.as_torchao_dict()  # torchao's dict keeps torchao's keys
    assert plain.ridge_point_flop_per_byte(BLOCK) == plain.ridge_point_flop_per_byte(
        "fp8_peak_tops"
    )
    no_fp8 = load(drop=("fp8_peak_tops", "fp4_peak_tops"))
    assert no_fp8.value(BLOCK) is None and BLOCK not in no_fp8.hardware_values()


def test_block_peak_needs_the_fp8_peak():
    with pytest.raises(SpecError) as info:
        parse_specs(document(entry(drop=("fp8_peak_tops",), **{BLOCK: 800e12})), ORIGIN)
    (problem,) = [p for p in info.value.problems if p.key == BLOCK]
    assert "fp8_peak_tops as well" in problem.expected and problem.gpu == BASE["name"]
    assert str(problem).startswith(ORIGIN)


@pytest.mark.parametrize("ratio", [1.0, 2.0, 4.0])
def test_block_peak_within_one_to_four_times_fp8_is_clean(ratio):
    assert problems(document(entry(**{BLOCK: 400e12 * ratio}))) == []


@pytest.mark.parametrize("ratio", [0.5, 0.99, 4.01, 1000.0])
def test_block_peak_outside_one_to_four_times_fp8_warns(ratio):
    problem = warned(BLOCK, document(entry(**{BLOCK: 400e12 * ratio})))
    assert problem.expected == "1-4x fp8_peak_tops" and problem.received == f"{ratio:.2f}x"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.01e18, "a finite number of FLOP/s in (0, 1e+18]"),
        (0.0, "(0, 1e+18]"),
        (-1.0, "(0, 1e+18]"),
        ("838e12", "a number"),
        (True, "a number"),
    ],
)
def test_block_peak_range_like_the_other_peaks(value, expected):
    refused(BLOCK, expected, **{BLOCK: value})


def test_block_peak_on_a_gpu_without_mx_warns():
    text = document(entry(native_formats=["fp8"], **{BLOCK: 800e12}))
    assert "mxfp8" in warned(BLOCK, text).expected


# -- per-fraction efficiency bases -----------------------------------------------------


def test_bases_fall_back_to_efficiency_basis():
    gpu = load(efficiency_basis="measured: torchao, on this GPU, against the dense peaks")
    assert gpu.gemm_efficiency_basis == gpu.mem_efficiency_basis == gpu.efficiency_basis
    assert gpu.gemm_basis == gpu.mem_basis == gpu.efficiency_basis
    assert not (gpu.gemm_efficiency_assumed or gpu.mem_efficiency_assumed)
    assert not gpu.efficiency_assumed


def test_each_fraction_says_measured_or_assumed():
    gpu = load(
        efficiency_basis="assumed: both",
        gemm_efficiency_basis="measured: MAMF, ml-engineering, against the bf16 dense peak",
    )
    assert gpu.gemm_basis.startswith("measured") and not gpu.gemm_efficiency_assumed
    assert gpu.mem_basis == "assumed: both" and gpu.mem_efficiency_assumed
    assert gpu.efficiency_assumed  # old callers: either one assumed
    direct = GpuSpec("X", 1e15, 3e12, 0.8, 0.9, mem_efficiency_basis="assumed: copied")
    assert direct.mem_efficiency_assumed and not direct.gemm_efficiency_assumed
    assert direct.gemm_basis == "given"


def test_a_defaulted_fraction_is_assumed_whatever_the_entry_says():
    gpu = load(drop=("pct_achievable_mem_bw",), gemm_efficiency_basis="measured: by us")
    assert gpu.pct_achievable_mem_bw == 0.92 and gpu.mem_basis == ASSUMED_BASIS
    assert gpu.gemm_basis == "measured: by us" and not gpu.gemm_efficiency_assumed
    assert gpu.efficiency_basis == ASSUMED_BASIS  # the entry-wide basis, as before
    bare = load(drop=("pct_achievable_gemm_tops", "pct_achievable_mem_bw"))
    assert bare.gemm_basis == bare.mem_basis == ASSUMED_BASIS


def test_a_measured_basis_for_an_absent_fraction_warns():
    text = document(entry(drop=("pct_achievable_gemm_tops",), gemm_efficiency_basis="measured"))
    problem = warned("gemm_efficiency_basis", text)
    assert "pct_achievable_gemm_tops is absent" in problem.expected


@pytest.mark.parametrize("key", ["gemm_efficiency_basis", "mem_efficiency_basis"])
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("guessed", "one of measured, assumed"),
        ("assumed: x\x1b[2Jy", "control"),
        (0.8, "a string"),
        (["measured"], "a string"),
    ],
)
def test_hostile_bases_are_refused(key, value, expected):
    refused(key, expected, **{key: value})


# -- software gaps ---------------------------------------------------------------------

GAP = (
    "cuBLAS returns CUBLAS_STATUS_NOT_SUPPORTED for per-row fp8 _scaled_mm on sm_120 "
    "(pytorch/pytorch#192707)"
)


def test_software_gaps_load_as_a_mapping():
    gpu = load(software_gaps={"rowwise": GAP, "rowwise_with_gw_hp": GAP})
    assert dict(gpu.software_gaps) == {"rowwise": GAP, "rowwise_with_gw_hp": GAP}
    assert load().software_gaps == {}


@pytest.mark.parametrize(
    ("gaps", "expected"),
    [
        ({"rowwse": GAP}, "keys from tensorwise"),
        ({"mxfp4": GAP}, "keys from"),  # an alias
        ({"__proto__": GAP}, "keys from"),
        ({"rowwise": "<b>x</b>"}, "without the characters"),
        ({"rowwise": "see `x`"}, "without the characters"),
        ({"rowwise": "a\nb"}, "control"),
        ({"rowwise": "a\x9bb"}, "control"),
        ({"rowwise": 3}, "a string for each key"),
        ({"rowwise": ""}, "at least one letter or digit"),
        ({"rowwise": " -- "}, "at least one letter or digit"),
        ("rowwise", "a table of texts"),
        (["rowwise"], "a table of texts"),
    ],
)
def test_hostile_software_gaps_are_refused(gaps, expected):
    refused("software_gaps", expected, software_gaps=gaps)


def test_a_misspelt_recipe_gets_a_suggestion():
    problem = refused("software_gaps", "keys from", software_gaps={"rowwse": GAP})
    assert problem.hint == "did you mean 'rowwise'?"


def test_a_recipe_name_with_control_characters_is_reported_escaped():
    problem = refused("software_gaps", "keys from", software_gaps={"row\x1b[2Jwise": GAP})
    assert "\\x1b" in problem.received


# -- the platform ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vendor", "given", "platform"),
    [
        ("NVIDIA", None, "cuda"),
        ("AMD", None, "rocm"),
        ("amd ", None, "rocm"),
        ("Intel", None, None),
        (None, None, None),
        ("AMD", "cuda", "cuda"),
        ("Acme", "rocm", "rocm"),
    ],
)
def test_platform_is_given_or_derived_from_the_vendor(vendor, given, platform):
    changes = {"platform": given} if given else {}
    gpu = load(drop=("vendor",) if vendor is None else (), **changes, vendor=vendor or "")
    assert gpu.platform == platform and gpu.platform_given == given


@pytest.mark.parametrize("value", ["CUDA", "cuda: 12.8", "hip", "", " rocm", 1])
def test_hostile_platforms_are_refused(value):
    refused("platform", "one of cuda, rocm", platform=value)


# -- the JSON Schema refuses what the lint refuses ----------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {BLOCK: 800e12},
        {BLOCK: 1e18},
        {BLOCK: 1.01e18},
        {BLOCK: 0.0},
        {BLOCK: "x"},
        {"drop": ("fp8_peak_tops",), BLOCK: 800e12},
        {"gemm_efficiency_basis": "measured: x"},
        {"mem_efficiency_basis": "assumed"},
        {"gemm_efficiency_basis": "guess"},
        {"mem_efficiency_basis": "assumed\x07"},
        {"software_gaps": {"rowwise": GAP}},
        {"software_gaps": {"rowwse": GAP}},
        {"software_gaps": {"mxfp4": GAP}},
        {"software_gaps": {"rowwise": "<i>"}},
        {"software_gaps": {"rowwise": "---"}},
        {"software_gaps": {"rowwise": "\x1b"}},
        {"software_gaps": {"rowwise": 1}},
        {"software_gaps": "x"},
        {"software_gaps": {}},
        {"platform": "cuda"},
        {"platform": "rocm"},
        {"platform": "CUDA"},
        {"platform": "cuda: x"},
        {"platform": 1},
    ],
    ids=repr,
)
def test_lint_and_schema_agree(changes):
    changes = dict(changes)
    gpu = entry(drop=changes.pop("drop", ()), **changes)
    try:
        parse_specs(document(gpu), ORIGIN)
        lint = True
    except SpecError:
        lint = False
    try:
        jsonschema.validate({"gpu": [gpu]}, json_schema())
        schema = True
    except jsonschema.ValidationError:
        schema = False
    assert lint == schema, (changes, lint, schema)


def test_schema_names_the_dependency_and_the_recipes():
    item = json_schema()["properties"]["gpu"]["items"]
    assert item["dependentRequired"] == {BLOCK: ["fp8_peak_tops"]}
    assert item["properties"]["software_gaps"]["propertyNames"]["enum"] == recipe_names()
    assert item["properties"]["platform"]["enum"] == ["cuda", "rocm"]


# -- the block-scaled peak in both models --------------------------------------------------

SHAPE = (16384, 16384, 16384)  # compute-bound on every GEMM at these peaks


def _pair() -> tuple[Any, GpuSpec, GpuSpec]:
    """A database of two GPUs, identical but for a block-scaled peak of 2x fp8."""
    specs = parse_specs(document(entry(), entry(name="Acme G2", **{BLOCK: 800e12})), ORIGIN)
    return specs, specs["Acme G1"], specs["Acme G2"]


def _gemm_times(gpu: GpuSpec, recipe: str, mode: str, calibration: Any = None) -> np.ndarray:
    times = evaluate_terms(gpu, mode, recipe, *SHAPE, calibration=calibration)
    return np.array([float(v) for k, v in times.items() if k.endswith(".lowp")])


@pytest.mark.parametrize("mode", ["training", "inference"])
@pytest.mark.parametrize("recipe", ["mxfp8_cublas", "mxfp8_32x32_weight"])
def test_mx_gemm_compute_time_halves_in_torchaos_model(recipe, mode):
    _, plain, fast = _pair()
    np.testing.assert_allclose(
        _gemm_times(fast, recipe, mode), _gemm_times(plain, recipe, mode) / 2, rtol=1e-12
    )


@pytest.mark.parametrize("mode", ["training", "inference"])
def test_mx_gemm_compute_time_halves_in_the_calibrated_model(mode):
    specs, plain, fast = _pair()
    cal_plain, cal_fast = calibration_of(plain, specs), calibration_of(fast, specs)
    latency = cal_plain.numbers()["gemm_fixed_latency_s"]
    assert cal_fast.numbers() == cal_plain.numbers()  # the peak alone differs
    slow = _gemm_times(plain, "mxfp8_cublas", mode, cal_plain) - latency
    quick = _gemm_times(fast, "mxfp8_cublas", mode, cal_fast) - latency
    np.testing.assert_allclose(quick, slow / 2, rtol=1e-9)


@pytest.mark.parametrize("calibrated", [False, True])
@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise", "blockwise", "mxfp8_emulated"])
def test_other_fp8_recipes_are_unchanged(recipe, calibrated):
    specs, plain, fast = _pair()
    cal = (calibration_of(plain, specs), calibration_of(fast, specs)) if calibrated else (None,) * 2
    before = evaluate_terms(plain, "training", recipe, *SHAPE, calibration=cal[0])
    after = evaluate_terms(fast, "training", recipe, *SHAPE, calibration=cal[1])
    assert {k: float(v) for k, v in before.items()} == {k: float(v) for k, v in after.items()}


def test_a_fp8_override_moves_the_fallback_but_not_a_given_block_peak():
    _, plain, fast = _pair()
    halved = dataclasses.replace(plain, fp8_peak_tops=200e12)
    assert halved.value(BLOCK) == 200e12  # follows fp8_peak_tops
    assert dataclasses.replace(fast, fp8_peak_tops=200e12).value(BLOCK) == 800e12


def test_parity_spec_file_has_no_block_peak():
    specs = load_specs(TORCHAO_SPECS_PATH)
    for gpu in specs.values():
        assert gpu.given(BLOCK) is None and gpu.value(BLOCK) == gpu.fp8_peak_tops
        assert BLOCK not in gpu.as_torchao_dict()


# -- the calculator's data: the fallback travels with the figures --------------------------


def test_calculator_data_carries_the_fallback():
    from site_gen.markup.calculator import calculator_data

    specs, _, _ = _pair()
    data = calculator_data(specs)
    hardware = {h["key"]: h for h in data["hardware"]}
    assert hardware[BLOCK]["fallback"] == "fp8_peak_tops"
    assert hardware["fp8_peak_tops"]["fallback"] is None
    gpus = {g["name"]: g for g in data["gpus"]}
    assert gpus["Acme G1"]["hw"][BLOCK] is None  # the page fills it in after overrides
    assert gpus["Acme G2"]["hw"][BLOCK] == 800e12
    assert data["needs"]["training/mxfp8_cublas"] == [BLOCK]
    assert data["needs"]["training/mxfp8_emulated"] == ["fp8_peak_tops"]
    assert "does not have" in data["missing"]["training/mxfp8_cublas"][BLOCK]


# -- the site: spec rows and the GPU page's "assumed" box --------------------------------


def test_spec_rows_show_each_fraction_its_basis_and_the_block_peak():
    from site_gen.pages.rows import specs as spec_rows

    gpu = load(
        drop=("pct_achievable_mem_bw",),
        gemm_efficiency_basis="measured: MAMF, ml-engineering, against the bf16 peak",
        software_gaps={"rowwise": GAP},
        **{BLOCK: 800e12},
    )
    gemm, mem = spec_rows.efficiency_bases(gpu)
    assert (gemm.assumed, mem.assumed) == (False, True)
    assert mem.basis == ASSUMED_BASIS and gemm.basis.startswith("measured: MAMF")
    assert spec_rows.assumed_title(gpu) == "Memory efficiency assumed (torchao's model)"
    assert spec_rows.basis(gpu) == "GEMM measured, memory assumed"
    table = spec_rows.spec_table(gpu).rows
    labels, values = [r[0] for r in table], [r[2] for r in table]
    assert "GEMM efficiency basis" in labels and "software gap: rowwise" in labels
    assert "800 TFLOP/s" in values and GAP in values and "cuda (from the vendor)" in values
    ridge = {r[0]: r[1] for r in spec_rows.ridge_table(gpu).rows}
    assert ridge["fp8 block-scaled (MX)"] == "800" and ridge["fp8"] == "400"


def test_spec_rows_without_the_new_keys():
    from site_gen.pages.rows import specs as spec_rows

    gpu = load(efficiency_basis="measured")
    assert spec_rows.assumed_title(gpu) == "" and spec_rows.basis(gpu) == "measured"
    assert "(not given: the fp8 peak)" in spec_rows.block_peak_text(gpu)
    assert [r[0] for r in spec_rows.ridge_table(gpu).rows] == ["bf16", "fp8", "fp4"]
    both = load(drop=("pct_achievable_gemm_tops", "pct_achievable_mem_bw"))
    assert spec_rows.assumed_title(both) == "Efficiencies assumed (torchao's model)"
    assert spec_rows.basis(both) == "assumed"
    assert spec_rows.platform_text(load(vendor="Acme")) == "unknown"
    assert spec_rows.platform_text(load(vendor="Acme", platform="rocm")) == "rocm"
