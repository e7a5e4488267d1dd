"""Hostile spec files: what a pull request could slip past the lint to hurt the site or CLI.

Each case is a spec file an attacker (or a careless contributor) could propose; the lint
must refuse it with a message naming the file, the GPU and the key, and without echoing
raw control characters to the terminal that prints it.
"""

from __future__ import annotations

import json
import math
import re
import sys
import tomllib
from importlib import resources
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline import SpecError, UnknownNameError
from roofline.publish.slugs import MAX_NAME_LENGTH, slug
from roofline.specs import (
    GPU_KEYS,
    LAUNCH_OVERHEAD_RANGE,
    MAX_URL_LENGTH,
    MEASURED_MATMUL_TFLOPS_RANGE,
    GpuSpec,
    NumberRange,
    SpecDatabase,
    json_schema,
    load_specs,
    parse_specs,
)
from tests.conftest import DATA

jsonschema = pytest.importorskip("jsonschema")

ORIGIN = "hostile.toml"
BASE = {"name": "Acme X1", "bf16_peak_tops": 1e15, "peak_mem_bw_bytes_sec": 3e12}
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # newline joins message lines


def toml_value(value: Any) -> str:
    """``value`` as TOML; strings escaped as JSON does (a subset of TOML basic strings)."""
    if isinstance(value, str):  # JSON leaves DEL and C1 raw, which TOML refuses: escape them
        text = json.dumps(value, ensure_ascii=False)
        return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{toml_value(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
        )
    return repr(value)


def toml_document(*gpus: dict[str, Any], **top: Any) -> str:
    """A spec file: top-level keys, then one [[gpu]] table per entry (sources as tables)."""
    lines = [f"{key} = {toml_value(value)}" for key, value in top.items()]
    for gpu in gpus:
        lines.append("[[gpu]]")
        entry = dict(gpu)
        sources = entry.pop("sources", [])
        lines += [f"{toml_value(key)} = {toml_value(value)}" for key, value in entry.items()]
        for source in sources:
            lines.append("[[gpu.sources]]")
            lines += [f"{key} = {toml_value(value)}" for key, value in source.items()]
    return "\n".join(lines) + "\n"


def gpu(**changes: Any) -> dict[str, Any]:
    """A valid entry with ``changes`` applied."""
    return {**BASE, **changes}


def refusal(text: str) -> SpecError:
    """The SpecError that parsing ``text`` raises (fails the test when it parses)."""
    with pytest.raises(SpecError) as info:
        parse_specs(text, ORIGIN)
    return info.value


def assert_refused(text: str, gpu_label: str | None, key: str, expected: str) -> SpecError:
    """Parsing ``text`` fails with a problem naming file, GPU and key; messages stay escaped."""
    error = refusal(text)
    matching = [p for p in error.problems if p.key == key and p.gpu == gpu_label]
    assert matching, f"no problem for {gpu_label!r}/{key!r} in:\n{error}"
    problem = matching[0]
    assert problem.severity == "error"
    assert expected in problem.expected, problem.expected
    line = str(problem)
    assert line.startswith(ORIGIN)
    assert f"key {key!r}" in line
    if gpu_label is not None:
        assert f"gpu {gpu_label!r}" in line
    assert not RAW_CONTROL.search(str(error)), repr(str(error))
    return error


# -- numbers -------------------------------------------------------------------------

NUMBER_KEYS = [k for k, s in GPU_KEYS.items() if s.kind == "number"]
NON_FINITE = [math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("key", NUMBER_KEYS)
@pytest.mark.parametrize("value", NON_FINITE, ids=["nan", "inf", "-inf"])
def test_non_finite_numbers_are_refused(key, value):
    assert_refused(toml_document(gpu(**{key: value})), "Acme X1", key, "a finite")


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "nan", "+inf", "-nan"])
def test_toml_literals_beyond_float_are_refused(literal):
    text = toml_document(gpu()).replace("1000000000000000.0", literal)
    error = assert_refused(text, "Acme X1", "bf16_peak_tops", "a finite")
    assert "not figures" in str(error)  # the hint says why


def test_integer_beyond_float_range_is_refused_not_a_crash():
    text = toml_document(gpu()).replace("1000000000000000.0", "9" * 400)
    assert_refused(text, "Acme X1", "bf16_peak_tops", "a finite number of FLOP/s")


