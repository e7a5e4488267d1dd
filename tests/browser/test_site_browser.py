"""Headless Chromium against the built small site (Debian's chromium + pip playwright).

Run: ``.venv/bin/pytest -m browser tests/browser``. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import functools
import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from browser.site_fixtures import ROOT

CHROMIUM = Path("/usr/bin/chromium")
#: How long no request may be in flight before a page counts as settled (scripts that
#: fetch after ``load`` start within a few milliseconds of it on the local server), and
#: how often that is looked at.
QUIET_S = 0.15
POLL_MS = 20
ARTIFACTS = ROOT / "test-artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGES = {
    "home": "",
    "gpu": "generated/gpus/test-b200/",
    "gpu-recipe": "generated/gpus/test-b200/training-mxfp8_cublas/",
    "methodology": "generated/methodology/",
}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install -y chromium); .ci/run installs it",
    ),
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(small_site_dir: Path) -> Iterator[str]:
    """The shared small site (tests/conftest.py), served for this module."""
    handler = functools.partial(_Quiet, directory=str(small_site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield instance
        _SharedContext.forget(instance)
        instance.close()


class _SharedContext:
    """One browser context for every :class:`Session` of a browser, site and colour
    scheme: a page in a context that loaded the site before finds the theme's scripts,
    styles and fonts in its cache, where a fresh context per test fetched and compiled
    them again (about 0.4 s of a simple browser test). Each session still has a page of
    its own, and clears the site's storage when it closes.

    The context lets requests to the site (and ``data:``/``blob:``) through and blocks
    every other, recording it with each open session; routing on the context, not the
    page, also holds the requests of the page's workers."""

    _shared: ClassVar[dict[tuple[object, str, str], _SharedContext]] = {}

    def __init__(self, browser, base_url: str, scheme: str) -> None:
        self.base = base_url
        self.sessions: list[Session] = []
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 900}, color_scheme=scheme
        )
        self.context.grant_permissions(
            ["clipboard-read", "clipboard-write"], origin=base_url.rstrip("/")
        )
        self.context.route("**/*", self._route)

    @classmethod
    def of(cls, browser, base_url: str, scheme: str) -> _SharedContext:
        """The shared context of ``browser``, ``base_url`` and ``scheme`` (made once)."""
        key = (browser, base_url, scheme)
        if key not in cls._shared:
            cls._shared[key] = cls(browser, base_url, scheme)
        return cls._shared[key]

    @classmethod
    def forget(cls, browser) -> None:
        """Drop the shared contexts of ``browser`` (it is closing): a closed browser's
        contexts are neither kept alive nor ever handed out."""
        for key in [key for key in cls._shared if key[0] is browser]:
            del cls._shared[key]

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.base) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            for session in self.sessions:
                session.external.append(url)
            route.abort()


#: Clears what the site keeps in the browser (the theme's colour-scheme choice, the
#: calculator's state) before the next session of a shared context.
CLEAR_STORAGE = "() => { localStorage.clear(); sessionStorage.clear(); }"


