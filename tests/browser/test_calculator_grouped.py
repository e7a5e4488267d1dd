"""The calculator's grouped layers (``G``) and model-preset picker, in headless Chromium.

The page computes a grouped (mixture-of-experts) layer from the same sympy expressions as
``roofline.evaluate(..., groups=G)`` (printed by :mod:`roofline.publish.jscode`); these tests check
that the two agree for both models, that ``G`` is carried in the link (a hostile or
mistyped value is reported with the evaluator's message and never obeyed), and that the
model-preset picker fills M, K, N and G as ``ModelPreset.gemm_instances(tokens, ep)``.
Run: ``.venv/bin/pytest -m browser tests/browser/test_calculator_grouped.py``.
"""

from __future__ import annotations

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
    _query,
    _read_columns,
    base_url,  # noqa: F401 (a fixture this module uses)
    browser,  # noqa: F401 (a fixture this module uses)
    session,  # noqa: F401 (a fixture this module uses)
)

from roofline import classify, evaluate, load_specs
from roofline.errors import RooflineError
from roofline.evaluate import as_shape_array, calibration_of, evaluate_terms
from roofline.presets import ParameterError, load_models
from roofline.recipes import get_recipe

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install -y chromium); .ci/run installs it",
    ),
]

SPECS = load_specs(SMALL_SPECS)
MODELS = load_models()
DEFAULT = {
    "gpu": next(iter(SPECS)),
    "mode": "training",
    "recipe": "rowwise",
    "fusion": False,
    "shape": (8192, 4096, 4096),
    "groups": None,
}  # data.js's defaults
ALERT = ".ra-calc .ra-calc-error"

# Grouped layers: MoE-like shapes, block-scaled recipes (scale rearrangements), fp4, a
# fused model, a recipe without a grouped kernel (hypothetical), and G = 1 (dense).
CASES = [
    {
        "gpu": "Test B200",
        "mode": "training",
        "recipe": "mxfp8_cublas",
        "fusion": False,
        "shape": (65536, 7168, 2048),
        "groups": 32,
    },
    {
        "gpu": "Test H100",
        "mode": "training",
        "recipe": "rowwise",
        "fusion": True,
        "shape": (16384, 4096, 1536),
        "groups": 8,
    },
    {
        "gpu": "Test B200",
        "mode": "inference",
        "recipe": "nvfp4",
        "fusion": False,
        "shape": (4096, 2048, 7168),
        "groups": 64,
    },
    {
        "gpu": "Test B200",
        "mode": "training",
        "recipe": "nvfp4",
        "fusion": False,
        "shape": (32768, 2880, 2880),
        "groups": 128,
    },
    {
        "gpu": "Test B200",
        "mode": "training",
        "recipe": "blockwise",
        "fusion": False,
        "shape": (8192, 4096, 4096),
        "groups": 16,
    },
    {
        "gpu": "Test H100",
        "mode": "training",
        "recipe": "tensorwise",
        "fusion": False,
        "shape": (8192, 4096, 4096),
        "groups": 1,
    },
]


def _grouped_query(case: dict, calibrated: bool = False) -> str:
    groups = "" if case["groups"] is None else f"&G={case['groups']}"
    return CALCULATOR + _query(case) + groups + ("&calibrated=1" if calibrated else "")


def _columns(case: dict, calibrated: bool) -> dict[str, float]:
    """``roofline.evaluate``'s columns for ``case`` (``groups=G``; None: dense)."""
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
            groups=case["groups"],
        )
    return {k: float(v) for k, v in out.items()}


def _terms(case: dict, calibrated: bool) -> dict[str, float]:
    spec = SPECS[case["gpu"]]
    calibration = calibration_of(spec, SPECS) if calibrated else None
    out = evaluate_terms(
        spec,
        case["mode"],
        case["recipe"],
        *case["shape"],
        fusion=case["fusion"],
        calibration=calibration,
        groups=case["groups"],
    )
    return {k: float(v) for k, v in out.items()}