def test_integer_beyond_conversion_limit_is_a_spec_error():
    error = refusal(toml_document(gpu()).replace("1000000000000000.0", "9" * 5000))
    assert "unreadable number" in str(error) and "set_int_max_str_digits" not in str(error)


def test_deep_nesting_is_a_spec_error():
    error = refusal("x = " + "[" * 5000 + "]" * 5000 + "\n")
    assert "nested too deeply" in str(error)


@pytest.mark.parametrize("value", [*NON_FINITE, 0, -1e-6, 1e-3, 1.0])
def test_launch_overhead_outside_range_is_refused(value):
    text = toml_document(gpu(), kernel_launch_overhead_s=value)
    error = assert_refused(text, None, "kernel_launch_overhead_s", "a finite number of seconds")
    assert "(0, 0.001)" in str(error)


@pytest.mark.parametrize("value", [*NON_FINITE, 0, -5.0, 2e15])
def test_measured_matmul_values_outside_range_are_refused(value):
    text = toml_document(gpu(measured_matmul_tflops={"bf16": value}))
    error = assert_refused(text, "Acme X1", "measured_matmul_tflops", "finite TFLOP/s values")
    assert "'bf16'" in str(error)


def test_peak_of_an_exaflop_and_beyond():
    assert parse_specs(toml_document(gpu(fp8_peak_tops=1e18)), ORIGIN)  # warns, loads
    assert_refused(toml_document(gpu(fp8_peak_tops=1.01e18)), "Acme X1", "fp8_peak_tops", "(0,")


def test_non_finite_peaks_raise_no_ratio_warning_noise():
    error = refusal(toml_document(gpu(bf16_peak_tops=math.inf, fp8_peak_tops=math.inf)))
    assert {p.severity for p in error.problems} == {"error"}


# -- names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "label", "expected"),
    [
        ("", "#1", "a non-empty name"),
        ("   ", "#1", "a non-empty name"),
        ("\u3000", "#1", "a non-empty name"),  # ideographic space
        (" Acme X1", " Acme X1", "without leading or trailing whitespace"),
        ("Acme X1 ", "Acme X1 ", "without leading or trailing whitespace"),
        ("🔥🚀", "🔥🚀", "at least one letter or digit"),
        ("---", "---", "at least one letter or digit"),
        ("Видеокарта", "Видеокарта", "at least one letter or digit"),
        ("x" * (MAX_NAME_LENGTH + 1), "x" * MAX_NAME_LENGTH + "...", "at most 64 characters"),
        ("İ" * 40, "İ" * 40, "page slug has at most"),  # lower() doubles it: 'i̇'
        ("<script>alert(1)</script>", "<script>alert(1)</script>", "without the characters"),
        ("<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>", "without the characters"),
        ("Acme `X1`", "Acme `X1`", "without the characters"),
        ("Acme\u001b[2J X1", "Acme\u001b[2J X1", "without control characters"),
        ("Acme\nX1", "Acme\nX1", "without control characters"),
        ("Acme\tX1", "Acme\tX1", "without control characters"),
        ("Acme\x7fX1", "Acme\x7fX1", "without control characters"),
        ("Acme\x9bX1", "Acme\x9bX1", "without control characters"),  # C1 CSI
        ("Acme\x00X1", "Acme\x00X1", "without control characters"),
    ],
)
def test_hostile_names_are_refused(name, label, expected):
    assert_refused(toml_document(gpu(name=name)), label, "name", expected)


def test_five_thousand_character_name_is_refused_and_not_echoed_whole():
    error = assert_refused(toml_document(gpu(name="A" * 5000)), "A" * 64 + "...", "name", "64")
    assert "5000 characters" in str(error)
    assert len(str(error)) < 1000


@pytest.mark.parametrize(
    ("first", "second", "page"),
    [
        ("Acme X1", "ACME-X1", "acme-x1"),
        ("Acme X1", "acme_x1", "acme-x1"),
        ("Acme X1", "Acme  X1!", "acme-x1"),
        ("GPU 1", "GPU (1)", "gpu-1"),
    ],
)
def test_colliding_slugs_name_both_gpus_and_the_slug(first, second, page):
    text = toml_document(gpu(name=first), gpu(name=second))
    error = assert_refused(text, second, "name", "page slug differs")
    assert f"slug {page!r}, also the slug of {first!r}" in str(error)


