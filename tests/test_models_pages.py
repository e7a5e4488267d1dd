"""The Models section of the site: pages, numbers, escaping, chart and the strict build.

The fast tests render the section alone (:mod:`site_gen.pages.models`) from the runs of
:func:`site_gen.gather.models.gather_models` on the small spec file; the slow one builds
the whole small site with ``mkdocs build --strict`` and follows every link of a model page.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from browser.site_fixtures import SMALL_SPECS

from roofline.analysis import guidance
from roofline.analysis.error_bands import model_band
from roofline.analysis.history import SpecHistory
from roofline.analysis.policy import BF16_NAME, plan_model
from roofline.evaluate import calibration_of
from roofline.model.compiled import compile_model
from roofline.presets import load_models, parse_models
from roofline.publish import site_paths
from roofline.recipes import RECIPES
from roofline.specs import load_specs
from site_gen.cache import BuildCache
from site_gen.charts.draw.models import model_time_svg
from site_gen.charts.models import time_chart
from site_gen.gather.dense import Atlas, calibration_digest
from site_gen.gather.models import SITE_TOKENS, ModelAtlas, gather_models, site_ep
from site_gen.markup.exports import export_float as six
from site_gen.pages import models as models_page
from site_gen.pages.base import SiteInput

MODEL, GPU = "llama3.1-70b", "Test B200"


def calibrations(specs) -> dict:
    """GPU name -> its calibrated parameters (the bundled calibration file)."""
    return {g.name: calibration_of(g, specs) for g in specs.values()}


def calibration_keys(specs) -> dict[str, str]:
    """GPU name -> digest of its calibrated parameters, as :func:`site_gen.gather.dense.gather`
    passes them."""
    return {name: calibration_digest(c) for name, c in calibrations(specs).items()}


def _site(specs, models: ModelAtlas) -> SiteInput:
    """A site input carrying only what the Models section reads."""
    atlas = Atlas(specs, {}, calibrations=calibrations(specs))
    atlas.models = models
    return SiteInput(atlas, {}, SpecHistory(note="test"), {})


@pytest.fixture(scope="module")
def specs():
    return load_specs(SMALL_SPECS)


@pytest.fixture(scope="module")
def section(specs):
    """(files, charts, model atlas) of the Models section on the small spec file."""
    models = gather_models(specs, calibrations(specs), calibration_keys(specs))
    out = models_page.render(_site(specs, models))
    return out.files, out.charts, models


def test_every_preset_and_gpu_has_its_page_and_chart(section, specs) -> None:
    files, charts, _ = section
    presets = load_models()
    assert site_paths.models_index() in files
    chart_paths = {job.path for job in charts}
    for preset in presets:
        assert site_paths.model_page(preset.name) in files
        for gpu in specs.values():
            page = site_paths.model_gpu_page(preset.name, gpu.name)
            assert page in files, page
            assert page.removesuffix("index.md") + "img/time.svg" in chart_paths
    assert len(charts) == len(presets) * len(specs)


def test_nav_lists_every_model_page_and_not_its_gpu_pages(section, specs) -> None:
    from site_gen.pages.rows.models import nav_section

    files, _, models = section
    nav = nav_section(models)
    assert nav[:2] == [site_paths.models_index(), {"Model preset files": "models-format.md"}]
    # One entry per model (every page carries the whole nav); its page per GPU is linked
    # from the model's page instead.
    assert nav[2:] == [
        {preset.display_name: site_paths.model_page(preset.name)} for preset in load_models()
    ]
    for preset in load_models():
        page = files[site_paths.model_page(preset.name)]
        for gpu in specs.values():
            target = site_paths.model_gpu_page(preset.name, gpu.name)
            folder = site_paths.model_page(preset.name).removesuffix("index.md")
            assert f"]({target.removeprefix(folder)})" in page, target


def _export(files: dict[str, str], name: str) -> dict:
    folder = site_paths.model_gpu_page(MODEL, GPU).removesuffix("/index.md")
    return json.loads(files[f"{folder}/{name}.json"])


@pytest.mark.parametrize("calibrated", [True, False])
def test_numbers_are_plan_models(section, specs, calibrated: bool) -> None:
    files, _, _ = section
    plan = plan_model(MODEL, GPU, SITE_TOKENS, calibrated=calibrated, specs=specs)
    suffix = "-calibrated" if calibrated else ""
    gemms = _export(files, f"gemms{suffix}")["data"]
    assert [row[0] for row in gemms] == [g.instance.key for g in plan.gemms]
    for row, g in zip(gemms, plan.gemms, strict=True):
        best = g.times[g.best]
        assert row[1:6] == [
            g.instance.M,
            g.instance.K,
            g.instance.N,
            g.instance.groups,
            g.instance.count,
        ]
        # Times in milliseconds to six digits; speedups as the page rounds them.
        assert row[6] == six(g.times[BF16_NAME].total_s * 1e3)
        assert row[7:] == [
            g.best,
            round(g.speedup(g.best), 2),
            six(best.forward_s * 1e3),
            six(best.backward_s * 1e3),
        ]
    totals = _export(files, f"totals{suffix}")["data"]
    expected = [plan.baseline, *plan.singles(), plan.mix()]
    assert [row[0] for row in totals] == [t.recipe for t in expected]
    for row, t in zip(totals, expected, strict=True):
        band = [_band((specs[GPU], specs), t.recipe)] if calibrated else []
        assert row[1:] == [
            six(t.time.forward_s * 1e3),
            six(t.time.backward_s * 1e3),
            six(t.time.total_s * 1e3),
            round(t.speedup, 2),
            len(t.fallbacks),
            *band,
        ]
    # The headline quotes the best single recipe and the mix of this model.
    page = files[site_paths.model_gpu_page(MODEL, GPU)]
    best = plan.best_single()
    assert best is not None
    assert f"{best.speedup:.2f}×" in page and f"{plan.mix().speedup:.2f}×" in page


def test_overview_rows_are_the_best_recipes_per_gpu(section, specs) -> None:
    files, _, _ = section
    folder = site_paths.model_page(MODEL).removesuffix("/index.md")
    rows = json.loads(files[f"{folder}/gpus.json"])["data"]
    for row, gpu in zip(rows, specs.values(), strict=True):
        for offset, calibrated in ((1, True), (5, False)):
            plan = plan_model(MODEL, gpu, SITE_TOKENS, calibrated=calibrated, specs=specs)
            best = plan.best_single()
            assert best is not None
            speedup, mix = round(best.speedup, 2), round(plan.mix().speedup, 2)
            if calibrated:  # with the best recipe's cross-validated band
                want = [best.recipe, speedup, _band((gpu, specs), best.recipe), mix]
                assert row[offset : offset + 4] == want
            else:
                assert row[offset : offset + 3] == [best.recipe, speedup, mix]


def _band(gpu_specs, recipe: str) -> str:
    """The band the pages give a recipe's training numbers (— for bf16 and the mix)."""
    gpu, specs = gpu_specs
    if recipe not in RECIPES:
        return "—"
    model = compile_model("training", recipe, calibrated=True).model
    mkn = float(guidance.CANONICAL_M * guidance.CANONICAL_KN**2)  # the site's numbers' size
    band = model_band(gpu, calibration_of(gpu, specs), model, mkn)
    return f"±{band.fraction:.0%}" + ("*" if band.fallback else "")