def _read_terms(page) -> dict[str, float]:
    page.wait_for_selector("[data-term]")
    return {
        k: float(v)
        for k, v in page.evaluate(
            "Array.from(document.querySelectorAll('.ra-calc [data-term]'))"
            ".filter(e => !e.dataset.term.includes('#'))"
            ".map(e => [e.dataset.term, e.dataset.value])"
        )
    }


def _assert_page(page, case: dict, calibrated: bool) -> None:
    """The page shows ``case``'s columns and terms, as evaluate(groups=G) gives them."""
    _assert_close(_read_columns(page), _columns(case, calibrated), case)
    _assert_close(_read_terms(page), _terms(case, calibrated), case)
    groups = case["groups"] or 1
    assert page.get_attribute(".ra-calc [data-role=layer]", "data-groups") == str(groups)
    command = page.inner_text(".ra-calc-command")
    assert (f" --groups {groups}" in command) is (groups != 1), command
    grouped = groups != 1
    recipe = get_recipe(case["recipe"], case["mode"])
    want = classify(SPECS[case["gpu"]], recipe, case["mode"], grouped=grouped).support.value
    assert page.get_attribute(".ra-calc [data-role=support]", "data-support") == want, case


@pytest.mark.parametrize("calibrated", [False, True], ids=["torchao", "calibrated"])
def test_grouped_links_match_evaluate(session: Session, calibrated: bool) -> None:  # noqa: F811
    page = session.page
    rearranged = 0
    for case in CASES:
        session.open(_grouped_query(case, calibrated))
        _assert_page(page, case, calibrated)
        rearranged += page.locator(".ra-calc [data-term^='rearrange.']").count()
        assert page.locator(ALERT).count() == 0
    assert rearranged > 0  # the block-scaled cases show their rearrangement kernels
    assert session.errors == [] and session.external == [] and session.failed == []


def test_grouped_layer_differs_from_dense_and_g1_is_dense(session: Session) -> None:  # noqa: F811
    page = session.page
    case = CASES[0]
    session.open(_grouped_query(case))
    grouped = _read_columns(page)["r_fp8_gemm_and_ovhd_spdp"]
    page.fill(".ra-calc input[name=G]", "1")
    dense = {**case, "groups": None}
    _assert_page(page, dense, calibrated=False)
    assert "G" not in parse_qs(urlparse(page.url).query)  # G = 1: left out of the link
    assert abs(grouped - _columns(dense, False)["r_fp8_gemm_and_ovhd_spdp"]) > REL * grouped
    assert page.locator(".ra-calc [data-term^='rearrange.']").count() == 0
    page.fill(".ra-calc input[name=G]", "8")
    _assert_page(page, {**case, "groups": 8}, calibrated=False)
    assert parse_qs(urlparse(page.url).query)["G"] == ["8"]
    session.open(CALCULATOR + "?" + urlparse(page.url).query)  # the link reproduces it
    _assert_page(page, {**case, "groups": 8}, calibrated=False)
    assert session.errors == []


def test_recipe_without_grouped_kernel_is_hypothetical(session: Session) -> None:  # noqa: F811
    page = session.page
    case = {**CASES[0], "recipe": "tensorwise", "groups": 8}
    session.open(_grouped_query({**case, "groups": None}))
    assert page.get_attribute(".ra-calc [data-role=support]", "data-support") == "native"
    page.fill(".ra-calc input[name=G]", "8")
    _assert_page(page, case, calibrated=False)
    badge = page.inner_text(".ra-calc [data-role=support]")
    assert "grouped GEMM kernel" in badge
    assert session.errors == []


# -- the model-preset picker -----------------------------------------------------------------


def _choose(page, model: str, index: int, tokens: int | str, ep: int = 1) -> None:
    page.select_option(".ra-calc select[name=preset_model]", model)
    page.fill(".ra-calc input[name=tokens]", str(tokens))
    if page.locator(".ra-calc select[name=ep]").is_enabled():
        page.select_option(".ra-calc select[name=ep]", str(ep))
    page.select_option(".ra-calc select[name=preset_gemm]", str(index))


