"""A model x GPU page and a model's overview in headless Chromium, on the built small site.

Llama 3.1 70B on Test B200: the totals and per-GEMM tables show, the stacked time chart
loads, the formulas are typeset, both models are a tab apart, nothing is fetched from
outside the site and the console stays clean; the page does not widen a phone's screen.
Screenshots go to ``test-artifacts/``. Run:
``.venv/bin/pytest -m browser tests/browser/test_model_page_browser.py``.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser.site_fixtures import SMALL_SPECS
from browser.test_site_browser import ARTIFACTS, CHROMIUM, Session, _Quiet, browser

from roofline.analysis.policy import plan_model
from roofline.publish import site_paths
from roofline.specs import load_specs
from site_gen.gather.models import SITE_TOKENS

__all__ = ["browser"]  # the imported fixture, used by the tests below

MODEL, GPU = "llama3.1-70b", "Test B200"
PAGE = site_paths.url_path(site_paths.model_gpu_page(MODEL, GPU))
OVERVIEW = site_paths.url_path(site_paths.model_page(MODEL))
NARROW_PX = 390

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install -y chromium); .ci/run installs it",
    ),
]


@pytest.fixture(scope="module")
def base_url(small_site_dir: Path) -> Iterator[str]:
    """The shared small site (tests/conftest.py), served for this module."""
    handler = functools.partial(_Quiet, directory=str(small_site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


def _session(browser, base_url: str, path: str, width: int = 1280) -> Session:
    session = Session(browser, base_url)
    session.page.set_viewport_size({"width": width, "height": 900})
    session.open(path)
    # Charts below the fold: make sure every image has been fetched and decoded.
    session.page.evaluate("""() => Promise.all(Array.from(document.images).map(img => {
        img.loading = 'eager';
        return img.decode().catch(() => null); }))""")
    return session


def _clean(session: Session) -> None:
    assert session.errors == [], session.errors
    assert session.external == [], session.external
    assert session.failed == [], session.failed


def _full_screenshot(page, name: str) -> None:
    """The whole page in one viewport: Chromium leaves wide scrolling blocks (formulas)
    unpainted below the fold of a full-page capture."""
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size({"width": 1280, "height": min(height, 12000)})
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 200)))")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


def test_model_gpu_page_shows_tables_chart_and_formulas(browser, base_url: str) -> None:
    session = _session(browser, base_url, PAGE)
    page = session.page
    try:
        plan = plan_model(MODEL, GPU, SITE_TOKENS, calibrated=True, specs=load_specs(SMALL_SPECS))
        best = plan.best_single()
        assert best is not None
        assert page.locator("h1").inner_text().startswith("Llama 3.1 70B on Test B200")
        # The calibrated totals table shows, its best row quoting the plan's speedup.
        totals = page.locator("article table", has_text="GEMMs in bf16").first
        assert totals.is_visible()
        row = totals.locator("tr", has_text=best.recipe).first
        assert f"{best.speedup:.2f}×" in row.inner_text()
        # Every GEMM of the step has its row in the (visible) per-GEMM table.
        gemms = page.locator("article table", has_text="best recipe").first
        gemms.scroll_into_view_if_needed()
        assert gemms.is_visible()
        assert gemms.locator("tbody tr").count() == len(plan.gemms)
        # torchao's model is one click away in each tab set.
        tabs = page.locator(".tabbed-set").first
        blocks = tabs.locator(".tabbed-block")
        tabs.locator("label", has_text="torchao model").click()
        assert blocks.nth(1).is_visible() and not blocks.nth(0).is_visible()
        # The stacked chart loaded.
        chart = page.locator("figure img[src$='img/time.svg']")
        assert chart.count() == 1
        size = chart.evaluate("img => [img.complete, img.naturalWidth, img.naturalHeight]")
        assert size[0] and size[1] > 300 and size[2] > 200, size
        # The formulas are typeset by KaTeX, none left raw.
        math = page.locator(".arithmatex")
        assert math.count() >= 4 and page.locator(".arithmatex .katex").count() == math.count()
        assert page.locator(".ra-math-error, .katex-error").count() == 0
        assert "\\frac" not in page.inner_text("article")
        _clean(session)
        _full_screenshot(page, "model-gpu.png")
    finally:
        session.close()


def test_overview_links_every_gpu(browser, base_url: str) -> None:
    session = _session(browser, base_url, OVERVIEW)
    page = session.page
    try:
        table = page.locator("article table", has_text="best recipe (calibrated)").first
        assert table.is_visible()
        links = table.locator("tbody a")
        assert links.count() == len(load_specs(SMALL_SPECS))
        with page.expect_navigation():
            table.locator("a", has_text=GPU).first.click()
        assert page.url.endswith(PAGE)
        _clean(session)
        session.open(OVERVIEW)
        _full_screenshot(page, "model-overview.png")
    finally:
        session.close()


def test_model_gpu_page_fits_a_phone(browser, base_url: str) -> None:
    session = _session(browser, base_url, PAGE, width=NARROW_PX)
    try:
        # Wide tables scroll inside their own box; the page itself never widens.
        assert session.page.evaluate("document.documentElement.scrollWidth") <= NARROW_PX
        _clean(session)
        session.page.screenshot(path=str(ARTIFACTS / "model-gpu-narrow.png"))
    finally:
        session.close()


@pytest.mark.parametrize("path", [PAGE, OVERVIEW])
def test_axe_finds_no_serious_violation(browser, base_url: str, path: str) -> None:
    from browser.axe_core import axe_violations

    session = _session(browser, base_url, path)
    try:
        violations = axe_violations(session.page)
        assert violations == [], json.dumps(violations, indent=1)
    finally:
        session.close()