def _links(markdown: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", markdown)


def test_links_between_model_pages_resolve(section, specs) -> None:
    """Every relative link of the section lands on a page the build writes: the section's
    own, a GPU or GPU x recipe page, or a hand-written page (mkdocs checks them too)."""
    import posixpath

    from roofline.recipes import RECIPE_LIST, Mode

    files, _, _ = section
    known = set(files)
    for gpu in specs.values():
        known.add(site_paths.gpu_page(gpu.name))
        known.update(
            site_paths.recipe_result_page(gpu.name, Mode.TRAINING, r.name) for r in RECIPE_LIST
        )
    known.update(
        {"models-format.md", "equations.md", "generated/methodology.md", "generated/gpus/index.md"}
    )
    for path, text in files.items():
        if not path.endswith(".md"):
            continue
        for link in _links(text):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), link.split("#")[0]))
            if link.startswith(("img/", "https://", "#")) or link.endswith((".csv", ".json")):
                continue
            assert target in known, f"{path}: {link}"


def test_site_ep_defaults() -> None:
    presets = load_models()
    assert site_ep(presets.get("deepseek-v3")) == 8
    assert site_ep(presets.get("qwen3-235b-a22b")) == 8
    assert site_ep(presets.get("qwen3-30b-a3b")) == 1
    assert site_ep(presets.get("llama3.1-70b")) == 1


