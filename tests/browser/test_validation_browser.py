"""The Validation page in headless Chromium, on the built small site.

It loads without errors; every measurement set has its section with a table and a chart
that loaded; held-out and fitted sets are marked visibly; nothing widens the page at a
phone's 390 px; axe-core finds no serious violation. Screenshots (desktop and 390 px) go
to ``test-artifacts/``. Run: ``.venv/bin/pytest -m browser tests/browser/test_validation_browser.py``.
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

from roofline.measurements import SetRole, load_measurements

__all__ = ["browser"]  # the imported fixture, used by the tests below

PATH = "generated/validation/"
NARROW_PX = 390

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (apt-get install -y chromium); .ci/run installs it",
    ),
]

#: JS: per set id, its section's tables and charts (until the next h2/h3) and whether
#: every chart loaded.
SECTIONS = """ids => ids.map(id => {
  const head = document.getElementById(id);
  if (!head) return {id, found: false};
  let tables = 0, charts = 0, loaded = 0;
  for (let el = head.nextElementSibling; el && !/^H[23]$/.test(el.tagName);
       el = el.nextElementSibling) {
    tables += el.matches('.md-typeset__scrollwrap, table') ? 1 : el.querySelectorAll('table').length;
    for (const img of el.querySelectorAll('img')) {
      charts += 1;
      loaded += img.complete && img.naturalWidth > 0 ? 1 : 0;
    }
  }
  return {id, found: head.tagName === 'H3', tables, charts, loaded};
})"""


@pytest.fixture(scope="module")
def base_url(small_site_dir: Path) -> Iterator[str]:
    """The shared small site (tests/conftest.py), served for this module."""
    handler = functools.partial(_Quiet, directory=str(small_site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


def _session(browser, base_url: str, width: int = 1280, scheme: str = "light") -> Session:
    session = Session(browser, base_url, scheme=scheme)
    session.page.set_viewport_size({"width": width, "height": 900})
    session.open(PATH)
    # Charts below the fold: make sure every image has been fetched and decoded.
    session.page.evaluate("""() => Promise.all(Array.from(document.images).map(img => {
        img.loading = 'eager';
        return img.decode().catch(() => null); }))""")
    return session


def test_every_set_has_a_table_and_a_chart_that_loaded(browser, base_url: str) -> None:
    session = _session(browser, base_url)
    try:
        ids = [s.id for s in load_measurements().sets]
        sections = session.page.evaluate(SECTIONS, ids)
        for section in sections:
            assert section["found"], section
            assert section["tables"] == 1, section
            assert section["charts"] == 1 and section["loaded"] == 1, section
        assert session.errors == [] and session.failed == [] and session.external == []
        ARTIFACTS.mkdir(exist_ok=True)
        session.page.screenshot(path=str(ARTIFACTS / "validation-desktop.png"))
    finally:
        session.close()


def test_held_out_and_fitted_sets_are_marked_visibly(browser, base_url: str) -> None:
    session = _session(browser, base_url)
    page = session.page
    try:
        measurements = load_measurements()
        for role, text in (
            (SetRole.HOLDOUT, "held out: never used to fit"),
            (SetRole.FIT, "fitted on"),
        ):
            badges = page.locator(f".ra-role-{role.value}")
            assert badges.count() == len(measurements.by_role(role))
            first = badges.first
            first.scroll_into_view_if_needed()
            assert first.is_visible() and first.inner_text().strip() == text
        # Without the permalink sign toc adds to each heading.
        headings = [
            h.replace("¶", "").strip() for h in page.locator("article h2").all_inner_texts()
        ]
        held, fitted = headings.index("Held out: never used to fit"), headings.index("Fitted on")
        assert held < fitted
    finally:
        session.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_horizontal_overflow_on_a_phone(browser, base_url: str, scheme: str) -> None:
    session = _session(browser, base_url, width=NARROW_PX, scheme=scheme)
    page = session.page
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW_PX
        page.locator("details").first.evaluate("d => { d.open = true; }")  # every value
        assert page.evaluate("document.documentElement.scrollWidth") <= NARROW_PX
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"validation-narrow-{scheme}.png"))
        assert session.errors == []
    finally:
        session.close()


@pytest.mark.parametrize("width", [1280, NARROW_PX])
def test_axe_finds_no_serious_violation(browser, base_url: str, width: int) -> None:
    session = _session(browser, base_url, width=width)
    try:
        session.page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r)))")
        violations = axe_violations(session.page)
        assert violations == [], json.dumps(violations, indent=1)
    finally:
        session.close()
