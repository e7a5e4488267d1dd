"""A full strict build of the site for the small spec file (slow: about a minute)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from browser.site_fixtures import (
    SHARED_EPOCH,
    SMALL_SPECS,
    build_small_site,
    copy_of_small_site,
    copy_of_warm_cache,
    file_tree,
    require_katex,
    shared_small_build,
)


@pytest.mark.slow
def test_strict_build_makes_every_page(small_site_dir: Path) -> None:
    site = small_site_dir  # the shared small site (tests/conftest.py), read only
    assert (site / "index.html").is_file()
    for gpu in ("test-h100", "test-b200"):
        assert (site / "generated" / "gpus" / gpu / "index.html").is_file()
        assert (site / "generated" / "gpus" / gpu / "training-rowwise" / "index.html").is_file()
    assert (site / "generated" / "katex" / "katex.min.js").is_file()
    assert (site / "search" / "search_index.json").is_file()
    html = (site / "generated" / "gpus" / "test-b200" / "index.html").read_text("utf-8")
    assert "fonts.googleapis" not in html and "cdn." not in html
    # the page leads with the calibrated model and quotes torchao's beside it
    assert "by the calibrated model" in html and "torchao&#39;s model" in html
    assert 'id="calibrated-model-parameters"' in html
    _check_api_page(site)


@pytest.mark.slow
def test_the_site_holds_no_weight_a_reader_does_not_see(small_site_dir: Path) -> None:
    """Issue 21: no two equal charts (pages link the one file), no theme source maps, cell
    alignment as Material's ``align`` attribute, and every chart a page links exists."""
    site = small_site_dir
    charts = {p: p.read_bytes() for p in site.rglob("*.svg") if "assets" not in p.parts}
    assert len(charts) > 20
    assert len(set(charts.values())) == len(charts)
    assert not list(site.rglob("*.map"))
    linked = 0
    for page in site.rglob("*.html"):
        html = page.read_text("utf-8")
        assert 'style="text-align:' not in html, page
        for src in re.findall(r'<img [^>]*src="([^"]+\.svg)"', html):
            assert (page.parent / src).resolve().is_file(), (page, src)
            linked += 1
    assert linked >= len(charts)
    shared = (
        site / "generated" / "gpus" / "test-b200" / "training-mxfp8_cublas_rceil" / "index.html"
    )
    assert 'src="../img/training-mxfp8_cublas-curves.svg"' in shared.read_text("utf-8")
    model_page = site / "generated" / "models" / "llama3-1-8b" / "test-b200" / "index.html"
    assert 'align="right"' in model_page.read_text("utf-8")


def _check_api_page(site: Path) -> None:
    """The API page (mkdocstrings, issue #22): every public name documented, its
    docstring shown, Sphinx roles shown as code, and the page in the search index."""
    import json

    import roofline

    html = (site / "api" / "index.html").read_text("utf-8")
    for name in roofline.__all__:
        if name in ("__version__", "MODEL_VERSION", "RECIPES"):
            continue
        anchor = "roofline.evaluate.evaluate" if name == "evaluate" else f"roofline.{name}"
        assert f'id="{anchor}"' in html, name
    assert "Roofline columns for every shape" in html  # evaluate's docstring
    assert ":class:" not in html and ":func:" not in html
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    locations = {doc["location"] for doc in index["docs"]}
    assert "api/#roofline.load_hf_config" in locations
    assert "api/#roofline.calibrate" in locations


def test_charts_are_deterministic() -> None:
    """The charts a GPU page draws first (its roofline, a decision map, and the heatmap,
    curves and breakdown of a calibrated GPU x recipe, with torchao's model beside it) are
    the same bytes drawn in either order: figures reused across charts carry nothing over."""
    from roofline.analysis.guidance import best_of
    from roofline.calibration.params import calibration_for
    from roofline.recipes import Mode, get_recipe
    from roofline.specs import load_specs
    from site_gen import pool
    from site_gen.charts.jobs import decision_chart, result_charts, roofline_chart
    from site_gen.gather.decisions import DecisionMap
    from site_gen.gather.dense import gather_one
    from site_gen.inputs import bundled_inputs

    specs = load_specs(SMALL_SPECS)
    gpu = specs["Test H100"]
    calibration = calibration_for(gpu, specs, bundled_inputs().calibration)
    results = {
        name: gather_one(gpu, Mode.TRAINING, get_recipe(name, Mode.TRAINING), calibration)
        for name in ("tensorwise", "rowwise")
    }
    for name, result in results.items():
        result.reference = gather_one(gpu, Mode.TRAINING, get_recipe(name, Mode.TRAINING))
    best, best_speedup = best_of(np.stack([r.heat for r in results.values()]))
    decision = DecisionMap(Mode.TRAINING, tuple(results), best, best_speedup)
    sample = [
        roofline_chart(gpu),
        decision_chart(gpu, decision),
        *result_charts(results["tensorwise"], "tensorwise"),
        *result_charts(results["rowwise"], "rowwise"),
    ]
    assert {job.kind for job in sample} == {
        "roofline",
        "decision",
        "heatmap",
        "curves",
        "breakdown",
    }
    first = [pool.draw(job)[0][1] for job in sample]
    again = [pool.draw(job)[0][1] for job in reversed(sample)][::-1]
    assert first == again
    assert all("<svg" in svg and "Date" not in svg[:400] for svg in first)


@pytest.mark.slow
def test_failed_builds_leave_the_previous_site_intact(
    tmp_path_factory, tmp_path: Path, monkeypatch
) -> None:
    from roofline import RooflineError

    require_katex()
    shared = shared_small_build(tmp_path_factory)
    site = copy_of_small_site(shared["site"], tmp_path)
    # The shared site's warm cache: the failing builds below get to mkdocs in seconds
    # (what they test is that a failure anywhere leaves the site alone).
    copy_of_warm_cache(shared, tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", SHARED_EPOCH)
    before = file_tree(site)
    broken = tmp_path / "broken.toml"
    broken.write_text(
        SMALL_SPECS.read_text().replace("bf16_peak_tops = 989e12", 'bf16_peak_tops = "fast"')
    )
    with pytest.raises(RooflineError, match="bf16_peak_tops"):
        build_small_site(tmp_path, specs=broken, cache_enabled=True)
    assert file_tree(site) == before
    # A strict-mode warning (a dead link in a hand-written page) fails in mkdocs, late.
    page = tmp_path / "root" / "docs" / "index.md"
    page.write_text(page.read_text() + "\n[dead](no-such-page.md)\n")
    with pytest.raises(RooflineError, match="stage mkdocs") as info:
        build_small_site(tmp_path, cache_enabled=True)
    assert "left exactly as it was" in str(info.value) and "\n" not in str(info.value)
    assert file_tree(site) == before
    assert not [p for p in site.parent.iterdir() if p.name.startswith(".site.")]
    assert not [
        p for p in (tmp_path / "root").iterdir() if p.name.startswith(".roofline-build.tmp")
    ]