def test_case_duplicates_are_reported_once_as_duplicates():
    error = refusal(toml_document(gpu(name="Twin"), gpu(name="TWIN")))
    assert [p.received for p in error.problems] == ["duplicate of 'Twin'"]


def test_name_at_the_limit_is_accepted():
    name = "N" * MAX_NAME_LENGTH
    assert list(parse_specs(toml_document(gpu(name=name)), ORIGIN)) == [name]


# -- device prefixes and find() -------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("", "non-empty prefixes"),
        ("  ", "non-empty prefixes"),
        (" NVIDIA", "without leading whitespace"),
        ("<b>NVIDIA", "without the characters"),
        ("NVIDIA\u001b]8;;", "without control characters"),
    ],
)
def test_hostile_device_prefixes_are_refused(prefix, expected):
    text = toml_document(gpu(device_prefixes=["ACME X1 PCIe", prefix]))
    assert_refused(text, "Acme X1", "device_prefixes", expected)


def _database(*prefixes: str, name: str = "Acme X1") -> SpecDatabase:
    spec = GpuSpec(
        name=name,
        bf16_peak_tops=1e15,
        peak_mem_bw_bytes_sec=3e12,
        pct_achievable_gemm_tops=0.78,
        pct_achievable_mem_bw=0.92,
        device_prefixes=prefixes,
    )
    return SpecDatabase({name: spec}, "unlinted")


@pytest.mark.parametrize("query", ["NVIDIA H100", "typo", "", "   "])
def test_find_never_matches_an_empty_prefix_even_unlinted(query):
    with pytest.raises(UnknownNameError):
        _database("", " ").find(query)


@pytest.mark.parametrize("query", ["", "   ", "anything"])
def test_find_never_matches_an_empty_name_even_unlinted(query):
    with pytest.raises(UnknownNameError):
        _database(name="").find(query)


def test_find_still_matches_real_prefixes_next_to_empty_ones():
    assert _database("", "ACME X1 ").find("ACME X1 PCIe").name == "Acme X1"


# -- other text fields ----------------------------------------------------------------

PLAIN_FIELDS = ["vendor", "architecture", "sku", "accumulate_dtype"]
FREE_FIELDS = ["notes", "derivation", "efficiency_reference"]


@pytest.mark.parametrize("key", PLAIN_FIELDS)
@pytest.mark.parametrize("text", ["<b>", "a>b", "`x`"])
def test_markup_in_plain_fields_is_refused(key, text):
    assert_refused(toml_document(gpu(**{key: text})), "Acme X1", key, "without the characters")


@pytest.mark.parametrize("key", FREE_FIELDS)
def test_free_text_may_hold_printable_markup(key):
    text = "<script>alert(1)</script> `code` & [x](javascript:alert(2)) ≥ 2×"
    assert getattr(parse_specs(toml_document(gpu(**{key: text})), ORIGIN)["Acme X1"], key) == text


@pytest.mark.parametrize("key", PLAIN_FIELDS + FREE_FIELDS + ["efficiency_basis"])
@pytest.mark.parametrize("char", ["\x1b", "\n", "\r", "\x07", "\x08", "\x7f", "\x85", "\x9b"])
def test_control_characters_are_refused_in_every_string(key, char):
    value = f"assumed: x{char}y" if key == "efficiency_basis" else f"x{char}y"
    error = assert_refused(toml_document(gpu(**{key: value})), "Acme X1", key, "control")
    assert repr(char)[1:-1] in str(error)  # escaped, as Python writes it


def test_control_characters_in_a_source_note_are_refused():
    sources = [{"url": "https://example.com/", "note": "read \u001b[31mRED"}]
    text = toml_document(gpu(sources=sources))
    assert_refused(text, "Acme X1", "sources[0].note", "control")


def test_non_string_source_note_is_refused():
    text = toml_document(gpu(sources=[{"url": "https://example.com/", "note": 3}]))
    assert_refused(text, "Acme X1", "sources[0].note", "a string")