def test_cached_runs_equal_fresh_ones(specs, tmp_path: Path) -> None:
    database = parse_models(_preset(name="tiny-moe", display="Tiny MoE"), "tiny.toml")
    cache = BuildCache(root=tmp_path, enabled=True)
    keys = calibration_keys(specs)
    first = gather_models(specs, calibrations(specs), keys, cache, models=database)
    second = gather_models(specs, calibrations(specs), keys, cache, models=database)
    assert cache.hits["model-runs"] == len(specs) and cache.misses["model-runs"] == len(specs)
    for key, run in first.runs.items():
        assert second.runs[key].calibrated.mix() == run.calibrated.mix()
        assert second.runs[key].featured == run.featured


# -- a preset file a user can edit: every text field hostile --------------------------------

HOSTILE_DISPLAY = "**Bold** [x](javascript:alert(1)) | $x$ {: onclick=y} _e_ #"
HOSTILE_NOTE = '!!! danger "pwn" [a](http://evil.example) ![i](x.png) &lt;b&gt; {{ x }}'


def _preset(name: str, display: str, note: str = "plain", url: str = "https://a.example/c") -> str:
    return textwrap.dedent(f"""\
        schema_version = 1

        [[model]]
        name = "{name}"
        display_name = {json.dumps(display)}
        notes = {json.dumps(note)}

        [[model.sources]]
        url = {json.dumps(url)}
        read_on = 2026-11-30
        note = {json.dumps(note)}

        [[model.block]]
        name = "layers"
        layers = 2
        experts = 8
        top_k = 2

        [[model.block.gemm]]
        name = "q_proj"
        K = 1024
        N = 1024
        note = {json.dumps(note)}

        [[model.block.gemm]]
        name = "expert_up"
        K = 1024
        N = 2048
        kind = "expert"
        """)


def test_hostile_preset_text_is_escaped(specs) -> None:
    url = "https://evil.example/a)](javascript:alert(1))"
    database = parse_models(_preset("evil-model", HOSTILE_DISPLAY, HOSTILE_NOTE, url), "x.toml")
    models = gather_models(specs, calibrations(specs), calibration_keys(specs), models=database)
    site = _site(specs, models)
    out = models_page.render(site)
    pages = {p: t for p, t in out.files.items() if p.endswith(".md")}
    assert len(pages) == 1 + 1 + len(specs)
    for path, text in pages.items():
        # An external link's href holds the URL as it is, quoted in an HTML attribute.
        body = re.sub(r'href="[^"]*"', "", text.split("---", 2)[2])
        for raw in (
            "**Bold**",
            "[x](javascript",
            "$x$",
            "{: onclick",
            "!!! danger",
            "![i]",
            "&lt;b&gt;",
            "{{ x }}",
            "_e_",
            "](javascript",
        ):
            assert raw not in body, (path, raw)
        assert "&#42;&#42;Bold&#42;&#42;" in body  # shown verbatim, as character references
    overview = pages[site_paths.model_page("evil-model")]
    # The URL is one link whose href is the URL, quoted: nothing of it becomes Markdown.
    assert 'href="https://evil.example/a)](javascript:alert(1))"' in overview
    # Titles in the front matter stay inside their quotes.
    for text in pages.values():
        title = text.splitlines()[1]
        assert title.startswith('title: "') and title.count('"') == 2
    # The nav carries the display name escaped too (mkdocs prints titles as they are).
    from site_gen.pages.rows.models import nav_section

    nav = json.dumps(nav_section(models))
    assert "**Bold**" not in nav and "[x](" not in nav
    chart = time_chart(models.run("evil-model", GPU), "x.svg")
    svg = model_time_svg(**chart.kwargs)
    assert "<svg" in svg and "javascript:alert" in svg and "<a " not in svg


