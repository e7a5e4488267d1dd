"""The calculator's calibrated model (``calibrated=1``) in headless Chromium.

The page computes the calibrated model from the same sympy expressions as
``roofline.evaluate(..., calibrated=True)`` (printed by :mod:`roofline.publish.jscode`), with
each GPU's calibration parameters from data.js; these tests check that the two agree,
that torchao's speedup is shown beside it, that the hardware overrides reach both
models, and that a bad ``calibrated`` value in a link is reported like any other.
Run: ``.venv/bin/pytest -m browser tests/browser/test_calculator_calibrated.py``.
"""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Iterator
from urllib.parse import parse_qs, quote, urlparse

import pytest
from browser.site_fixtures import SMALL_SPECS
from browser.test_site_browser import (
    ARTIFACTS,
    CALCULATOR,
    CHROMIUM,
    REL,
    Session,
    _assert_close,
    _calculator_cases,
    _query,
    _read_columns,
    base_url,  # noqa: F401 (a fixture this module uses)
    browser,  # noqa: F401 (a fixture this module uses)
    session,  # noqa: F401 (a fixture this module uses)
)

from roofline import evaluate, load_specs
from roofline.errors import unknown
from roofline.evaluate import calibration_of, evaluate_columns
from roofline.recipes import Mode, get_recipe

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install -y chromium); .ci/run installs it",
    ),
]

SPECS = load_specs(SMALL_SPECS)
GPUS = list(SPECS)
DEFAULT = {
    "gpu": GPUS[0],
    "mode": "training",
    "recipe": "rowwise",
    "fusion": False,
    "shape": (8192, 4096, 4096),
}  # data.js's defaults for the small spec file
ALERT = ".ra-calc .ra-calc-error"
CALIBRATED_CHOICES = ["0", "1", "false", "true"]
SPEEDUP = "r_fp8_gemm_and_ovhd_spdp"

# A few points besides the random ones: latency-dominated small shapes, fp4 (its own fixed
# latency), a fused-away kernel (tensorwise training with fusion), both GPUs.
EXTRA = [
    {
        "gpu": "Test B200",
        "mode": "inference",
        "recipe": "nvfp4",
        "fusion": False,
        "shape": (16, 1024, 1024),
    },
    {
        "gpu": "Test B200",
        "mode": "inference",
        "recipe": "mxfp8_cublas",
        "fusion": True,
        "shape": (1024, 1024, 1024),
    },
    {
        "gpu": "Test H100",
        "mode": "training",
        "recipe": "tensorwise",
        "fusion": True,
        "shape": (4096, 8192, 8192),
    },
    {
        "gpu": "Test B200",
        "mode": "training",
        "recipe": "mxfp8_cublas",
        "fusion": False,
        "shape": (128, 128, 128),
    },
]