def test_unhashable_figures_are_refused_not_a_crash():
    text = toml_document(gpu()) + '[[gpu.sources]]\nurl = "https://e.com/"\nfigures = [{a = 1}]\n'
    assert_refused(text, "Acme X1", "sources[0].figures", "spec key names")


@pytest.mark.parametrize("dtype", ["<b>", "bf16\u001b", "a`b"])
def test_hostile_measured_dtype_names_are_refused(dtype):
    text = toml_document(gpu(measured_matmul_tflops={dtype: 1.0}))
    assert_refused(text, "Acme X1", "measured_matmul_tflops", "without")


# -- source URLs ----------------------------------------------------------------------

HOSTILE_URLS = [
    "https://example.com/x>[y](javascript:alert(2))",
    'https://example.com/" onmouseover="alert(1)',
    "https://example.com/`x`",
    "https://example.com/<script>",
    "https:\\\\evil.example/",
    "https://example.com/a b",
    "https://example.com/\u001b[2J",
    "https://example.com/\u2028x",  # a line separator: whitespace
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "ftp://example.com/",
    "//example.com/",
    "https:example.com",
    "https:///path",
    "https://user@/path",
    "https://:443/",
    "http://[::1",
    "https://example.com:port/",
    " https://example.com/",
    "",
    "https://example.com/" + "a" * MAX_URL_LENGTH,
    "https://example.com/x' onmouseover='alert(1)",  # single quotes end an attribute too
]


@pytest.mark.parametrize("url", [*HOSTILE_URLS, "https://e.com/a%27b", "https://e.com/?q=1&r=2"])
def test_every_url_the_lint_accepts_the_site_links(url):
    # One rule at both ends: a URL that passes the lint never stops a build later.
    from roofline.specs.text import url_problem
    from site_gen.markup.safe import http_url

    if url_problem(url) is None:
        assert http_url(url) == url
    assert url_problem("https://example.com/x' onmouseover='alert(1)") is not None


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_hostile_source_urls_are_refused(url):
    text = toml_document(gpu(sources=[{"url": url}]))
    assert_refused(text, "Acme X1", "sources[0].url", "an http:// or https:// URL")


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/",
        "http://example.com:8080/a/b?c=d&e=f#g",
        "https://en.wikipedia.org/wiki/Hopper_(microarchitecture)",
        "https://[2001:db8::1]/specs",
        "https://exämple.com/ü",
    ],
)
def test_ordinary_source_urls_are_accepted(url):
    specs = parse_specs(toml_document(gpu(sources=[{"url": url}])), ORIGIN)
    assert specs["Acme X1"].sources == [url]


# -- what must still pass -------------------------------------------------------------


def test_bundled_database_passes():
    assert len(load_specs()) >= 13


@pytest.mark.parametrize("path", sorted(DATA.glob("*.toml")), ids=lambda p: p.name)
def test_test_data_spec_files_pass(path):
    assert len(load_specs(path)) >= 1


# -- properties ------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2 * MAX_NAME_LENGTH))
def test_any_name_the_lint_accepts_has_a_short_nonempty_slug(name):
    try:
        specs = parse_specs(toml_document(gpu(name=name)), ORIGIN)
    except SpecError:
        return
    (accepted,) = specs
    assert 1 <= len(slug(accepted)) <= MAX_NAME_LENGTH
    assert specs.find(accepted).name == accepted


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=20), st.sampled_from(["\x00", "\x1b", "\x7f", "\x9f"]))
def test_any_note_with_a_control_character_is_refused(text, char):
    error = refusal(toml_document(gpu(notes=text + char)))
    assert not RAW_CONTROL.search(str(error))


# -- ranges: one source for lint and schema --------------------------------------------


def test_number_range_basics():
    closed = NumberRange(1e11, 5e13, low_inclusive=True, high_inclusive=True)
    half = NumberRange(0, 1, low_inclusive=False, high_inclusive=True)
    assert closed.text() == "[1e+11, 5e+13]" and half.text() == "(0, 1]"
    assert LAUNCH_OVERHEAD_RANGE.text() == "(0, 0.001)"
    assert half.contains(1) and half.contains(1e-300) and not half.contains(0)
    for hostile in [math.nan, math.inf, -math.inf, True, "0.5", None, 10**400]:
        assert not half.contains(hostile)
    assert not NumberRange(0, math.inf, False, True).contains(math.inf)  # finite, always
    assert not half.contains(5e-324)  # subnormal: refused, and so by the schema
    assert half.schema() == {"minimum": sys.float_info.min, "maximum": 1}
    assert closed.schema() == {"minimum": 1e11, "maximum": 5e13}