def test_gpu_without_a_native_recipe_gets_a_bf16_page() -> None:
    bundled = load_specs()
    a100 = next(g for g in bundled.values() if g.name.startswith("NVIDIA A100"))
    from site_gen.gather.models import _run

    preset = load_models().get("qwen3-30b-a3b")
    run = _run(preset, a100, bundled, site_ep(preset), calibration_of(a100, bundled))
    models = ModelAtlas((preset,), (a100,), {(preset.name, a100.name): run})
    out = models_page.model_gpu(_site(bundled, models), run)
    page = out.files[site_paths.model_gpu_page(preset.name, a100.name)]
    assert run.calibrated.recipes == () and run.calibrated.mix().speedup == 1.0
    assert '!!! note "bf16 only"' in page
    assert "runs no training recipe natively" in page
    # Each training recipe says why it is not a candidate.
    assert "**tensorwise**, not computable" in page or "**tensorwise**, hypothetical" in page
    svg = model_time_svg(**out.charts[0].kwargs)
    assert "best per-GEMM mix" not in svg  # bf16 only: no mix bar repeating it


def test_chart_shows_every_recipe_and_the_torchao_total(section) -> None:
    _, charts, models = section
    run = models.run(MODEL, GPU)
    job = next(j for j in charts if j.path.startswith(site_paths.model_dir(MODEL) + "/test-b200"))
    assert job.kwargs["bars"] == ["bf16", *run.calibrated.recipes, "best per-GEMM mix"]
    assert job.kwargs["seconds"].sum(axis=1)[0] == pytest.approx(
        run.calibrated.baseline.time.total_s
    )
    assert job.kwargs["reference_s"][0] == run.torchao.baseline.time.total_s
    svg = model_time_svg(**job.kwargs)
    for label in ("bf16", "mxfp4_cutlass", "torchao model: total", "gate_proj"):
        assert label in svg


# -- the whole small site, strict --------------------------------------------------------------


@pytest.mark.slow
def test_strict_build_has_the_models_section(small_site_dir: Path) -> None:
    site = small_site_dir  # the shared small site (tests/conftest.py), read only
    page = site / "generated" / "models" / "llama3-1-70b" / "test-b200"
    html = (page / "index.html").read_text("utf-8")
    assert "Llama 3.1 70B on Test B200" in html
    svg = (page / "img" / "time.svg").read_text("utf-8")
    assert svg.startswith("<?xml") and "mxfp4_cutlass" in svg
    assert (site / "generated" / "models" / "index.html").is_file()
    assert (site / "models-format" / "index.html").is_file()
    # Every link of the page lands on a file of the site.
    for href in re.findall(r'href="([^"]*)"', html):
        href = href.split("#")[0]
        if not href or ":" in href:  # in-page anchors, and the sources' external links
            continue
        target = (page / href).resolve()
        if target.is_dir():
            target = target / "index.html"
        assert target.is_file(), href
    nav = (site / "index.html").read_text("utf-8")
    assert "Models" in nav