def _columns(case: dict, calibrated: bool) -> dict[str, float]:
    """``roofline.evaluate``'s columns for ``case`` (the small spec file)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate(
            case["gpu"],
            case["mode"],
            case["recipe"],
            *case["shape"],
            fusion=case["fusion"],
            specs=SPECS,
            calibrated=calibrated,
        )
    return {k: float(v) for k, v in out.items()}


def _shown_model(page) -> str:
    return page.get_attribute(".ra-calc [data-role=model]", "data-model") or ""


def _torchao_speedup(page) -> float:
    return float(page.get_attribute(".ra-calc [data-role=torchao-speedup]", "data-value") or "nan")


def _assert_calibrated(page, case: dict) -> None:
    """The page shows ``case``'s calibrated columns and torchao's speedup beside them."""
    _assert_close(_read_columns(page), _columns(case, calibrated=True), case)
    want = _columns(case, calibrated=False)[SPEEDUP]
    assert abs(_torchao_speedup(page) - want) <= REL * abs(want), case
    assert _shown_model(page) == "calibrated"
    assert "calibrated model" in page.inner_text(".ra-calc-results")
    assert page.is_checked(".ra-calc input[name=calibrated]")
    assert page.inner_text(".ra-calc-command").endswith(" --calibrated")


def test_calibrated_links_match_evaluate(session: Session) -> None:  # noqa: F811
    cases = _calculator_cases()[:6] + EXTRA
    differ = 0
    for case in cases:
        session.open(CALCULATOR + _query(case) + "&calibrated=1")
        _assert_calibrated(session.page, case)
        calibrated, torchao = _columns(case, True)[SPEEDUP], _columns(case, False)[SPEEDUP]
        differ += abs(calibrated - torchao) > 1e-6 * abs(torchao)
    assert differ > 0, "the calibrated model gave torchao's speedup everywhere"
    assert session.errors == [] and session.external == [] and session.failed == []


def test_checkbox_switches_model_and_link(session: Session) -> None:  # noqa: F811
    page = session.page
    case = EXTRA[0]
    session.open(CALCULATOR + _query(case))
    _assert_close(_read_columns(page), _columns(case, calibrated=False), case)
    assert _shown_model(page) == "torchao"
    assert page.locator(".ra-calc [data-role=torchao-speedup]").count() == 0
    page.check(".ra-calc input[name=calibrated]")
    _assert_calibrated(page, case)
    assert parse_qs(urlparse(page.url).query)["calibrated"] == ["1"]
    # The link now reproduces the state.
    session.open(CALCULATOR + "?" + urlparse(page.url).query)
    _assert_calibrated(page, case)
    page.uncheck(".ra-calc input[name=calibrated]")
    _assert_close(_read_columns(page), _columns(case, calibrated=False), case)
    assert "calibrated" not in parse_qs(urlparse(page.url).query)  # absent: torchao's
    assert _shown_model(page) == "torchao"
    assert session.errors == []


def test_overrides_reach_both_models(session: Session) -> None:  # noqa: F811
    """A peak override changes both models; an efficiency override only torchao's (the
    calibrated model has its own), and the page says so."""
    page = session.page
    case = {**DEFAULT, "gpu": "Test B200", "recipe": "mxfp8_cublas"}
    spec = SPECS[case["gpu"]]
    peak, efficiency = spec.fp8_peak_tops * 0.6, 0.5
    session.open(
        CALCULATOR + _query(case) + f"&calibrated=1&fp8_peak_tops={peak!r}"
        f"&pct_achievable_gemm_tops={efficiency}"
    )
    changed = dataclasses.replace(spec, fp8_peak_tops=peak, pct_achievable_gemm_tops=efficiency)
    mode, recipe = Mode.parse(case["mode"]), get_recipe(case["recipe"], case["mode"])
    # The GPU's own calibration, with the overridden figures (as the page computes it).
    calibration = calibration_of(spec, SPECS)
    want = {
        k: float(v)
        for k, v in evaluate_columns(
            changed, mode, recipe, *case["shape"], calibration=calibration
        ).items()
    }
    _assert_close(_read_columns(page), want, case)
    assert want[SPEEDUP] != pytest.approx(_columns(case, calibrated=True)[SPEEDUP], rel=1e-6)
    torchao = float(evaluate_columns(changed, mode, recipe, *case["shape"])[SPEEDUP])
    assert abs(_torchao_speedup(page) - torchao) <= REL * abs(torchao)
    note = page.inner_text(".ra-calc [data-role=calibration-ignores]")
    assert "pct_achievable_gemm_tops" in note and "fp8_peak_tops" not in note
    ARTIFACTS.mkdir(exist_ok=True)  # for a person to look at
    page.locator(".ra-calc").screenshot(path=str(ARTIFACTS / "calculator-calibrated.png"))
    assert session.errors == []


def test_assumed_parameters_are_named(session: Session) -> None:  # noqa: F811
    page = session.page
    for gpu in GPUS:
        assumed = calibration_of(SPECS[gpu], SPECS).assumed()
        session.open(CALCULATOR + "?calibrated=1&gpu=" + quote(gpu))
        page.wait_for_selector("[data-column]")
        note = page.locator(".ra-calc [data-role=calibration-assumed]")
        assert note.count() == (1 if assumed else 0), gpu
        if assumed:
            assert all(key in note.inner_text() for key in assumed), gpu
    assert session.errors == []


def test_breakdown_marks_latency_bound_kernels(session: Session) -> None:  # noqa: F811
    """Tiny GEMMs are bound by the calibrated fixed latency, huge ones by compute."""
    page = session.page

    def bounds(query: str) -> dict[str, str]:
        session.open(CALCULATOR + query + "&calibrated=1")
        page.wait_for_selector("[data-bound]")
        rows = page.evaluate(
            "Array.from(document.querySelectorAll('.ra-calc-breakdown tbody tr'))"
            ".map(r => [r.querySelector('[data-term]').dataset.term,"
            " r.querySelector('[data-bound]').dataset.bound])"
        )
        return dict(rows)

    small = bounds("?gpu=Test%20B200&recipe=mxfp8_cublas&M=128&K=128&N=128")
    large = bounds("?gpu=Test%20B200&recipe=mxfp8_cublas&M=16384&K=16384&N=16384")
    gemms = [k for k in small if k.startswith("gemm.")]
    assert gemms and all(small[k] == "latency" for k in gemms), small
    assert all(large[k] == "compute" for k in gemms), large
    assert set(small.values()) | set(large.values()) <= {"latency", "compute", "memory", "none"}
    assert session.errors == []


# -- hostile and mistyped values --------------------------------------------------------------


def _unknown_calibrated(name: str) -> str:
    """The CLI's unknown-name message without its "did you mean" (the page has none)."""
    return re.sub(
        r"\. Did you mean .*\?$", "", str(unknown("calibrated", name, CALIBRATED_CHOICES))
    )


CASES: dict[str, list[tuple[str, str]]] = {
    "calibrated=__proto__": [("calibrated", _unknown_calibrated("__proto__"))],
    "calibrated=constructor": [("calibrated", _unknown_calibrated("constructor"))],
    "calibrated=2": [("calibrated", _unknown_calibrated("2"))],
    "calibrated=tru": [("calibrated", _unknown_calibrated("tru"))],
    "calibrated=" + quote("<img src=x onerror=alert(1)>"): [
        ("calibrated", _unknown_calibrated("<img src=x onerror=alert(1)>"))
    ],
    "calibrated=" + quote("\u202e1\n"): [("calibrated", _unknown_calibrated("\u202e1"))],
    "fusion=toString&calibrated=valueOf": [
        ("fusion", str(unknown("fusion", "toString", CALIBRATED_CHOICES))),
        ("calibrated", _unknown_calibrated("valueOf")),
    ],
}


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