def test_every_number_key_has_a_range():
    assert all(GPU_KEYS[k].range is not None for k in NUMBER_KEYS)
    assert GPU_KEYS["measured_matmul_tflops"].range is MEASURED_MATMUL_TFLOPS_RANGE


def _probes(bounds: NumberRange) -> list[float]:
    """Values at, just inside and just outside each end, and beyond."""
    values = [bounds.low, bounds.high, (bounds.low + bounds.high) / 2, -1.0, 0.0]
    for end in (bounds.low, bounds.high):
        values += [math.nextafter(end, -math.inf), math.nextafter(end, math.inf)]
    return [*values, bounds.low * 0.5, bounds.high * 2]


def _agreement(document: dict[str, Any], top: dict[str, Any]) -> tuple[bool, bool]:
    """(lint accepts, schema accepts) for one GPU entry and top-level keys."""
    try:
        parse_specs(toml_document(document, **top), ORIGIN)
        lint = True
    except SpecError:
        lint = False
    try:
        jsonschema.validate({**top, "gpu": [document]}, json_schema())
        schema = True
    except jsonschema.ValidationError:
        schema = False
    return lint, schema


@pytest.mark.parametrize("key", NUMBER_KEYS)
def test_lint_and_schema_agree_on_every_number_key(key):
    bounds = GPU_KEYS[key].range
    needed = {k: 1e15 for k in GPU_KEYS[key].requires}  # keys it needs beside it (peaks)
    for value in _probes(bounds):
        lint, schema = _agreement(gpu(**needed, **{key: value}), {})
        # a count (sm_count) is also refused between whole numbers, by both
        whole = not GPU_KEYS[key].integer or float(value) == int(value)
        assert lint == schema == (bounds.contains(value) and whole), (key, value, lint, schema)
        if needed:  # without them, both refuse
            assert _agreement(gpu(**{key: value}), {}) == (False, False), (key, value)


def test_lint_and_schema_agree_on_launch_overhead_and_measured_values():
    for value in _probes(LAUNCH_OVERHEAD_RANGE):
        lint, schema = _agreement(gpu(), {"kernel_launch_overhead_s": value})
        assert lint == schema == LAUNCH_OVERHEAD_RANGE.contains(value), value
    for value in _probes(MEASURED_MATMUL_TFLOPS_RANGE):
        # fp16: a dtype the peak check (a rate above its peak) does not compare
        lint, schema = _agreement(gpu(measured_matmul_tflops={"fp16": value}), {})
        assert lint == schema == MEASURED_MATMUL_TFLOPS_RANGE.contains(value), value


@pytest.mark.parametrize(
    "name",
    ["Acme X1", "", " ", " A", "A ", "<b>", "a`b", "A\u001b", "A\n", "🔥", "x" * 64, "x" * 65],
)
def test_lint_and_schema_agree_on_names(name):
    lint, schema = _agreement(gpu(name=name), {})
    assert lint == schema, (name, lint, schema)


@pytest.mark.parametrize("url", HOSTILE_URLS[:9] + HOSTILE_URLS[12:16] + ["https://e.com/"])
def test_lint_and_schema_agree_on_urls(url):
    lint, schema = _agreement(gpu(sources=[{"url": url}]), {})
    assert lint == schema, (url, lint, schema)


def test_bundled_database_validates_against_the_stricter_schema():
    text = resources.files("roofline").joinpath("data/gpus.toml").read_text("utf-8")
    document = json.loads(json.dumps(tomllib.loads(text), default=str))
    jsonschema.validate(document, json_schema())


def test_unknown_keys_with_control_characters_are_reported_escaped():
    text = toml_document(gpu(**{"bad\u001b[2Jkey": 1}))
    error = refusal(text)
    assert [p.key for p in error.problems] == ["bad\u001b[2Jkey"]
    assert "\\x1b" in str(error) and not RAW_CONTROL.search(str(error))