def _shape(page) -> tuple[int, ...]:
    return tuple(int(page.input_value(f".ra-calc input[name={d}]")) for d in "MKNG")


def test_preset_picker_fills_gemm_instances(session: Session) -> None:  # noqa: F811
    page = session.page
    session.open(CALCULATOR + "?gpu=Test%20B200&recipe=mxfp8_cublas")
    page.wait_for_selector("[data-column]")
    labels = page.evaluate(
        "Array.from(document.querySelectorAll("
        "'.ra-calc select[name=preset_model] option')).map(o => o.value)"
    )
    assert labels[1:] == MODELS.names()
    checked = 0
    for name, tokens, ep in (
        ("deepseek-v3", 4096, 8),
        ("qwen3-30b-a3b", 16384, 1),
        ("gpt-oss-120b", 2048, 32),
        ("llama3.1-8b", 8192, 1),
        ("llama4-scout", 1024, 16),
    ):
        preset = MODELS.get(name)
        instances = preset.gemm_instances(tokens, ep)
        for index, gemm in enumerate(instances):
            _choose(page, name, index, tokens, ep)
            assert _shape(page) == (gemm.M, gemm.K, gemm.N, gemm.groups), (name, gemm)
            checked += gemm.groups > 1
        eps = page.evaluate(
            "Array.from(document.querySelectorAll("
            "'.ra-calc select[name=ep] option')).map(o => Number(o.value))"
        )
        for ep_choice in range(1, (preset.experts or 1) + 1):  # every EP gemm_instances takes
            try:
                preset.gemm_instances(tokens, ep_choice)
            except ParameterError:
                assert ep_choice not in eps
            else:
                assert ep_choice in eps
    assert checked > 0
    # The filled shape computes what evaluate(groups=G) computes, in both models.
    instance = MODELS.get("deepseek-v3").gemm_instances(4096, 8)
    index = next(i for i, g in enumerate(instance) if g.name == "expert_down_proj")
    _choose(page, "deepseek-v3", index, 4096, 8)
    gemm = instance[index]
    case = {
        "gpu": "Test B200",
        "mode": "training",
        "recipe": "mxfp8_cublas",
        "fusion": False,
        "shape": (gemm.M, gemm.K, gemm.N),
        "groups": gemm.groups,
    }
    _assert_page(page, case, calibrated=False)
    note = page.inner_text(".ra-calc [data-role=preset-note]")
    assert "moe_layers.expert_down_proj" in note and f"{gemm.count}× per step" in note
    page.check(".ra-calc input[name=calibrated]")
    _assert_page(page, case, calibrated=True)
    query = parse_qs(urlparse(page.url).query)
    assert query["G"] == [str(gemm.groups)] and query["M"] == [str(gemm.M)]
    assert session.errors == [] and session.external == []


def _tokens_message(name: str, tokens) -> str:
    with pytest.raises(ParameterError) as err:
        MODELS.get(name).gemm_instances(tokens)
    return str(err.value)


@pytest.mark.parametrize(
    ("typed", "value"),
    # digits only, as the CLI's --tokens: "-5", "1.5" and "1e30" are quoted as typed
    [
        ("0", 0),
        ("-5", "-5"),
        ("1.5", "1.5"),
        ("1e30", "1e30"),
        ("2147483648", 2147483648),
        ("abc", "abc"),
        ("0x10", "0x10"),
        ("__proto__", "__proto__"),
        ("<img src=x onerror=alert(1)>", "<img src=x onerror=alert(1)>"),
        ("300000000", 300000000),
    ],  # deepseek-v3 routes 8 rows a token: past the limit
)
def test_refused_tokens_are_reported_and_fill_nothing(
    session: Session,  # noqa: F811
    typed: str,
    value: object,
) -> None:
    page = session.page
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    session.open(CALCULATOR)
    page.wait_for_selector("[data-column]")
    before = _shape(page)
    _choose(page, "deepseek-v3", 0, typed)
    message = page.locator(".ra-calc [data-role=preset-message] [data-kind=tokens] p").last
    assert message.inner_text() == _tokens_message("deepseek-v3", value)
    assert _shape(page) == before  # nothing filled
    assert "ra-invalid" in (page.get_attribute(".ra-calc input[name=tokens]", "class") or "")
    page.wait_for_timeout(100)  # an onerror handler would have fired by now
    assert dialogs == [] and page.locator(".ra-calc img, .ra-calc script").count() == 0
    page.fill(".ra-calc input[name=tokens]", "4096")  # a valid value clears it and fills
    assert page.locator(".ra-calc [data-role=preset-message] *").count() == 0
    assert _shape(page)[0] == MODELS.get("deepseek-v3").gemm_instances(4096)[0].M
    assert session.errors == []