class Session:
    """A page that records console errors and blocks every request off 127.0.0.1 (a page
    of its own in a context shared per browser, site and scheme: :class:`_SharedContext`)."""

    def __init__(self, browser, base_url: str, scheme: str = "light") -> None:
        self.shared = _SharedContext.of(browser, base_url, scheme)
        self.context = self.shared.context
        self.base = base_url
        self.errors: list[str] = []
        self.external: list[str] = []
        self.failed: list[str] = []
        self.page = self.context.new_page()
        #: Requests sent and not yet answered or failed, and when the last one ended.
        self.in_flight: set[object] = set()
        self.last_settled_s = time.monotonic()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("request", self._sent)
        self.page.on("requestfinished", self._settled)
        self.page.on("requestfailed", self._request_failed)
        self.shared.sessions.append(self)

    def _sent(self, request) -> None:
        self.in_flight.add(request)

    def _settled(self, request) -> None:
        self.in_flight.discard(request)
        self.last_settled_s = time.monotonic()

    def _request_failed(self, request) -> None:
        """A request that failed at the network level (a missing file is a 404 response,
        which the tests check by content). Chromium fetches the favicon on its own, after
        the page has loaded and outside its network-idle wait, and the next navigation
        can cancel that fetch on a busy machine (a CI run failed on it): the browser's
        race, not the site's, so a favicon's network failure is not recorded."""
        self._settled(request)
        if request.url.endswith("/favicon.png"):
            return
        self.failed.append(f"{request.url} ({request.failure})")

    def _console(self, message) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def open(self, path: str) -> None:
        """Load ``path`` and wait until the network is quiet (:func:`wait_for_quiet`)."""
        self.page.goto(self.base + path, wait_until="load")
        self.wait_for_quiet()

    def wait_for_quiet(self, quiet_s: float = QUIET_S, timeout_s: float = 30.0) -> None:
        """Wait until no request is in flight and none ended for ``quiet_s``: what
        Playwright's ``networkidle`` waits for, but it counts 500 ms of silence, a third
        of a simple browser test's time, where this server answers in milliseconds."""
        deadline = time.monotonic() + timeout_s
        while self.in_flight or time.monotonic() - self.last_settled_s < quiet_s:
            if time.monotonic() > deadline:
                pending = sorted(r.url for r in self.in_flight)
                raise AssertionError(f"the network is not quiet after {timeout_s} s: {pending}")
            self.page.wait_for_timeout(POLL_MS)

    def close(self) -> None:
        """Close the page, the site's storage cleared first (the next session of the
        shared context starts as a first visit would; the theme keeps a colour-scheme
        choice there)."""
        from playwright.sync_api import Error as PlaywrightError

        self.shared.sessions.remove(self)
        if self.page.url.startswith(self.base):
            try:
                self.page.evaluate(CLEAR_STORAGE)
            except PlaywrightError:  # a navigation the test started destroyed the context
                self.page.wait_for_load_state("load")
                self.page.evaluate(CLEAR_STORAGE)
        self.context.clear_cookies()
        self.page.close()


@pytest.fixture()
def session(browser, base_url: str) -> Iterator[Session]:
    s = Session(browser, base_url)
    yield s
    s.close()


