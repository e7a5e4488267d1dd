"""A full strict build of the site for the small spec file (slow: about a minute)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser.site_fixtures import build_small_site, require_katex


@pytest.mark.slow
def test_strict_build_makes_every_page(tmp_path: Path) -> None:
    require_katex()
    site, timings = build_small_site(tmp_path)
    assert (site / "index.html").is_file()
    for gpu in ("test-h100", "test-b200"):
        assert (site / "generated" / "gpus" / gpu / "index.html").is_file()
        assert (site / "generated" / "gpus" / gpu / "training-rowwise" / "index.html").is_file()
    assert (site / "generated" / "katex" / "katex.min.js").is_file()
    assert (site / "search" / "search_index.json").is_file()
    html = (site / "generated" / "gpus" / "test-b200" / "index.html").read_text("utf-8")
    assert "fonts.googleapis" not in html and "cdn." not in html
    assert timings["total"] > 0


@pytest.mark.slow
def test_charts_are_deterministic() -> None:
    from browser.site_fixtures import SMALL_SPECS

    from roofline.specs import load_specs
    from site_gen import pool
    from site_gen.build import generate_docs

    _pages, jobs = generate_docs(load_specs(SMALL_SPECS))
    sample = jobs[:6]
    first = [pool.draw(job)[0][1] for job in sample]
    again = [pool.draw(job)[0][1] for job in reversed(sample)][::-1]
    assert first == again
    assert all("<svg" in svg and "Date" not in svg[:400] for svg in first)