def test_hostile_preset_names_are_shown_as_text(session: Session) -> None:  # noqa: F811
    """Names and labels come from a model file: a hostile one is only ever text."""
    page = session.page
    hostile = '<img src=x onerror=alert(1)>"\u202e{name}'
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    def poisoned(route) -> None:
        body = route.fetch().text()
        body = body.replace('"label": "DeepSeek-V3"', '"label": ' + _js(hostile))
        body = body.replace('"key": "moe_layers.router"', '"key": ' + _js(hostile + "k"))
        route.fulfill(body=body, content_type="text/javascript")

    page.route(re.compile(r".*/generated/calculator/data\.js$"), poisoned)
    session.open(CALCULATOR)
    page.wait_for_selector("[data-column]")
    options = page.evaluate(
        "Array.from(document.querySelectorAll("
        "'.ra-calc select[name=preset_model] option')).map(o => o.text)"
    )
    assert hostile in options
    router = next(
        i
        for i, g in enumerate(MODELS.get("deepseek-v3").gemm_instances(1))
        if g.name == "router" and g.block == "moe_layers"
    )
    _choose(page, "deepseek-v3", router, 1024)
    assert page.inner_text(".ra-calc [data-role=preset-note]").startswith(hostile)
    page.wait_for_timeout(100)
    assert dialogs == [] and page.locator("img[src=x], .ra-calc img").count() == 0
    assert session.errors == []