def _screenshot(session: Session, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    session.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("name", list(PAGES))
def test_page_renders_cleanly(session: Session, name: str) -> None:
    session.open(PAGES[name])
    page = session.page
    # Formulas: every math block rendered by KaTeX, none left as raw TeX, no errors.
    math = page.locator(".arithmatex")
    count = math.count()
    if name in ("gpu-recipe", "methodology"):
        assert count > 0
    assert page.locator(".arithmatex .katex").count() == count
    assert page.locator(".ra-math-error, .katex-error").count() == 0
    body_text = page.inner_text("article")
    for raw in ("\\frac", "\\max", "\\mathrm", "\\["):
        assert raw not in body_text, f"raw TeX {raw!r} visible on {name}"
    # Every image loaded.
    broken = page.evaluate(
        "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
        ".map(i => i.src)"
    )
    assert broken == []
    assert session.errors == [], session.errors
    assert session.external == [], session.external
    assert session.failed == [], session.failed
    _screenshot(session, f"{name}-light")


def test_dark_scheme_screenshots(browser, base_url: str) -> None:
    dark = Session(browser, base_url, scheme="dark")
    try:
        for name, path in PAGES.items():
            dark.open(path)
            _screenshot(dark, f"{name}-dark")
        assert dark.errors == [] and dark.external == []
    finally:
        dark.close()


def test_search_finds_a_gpu(session: Session) -> None:
    session.open("")
    page = session.page
    query = page.locator("input[data-md-component='search-query']")
    query.click()
    query.type("B200", delay=50)
    result = page.locator(".md-search-result__item").first
    result.wait_for(timeout=15000)
    assert "B200" in page.inner_text(".md-search-result")
    assert session.external == []


def test_copy_button_copies_the_formula(session: Session) -> None:
    session.open(PAGES["gpu-recipe"])
    page = session.page
    anchor = "f-test-b200-training-mxfp8-cublas-speedup"
    block = page.locator(f"#{anchor}")
    expected = block.locator(".ra-copy:not(.ra-cite)").get_attribute("data-latex")
    assert expected and "\\max" in expected
    block.locator(".ra-copy:not(.ra-cite)").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == expected
    assert session.errors == []


# -- the calibrated model first, torchao's beside it ----------------------------------------


def test_gpu_page_leads_with_the_calibrated_model(session: Session) -> None:
    from browser.site_fixtures import SMALL_SPECS

    from roofline import load_specs
    from roofline.analysis import guidance
    from roofline.evaluate import calibration_of

    specs = load_specs(SMALL_SPECS)
    calibration = calibration_of(specs["Test B200"], specs)
    session.open(PAGES["gpu"])
    page = session.page
    lead = page.locator("article p", has_text="at M = 8192").first.inner_text()
    assert "by the calibrated model" in lead and "torchao's model" in lead
    warning = page.locator(".admonition.warning", has_text="these estimates are uncertain")
    if guidance.has_calibration_data(calibration):
        assert warning.count() == 0
        assert page.locator("p", has_text="Calibrated model. Measured").count() == 1
    else:  # the warning names every assumed parameter, typeset by KaTeX
        assert warning.count() == 1 and warning.is_visible()
        assert warning.locator("li .katex").count() == len(calibration.assumed())
    parameters = page.locator("table", has_text="gemm_efficiency.bf16")
    assert parameters.locator(".katex").count() == len(calibration.values)
    # a decision map is the calibrated model's, and a tap opens the chart full size
    figure = page.locator("figure", has_text="Calibrated model: fastest native recipe").first
    assert figure.locator("a > img").count() == 1
    assert session.errors == []


def test_gpu_recipe_page_shows_both_models(session: Session) -> None:
    session.open(PAGES["gpu-recipe"])
    page = session.page
    headline = page.locator("article table").first
    rows = headline.locator("tbody tr")
    assert rows.nth(0).locator("td").first.inner_text() == "calibrated model"
    assert rows.nth(1).locator("td").first.inner_text() == "torchao model"
    # the column tables: calibrated tab first, torchao's a click away
    tabs = page.locator(".tabbed-set").first
    blocks = tabs.locator(".tabbed-block")
    assert blocks.nth(0).is_visible() and not blocks.nth(1).is_visible()
    tabs.locator("label", has_text="torchao model").click()
    assert blocks.nth(1).is_visible() and not blocks.nth(0).is_visible()
    assert session.errors == []


# -- capability: four states, each with its reason -------------------------------------------

STATE_WORDS = ("✓ native", "≈ emulated", "~ hypothetical", "✗ impossible")


def test_specs_matrix_shows_four_states_each_reachable_with_its_reason(session: Session) -> None:
    session.open("generated/specs/")
    page = session.page
    matrix = page.locator("article table", has_text="mxfp8_emulated").first
    cells = [c.strip() for c in matrix.locator("tbody td").all_inner_texts()]
    # Symbol and word in every cell: the state never rests on colour alone.
    assert {c for c in cells if c in STATE_WORDS} == set(STATE_WORDS)
    # The reasons table names the library or its absence, readable without hovering.
    reasons = page.locator("article table", has_text="hardware (the GPU").first
    assert reasons.locator("td", has_text="on CUDA, its GEMMs run on cuBLAS").count() > 0
    row = reasons.locator("tr", has_text="mxfp8_emulated").first
    assert "bf16 GEMMs" in row.inner_text()
    # A keyboard user reaches a cell's reason: the cell is a link to the GPU x recipe page.
    link = matrix.locator("a", has_text="≈ emulated").first
    link.focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert "training-mxfp8_emulated" in page.url
    # The page's note, then the calculator's verdict (its script) agree on the state.
    notes = page.locator(".admonition.info", has_text="Emulated: bf16 GEMMs")
    assert notes.count() == 2
    assert "dequantized data" in notes.first.inner_text()
    assert "Software: on CUDA" in notes.first.inner_text()
    assert notes.nth(1).get_attribute("data-support") == "emulated"
    assert session.errors == []


def test_gpu_page_lists_each_recipes_state_and_reason(session: Session) -> None:
    session.open("generated/gpus/test-h100/")
    page = session.page
    item = page.locator("article li", has_text="mxfp8_cublas,").first
    assert "hypothetical" in item.inner_text() and "no native mxfp8" in item.inner_text()
    assert page.locator("article li", has_text="mxfp8_emulated, emulated").count() == 1
    assert session.errors == []


# -- calculator ---------------------------------------------------------------------------

CALCULATOR = "calculator/"
REL = 1e-9


def _calculator_cases(count: int = 15) -> list[dict]:
    """Random GPU x mode x recipe x fusion x shape cases of the small spec file (fixed seed)."""
    import numpy as np
    from browser.site_fixtures import SMALL_SPECS

    from roofline import Support, classify, load_specs
    from roofline.recipes import RECIPE_LIST

    rng = np.random.default_rng(20251)
    specs = load_specs(SMALL_SPECS)
    combos = [
        (gpu, recipe, mode)
        for gpu in specs.values()
        for recipe in RECIPE_LIST
        for mode in recipe.modes
        if classify(gpu, recipe, mode).support is not Support.IMPOSSIBLE
    ]
    cases = []
    for i in rng.choice(len(combos), size=count, replace=False):
        gpu, recipe, mode = combos[i]
        m = int(rng.integers(1, 70000))
        k, n = (int(v) * 128 for v in rng.integers(1, 200, 2))
        cases.append(
            {
                "gpu": gpu.name,
                "mode": mode.value,
                "recipe": recipe.name,
                "fusion": bool(rng.integers(0, 2)),
                "shape": (m, k, n),
            }
        )
    return cases


def _expected(case: dict) -> dict[str, float]:
    import warnings

    from browser.site_fixtures import SMALL_SPECS

    from roofline import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = evaluate(
            case["gpu"],
            case["mode"],
            case["recipe"],
            *case["shape"],
            fusion=case["fusion"],
            specs=str(SMALL_SPECS),
        )
    return {k: float(v) for k, v in out.items()}


def _read_columns(page) -> dict[str, float]:
    page.wait_for_selector("[data-column]")
    return {
        c: float(v)
        for c, v in page.evaluate(
            "Array.from(document.querySelectorAll('.ra-calc [data-column]'))"
            ".map(e => [e.dataset.column, e.dataset.value])"
        )
    }


def _assert_close(got: dict[str, float], want: dict[str, float], case: dict) -> None:
    assert set(got) == set(want), (case, sorted(got), sorted(want))
    for column, value in want.items():
        assert abs(got[column] - value) <= REL * abs(value), (case, column, got[column], value)


def _query(case: dict) -> str:
    from urllib.parse import urlencode

    m, k, n = case["shape"]
    return "?" + urlencode(
        {
            "gpu": case["gpu"],
            "mode": case["mode"],
            "recipe": case["recipe"],
            "M": m,
            "K": k,
            "N": n,
            "fusion": int(case["fusion"]),
        }
    )


def test_calculator_from_query_strings_matches_evaluate(session: Session) -> None:
    for case in _calculator_cases():
        session.open(CALCULATOR + _query(case))
        _assert_close(_read_columns(session.page), _expected(case), case)
    assert session.errors == [] and session.external == [] and session.failed == []


def test_calculator_form_matches_evaluate_and_writes_the_query(session: Session) -> None:
    from urllib.parse import parse_qs, urlparse

    session.open(CALCULATOR)
    page = session.page
    page.wait_for_selector("[data-column]")
    for case in _calculator_cases()[::-1]:
        page.select_option(".ra-calc select[name=gpu]", case["gpu"])
        page.select_option(".ra-calc select[name=mode]", case["mode"])
        page.select_option(".ra-calc select[name=recipe]", case["recipe"])
        page.set_checked(".ra-calc input[name=fusion]", case["fusion"])
        for dim, value in zip("MKN", case["shape"], strict=True):
            page.fill(f".ra-calc input[name={dim}]", str(value))
        _assert_close(_read_columns(page), _expected(case), case)
        query = parse_qs(urlparse(page.url).query)
        m, k, n = case["shape"]
        assert query == {
            "gpu": [case["gpu"]],
            "mode": [case["mode"]],
            "recipe": [case["recipe"]],
            "M": [str(m)],
            "K": [str(k)],
            "N": [str(n)],
            "fusion": [str(int(case["fusion"]))],
        }
    assert session.errors == [] and session.external == []


def test_calculator_shows_the_cli_messages(session: Session) -> None:
    from browser.site_fixtures import SMALL_SPECS

    from roofline import classify, get_recipe, load_specs
    from roofline.errors import RooflineError
    from roofline.recipes import Mode

    page = session.page
    gpu = load_specs(SMALL_SPECS)["Test H100"]
    reason = classify(gpu, get_recipe("nvfp4"), Mode.INFERENCE).reason
    session.open(CALCULATOR + "?gpu=Test%20H100&mode=inference&recipe=nvfp4&M=8192&K=4096&N=4096")
    message = page.locator("[data-role=message]")
    message.wait_for()
    assert message.locator("p").last.inner_text() == reason
    assert message.get_attribute("data-kind") == "impossible"
    assert page.locator(".ra-calc [data-column]").count() == 0
    # An override that adds the missing peak makes it computable (hypothetical: not native).
    session.open(
        CALCULATOR + "?gpu=Test%20H100&mode=inference&recipe=nvfp4&M=8192&K=4096"
        "&N=4096&fp4_peak_tops=4e15"
    )
    page.wait_for_selector("[data-column]")
    assert page.get_attribute("[data-role=support]", "data-support") == "hypothetical"
    # Shape errors: the evaluator's own words.
    for query, call in (
        ("recipe=rowwise&M=0&K=4096&N=4096", ("rowwise", 0, 4096, 4096)),
        ("recipe=blockwise&M=8192&K=4000&N=4096", ("blockwise", 8192, 4000, 4096)),
    ):
        session.open(CALCULATOR + "?gpu=Test%20H100&mode=training&" + query)
        page.locator("[data-role=message]").wait_for()
        from roofline import evaluate

        with pytest.raises(RooflineError) as err:
            evaluate(gpu, "training", call[0], *call[1:])
        assert page.locator("[data-role=message] p").last.inner_text() == str(err.value)
    assert session.errors == []


def test_calculator_screenshots(browser, base_url: str) -> None:
    for scheme in ("light", "dark"):
        s = Session(browser, base_url, scheme=scheme)
        try:
            s.open(
                CALCULATOR + "?gpu=Test%20B200&mode=training&recipe=mxfp8_cublas"
                "&M=8192&K=4096&N=4096&fusion=0"
            )
            s.page.wait_for_selector("[data-column]")
            _screenshot(s, f"calculator-{scheme}")
            s.open(PAGES["gpu-recipe"])
            s.page.wait_for_selector("[data-column]")
            s.page.locator(".ra-calc").screenshot(
                path=str(ARTIFACTS / f"calculator-embedded-{scheme}.png")
            )
            assert s.errors == [] and s.external == []
        finally:
            s.close()


def test_equation_index_cite_button(session: Session) -> None:
    from roofline.model.terms import Quantity
    from roofline.publish.cite import symbolic_total
    from roofline.recipes import Mode

    session.open("equations/")
    page = session.page
    anchor = "f-training-rowwise-overhead"
    expected = symbolic_total(Mode.TRAINING, "rowwise", Quantity.OVERHEAD, False).snippet
    page.locator(f"#{anchor} .ra-cite").click()
    assert page.evaluate("navigator.clipboard.readText()") == expected
    assert page.locator(".arithmatex .katex").count() == page.locator(".arithmatex").count()
    assert session.errors == [] and session.external == []


def _best_in_python(gpu_name: str, mode: str, M: int, K: int, N: int):
    """The home picker's answer computed in Python: the native recipe with the largest
    calibrated speedup (unfused, dense) and the error band of its model."""
    import warnings

    from browser.site_fixtures import SMALL_SPECS

    from roofline import Mode, Support, classify, evaluate, get_recipe, load_specs, recipe_names
    from roofline.analysis.error_bands import model_band
    from roofline.evaluate import calibration_of
    from roofline.model.compiled import compile_model

    specs = load_specs(SMALL_SPECS)
    gpu = specs[gpu_name]
    rows = []
    for name in recipe_names(Mode(mode)):
        recipe = get_recipe(name, mode)
        if classify(gpu, recipe).support is not Support.NATIVE:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cols = evaluate(gpu, mode, recipe, M, K, N, specs=specs, calibrated=True)
        except Exception:  # a shape the recipe refuses (divisibility) does not compete
            continue
        rows.append((float(cols["r_fp8_gemm_and_ovhd_spdp"]), recipe))
    speedup, recipe = max(rows, key=lambda r: r[0])
    model = compile_model(mode, recipe, False, calibrated=True, grouped=False).model
    band = model_band(gpu, calibration_of(gpu, specs), model, float(M) * K * N)
    return recipe.name, speedup, band.fraction


def test_home_picker_answers_before_any_prose(session: Session) -> None:
    session.open(PAGES["home"])
    page = session.page
    page.wait_for_selector("[data-role=best-recipe]")
    for gpu, mode, shape in (
        ("Test B200", "training", (8192, 4096, 4096)),
        ("Test H100", "inference", (1024, 2048, 4096)),
    ):
        page.select_option(".ra-best select[name=gpu]", gpu)
        page.select_option(".ra-best select[name=mode]", mode)
        for dim, value in zip("MKN", shape, strict=True):
            page.fill(f".ra-best input[name={dim}]", str(value))
        recipe, speedup, band = _best_in_python(gpu, mode, *shape)
        assert page.locator("[data-role=best-recipe]").inner_text() == recipe
        shown = float(page.locator("[data-role=best-speedup]").get_attribute("data-value"))
        assert shown == pytest.approx(speedup, rel=1e-9)
        assert float(
            page.locator("[data-role=best-band]").get_attribute("data-band")
        ) == pytest.approx(band)
        href = page.locator(".ra-best-link").get_attribute("href")
        assert f"recipe={recipe}" in href and "calibrated=1" in href
    page.fill(".ra-best input[name=M]", "0")
    assert "positive" in page.locator(".ra-best [data-role=message]").inner_text()
    assert session.errors == [] and session.external == []


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1400, 900)])
def test_the_answer_is_on_the_first_screen(browser, base_url: str, width: int, height: int) -> None:
    """Tool first: the home picker's answer precedes the prose, and the calculator's form
    and its speedup fit the first screen (default state), at a phone's and a desktop's width."""
    session = Session(browser, base_url)
    page = session.page
    page.set_viewport_size({"width": width, "height": height})
    try:
        session.open("")
        page.wait_for_selector("[data-role=best-speedup]")
        answer = page.locator("[data-role=best-speedup]").bounding_box()
        prose = page.locator("article p strong", has_text="How much faster").bounding_box()
        assert answer["y"] + answer["height"] <= height and answer["y"] < prose["y"]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"home-first-screen-{width}.png"))
        session.open(CALCULATOR)
        page.wait_for_selector("[data-column]")
        speed = page.locator(".ra-calc-card").first.bounding_box()
        form = page.locator(".ra-calc-form").first.bounding_box()
        assert form["y"] >= 0 and speed["y"] + speed["height"] <= height
        page.screenshot(path=str(ARTIFACTS / f"calculator-first-screen-{width}.png"))
    finally:
        session.close()
