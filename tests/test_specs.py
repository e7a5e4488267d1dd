"""Spec loading, lint and name matching."""

from __future__ import annotations

import json

import pytest

from roofline import SpecError, UnknownNameError, json_schema, load_specs
from roofline.specs import ASSUMED_BASIS
from tests.conftest import BROKEN

REQUIRED_GPUS = [
    "NVIDIA H100 SXM",
    "NVIDIA H100",
    "NVIDIA H100 PCIe",
    "NVIDIA H100 NVL",
    "NVIDIA H800",
    "NVIDIA H200",
    "NVIDIA H200 NVL",
    "NVIDIA GH200 96GB HBM3",
    "NVIDIA GH200 144GB HBM3e",
    "NVIDIA B200",
    "NVIDIA GB200",
    "NVIDIA B300 SXM6 AC",
    "NVIDIA GB300",
    "AMD Instinct MI300X",
    "AMD Instinct MI325X",
    "AMD Instinct MI355X",
    "AMD Instinct MI350X",
    "NVIDIA GeForce RTX 5090",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition",
    "NVIDIA GeForce RTX 4090",
    "NVIDIA L40S",
    "NVIDIA A100 SXM",
    "NVIDIA A100 PCIe 80GB",
]


def test_bundled_database_is_clean(bundled):
    assert list(bundled) == REQUIRED_GPUS
    assert bundled.warnings == ()


@pytest.mark.parametrize("name", REQUIRED_GPUS)
def test_every_bundled_gpu_has_provenance(bundled, name):
    gpu = bundled[name]
    assert gpu.sources and all(url.startswith("https://") for url in gpu.sources)
    assert all(s.read_on is not None for s in gpu.source_records)
    assert gpu.efficiency_basis.split(":")[0] in ("measured", "assumed")
    assert gpu.efficiency_reference
    assert gpu.vendor and gpu.architecture and gpu.sku
    assert gpu.peak_basis == "dense"


def test_bundled_figures_that_matter(bundled):
    assert bundled["NVIDIA H100"].peak_mem_bw_bytes_sec == 2.4e12  # torchao's H100
    assert bundled["NVIDIA H100 SXM"].peak_mem_bw_bytes_sec == 3.35e12
    assert bundled["NVIDIA B200"].peak_mem_bw_bytes_sec == (7680 / 8) * 3.996e9 * 2
    b300 = bundled["NVIDIA B300 SXM6 AC"]
    # Vendor figures (HGX B300 column) and measured matmul throughput; torchao's 8.0 TB/s
    # and 0.82 / 0.84 stay in its own table (roofline/data/torchao018_specs.toml).
    assert b300.peak_mem_bw_bytes_sec == 7.7e12
    assert (b300.pct_achievable_gemm_tops, b300.pct_achievable_mem_bw) == (0.786, 0.873)
    assert not b300.efficiency_assumed
    gb200 = bundled["NVIDIA GB200"]
    assert (gb200.bf16_peak_tops, gb200.fp8_peak_tops, gb200.fp4_peak_tops) == (
        2.5e15,
        5.0e15,
        10.0e15,
    )
    assert bundled["AMD Instinct MI300X"].pct_achievable_gemm_tops == 0.511
    assert not bundled["AMD Instinct MI300X"].gemm_efficiency_assumed
    assert bundled["AMD Instinct MI300X"].mem_efficiency_assumed
    assert bundled["NVIDIA A100 SXM"].pct_achievable_gemm_tops == 0.869
    rtx = bundled["NVIDIA GeForce RTX 5090"]
    assert rtx.value("fp8_block_scaled_peak_tops") == 2 * rtx.value("fp8_peak_tops")
    # the peaks the model uses are at the 2.87 GHz the card holds, not the 2.407 printed
    assert rtx.value("bf16_peak_tops") == pytest.approx(209.5e12 * 2870 / 2407)
    assert rtx.measured_matmul_tflops["bf16"] * 1e12 <= rtx.value("bf16_peak_tops")
    assert "rowwise" in rtx.software_gaps
    assert bundled["NVIDIA GeForce RTX 5090"].peak_mem_bw_bytes_sec == 1.792e12
    assert bundled["NVIDIA A100 SXM"].fp8_peak_tops is None
    assert bundled["NVIDIA H200"].efficiency_assumed