def _js(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


# -- hostile and mistyped G in a link -------------------------------------------------------


def _g_message(value, dim: str = "G (groups)") -> str:
    """The evaluator's (and the CLI's ``--groups``) message for ``value``."""
    with pytest.raises(RooflineError) as err:
        as_shape_array(dim, value)
    return str(err.value)


HOSTILE_G: dict[str, list[tuple[str, str]]] = {
    "G=0": [("G", _g_message(0))],
    "G=-3": [("G", _g_message("-3"))],  # digits only, as the CLI: quoted as typed
    "G=1.5": [("G", _g_message("1.5"))],
    "G=16.0": [("G", _g_message("16.0"))],  # the CLI's --groups refuses 16.0 too
    "G=1e30": [("G", _g_message("1e30"))],
    "G=2147483648": [("G", _g_message(2147483648))],
    "G=0x10": [("G", _g_message("0x10"))],
    "G=Infinity": [("G", _g_message("Infinity"))],
    "G=__proto__": [("G", _g_message("__proto__"))],
    "G=" + quote("<img src=x onerror=alert(1)>"): [
        ("G", _g_message("<img src=x onerror=alert(1)>"))
    ],
    "G=" + quote("8\u202e\n"): [("G", _g_message("8\u202e"))],
    "M=0&G=constructor": [("M", _g_message(0, "M")), ("G", _g_message("constructor"))],
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


@pytest.mark.parametrize("query", list(HOSTILE_G))
def test_bad_g_is_reported_and_ignored(watched, query: str) -> None:
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
    assert [tuple(line) for line in lines] == HOSTILE_G[query]
    page.wait_for_timeout(100)  # an onerror handler would have fired by now
    assert dialogs == []
    assert page.locator("img[src=x], .ra-calc img, .ra-calc script").count() == 0
    assert watcher.errors == [] and watcher.external == []
    # The default (G = 1, a dense layer) is used, and it still computes.
    assert page.input_value(".ra-calc input[name=G]") == "1"
    _assert_close(_read_columns(page), _columns(DEFAULT, calibrated=False), query)
    assert page.get_attribute(".ra-calc [data-role=layer]", "data-groups") == "1"


def test_typed_bad_g_names_the_dimension(watched) -> None:
    watcher, _ = watched
    page = watcher.page
    watcher.open(CALCULATOR)
    page.wait_for_selector("[data-column]")
    # typed text is checked as typed, digits only (the CLI's rule): quoted in the message
    for typed, value in (("0", 0), ("abc", "abc"), ("", ""), ("2.5", "2.5")):
        page.fill(".ra-calc input[name=G]", typed)
        message = page.locator("[data-role=message][data-kind=shape] p").last
        assert message.inner_text() == _g_message(value)
        assert page.locator(".ra-calc [data-column]").count() == 0
    page.fill(".ra-calc input[name=G]", "4")
    _assert_close(_read_columns(page), _columns({**DEFAULT, "groups": 4}, False), "G=4")
    assert watcher.errors == []


def test_valid_g_values_raise_no_alert(watched) -> None:
    watcher, _ = watched
    page = watcher.page
    # G = M (one token per expert) is the largest G the CLI accepts at the default M
    for query, groups in (("G=1", 1), ("G=%208%20", 8), ("G=", 1), ("G=16", 16), ("G=8192", 8192)):
        watcher.open(CALCULATOR + "?" + query)
        page.wait_for_selector("[data-column]")
        assert page.locator(ALERT).count() == 0, query
        want = {**DEFAULT, "groups": None if groups == 1 else groups}
        _assert_close(_read_columns(page), _columns(want, False), query)
    assert watcher.errors == []


def test_grouped_preset_screenshot(session: Session) -> None:  # noqa: F811
    """For a person to look at: a DeepSeek-V3 expert GEMM, calibrated, grouped."""
    page = session.page
    session.open(CALCULATOR + "?gpu=Test%20B200&recipe=mxfp8_cublas&calibrated=1")
    page.wait_for_selector("[data-column]")
    index = next(
        i
        for i, g in enumerate(MODELS.get("deepseek-v3").gemm_instances(1))
        if g.name == "expert_gate_proj"
    )
    _choose(page, "deepseek-v3", index, 4096, 8)
    page.wait_for_selector("[data-term^='rearrange.']")
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".ra-calc").screenshot(path=str(ARTIFACTS / "calculator-grouped-preset.png"))
    assert session.errors == []


def test_widget_that_starts_grouped_writes_g_1(session: Session) -> None:  # noqa: F811
    """A widget built with ``groups=8`` (data-groups="8") starts on a grouped layer; setting
    G to 1 writes G=1, so the link keeps the dense layer."""
    page = session.page

    def starts_grouped(route) -> None:
        # Unconditionally: a page this browser has seen is revalidated, and a 304 has no
        # body to rewrite (the test then sees the page without data-groups).
        headers = {
            k: v
            for k, v in route.request.headers.items()
            if k.lower() not in ("if-modified-since", "if-none-match")
        }
        response = route.fetch(headers=headers)
        body = response.text().replace('class="ra-calc" ', 'class="ra-calc" data-groups="8" ')
        route.fulfill(response=response, body=body)

    page.route(re.compile(r".*/calculator/(\?.*)?$"), starts_grouped)
    session.open(CALCULATOR)
    _assert_page(page, {**DEFAULT, "groups": 8}, calibrated=False)
    page.fill(".ra-calc input[name=G]", "1")
    # The document's own location: page.url learns of replaceState by a later event.
    query = urlparse(page.evaluate("location.href")).query
    assert parse_qs(query)["G"] == ["1"]
    session.open(CALCULATOR + "?" + query)
    _assert_page(page, DEFAULT, calibrated=False)
    session.open(CALCULATOR + "?G=nope")  # a bad value falls back to the widget's
    page.locator(ALERT).wait_for()
    assert page.input_value(".ra-calc input[name=G]") == "8"
    assert session.errors == []
