"""A site built from a hostile pull request runs nothing in a reader's browser.

The spec file below passes the lint (the lint refuses markup only in fields that never
need it, so the free-text fields carry raw HTML and script) and its only commit has a
hostile subject. Every page of the built site is opened in headless Chromium: no dialog
opens, no injected script runs, no injected element or event handler exists, no
``javascript:`` link exists, and the hostile text is shown as text. Every exported CSV
is checked for cells a spreadsheet would run as formulas.
"""

from __future__ import annotations

import csv
import functools
import http.server
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from browser.site_fixtures import build_small_site, require_katex
from browser.test_site_browser import ARGS, CHROMIUM, _Quiet

#: Sets window.__xss (or opens a dialog) if it ever runs.
SCRIPT = '<script>window.__xss = "script"; alert("script")</script>'
HANDLER = "<img src=x onerror=\"window.__xss = 'img'; alert(1)\">"
PAYLOAD = f"{SCRIPT} {HANDLER} [md](javascript:alert(2)) {{: onclick=alert(3) }} $x$ | =1+1"
#: Markup-free but Markdown-, attribute- and spreadsheet-hostile: allowed in names.
NAME = '=Evil "X1" [a](javascript:x) {: onclick=alert(5)} $x$ | &amp;'

HOSTILE_SPECS = f"""
schema_version = 1

[[gpu]]
name = {json.dumps(NAME)}
vendor = "# Vendor [v](javascript:alert(6)) {{: onclick=alert(7) }}"
architecture = "!!! danger"
sku = "=HYPERLINK(\\"https://example.com\\")"
bf16_peak_tops = 2250e12
fp8_peak_tops = 4500e12
fp4_peak_tops = 9000e12
peak_mem_bw_bytes_sec = 8e12
native_formats = ["fp8", "mxfp8", "mxfp4", "nvfp4"]
efficiency_reference = {json.dumps(PAYLOAD)}
notes = {json.dumps(PAYLOAD)}
derivation = {json.dumps(PAYLOAD)}

[[gpu.sources]]
url = "https://example.com/x?a=1&b=[y](javascript:alert(8))"
read_on = 2026-11-29
figures = ["bf16_peak_tops"]
note = {json.dumps(PAYLOAD)}

[[gpu]]
name = "Plain GPU"
bf16_peak_tops = 989e12
fp8_peak_tops = 1979e12
peak_mem_bw_bytes_sec = 3.35e12
"""
SUBJECT = "<img src=x onerror=alert(9)> Add [GPU](javascript:alert(10)) {: onclick=alert(11) }"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is absent"),
]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the hostile spec file, committed with a hostile subject."""
    require_katex()
    tmp = tmp_path_factory.mktemp("hostile")
    repo = tmp / "pr"
    repo.mkdir()
    spec = repo / "gpus.toml"
    spec.write_text(HOSTILE_SPECS, "utf-8")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.email=a@example.com", "-c", "user.name=a", "add", ".")
    _git(repo, "-c", "user.email=a@example.com", "-c", "user.name=a", "commit", "-q", "-m", SUBJECT)
    site, _ = build_small_site(tmp, specs=spec)
    return site


@pytest.fixture(scope="module")
def served(hostile_site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(hostile_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


INJECTED = """() => ({
  xss: window.__xss === undefined ? null : String(window.__xss),
  handlers: Array.from(document.querySelectorAll('*')).flatMap(el =>
      Array.from(el.attributes).filter(a => /^on/i.test(a.name))
           .map(a => el.tagName + ' ' + a.name + '=' + a.value)),
  jsLinks: Array.from(document.querySelectorAll('[href],[src],[action],[formaction]'))
      .map(el => el.getAttribute('href') || el.getAttribute('src') || '')
      .filter(u => /^\\s*(javascript|data|vbscript):/i.test(u)),
  xImages: document.querySelectorAll('img[src="x"]').length,
  scripts: Array.from(document.scripts).filter(s => /__xss|alert/.test(s.textContent)).length,
})"""


#: What the injection check does not need and each page load would spend most of its time
#: on: the search index (a worker parses it on every page; the search results are checked
#: by the search test below).
SKIPPED_LOADS = ("/search/search_index.json", "/workers/search.")
#: Loads that cannot run script in Chromium, whatever they hold: images (an SVG chart shown
#: by ``<img>`` runs none of its scripts; the files themselves are checked statically by
#: :func:`test_no_chart_carries_script`), style sheets and fonts (layout only). Skipping
#: them halves the walk; a document, frame or script is never skipped.
INERT_TYPES = ("image", "stylesheet", "font", "media")


def _only_the_page(served: str, route: Any) -> None:
    """Serve the site's own files but the inert ones and what :data:`SKIPPED_LOADS` names;
    nothing else."""
    request = route.request
    url = request.url.split("?")[0]
    if (
        url.startswith(served)
        and request.resource_type not in INERT_TYPES
        and not any(part in url for part in SKIPPED_LOADS)
    ):
        route.continue_()
    else:
        route.abort()


def test_no_page_runs_or_injects_anything(hostile_site: Path, served: str) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    pages = sorted(
        p.relative_to(hostile_site).parent.as_posix() for p in hostile_site.rglob("index.html")
    )
    assert len(pages) > 40
    dialogs: list[str] = []
    problems: list[str] = []
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context()
        context.route("**/*", functools.partial(_only_the_page, served))
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(f"{page.url}: {d.message}"), d.dismiss()))
        for path in pages:
            url = served + ("" if path == "." else path + "/")
            page.goto(url, wait_until="load")
            found = page.evaluate(INJECTED)
            if any(found.values()):
                problems.append(f"{path}: {found}")
        browser.close()
    assert dialogs == []
    assert problems == []


#: True once the search results answer ``query`` (a highlighted term starts with it) and
#: list a page whose result text holds ``name``.
LISTED = """([query, name]) => {
  const marks = Array.from(document.querySelectorAll('.md-search-result mark'));
  const items = Array.from(document.querySelectorAll('.md-search-result__item'));
  return marks.some(m => m.innerText.toLowerCase().startsWith(query))
      && items.some(item => item.innerText.includes(name));
}"""


def _search_until_listed(
    page: Any, query: str, name: str, timeout_error: type[Exception], limit_s: float = 120.0
) -> None:
    """Type ``query`` into the search box, key by key, until its results list ``name``.

    Material searches on key events, so the box is cleared and the query typed with real
    key presses (``fill`` changes the value without them: the results would still be the
    previous query's). The search worker builds its index after the page loads, slowly on
    a loaded machine, and a query typed before it is ready can go unanswered, so the
    query is typed again every 15 s until ``limit_s``.
    """
    box = page.locator("input.md-search__input")
    deadline = time.monotonic() + limit_s
    while True:
        box.click()
        page.keyboard.press("Control+A")
        page.keyboard.press("Backspace")
        box.press_sequentially(query)
        try:
            page.wait_for_function(LISTED, arg=[query, name], timeout=15_000)
            return
        except timeout_error:
            if time.monotonic() > deadline:
                raise


def test_hostile_text_is_shown_as_text(hostile_site: Path, served: str) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api")
    gpu = next(
        p
        for p in (hostile_site / "generated" / "gpus").iterdir()
        if p.is_dir() and p.name.startswith("evil")
    )
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page()
        page.goto(f"{served}generated/gpus/{gpu.name}/", wait_until="load")
        assert page.inner_text("article h1").strip().startswith(NAME)
        article = page.inner_text("article")
        assert SCRIPT in article and HANDLER in article  # shown, not run
        assert NAME in page.title()
        nav = page.inner_text("nav.md-nav--primary")
        assert NAME in nav
        page.goto(f"{served}generated/changes/", wait_until="load")
        assert SUBJECT in page.inner_text("article")
        # Search results show the indexed text and titles: still text, nothing runs.
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for query in ("vendor", "script", "onclick"):
            _search_until_listed(page, query, NAME, playwright_api.TimeoutError)
            assert not any(page.evaluate(INJECTED).values()), query
        assert dialogs == []
        browser.close()


def test_exported_csv_cells_are_never_formulas(hostile_site: Path) -> None:
    files = list(hostile_site.rglob("*.csv"))
    assert files
    risky = []
    for path in files:
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.reader(handle):
                for cell in row:
                    if cell[:1] in ("=", "+", "-", "@", "\t", "\r") and not _number(cell):
                        risky.append(f"{path.name}: {cell[:40]}")
    assert risky == []
    assert any("'=Evil" in path.read_text("utf-8") for path in files)


#: Elements that make an SVG active when a reader opens the chart's own URL.
SVG_ACTIVE_TAGS = {"script", "foreignObject", "iframe", "embed", "object", "handler"}


def _active_parts(svg: ElementTree.Element) -> list[str]:
    """The script, embedded documents, event handlers and ``javascript:`` links of ``svg``
    (parsed, so the hostile name's ``onclick=`` and ``javascript:`` as text do not count)."""
    found = []
    for element in svg.iter():
        tag = element.tag.rpartition("}")[2]
        if tag in SVG_ACTIVE_TAGS:
            found.append(tag)
        for name, value in element.attrib.items():
            local = name.rpartition("}")[2].lower()
            if local.startswith("on") or (local == "href" and "script:" in value.lower()):
                found.append(f"{tag} {local}={value[:40]}")
    return found


def test_no_chart_carries_script(hostile_site: Path) -> None:
    """Every SVG chart is well-formed, inert markup (the walk above skips images, which
    cannot run script in a page; a chart opened by its own URL could), and the hostile
    GPU name in the chart titles is text."""
    charts = {
        p.relative_to(hostile_site).as_posix(): ElementTree.parse(p).getroot()
        for p in hostile_site.rglob("*.svg")
    }
    assert len(charts) > 20
    assert {name: parts for name, svg in charts.items() if (parts := _active_parts(svg))} == {}
    shown = [name for name, svg in charts.items() if NAME in "".join(svg.itertext())]
    assert shown, "no chart shows the hostile GPU name as text"


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