@pytest.mark.parametrize(
    ("device", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
        ("nvidia h100", "NVIDIA H100"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H100 NVL", "NVIDIA H100 NVL"),
        ("NVIDIA H200 NVL", "NVIDIA H200 NVL"),
        ("NVIDIA GH200 480GB", "NVIDIA GH200 96GB HBM3"),
        ("NVIDIA GH200 144G HBM3e", "NVIDIA GH200 144GB HBM3e"),
        (
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        ),
        ("AMD Instinct MI350X", "AMD Instinct MI350X"),
        ("NVIDIA B300 SXM6 AC", "NVIDIA B300 SXM6 AC"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM"),
        ("AMD Instinct MI300X VF", "AMD Instinct MI300X"),
    ],
)
def test_device_names_match(bundled, device, expected):
    assert bundled.find(device).name == expected


def test_unknown_gpu_names_the_closest(bundled):
    with pytest.raises(UnknownNameError, match="Closest match: 'NVIDIA B200'"):
        bundled.find("NVIDIA B20")


def test_ambiguous_prefix_errors(spec_file):
    path = spec_file(
        """
[[gpu]]
name = "Alpha"
bf16_peak_tops = 1e15
peak_mem_bw_bytes_sec = 3e12
device_prefixes = ["ACME X1"]
[[gpu]]
name = "Beta"
bf16_peak_tops = 1e15
peak_mem_bw_bytes_sec = 3e12
device_prefixes = ["ACME X2"]
"""
    )
    specs = load_specs(path)
    assert specs.find("ACME X1 pro").name == "Alpha"
    with pytest.raises(UnknownNameError, match="unknown GPU"):
        specs.find("ACME X3")


def test_missing_efficiencies_are_assumed_h100s(spec_file):
    path = spec_file(
        '[[gpu]]\nname = "Bare"\nbf16_peak_tops = 1e15\npeak_mem_bw_bytes_sec = 3e12\n'
    )
    gpu = load_specs(path)["Bare"]
    assert (gpu.pct_achievable_gemm_tops, gpu.pct_achievable_mem_bw) == (0.78, 0.92)
    assert gpu.efficiency_assumed and gpu.efficiency_basis == ASSUMED_BASIS
    assert gpu.kernel_launch_overhead_s == 2e-6


def test_torchao_entry_pastes_in(spec_file):
    # A gpu_name_to_specs entry, keys as torchao spells them, plus the file-level floor.
    path = spec_file(
        """kernel_launch_overhead_s = 3e-6
[[gpu]]
name = "NVIDIA H100"
bf16_peak_tops = 989e12
fp8_peak_tops = 1979e12
peak_mem_bw_bytes_sec = 2.4e12
pct_achievable_gemm_tops = 0.78
pct_achievable_mem_bw = 0.92
"""
    )
    gpu = load_specs(path)["NVIDIA H100"]
    assert gpu.as_torchao_dict() == {
        "bf16_peak_tops": 989e12,
        "fp8_peak_tops": 1979e12,
        "peak_mem_bw_bytes_sec": 2.4e12,
        "pct_achievable_gemm_tops": 0.78,
        "pct_achievable_mem_bw": 0.92,
    }
    assert gpu.kernel_launch_overhead_s == 3e-6
    assert gpu.native_formats == ("fp8",)  # inferred: an fp8 peak, no fp4


BROKEN_CASES = {
    "missing_key.toml": ("peak_mem_bw_bytes_sec", "missing"),
    "negative_value.toml": ("bf16_peak_tops", "-989000000000000.0"),
    "string_number.toml": ("bf16_peak_tops", "str '989e12'"),
    "bandwidth_1000x.toml": ("peak_mem_bw_bytes_sec", "1000x too large"),
    "unknown_key.toml": ("pct_achievable_gemm_top", "did you mean 'pct_achievable_gemm_tops'"),
    "duplicate_name.toml": ("name", "duplicate of 'Twin'"),
    "syntax_error.toml": (None, "line 4, column 23"),
    "efficiency_above_1.toml": ("pct_achievable_gemm_tops", "fraction in (0, 1]"),
    "colliding_prefix.toml": ("device_prefixes", "also used by 'First'"),
    "non_finite_peak.toml": ("bf16_peak_tops", "received float nan"),
    "overflowing_bandwidth.toml": ("peak_mem_bw_bytes_sec", "received float inf"),
    "empty_name.toml": ("name", "expected a non-empty name"),
    "empty_prefix.toml": ("device_prefixes", "matches every query"),
    "long_name.toml": ("name", "at most 64 characters, received 65 characters"),
    "slug_collision.toml": ("name", "slug 'acme-x1', also the slug of 'Acme X1'"),
    "emoji_name.toml": ("name", "whose page slug is empty"),
    "markup_name.toml": ("name", "with '<' at index 0"),
    "javascript_url.toml": ("sources[0].url", "with '>' at index 21"),
    "terminal_escape.toml": ("name", "with '\\x1b' at index 5"),
}


@pytest.mark.parametrize("name", sorted(BROKEN_CASES))
def test_broken_files_fail_with_file_key_expected_received(name):
    key, fragment = BROKEN_CASES[name]
    with pytest.raises(SpecError) as info:
        load_specs(BROKEN / name)
    problem = info.value.problems[0]
    assert problem.file.endswith(name)
    assert problem.key == key
    assert problem.expected
    assert fragment in str(info.value)


def test_all_problems_reported_together():
    with pytest.raises(SpecError) as info:
        load_specs(BROKEN / "many_problems.toml")
    keys = [(p.gpu, p.key) for p in info.value.problems]
    assert keys == [
        (None, "kernel_launch_overhead_s"),
        ("A", "bf16_peak_tops"),
        ("A", "peak_mem_bw_bytes_sec"),
        ("A", "pct_achievable_mem_bw"),
        ("#2", "name"),
        ("#2", "peak_mem_bw_bytes_sec"),
    ]


def test_sparse_fp8_warns_with_the_likely_cause():
    specs = load_specs(BROKEN / "sparse_fp8.toml")
    (warning,) = specs.warnings
    assert warning.key == "fp8_peak_tops" and "sparse" in warning.hint


def test_fp4_below_fp8_warns(spec_file):
    path = spec_file(
        '[[gpu]]\nname = "X"\nbf16_peak_tops = 1e15\nfp8_peak_tops = 2e15\n'
        "fp4_peak_tops = 1e15\npeak_mem_bw_bytes_sec = 3e12\n"
    )
    assert [w.key for w in load_specs(path).warnings] == ["fp4_peak_tops"]


def test_unreadable_file_is_a_clear_error(tmp_path):
    with pytest.raises(Exception, match="a readable spec file"):
        load_specs(tmp_path / "absent.toml")


def test_json_schema_describes_every_key(bundled):
    schema = json_schema()
    json.dumps(schema)  # serialisable
    props = schema["properties"]["gpu"]["items"]["properties"]
    assert set(props) >= {"name", "bf16_peak_tops", "native_formats", "sources"}
    assert schema["properties"]["gpu"]["items"]["required"] == [
        "name",
        "bf16_peak_tops",
        "peak_mem_bw_bytes_sec",
    ]


def test_bundled_file_validates_against_the_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    import tomllib
    from importlib import resources

    text = resources.files("roofline").joinpath("data/gpus.toml").read_text("utf-8")
    document = json.loads(json.dumps(tomllib.loads(text), default=str))  # dates as strings
    jsonschema.validate(document, json_schema())
    broken = json.loads(json.dumps(document))
    broken["gpu"][0]["peak_mem_bw_bytes_sec"] = 1.792e15
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, json_schema())


@pytest.mark.parametrize(
    "text", ['a"b', "c\\d", "x\ny", "tab\t", "é\u2028", "\x7f", "\x00z", "\ufeff", "\U0001f600", ""]
)
def test_toml_string_round_trips_any_text(text):
    """What the project writes into TOML files (calibration, measurements, error bands)
    reads back as it was, control characters and DEL included."""
    import tomllib

    from roofline.specs.text import toml_string

    assert tomllib.loads(f"k = {toml_string(text)}")["k"] == text
