"""The calculator against hostile and mistyped links, in headless Chromium.

Every query value is attacker-controlled (anyone can send a link). Each case checks that
the page reports the value in a visible role="alert" box with the CLI's own message,
runs no script (no dialog, no injected element, no console error), and still computes
with the default for that field. Run: ``.venv/bin/pytest -m browser tests/browser``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from browser.site_fixtures import SMALL_SPECS
from browser.test_site_browser import (
    ARTIFACTS,
    CALCULATOR,
    CHROMIUM,
    Session,
    _assert_close,
    _expected,
    _read_columns,
    base_url,  # noqa: F401 (a fixture this module uses)
    browser,  # noqa: F401 (a fixture this module uses)
)

from roofline import load_specs
from roofline.errors import RooflineError, unknown
from roofline.evaluate import as_shape_array
from roofline.recipes import Mode, get_recipe
from roofline.specs import GPU_KEYS, LAUNCH_OVERHEAD_RANGE
from roofline.symbols import HARDWARE_SYMBOLS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install -y chromium); .ci/run installs it",
    ),
]

GPUS = list(load_specs(SMALL_SPECS))
DEFAULT = {
    "gpu": GPUS[0],
    "mode": "training",
    "recipe": "rowwise",
    "fusion": False,
    "shape": (8192, 4096, 4096),
}  # data.js's defaults for the small spec file
ALERT = ".ra-calc .ra-calc-error"


def _message(call, *args) -> str:
    """The message of the RooflineError ``call(*args)`` raises (the CLI's words), less a
    "Did you mean ...?" (the page lists the valid choices but guesses none)."""
    with pytest.raises(RooflineError) as err:
        call(*args)
    return re.sub(r"\. Did you mean .*\?$", "", str(err.value))


def _unknown_gpu(name: str) -> str:
    """The CLI's unknown-name message without its "did you mean" (the page has none)."""
    return f"unknown GPU {name!r}; valid: {', '.join(sorted(GPUS))}"


def _range_message(key: str, got: str) -> str:
    """The message for a query-string override (SI units) outside the spec lint's range."""
    spec_range = LAUNCH_OVERHEAD_RANGE if key == "kernel_launch_overhead_s" else GPU_KEYS[key].range
    unit = next(hw.unit for hw in HARDWARE_SYMBOLS if hw.spec_key == key)
    unit_text = "" if unit == "1" else " " + unit
    return f"{key} must be a number in {spec_range.text()}{unit_text}, got {got}"


# query string -> the parameter each rejected value names, with the message expected.
CASES: dict[str, list[tuple[str, str]]] = {
    "mode=__proto__": [("mode", _message(Mode.parse, "__proto__"))],
    "gpu=nope": [("gpu", _unknown_gpu("nope"))],
    "recipe=constructor": [("recipe", _message(get_recipe, "constructor", "training"))],
    "gpu=" + quote("<img src=x onerror=alert(1)>"): [
        ("gpu", _unknown_gpu("<img src=x onerror=alert(1)>"))
    ],
    "M=1e30": [("M", _message(as_shape_array, "M", "1e30"))],  # digits only, as the CLI
    "bf16_peak_tops=-1": [("bf16_peak_tops", _range_message("bf16_peak_tops", "-1"))],
    "bf16_peak_tops=Infinity": [("bf16_peak_tops", _range_message("bf16_peak_tops", "'Infinity'"))],
    "pct_achievable_mem_bw=2": [
        ("pct_achievable_mem_bw", _range_message("pct_achievable_mem_bw", "2"))
    ],
    # More of the same family: other Object.prototype members, several at once, numbers
    # JavaScript's Number() would take but the CLI would not, and disguised text.
    "mode=constructor&recipe=__proto__&fusion=toString": [
        ("mode", _message(Mode.parse, "constructor")),
        ("recipe", _message(get_recipe, "__proto__", "training")),
        ("fusion", str(unknown("fusion", "toString", ["0", "1", "false", "true"]))),
    ],
    "recipe=hasOwnProperty&gpu=valueOf": [
        ("gpu", _unknown_gpu("valueOf")),
        ("recipe", _message(get_recipe, "hasOwnProperty", "training")),
    ],
    "mode=inference&recipe=blockwise": [("recipe", _message(get_recipe, "blockwise", "inference"))],
    "K=0x10&N=-5&M=0": [
        ("M", _message(as_shape_array, "M", 0)),
        ("K", _message(as_shape_array, "K", "0x10")),
        ("N", _message(as_shape_array, "N", "-5")),
    ],
    "M=2147483648": [("M", _message(as_shape_array, "M", 2147483648))],
    "kernel_launch_overhead_s=NaN&peak_mem_bw_bytes_sec=1e400": [
        ("peak_mem_bw_bytes_sec", _range_message("peak_mem_bw_bytes_sec", "Infinity")),
        ("kernel_launch_overhead_s", _range_message("kernel_launch_overhead_s", "'NaN'")),
    ],
    "fp8_peak_tops=0x10": [("fp8_peak_tops", _range_message("fp8_peak_tops", "'0x10'"))],
    "gpu=" + quote("Test\u202eH100\n"): [("gpu", _unknown_gpu("Test\u202eH100"))],
}

# The valid values of a case that are kept (the rest of the link is the defaults).
KEPT: dict[str, dict] = {"mode=inference&recipe=blockwise": {"mode": "inference"}}


@pytest.fixture()
def watched(browser, base_url: str) -> Iterator[tuple[Session, list[str]]]:  # noqa: F811
    """A session that also records (and dismisses) every dialog a script opens."""
    s = Session(browser, base_url)
    dialogs: list[str] = []

    def on_dialog(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    s.page.on("dialog", on_dialog)
    yield s, dialogs
    s.close()


def _alert_lines(page) -> list[tuple[str, str]]:
    return page.evaluate(
        f"Array.from(document.querySelectorAll('{ALERT} p[data-param]'))"
        ".map(p => [p.dataset.param, p.textContent])"
    )


@pytest.mark.parametrize("query", list(CASES))
def test_hostile_query_is_reported_and_ignored(watched, query: str) -> None:
    session, dialogs = watched
    page = session.page
    session.open(CALCULATOR + "?" + query)
    alert = page.locator(ALERT)
    alert.wait_for(state="visible")
    assert alert.get_attribute("role") == "alert"
    lines = [tuple(line) for line in _alert_lines(page)]
    assert lines == CASES[query]
    for param, text in lines:
        assert param.lower() in text.lower()  # the message names the parameter ("GPU")
    # Nothing ran: no dialog, no element made from the value, no error; and the value is
    # shown as text (the unknown-GPU message quotes it literally).
    page.wait_for_timeout(100)  # an onerror handler would have fired by now
    assert dialogs == []
    assert page.locator("img[src=x], .ra-calc img, .ra-calc script").count() == 0
    assert session.errors == [] and session.external == []
    # The widget still works, with the defaults in place of what was refused.
    want = {**DEFAULT, **KEPT.get(query, {})}
    _assert_close(_read_columns(page), _expected(want), query)
    assert page.get_attribute("[data-role=support]", "data-support") in ("native", "hypothetical")


def test_valid_links_raise_no_alert(watched) -> None:
    session, dialogs = watched
    page = session.page
    for query in (
        "",
        "?gpu=test-b200&mode=INFERENCE&recipe=MXFP4&fusion=true",
        "?gpu=Test%20H100&M=&K=%208192%20&fusion=&bf16_peak_tops=",
        "?pct_achievable_mem_bw=1&kernel_launch_overhead_s=5e-6",
    ):
        session.open(CALCULATOR + query)
        page.wait_for_selector("[data-column]")
        assert page.locator(ALERT).count() == 0, query
    assert dialogs == [] and session.errors == []


def test_alert_goes_once_the_form_rewrites_the_link(watched) -> None:
    session, _ = watched
    page = session.page
    session.open(CALCULATOR + "?gpu=nope&M=-1")
    page.locator(ALERT).wait_for()
    page.fill(".ra-calc input[name=M]", "16384")
    assert page.locator(ALERT).count() == 0
    assert "gpu=Test+H100" in page.url and "M=16384" in page.url
    _assert_close(_read_columns(page), _expected({**DEFAULT, "shape": (16384, 4096, 4096)}), "M")


def test_typed_override_out_of_range_names_key_and_range(watched) -> None:
    session, _ = watched
    page = session.page
    session.open(CALCULATOR)
    page.wait_for_selector("[data-column]")
    page.locator(".ra-calc-overrides summary").click()
    for key, typed, want in (
        ("bf16_peak_tops", "2000000", "(0, 1e+06] TFLOP/s, got 2000000"),
        ("pct_achievable_gemm_tops", "1.5", "(0, 1], got 1.5"),
        ("kernel_launch_overhead_s", "1000", "(0, 1000) µs, got 1000"),
        ("peak_mem_bw_bytes_sec", "constructor", "[0.1, 50] TB/s, got 'constructor'"),
    ):
        page.fill(f".ra-calc input[name={key}]", typed)
        message = page.locator("[data-role=message][data-kind=override] p").last
        assert message.inner_text() == f"{key} must be a number in {want}"
        assert page.locator(".ra-calc [data-column]").count() == 0
        assert "ra-invalid" in (page.get_attribute(f".ra-calc input[name={key}]", "class") or "")
        page.fill(f".ra-calc input[name={key}]", "")
        page.wait_for_selector("[data-column]")
    assert session.errors == []


def test_pyrepr_and_range_numbers_match_python(watched) -> None:
    """The page's repr and %g agree with Python's on hostile text and on every bound."""
    session, _ = watched
    session.open(CALCULATOR)
    session.page.wait_for_selector("[data-column]")
    texts = [
        "plain",
        "it's",
        'say "hi"',
        "both ' and \"",
        "back\\slash",
        "tab\tnew\nline\r",
        "\x00\x1b[31m\x7f\x85",
        "bidi\u202eevil\u2066",
        "nbsp\xa0zw\u200b",
        "line\u2028sep",
        "emoji \U0001f600",
        "private \ue000",
        "é ü 中文",
        "x" * 70,
    ]
    numbers = [
        v for spec in GPU_KEYS.values() if spec.range for v in (spec.range.low, spec.range.high)
    ] + [1e-3, 2e-6, 0.1, 123456.7, 1234567.0]
    got = session.page.evaluate(
        "([t, n]) => [t.map(window.RooflineCalculator.pyRepr),"
        " n.map(window.RooflineCalculator.fmtG)]",
        [texts, numbers],
    )
    assert got[0] == [repr(t) for t in texts]
    assert got[1] == [f"{n:g}" for n in numbers]


def test_error_state_screenshot(browser, base_url: str) -> None:  # noqa: F811
    """For a person to look at: the alert for a link with several hostile values."""
    s = Session(browser, base_url)
    try:
        s.open(
            CALCULATOR
            + "?gpu="
            + quote("<img src=x onerror=alert(1)>")
            + "&mode=__proto__&M=1e30&bf16_peak_tops=-1"
        )
        s.page.locator(ALERT).wait_for()
        s.page.wait_for_selector("[data-column]")
        s.page.locator(".ra-calc-overrides summary").click()  # show each field's range too
        ARTIFACTS.mkdir(exist_ok=True)
        s.page.locator(".ra-calc").screenshot(path=str(ARTIFACTS / "calculator-hostile-link.png"))
        assert s.errors == []
    finally:
        s.close()