@pytest.mark.parametrize("query", list(CASES))
def test_bad_calibrated_value_is_reported_and_ignored(watched, query: str) -> None:
    watcher, dialogs = watched
    page = watcher.page
    watcher.open(CALCULATOR + "?" + query)
    alert = page.locator(ALERT)
    alert.wait_for(state="visible")
    assert alert.get_attribute("role") == "alert"
    lines = page.evaluate(
        f"Array.from(document.querySelectorAll('{ALERT} p[data-param]'))"
        ".map(p => [p.dataset.param, p.textContent])"
    )
    assert [tuple(line) for line in lines] == CASES[query]
    page.wait_for_timeout(100)  # an onerror handler would have fired by now
    assert dialogs == []
    assert page.locator("img[src=x], .ra-calc img, .ra-calc script").count() == 0
    assert watcher.errors == [] and watcher.external == []
    # The default (torchao's model) is used, and it still computes.
    assert not page.is_checked(".ra-calc input[name=calibrated]")
    _assert_close(_read_columns(page), _columns(DEFAULT, calibrated=False), query)
    assert _shown_model(page) == "torchao"


def test_valid_calibrated_values_raise_no_alert(watched) -> None:
    watcher, dialogs = watched
    page = watcher.page
    for query, on in (
        ("calibrated=TRUE", True),
        ("calibrated=%201%20", True),
        ("calibrated=false", False),
        ("calibrated=0", False),
        ("calibrated=", False),
    ):
        watcher.open(CALCULATOR + "?" + query)
        page.wait_for_selector("[data-column]")
        assert page.locator(ALERT).count() == 0, query
        assert page.is_checked(".ra-calc input[name=calibrated]") is on, query
        _assert_close(_read_columns(page), _columns(DEFAULT, calibrated=on), query)
    assert dialogs == [] and watcher.errors == []


def test_widget_that_starts_calibrated_writes_calibrated_0(session: Session) -> None:  # noqa: F811
    """A widget built with ``calibrated=True`` (data-calibrated="1") starts on the
    calibrated model; unticking it writes calibrated=0, so the link keeps torchao's."""
    page = session.page

    def starts_calibrated(route) -> None:
        response = route.fetch()
        body = response.text().replace('class="ra-calc" ', 'class="ra-calc" data-calibrated="1" ')
        route.fulfill(response=response, body=body)

    page.route(re.compile(r".*/calculator/(\?.*)?$"), starts_calibrated)
    session.open(CALCULATOR)
    _assert_calibrated(page, DEFAULT)
    page.uncheck(".ra-calc input[name=calibrated]")
    assert parse_qs(urlparse(page.url).query)["calibrated"] == ["0"]
    session.open(CALCULATOR + "?" + urlparse(page.url).query)
    page.wait_for_selector("[data-column]")
    assert not page.is_checked(".ra-calc input[name=calibrated]")
    _assert_close(_read_columns(page), _columns(DEFAULT, calibrated=False), "calibrated=0")
    session.open(CALCULATOR + "?calibrated=nope")  # a bad value falls back to the widget's
    page.locator(ALERT).wait_for()
    assert page.is_checked(".ra-calc input[name=calibrated]")
    assert session.errors == []


@pytest.mark.parametrize(
    ("gpu", "mode", "recipe"),
    [
        ("Test B200", "training", "mxfp8_cublas"),
        ("Test H100", "inference", "rowwise"),
        ("Test B200", "inference", "nvfp4"),
    ],
)
def test_calibrated_speedup_carries_the_python_error_band(session, gpu, mode, recipe) -> None:  # noqa: F811
    """The band the page gives is roofline.analysis.error_bands.model_band's for the same model."""
    from roofline.analysis.error_bands import model_band
    from roofline.model.compiled import compile_model

    page = session.page
    case = {**DEFAULT, "gpu": gpu, "mode": mode, "recipe": recipe}
    session.open(CALCULATOR + _query(case) + "&calibrated=1")
    note = page.locator(".ra-calc [data-role=calibration-band]")
    note.wait_for()
    assert page.input_value(".ra-calc select[name=gpu]") == gpu
    assert page.input_value(".ra-calc select[name=recipe]") == recipe
    spec = SPECS[gpu]
    model = compile_model(mode, recipe, calibrated=True).model
    m, k, n = case["shape"]
    want = model_band(spec, calibration_of(spec, SPECS), model, float(m) * k * n)
    assert want.size is not None and want.size in note.inner_text()
    assert note.get_attribute("data-basis") == want.basis.value
    assert float(note.get_attribute("data-band")) == pytest.approx(want.fraction)
    assert f"±{want.fraction:.0%}" in note.inner_text()
    assert session.errors == []
