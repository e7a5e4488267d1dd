"""Time-to-rendered of the Equations page in headless Chromium (not a test).

Usage: ``.venv/bin/python benchmarks/bench_pages.py [--runs N] [--baseline REV] [--site DIR]``.
Builds the browser tests' small site (tests/browser/site_fixtures.py) into a temporary
folder, serves it on 127.0.0.1 and opens the Equations page ``--runs`` times, each in a
fresh browser context (cold cache). Time-to-rendered is the time from navigation start
until every math element holds KaTeX's markup, polled on every animation frame from
DOMContentLoaded on. With ``--baseline REV``, the same site is also built from REV's
``docs/`` and ``mkdocs.yml`` (e.g. a revision that still typeset math in the browser)
and measured the same way, for comparison. ``--site DIR`` measures built sites instead.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
]
PAGE = "equations/"

#: Records in window.__raTypeset the time all math is typeset (ms since navigation start).
PROBE = """
window.__raTypeset = null;
(function () {
  function done() {
    var math = document.querySelectorAll('.arithmatex');
    if (!math.length) return false;
    for (var i = 0; i < math.length; i++) if (!math[i].querySelector('.katex')) return false;
    return true;
  }
  function tick() {
    if (done()) window.__raTypeset = performance.now(); else requestAnimationFrame(tick);
  }
  document.addEventListener('DOMContentLoaded', tick);
})();
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def build_site(folder: Path, baseline: str | None) -> Path:
    """The small site built into ``folder`` (from ``baseline``'s docs when given)."""
    from browser.site_fixtures import build_small_site, make_root

    root = make_root(folder)
    if baseline:
        # REV's hand-written docs and mkdocs.yml instead of the current ones (same generator).
        shutil.rmtree(root / "docs")
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", baseline, "docs", "mkdocs.yml"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    site, _ = build_small_site(folder)
    return site


def measure(site: Path, runs: int) -> dict[str, list[float]]:
    """``runs`` cold loads of the Equations page: typeset, DOMContentLoaded and load (ms)."""
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/{PAGE}"
    out: dict[str, list[float]] = {"typeset_ms": [], "dom_content_loaded_ms": [], "load_ms": []}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for _ in range(runs):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                page.add_init_script(PROBE)
                page.goto(url, wait_until="load")
                page.wait_for_function("window.__raTypeset !== null", timeout=60_000)
                nav = page.evaluate("performance.getEntriesByType('navigation')[0].toJSON()")
                out["typeset_ms"].append(page.evaluate("window.__raTypeset"))
                out["dom_content_loaded_ms"].append(nav["domContentLoadedEventEnd"])
                out["load_ms"].append(nav["loadEventEnd"])
                context.close()
            browser.close()
    finally:
        server.shutdown()
    return out


def report(label: str, samples: dict[str, list[float]]) -> None:
    """One line per measure: median, min and max over the runs."""
    for name, values in samples.items():
        print(
            f"{label[-24:]:<24} {name:<22} median {statistics.median(values):8.0f} ms   "
            f"min {min(values):8.0f}   max {max(values):8.0f}"
        )


def main() -> int:
    """Build, measure and print; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", metavar="REV", help="also measure REV's docs/")
    parser.add_argument(
        "--site",
        type=Path,
        action="append",
        default=[],
        help="measure this built site instead of building (repeatable)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sites = {str(s): s for s in args.site} or {
            "current": build_site(Path(tmp) / "current", None)
        }
        if args.baseline:
            sites[args.baseline] = build_site(Path(tmp) / "baseline", args.baseline)
        print(f"\nEquations page ({PAGE}), {args.runs} cold loads each:")
        for label, site in sites.items():
            report(label, measure(site, args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
