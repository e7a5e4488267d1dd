"""Which entry a GPU name or device string resolves to, and the variant-fallback warning.

A device string that only starts with an entry's *name* (an unlisted variant: a laptop
part, a PCIe card next to an SXM entry) is used with a warning, never silently: in Python
a :class:`VariantFallbackWarning`, in the CLI one ``warning:`` line on stderr.
"""

from __future__ import annotations

import sys
import types
import warnings
from pathlib import Path

import pytest

import roofline
import roofline.device
from roofline import (
    GpuMatch,
    GpuSpec,
    SpecDatabase,
    UnknownNameError,
    VariantFallbackWarning,
    evaluate,
    load_specs,
)
from roofline.cli import main
from roofline.errors import RooflineError
from roofline.specs import match_gpu

SPECS = """
[[gpu]]
name = "Acme X1"
bf16_peak_tops = 1e15
fp8_peak_tops = 2e15
peak_mem_bw_bytes_sec = 3e12
device_prefixes = ["ACME X1-80GB"]

[[gpu]]
name = "Acme X1 Max"
bf16_peak_tops = 2e15
fp8_peak_tops = 4e15
peak_mem_bw_bytes_sec = 4e12
device_prefixes = ["ACME X1 MAX-SXM"]
"""

FALLBACK = (
    "device {query} is not in the spec database; using {name}, whose name it starts with: "
    "figures may differ for this variant (add an entry or device_prefixes, or pass --gpu "
    "with an exact name)"
)
EVAL = ("eval", "--recipe", "rowwise", "--shape", "1024,1024,1024")
# What a one-line, escaped message must never contain raw: line breaks, ESC, CSI, BEL,
# bidi overrides and the Unicode line/paragraph separators.
RAW = ("\n", "\r", "\x1b", "\x9b", "\x07", "\x00", "\u202e", "\u2028", "\u2029", "\x85")
HOSTILE = [
    "\x1b[2J\x1b[31mred",
    "\nwarning: fake second line",
    "\r\x00\x07\x9b",
    "\u202eevil\u2028\u2029\x85",
    "x" * 100_000,
]


@pytest.fixture()
def specs_path(tmp_path: Path) -> Path:
    path = tmp_path / "acme.toml"
    path.write_text(SPECS, encoding="utf-8")
    return path


@pytest.fixture()
def acme(specs_path: Path) -> SpecDatabase:
    return load_specs(specs_path)


def _gpu(name: str, *prefixes: str) -> GpuSpec:
    return GpuSpec(
        name=name,
        bf16_peak_tops=1e15,
        peak_mem_bw_bytes_sec=3e12,
        pct_achievable_gemm_tops=0.78,
        pct_achievable_mem_bw=0.92,
        device_prefixes=prefixes,
    )


def _unlinted(*gpus: GpuSpec) -> SpecDatabase:
    return SpecDatabase({g.name: g for g in gpus}, "unlinted")


def _assert_one_escaped_line(text: str, limit: int = 2000) -> None:
    assert not any(raw in text for raw in RAW), text[:200]
    assert len(text) < limit


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _warning_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "is not in the spec database" in line]


# -- how a query matches ------------------------------------------------------------------


@pytest.mark.parametrize("query", ["Acme X1", "acme x1", "  ACME X1\t", "Acme X1 Max"])
def test_an_exact_name_in_any_case_matches_by_name(acme, query):
    match = acme.match(query)
    assert match.how == "name" and not match.fallback and match.warning is None
    assert match.gpu.name.lower() == query.strip().lower()


def test_a_listed_device_prefix_matches_without_warning(acme):
    match = acme.match("ACME X1-80GB HBM3")
    assert (match.gpu.name, match.how, match.prefix) == ("Acme X1", "device_prefix", "ACME X1-80GB")
    assert not match.fallback and match.warning is None


def test_the_longest_prefix_wins_across_entries(acme):
    # "Acme X1" is a prefix too, but "ACME X1 MAX-SXM" is longer.
    match = acme.match("ACME X1 MAX-SXM5 141GB")
    assert (match.gpu.name, match.how) == ("Acme X1 Max", "device_prefix")
    # Only names match here; the longer name wins, and it is a fallback.
    match = acme.match("Acme X1 Max Laptop GPU")
    assert (match.gpu.name, match.how) == ("Acme X1 Max", "name_prefix")
    assert match.prefix == "Acme X1 Max"


def test_a_device_prefix_equal_to_the_name_vouches_for_the_variants():
    db = _unlinted(_gpu("Acme X1", "ACME X1"))
    match = db.match("ACME X1 PCIe")
    assert match.how == "device_prefix" and not match.fallback


def test_a_name_prefix_match_is_a_fallback_with_a_one_line_warning(acme):
    match = acme.match("Acme X1 Laptop GPU")
    assert (match.gpu.name, match.how, match.prefix) == ("Acme X1", "name_prefix", "Acme X1")
    assert match.fallback
    assert match.warning == FALLBACK.format(query="'Acme X1 Laptop GPU'", name="'Acme X1'")


