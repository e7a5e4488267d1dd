"""Math typeset at build time, narrow screens and axe-core (WCAG 2 A/AA) on the small site.

Run: ``.venv/bin/pytest -m browser tests/browser/test_site_a11y.py``. axe-core is fetched
with ``npm pack`` into the build cache on first use (tests/browser/axe_core.py).
Screenshots (390 px and desktop, light and dark) go to ``test-artifacts/``; the
Equations page's time-to-rendered goes to ``test-artifacts/equations-typeset.json``
(reported, not asserted: speed lives in benchmarks/bench_pages.py).
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser.axe_core import axe_violations
from browser.test_site_browser import ARTIFACTS, CHROMIUM, Session, _Quiet, browser

__all__ = ["browser"]  # the imported fixture, used by the tests below

NARROW_PX = 390
PAGES = {
    "home": "",
    "equations": "equations/",
    "calculator": "calculator/?gpu=Test%20B200&mode=training&recipe=mxfp8_cublas"
    "&M=8192&K=4096&N=4096&fusion=0",
    "gpu": "generated/gpus/test-b200/",
    "gpu-recipe": "generated/gpus/test-b200/training-mxfp8_cublas/",
}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install -y chromium); .ci/run installs it",
    ),
]

#: JS: whether every math element holds KaTeX's markup and no raw TeX text of its own.
ALL_TYPESET = """() => {
  const math = Array.from(document.querySelectorAll('.arithmatex'));
  const raw = math.filter(el => !el.querySelector(':scope > .katex, :scope > .katex-display')
    || Array.from(el.childNodes).some(n => n.nodeType === 3 && /\\\\[\\[(]/.test(n.data)));
  return {count: math.length, raw: raw.map(el => el.textContent.slice(0, 80))};
}"""

#: JS: every scroll box in view has a tab stop exactly when it overflows.
IN_VIEW_FOCUSABLE_IFF_OVERFLOWING = """() => Array.from(document.querySelectorAll(
  '.md-typeset__scrollwrap, div.arithmatex')).filter(b => {
    const r = b.getBoundingClientRect();
    return r.bottom > 0 && r.top < innerHeight && r.height > 0; }).every(
  b => (b.scrollWidth > b.clientWidth + 1) === (b.getAttribute('tabindex') === '0'))"""


@pytest.fixture(scope="module")
def small_site(small_site_dir: Path) -> Iterator[tuple[Path, str]]:
    """The shared small site (tests/conftest.py) and the URL it is served at."""
    site = small_site_dir
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site, f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


def _session(browser, base_url: str, scheme: str = "light", width: int = 1280) -> Session:
    session = Session(browser, base_url, scheme=scheme)
    session.page.set_viewport_size({"width": width, "height": 900})
    return session


def _settled(session: Session, path: str) -> None:
    """Open ``path`` and let atlas.js mark the scroll boxes (one animation frame)."""
    session.open(path)
    session.page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r)))")
    if path.startswith("calculator/"):
        session.page.wait_for_selector("[data-column]")


# -- math typeset at build time ------------------------------------------------------------


def test_equations_page_is_typeset_in_the_html(browser, small_site) -> None:
    """With JavaScript off, every formula is already KaTeX's markup: nothing waits for a
    script, and no page loads KaTeX's script."""
    site, base_url = small_site
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(base_url + "equations/", wait_until="load")
        state = page.evaluate(ALL_TYPESET)
        assert state["count"] > 100 and state["raw"] == []
        scripts = page.evaluate("Array.from(document.scripts).map(s => s.src)")
        assert not [src for src in scripts if "katex" in src]
    finally:
        context.close()
    for html in site.rglob("*.html"):
        assert "katex.min.js" not in html.read_text("utf-8"), html


def test_every_sampled_page_is_fully_typeset_on_load(browser, small_site) -> None:
    session = _session(browser, small_site[1])
    try:
        timings = {}
        for name, path in {**PAGES, "methodology": "generated/methodology/"}.items():
            session.open(path)
            state = session.page.evaluate(ALL_TYPESET)
            assert state["raw"] == [], (name, state["raw"][:3])
            if name in ("equations", "gpu-recipe", "methodology"):
                assert state["count"] > 0, name
            assert session.page.locator(".katex-error, .ra-math-error").count() == 0
            if name == "equations":
                timings = session.page.evaluate(
                    "() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return {dom_content_loaded_ms: n.domContentLoadedEventEnd,"
                    " load_ms: n.loadEventEnd, formulas: document.querySelectorAll("
                    "'.arithmatex').length}; }"
                )
        assert session.errors == [] and session.external == [] and session.failed == []
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "equations-typeset.json").write_text(json.dumps(timings, indent=1))
    finally:
        session.close()


def test_the_site_works_from_file_urls(browser, small_site) -> None:
    site, _ = small_site
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((site / "equations" / "index.html").as_uri(), wait_until="load")
        state = page.evaluate(ALL_TYPESET)
        assert state["count"] > 100 and state["raw"] == []
        # Material's search cannot load its index from file:// (as before); nothing else fails.
        assert [e for e in errors if "search_index" not in e] == []
        # The KaTeX fonts load from the site's own folder.
        assert page.evaluate("document.fonts.check('16px KaTeX_Main')")
    finally:
        context.close()


# -- narrow screens ---------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_sampled_page_is_wider_than_a_phone(browser, small_site, scheme: str) -> None:
    session = _session(browser, small_site[1], scheme=scheme, width=NARROW_PX)
    try:
        for name, path in PAGES.items():
            _settled(session, path)
            width = session.page.evaluate("document.documentElement.scrollWidth")
            assert width <= NARROW_PX, (name, width)
            ARTIFACTS.mkdir(exist_ok=True)
            session.page.screenshot(path=str(ARTIFACTS / f"narrow-{name}-{scheme}.png"))
        assert session.errors == []
    finally:
        session.close()


def test_wide_boxes_scroll_inside_and_take_the_keyboard(browser, small_site) -> None:
    """A wide formula or table scrolls in its own box, a named tab stop that the arrow
    keys scroll; a box in view keeps its tab stop exactly while it overflows."""
    session = _session(browser, small_site[1], width=NARROW_PX)
    page = session.page
    try:
        _settled(session, PAGES["gpu-recipe"])
        page.wait_for_function(IN_VIEW_FOCUSABLE_IFF_OVERFLOWING)
        table = page.locator(".md-typeset__scrollwrap").first
        assert table.get_attribute("tabindex") == "0" and table.get_attribute("aria-label")
        formula = page.locator(".ra-formula .arithmatex").nth(1)  # wide: numbers substituted
        formula.scroll_into_view_if_needed()
        page.wait_for_function(IN_VIEW_FOCUSABLE_IFF_OVERFLOWING)
        assert formula.get_attribute("tabindex") == "0"
        assert formula.get_attribute("role") == "group" and formula.get_attribute("aria-label")
        formula.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("el => el.scrollLeft > 0", arg=formula.element_handle())
        # Wider: the headline table now fits and loses its tab stop; narrow again, back.
        # (A box keeps its tab stop while it has the focus, so the focus leaves first.)
        page.evaluate("document.activeElement.blur(); window.scrollTo(0, 0)")
        page.set_viewport_size({"width": 1280, "height": 900})
        page.wait_for_function("el => !el.hasAttribute('tabindex')", arg=table.element_handle())
        page.wait_for_function(IN_VIEW_FOCUSABLE_IFF_OVERFLOWING)
        page.set_viewport_size({"width": NARROW_PX, "height": 900})
        page.wait_for_function("el => el.tabIndex === 0", arg=table.element_handle())
    finally:
        session.close()


# -- axe-core ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "width"), [("light", 1280), ("light", NARROW_PX), ("dark", 1280)]
)
def test_axe_finds_no_serious_violation(browser, small_site, scheme: str, width: int) -> None:
    session = _session(browser, small_site[1], scheme=scheme, width=width)
    try:
        found = {}
        for name, path in PAGES.items():
            _settled(session, path)
            violations = axe_violations(session.page)
            if violations:
                found[name] = violations
            if width == 1280:
                ARTIFACTS.mkdir(exist_ok=True)
                session.page.screenshot(path=str(ARTIFACTS / f"a11y-{name}-{scheme}.png"))
        assert found == {}, json.dumps(found, indent=1)
    finally:
        session.close()
