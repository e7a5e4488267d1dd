"""Headless Chromium against the built small site (Debian's chromium + pip playwright).

Run: ``.venv/bin/pytest -m browser tests/browser``. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser.site_fixtures import ROOT, build_small_site, require_katex

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
PAGES = {
    "home": "",
    "gpu": "generated/gpus/test-b200/",
    "gpu-recipe": "generated/gpus/test-b200/training-mxfp8_cublas/",
    "methodology": "generated/methodology/",
}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent "
                       "(apt-get install -y chromium); .ci/run installs it"),
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_katex()
    site, _ = build_small_site(tmp_path_factory.mktemp("browser"))
    handler = functools.partial(_Quiet, directory=str(site))
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
        instance.close()


class Session:
    """A page that records console errors and blocks every request off 127.0.0.1."""

    def __init__(self, browser, base_url: str, scheme: str = "light") -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900},
                                           color_scheme=scheme)
        self.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                       origin=base_url.rstrip("/"))
        self.base = base_url
        self.errors: list[str] = []
        self.external: list[str] = []
        self.failed: list[str] = []
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("requestfailed", lambda req: self.failed.append(req.url))
        self.context.route("**/*", self._route)

    def _console(self, message) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.base) or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def open(self, path: str) -> None:
        self.page.goto(self.base + path, wait_until="load")
        self.page.wait_for_load_state("networkidle")

    def close(self) -> None:
        self.context.close()


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
    expected = block.locator(".ra-copy").get_attribute("data-latex")
    assert expected and "\\max" in expected
    block.locator(".ra-copy").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == expected
    assert session.errors == []