def test_find_returns_the_entry_silently(acme):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert acme.find("Acme X1 Laptop GPU") is acme["Acme X1"]


def test_match_gpu_works_on_any_iterable_of_specs():
    match = match_gpu([_gpu("Acme X1")], "Acme X1 rev B")
    assert isinstance(match, GpuMatch) and match.fallback and match.query == "Acme X1 rev B"


# -- errors stay as they were ---------------------------------------------------------------


def test_ambiguous_names_raise_as_before():
    db = _unlinted(_gpu("Alpha", "ACME X"), _gpu("Beta", "ACME X"))
    with pytest.raises(UnknownNameError) as caught:
        db.match("ACME X 80GB")
    assert str(caught.value) == (
        "GPU name 'ACME X 80GB' is ambiguous: it matches Alpha, Beta; "
        "pass one of those names exactly"
    )


def test_unknown_names_raise_as_before(acme, specs_path):
    with pytest.raises(UnknownNameError) as caught:
        acme.find("Acme X2")
    assert str(caught.value) == (
        f"unknown GPU 'Acme X2' in {acme.origin}; known: Acme X1, Acme X1 Max. "
        "Closest match: 'Acme X1'"
    )


def test_a_prefix_must_end_where_the_query_does_not_begin(acme):
    # "Acme X" is shorter than every name: no entry's name or prefix starts it.
    with pytest.raises(UnknownNameError, match="unknown GPU 'Acme X'"):
        acme.match("Acme X")


# -- the Python API warns ---------------------------------------------------------------


def test_evaluate_warns_on_a_fallback(acme):
    with pytest.warns(VariantFallbackWarning) as record:
        out = evaluate("Acme X1 Laptop GPU", "training", "rowwise", 1024, 1024, 1024, specs=acme)
    (warning,) = [w for w in record if w.category is VariantFallbackWarning]
    assert str(warning.message) == acme.match("Acme X1 Laptop GPU").warning
    assert warning.filename == __file__  # stacklevel points at the caller
    exact = evaluate("Acme X1", "training", "rowwise", 1024, 1024, 1024, specs=acme)
    assert out["r_fp8_gemm_and_ovhd_spdp"] == exact["r_fp8_gemm_and_ovhd_spdp"]


@pytest.mark.parametrize("gpu", ["Acme X1", "ACME X1-80GB HBM3", "acme x1 max"])
def test_evaluate_is_silent_on_names_and_listed_prefixes(acme, gpu):
    with warnings.catch_warnings():
        warnings.simplefilter("error", VariantFallbackWarning)
        evaluate(gpu, "training", "rowwise", 1024, 1024, 1024, specs=acme)
        evaluate(acme["Acme X1"], "training", "rowwise", 1024, 1024, 1024, specs=acme)


def test_the_warning_is_exported_as_a_user_warning():
    assert issubclass(roofline.VariantFallbackWarning, UserWarning)
    assert {"VariantFallbackWarning", "GpuMatch"} <= set(roofline.__all__)


def test_torchao_get_specs_warns_on_a_fallback(acme, monkeypatch):
    from roofline.model import torchao_compat

    monkeypatch.setattr(torchao_compat, "load_specs", lambda: acme)
    with pytest.warns(VariantFallbackWarning, match="using 'Acme X1'"):
        specs = torchao_compat.get_specs("Acme X1 Laptop GPU")
    assert specs == acme["Acme X1"].as_torchao_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("error", VariantFallbackWarning)
        torchao_compat.get_specs("ACME X1-80GB")


def test_torchao_get_specs_warns_on_an_auto_detected_fallback(acme, monkeypatch):
    from roofline.model import torchao_compat

    monkeypatch.setattr(torchao_compat, "load_specs", lambda: acme)
    monkeypatch.setattr(torchao_compat, "current_device_name", lambda: "Acme X1 Max Laptop")
    with pytest.warns(VariantFallbackWarning, match="using 'Acme X1 Max'"):
        torchao_compat.get_specs()


# -- the CLI prints one warning line ---------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        EVAL,
        ("eval", "--recipe", "rowwise", "--shape-gen", "llama", "--format", "csv"),
        ("latex", "--recipe", "rowwise"),
        ("latex", "--recipe", "rowwise", "--cite"),
    ],
)
def test_cli_warns_once_on_gpu_fallback_and_exits_0(capsys, specs_path, argv):
    code, out, err = _run(capsys, *argv, "--gpu", "Acme X1 Laptop GPU", "--specs", str(specs_path))
    assert code == 0 and out
    expected = FALLBACK.format(query="'Acme X1 Laptop GPU'", name="'Acme X1'")
    assert _warning_lines(err) == [f"warning: {expected}"]


def test_specs_show_warns_on_a_fallback(capsys, specs_path):
    code, out, err = _run(capsys, "specs", "show", "acme x1 max ultra", "--specs", str(specs_path))
    assert code == 0 and out.startswith("Acme X1 Max")
    assert len(_warning_lines(err)) == 1


@pytest.mark.parametrize("gpu", ["Acme X1", "ACME X1-80GB HBM3"])
def test_cli_is_silent_on_names_and_listed_prefixes(capsys, specs_path, gpu):
    code, _, err = _run(capsys, *EVAL, "--gpu", gpu, "--specs", str(specs_path))
    assert code == 0 and not _warning_lines(err)


def test_cli_warns_on_an_auto_detected_fallback(capsys, specs_path, monkeypatch):
    monkeypatch.setattr(roofline.device, "current_device_name", lambda: "ACME X1 Laptop GPU")
    code, out, err = _run(capsys, *EVAL, "--specs", str(specs_path))
    assert code == 0 and out
    expected = FALLBACK.format(query="'ACME X1 Laptop GPU'", name="'Acme X1'")
    assert _warning_lines(err) == [f"warning: {expected}"]


def test_cli_auto_detection_of_a_listed_device_is_silent(capsys, specs_path, monkeypatch):
    monkeypatch.setattr(roofline.device, "current_device_name", lambda: "ACME X1 MAX-SXM5")
    code, _, err = _run(capsys, "latex", "--recipe", "rowwise", "--specs", str(specs_path))
    assert code == 0 and not _warning_lines(err)


def test_the_fallback_warning_comes_after_the_checks(capsys, specs_path):
    # A bad shape fails first: no warning about a GPU for a command that did nothing.
    code, out, err = _run(
        capsys,
        "eval",
        "--recipe",
        "rowwise",
        "--shape",
        "0,1,1",
        "--gpu",
        "Acme X1 Laptop",
        "--specs",
        str(specs_path),
    )
    assert code == 2 and not out and not _warning_lines(err)


# -- hostile device strings ----------------------------------------------------------------


@pytest.mark.parametrize("suffix", HOSTILE)
def test_a_hostile_variant_warns_on_one_escaped_line(acme, suffix):
    match = acme.match("Acme X1 " + suffix)
    assert match.fallback and match.gpu.name == "Acme X1"
    assert match.warning is not None
    _assert_one_escaped_line(match.warning)


@pytest.mark.parametrize("query", [*HOSTILE, "", "   ", "\t\n", "\x00"])
def test_a_hostile_unknown_name_errors_on_one_escaped_line(acme, query):
    with pytest.raises(UnknownNameError) as caught:
        acme.match(query)
    _assert_one_escaped_line(str(caught.value))


def test_a_hostile_ambiguous_name_errors_on_one_escaped_line():
    db = _unlinted(_gpu("Alpha", "ACME X"), _gpu("Beta", "ACME X"))
    with pytest.raises(UnknownNameError) as caught:
        db.match("ACME X" + "\x1b[2J\n" * 10_000)
    _assert_one_escaped_line(str(caught.value))


def test_a_very_long_query_is_cut_in_messages(acme):
    match = acme.match("Acme X1 " + "y" * 100_000)
    assert match.warning is not None and "(100008 characters)" in match.warning


@pytest.mark.parametrize("suffix", HOSTILE)
def test_cli_hostile_gpu_warns_on_one_escaped_line(capsys, specs_path, suffix):
    code, _, err = _run(capsys, *EVAL, "--gpu", "Acme X1 " + suffix, "--specs", str(specs_path))
    assert code == 0
    (line,) = _warning_lines(err)
    _assert_one_escaped_line(line)
    assert err.count("\n") == 1  # only that line (the file is clean: no lint warnings)


@pytest.mark.parametrize("gpu", [*HOSTILE, "", "   "])
def test_cli_hostile_unknown_gpu_is_one_line_exit_2(capsys, specs_path, gpu):
    code, out, err = _run(capsys, *EVAL, "--gpu", gpu, "--specs", str(specs_path))
    assert code == 2 and not out
    assert err.startswith("error: unknown GPU ") and err.count("\n") == 1
    _assert_one_escaped_line(err.rstrip("\n"))


@pytest.mark.parametrize("suffix", HOSTILE[:4])
def test_cli_hostile_auto_detected_name_warns_on_one_escaped_line(
    capsys, specs_path, monkeypatch, suffix
):
    monkeypatch.setattr(roofline.device, "current_device_name", lambda: "Acme X1 " + suffix)
    code, _, err = _run(capsys, *EVAL, "--specs", str(specs_path))
    assert code == 0
    (line,) = _warning_lines(err)
    _assert_one_escaped_line(line)


def _fake_torch(device_name: object) -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        is_available=lambda: True, get_device_name=lambda index: device_name
    )
    return torch


@pytest.mark.parametrize("reported", ["", "   ", "\t\n", None])
def test_a_blank_detected_name_is_a_clear_error(capsys, specs_path, monkeypatch, reported):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(reported))
    with pytest.raises(RooflineError, match="pass --gpu NAME"):
        roofline.device.current_device_name()
    code, out, err = _run(capsys, *EVAL, "--specs", str(specs_path))
    assert code == 2 and not out and err.count("\n") == 1
    assert "the GPU reports the device name" in err
    _assert_one_escaped_line(err.rstrip("\n"))


def test_a_detected_name_passes_through_unchanged(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch("ACME X1-80GB HBM3"))
    assert roofline.device.current_device_name() == "ACME X1-80GB HBM3"
