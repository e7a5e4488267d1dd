"""The grouped-GEMM (MoE) pages: one per GPU x training recipe, both models' numbers,
the formulas sympy printed, escaped data.

Every expectation is computed through the public API (``evaluate(..., groups=G)``,
``calibration_of``, ``build_model(grouped=True)``, ``roofline.publish.latex``): no number is typed
here. Pages are rendered alone from a stub site input (no mkdocs); the full build is the
golden and browser tests' job.
"""

from __future__ import annotations

import csv
import dataclasses
import html
import html.parser
import io
import json
import types
from pathlib import Path

import markdown
import pytest

from roofline import units
from roofline.evaluate import calibration_of, evaluate
from roofline.model.build import build_model
from roofline.model.grouped import rearrange_kernels
from roofline.model.terms import Quantity
from roofline.publish import site_paths
from roofline.publish.latex import instantiated, symbolic
from roofline.recipes import RECIPE_LIST, Mode
from roofline.specs import SpecDatabase, load_specs
from roofline.symbols import CALIBRATION_SYMBOLS
from site_gen import config
from site_gen.gather.dense import calibration_digest
from site_gen.gather.grouped import (
    CACHE_KIND,
    DEFAULT_TOKENS,
    GROUPED_MODES,
    GROUPS,
    TOKENS,
    expert_shapes,
    formula_terms,
    gather_grouped,
    gather_grouped_one,
)
from site_gen.markup import safe
from site_gen.markup.exports import export_float
from site_gen.pages import grouped, nav
from site_gen.pages.rows.grouped import part_of

ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "tests" / "data" / "site_small_specs.toml"
EXTENSIONS = [
    "tables",
    "toc",
    "admonition",
    "attr_list",
    "md_in_html",
    "pymdownx.details",
    "pymdownx.superfences",
    "pymdownx.arithmatex",
]
SPEEDUP = "r_fp8_gemm_and_ovhd_spdp"
#: Markup-free but Markdown-, attribute- and spreadsheet-hostile (allowed in GPU names).
NAME = '=Evil "X1" [a](javascript:x) {: onclick=alert(5)} $x$ | &amp; <b>'
PAYLOAD = (
    '<script>window.__xss = 1</script> <img src=x onerror="alert(1)"> '
    "[md](javascript:alert(2)) {: onclick=alert(3) } $x$ | =1+1"
)


def _site(specs: SpecDatabase, results: dict) -> types.SimpleNamespace:
    """The part of SiteInput the grouped and nav pages read."""
    calibrations = {g.name: calibration_of(g, specs) for g in specs.values()}
    atlas = types.SimpleNamespace(
        specs=specs,
        gpus=list(specs.values()),
        grouped=results,
        calibration=calibrations.__getitem__,
        for_gpu=lambda gpu, mode, calibrated=False: [],
        models=None,
    )
    return types.SimpleNamespace(atlas=atlas)


@pytest.fixture(scope="module")
def specs() -> SpecDatabase:
    return load_specs(SMALL)


@pytest.fixture(scope="module")
def results(specs):
    calibrations = {g.name: calibration_of(g, specs) for g in specs.values()}
    keys = {name: calibration_digest(c) for name, c in calibrations.items()}
    return gather_grouped(specs, calibrations, keys)


@pytest.fixture(scope="module")
def pages(specs, results) -> dict[str, str]:
    site = _site(specs, results)
    files: dict[str, str] = {}
    for result in results.values():
        files.update(grouped.render(site, result).files)
    return files


def _page(result) -> str:
    return site_paths.grouped_result_page(result.gpu.name, result.mode, result.recipe.name)


def _table(text: str, header_start: str) -> list[list[str]]:
    """The Markdown table whose header row starts with ``header_start``, as cell text."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(header_start))
    rows = []
    for line in lines[start:]:
        line = line.strip()
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return [rows[0], *rows[2:]]


# -- every page, with its capability --------------------------------------------------


def test_every_gpu_x_training_recipe_has_a_grouped_page(specs, results, pages) -> None:
    assert GROUPED_MODES == (Mode.TRAINING,)
    want = {
        (g, Mode.TRAINING, r.name) for g in specs for r in RECIPE_LIST if Mode.TRAINING in r.plans
    }
    assert set(results) == want
    for result in results.values():
        path = _page(result)
        assert (
            path == f"generated/gpus/{config.slug(result.gpu.name)}/grouped/training-"
            f"{result.recipe.name}.md"
        )
        text = pages[path]
        assert result.capability.support.value in {
            "native",
            "emulated",
            "hypothetical",
            "impossible",
        }
        if not result.computable:
            assert "Not computable on this GPU" in text and "## Speedup" not in text
        else:
            assert "## Speedup over the expert count" in text and "## Formulas" in text


def test_grouped_capability_is_the_grouped_verdict(results) -> None:
    from roofline.capability import classify

    for result in results.values():
        want = classify(result.gpu, result.recipe, result.mode, grouped=True)
        assert result.capability == want
    # The fp8-only GPU cannot run fp4 at all; the rowwise grouped kernel is Hopper-only.
    assert not results[("Test H100", Mode.TRAINING, "nvfp4")].computable
    b200_rowwise = results[("Test B200", Mode.TRAINING, "rowwise")]
    assert b200_rowwise.capability.support.value == "hypothetical"


def test_shapes_come_from_the_presets() -> None:
    from roofline.presets import LinearKind, load_models

    shapes = expert_shapes()
    wanted = {
        (g.K, g.N)
        for p in load_models()
        for b in p.blocks
        for g in b.gemms
        if g.kind is LinearKind.EXPERT
    }
    assert {(s.K, s.N) for s in shapes} <= wanted
    deepseek = next(s for s in shapes if s.model == "deepseek-v3")
    assert (deepseek.K, deepseek.N, deepseek.top_k, deepseek.experts) == (7168, 2048, 8, 256)
    assert len({s.model for s in shapes}) == len(shapes) >= 4


# -- both models' numbers ---------------------------------------------------------------


# The grouped verdicts of nvfp4 and rowwise on B200 are hypothetical: evaluate says so.
@pytest.mark.filterwarnings("ignore::roofline.capability.CapabilityWarning")
@pytest.mark.parametrize("recipe", ["mxfp8_cublas", "nvfp4", "rowwise"])
def test_speedup_table_is_evaluate_with_groups_in_both_models(
    specs, results, pages, recipe
) -> None:
    result = results[("Test B200", Mode.TRAINING, recipe)]
    text = pages[_page(result)]
    # One tab per token count, the default first, each table exported under its count.
    tabs = [line for line in text.splitlines() if line.startswith('=== "')]
    assert tabs[: len(TOKENS)] == [
        f'=== "{t} tokens per device"' for t in sorted(TOKENS, key=lambda t: t != DEFAULT_TOKENS)
    ]
    folder = _page(result).removesuffix(".md")
    for tokens in TOKENS:
        rows = list(csv.reader(io.StringIO(pages[f"{folder}/speedup-over-groups-{tokens}.csv"])))
        assert rows[0] == ["G", *(s.title for s in expert_shapes())]
        assert [r[0] for r in rows[1:]] == [str(g) for g in GROUPS]
        for row, groups in zip(rows[1:], GROUPS, strict=True):
            for cell, shape in zip(row[1:], expert_shapes(), strict=True):
                if not shape.allows(groups):
                    assert cell == units.MISSING
                    continue
                want = [
                    evaluate(
                        "Test B200",
                        "training",
                        recipe,
                        shape.routed_m(tokens),
                        shape.K,
                        shape.N,
                        specs=specs,
                        calibrated=calibrated,
                        groups=groups,
                    )[SPEEDUP]
                    for calibrated in (True, False)
                ]
                shown = f"{units.speedup(float(want[0]))} ({units.speedup(float(want[1]))})"
                assert cell == shown, (shape.model, tokens, groups)
                assert f"**{units.speedup(float(want[0]))}** (" in text


def test_one_group_is_the_dense_layer(specs, results) -> None:
    result = results[("Test B200", Mode.TRAINING, "mxfp8_cublas")]
    g1 = GROUPS.index(1)
    for i, shape in enumerate(result.shapes):
        for model in (result, result.torchao):
            dense = evaluate(
                "Test B200",
                "training",
                "mxfp8_cublas",
                [shape.routed_m(t) for t in TOKENS],
                shape.K,
                shape.N,
                specs=specs,
                calibrated=model.calibrated,
            )[SPEEDUP]
            assert model.times[i].speedup[:, g1] == pytest.approx(dense, rel=1e-12)


def test_parts_sum_to_the_totals_and_break_out_the_grouped_terms(results) -> None:
    result = results[("Test B200", Mode.TRAINING, "mxfp8_cublas")]
    parts = {part_of(k).name for k in result.times[0].terms}
    assert parts == {
        "BF16",
        "GEMM_2D3D",
        "GEMM_2D2D",
        "ACTIVATION_CASTS",
        "WEIGHT_CASTS",
        "REARRANGE",
    }
    for times in (t for r in (result, result.torchao) for t in r.times):
        bf16 = sum(v for k, v in times.terms.items() if part_of(k).name == "BF16")
        lowp = sum(v for k, v in times.terms.items() if part_of(k).name != "BF16")
        assert bf16 == pytest.approx(times.totals[Quantity.BF16_GEMM.value], rel=1e-12)
        assert bf16 / lowp == pytest.approx(times.speedup, rel=1e-12)
        g1 = GROUPS.index(1)
        rearrange = sum(v for k, v in times.terms.items() if k.startswith("rearrange."))
        assert (rearrange[:, g1] == 0).all() and (rearrange[:, g1 + 1 :] > 0).all()


def test_part_tables_quote_the_terms_at_the_default_tokens(results, pages) -> None:
    result = results[("Test B200", Mode.TRAINING, "mxfp8_cublas")]
    text = pages[_page(result)]
    deepseek = next(i for i, s in enumerate(result.shapes) if s.model == "deepseek-v3")
    folder = _page(result).removesuffix(".md")
    rows = list(csv.reader(io.StringIO(pages[f"{folder}/parts-deepseek-v3.csv"])))
    shape = result.shapes[deepseek]
    allowed = [g for g in GROUPS if shape.allows(g)]
    assert rows[0] == ["µs", *(f"G={g}" for g in allowed)]
    t = TOKENS.index(DEFAULT_TOKENS)
    times = result.times[deepseek]
    labels = {r[0]: r[1:] for r in rows[1:]}
    for label, prefix in (
        ("3D weight casts", "cast.weight."),
        ("scale rearrangements", "rearrange."),
        ("2D-2D GEMM (grad_weight)", "gemm.grad_weight.lowp"),
    ):
        want = sum(v for k, v in times.terms.items() if k.startswith(prefix))
        for cell, g in zip(labels[label], allowed, strict=True):
            assert float(cell.replace(",", "")) == pytest.approx(
                want[t, GROUPS.index(g)] * 1e6, rel=1e-3
            )
    ref = result.torchao.times[deepseek]
    assert labels["speedup (calibrated)"] == [
        units.speedup(float(times.speedup[t, GROUPS.index(g)])) for g in allowed
    ]
    assert labels["speedup (torchao)"] == [
        units.speedup(float(ref.speedup[t, GROUPS.index(g)])) for g in allowed
    ]
    assert "parts-deepseek-v3.csv" in text


def test_terms_export_has_every_term_in_both_models_to_six_digits(results, pages) -> None:
    result = results[("Test H100", Mode.TRAINING, "blockwise")]
    folder = _page(result).removesuffix(".md")
    data = json.loads(pages[f"{folder}/terms.json"])
    records = [dict(zip(data["columns"], row, strict=True)) for row in data["data"]]
    models = {r["model"] for r in records}
    assert models == {"calibrated", "torchao"}
    for i, shape in enumerate(result.shapes):
        for r in (result, result.torchao):
            if r.times[i].skipped:
                continue
            model = "calibrated" if r.calibrated else "torchao"
            mine = [
                x
                for x in records
                if x["K"] == shape.K and x["N"] == shape.N and x["model"] == model
            ]
            assert len(mine) == len(TOKENS) * len(GROUPS)
            for x in mine:
                t, g = TOKENS.index(x["tokens/device"]), GROUPS.index(x["G"])
                for key, value in r.times[i].terms.items():
                    assert x[key] == export_float(float(value[t, g]))


def test_a_shape_the_recipe_cannot_take_says_why(results, pages) -> None:
    # blockwise needs K and N in multiples of 128: gpt-oss's 2880 is not.
    result = results[("Test H100", Mode.TRAINING, "blockwise")]
    text = html.unescape(pages[_page(result)])
    gptoss = next(i for i, s in enumerate(result.shapes) if s.model == "gpt-oss-120b")
    assert result.times[gptoss].skipped
    assert "Not computable: gpt-oss-120b expert_gate_proj: recipe blockwise needs" in text
    table = _table(text, "| G |")
    column = table[0].index("gpt-oss-120b")
    assert [r[column] for r in table[1:]] == [units.MISSING] * len(GROUPS)


# -- measured vs assumed --------------------------------------------------------------


def test_parameters_carry_basis_and_source(specs, results, pages) -> None:
    bundled = load_specs()
    b200 = bundled["NVIDIA B200"]
    params = calibration_of(b200, bundled)
    result = gather_grouped_one(
        b200, Mode.TRAINING, results[("Test B200", Mode.TRAINING, "mxfp8_cublas")].recipe, params
    )
    result.reference = gather_grouped_one(b200, Mode.TRAINING, result.recipe)
    site = _site(bundled, {})
    text = grouped.render(site, result).files[_page(result)]
    rows = {r[0]: r for r in _table(text, "| parameter")[1:]}
    for key in (
        "grouped_efficiency.2d3d",
        "grouped_efficiency.2d2d",
        "cast_efficiency.rearrange",
        "cast_efficiency.rearrange_k",
    ):
        hw = next(h for h in CALIBRATION_SYMBOLS if h.spec_key == key)
        value = params.values[key]
        row = rows[f"${hw.latex}$"]
        assert row[3] == value.basis.value == "measured"
        assert "(../../../validation.md#m4-b200-mxfp8-moe" in row[4]  # the M4 sets, linked
    assert "Grouped efficiency assumed" not in text
    # A GPU without grouped measurements says its rho is assumed.
    small = pages[_page(results[("Test B200", Mode.TRAINING, "mxfp8_cublas")])]
    assert "Grouped efficiency assumed" in small
    for word in ("bf16 grouped GEMMs", "Balanced routing", "G = 1 is the dense layer"):
        assert word in small


# -- formulas ---------------------------------------------------------------------------


@pytest.mark.parametrize("recipe", ["mxfp8_cublas", "nvfp4"])
def test_formulas_are_what_sympy_printed(specs, results, pages, recipe) -> None:
    result = results[("Test B200", Mode.TRAINING, recipe)]
    text = pages[_page(result)]
    gpu, params = result.gpu, calibration_of(result.gpu, specs)
    terms = formula_terms(Mode.TRAINING, result.recipe)
    assert {t.key for t in terms} >= {
        "gemm.output.lowp",
        "gemm.grad_weight.lowp",
        "cast.weight.1",
        "rearrange.grad_weight.lhs",
    }
    for term in terms:
        for latex in (symbolic(term.expr), instantiated(term.expr, gpu, params)):
            assert f"= {html.escape(latex, quote=False)}\\]" in text, term.key
    assert r"\rho_{\mathrm{2D3D}}" in text and r"\rho_{\mathrm{2D2D}}" in text
    assert r"G &gt; 1" in text  # the Piecewise: grouped-only for more than one group
    assert "equations.md#grouped-gemms" in text  # torchao's grouped terms are there
    anchors = [
        line.split('id="')[1].split('"')[0]
        for line in text.splitlines()
        if 'class="ra-formula"' in line
    ]
    assert len(anchors) == len(set(anchors)) == 2 * len(terms)


# -- links and navigation ---------------------------------------------------------------


def test_nav_lists_each_gpu_page_and_leaves_its_leaves_to_it(specs, results) -> None:
    # The nav lists one entry per GPU page (every page carries the whole nav); the GPU's
    # recipe pages are linked from the GPU page, its grouped pages from the recipe pages.
    tree = nav.nav(_site(specs, results))
    assert tree["GPUs"][1:] == [{str(safe.md_text(gpu)): site_paths.gpu_page(gpu)} for gpu in specs]
    assert "grouped" not in json.dumps(tree)


# -- escaping ---------------------------------------------------------------------------


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend((tag, name, value) for name, value in attrs)


def test_hostile_spec_text_stays_text(specs) -> None:
    base = specs["Test B200"]
    evil = dataclasses.replace(
        base,
        name=NAME,
        efficiency_reference=PAYLOAD,
        grouped_software_gaps={"mxfp8_cublas": PAYLOAD},
    )
    db = SpecDatabase({evil.name: evil, "Test H100": specs["Test H100"]}, "hostile")
    params = calibration_of(evil, db)
    recipe = next(r for r in RECIPE_LIST if r.name == "mxfp8_cublas")
    result = gather_grouped_one(evil, Mode.TRAINING, recipe, params)
    result.reference = gather_grouped_one(evil, Mode.TRAINING, recipe)
    assert result.capability.support.value == "hypothetical"  # the hostile gap is quoted
    out = grouped.render(_site(db, {}), result)
    text = out.files[_page(result)]
    body = text.split("---", 2)[2]
    rendered = markdown.markdown(
        body, extensions=EXTENSIONS, extension_configs={"pymdownx.arithmatex": {"generic": True}}
    )
    tags = _Tags()
    tags.feed(rendered)
    assert "script" not in tags.tags and "img" not in tags.tags and "b" not in tags.tags
    assert not [a for a in tags.attrs if a[1].startswith("on")]
    assert not [
        a
        for a in tags.attrs
        if a[1] == "href" and (a[2] or "").strip().lower().startswith("javascript:")
    ]
    assert "window.__xss" in html.unescape(rendered)  # shown as text, not dropped
    title = text.splitlines()[1]
    assert title.startswith('title: "') and title.count('"') == 2  # front matter intact
    for path, data in out.files.items():
        if path.endswith(".csv"):
            for row in csv.reader(io.StringIO(data)):
                assert not any(c.startswith(("=", "+", "-", "@")) for c in row if c), path


def test_every_table_shown_has_its_exports(results, pages) -> None:
    for result in results.values():
        if not result.computable:
            continue
        text = pages[_page(result)]
        tables = sum(
            1
            for line in text.splitlines()
            if line.strip().startswith("|---") or line.strip().startswith("|--")
        )
        links = text.count("Download: [CSV](")
        assert tables == links, _page(result)
        folder = _page(result).removesuffix(".md")
        exported = {p for p in pages if p.startswith(folder + "/")}
        assert f"{folder}/terms.csv" in exported and f"{folder}/terms.json" in exported
        has_rearrangements = bool(rearrange_kernels(result.mode, result.recipe))
        assert (f"{folder}/rearrangements.csv" in exported) == has_rearrangements


# -- the Equations and Methodology pages -------------------------------------------------


def _index_site(specs: SpecDatabase) -> types.SimpleNamespace:
    """The part of SiteInput the Equations and Methodology pages read."""
    from site_gen.markup.formulas import symbolic_formulas

    symbolic = {
        (m.value, r.name): symbolic_formulas(m, r.name)
        for m in config.MODES
        for r in RECIPE_LIST
        if m in r.plans
    }
    from roofline.evaluate import calibration_of
    from site_gen.gather.dense import Atlas

    calibrations = {g.name: calibration_of(g, specs) for g in specs.values()}
    atlas = Atlas(specs, {}, calibrations=calibrations)
    return types.SimpleNamespace(atlas=atlas, symbolic=symbolic)


def test_equations_page_has_the_grouped_terms_and_nvfp4_kernels(specs) -> None:
    from site_gen.markup.grouped_formulas import grouped_formulas, nvfp4_training_formulas
    from site_gen.pages import equations

    text = equations.render(_index_site(specs)).files["generated/_snippets/equations.md.txt"]
    heads = [
        text.index(h)
        for h in (
            "## Calibrated model",
            "## Grouped GEMMs",
            "## NVFP4 training",
            "## training / tensorwise",
        )
    ]
    assert heads == sorted(heads)
    grouped = grouped_formulas()
    nvfp4 = nvfp4_training_formulas()
    for f in (*grouped.values(), *nvfp4.values()):
        assert f'id="{f.anchor}"' in text and html.escape(f.latex, quote=False) in text
    # The grouped terms are the built model's (torchao's and the calibrated one).
    for calibrated in (False, True):
        model = build_model(Mode.TRAINING, "mxfp8_cublas", calibrated=calibrated, grouped=True)
        printed = {symbolic(t.expr) for t in model.terms}
        picked = [f for name, f in grouped.items() if name.startswith("calibrated") == calibrated]
        assert picked and all(f.latex in printed for f in picked)
    # 2D-3D and 2D-2D, rho per layout, the Piecewise on G > 1, the K-group step latency.
    latex = " ".join(f.latex for f in grouped.values())
    for part in (
        r"\rho_{\mathrm{2D3D}}",
        r"\rho_{\mathrm{2D2D}}",
        r"\text{for}\: G > 1",
        r"t_{\mathrm{rearr,K}}",
        "G K N",
    ):
        assert part in latex, part
    kernels = " ".join(f.latex for f in nvfp4.values())
    for kind in ("RHT,amax", "RHT,cast", "RHT,SR", "fp4,tile"):
        assert rf"\eta_{{\mathrm{{{kind}}}}}" in kernels, kind


def test_methodology_explains_grouped_gemms_and_nvfp4_training(specs) -> None:
    from roofline.measurements import load_measurements
    from site_gen.pages import methodology

    bundled = load_specs()
    text = methodology.render(_index_site(bundled)).files[methodology.PAGE]
    grouped = text[
        text.index("## Grouped GEMMs (mixture of experts)") : text.index("## NVFP4 training")
    ]
    nvfp4 = text[text.index("## NVFP4 training") : text.index("## Kernel-by-kernel traffic")]
    sets = load_measurements().sets
    for s in sets:
        if s.groups:  # M3 and M4: the grouped layer's kernels, each linked
            assert f"(validation.md#{s.id})" in grouped, s.id
        if s.recipe == "nvfp4" and s.mode is Mode.TRAINING:  # M5
            assert f"(validation.md#{s.id})" in nvfp4, s.id
    for b200 in (bundled["NVIDIA B200"], bundled["NVIDIA H100 SXM"]):
        values = calibration_of(b200, bundled).values
        rho = ", ".join(
            f"{values[k].value:.3g}" for k in ("grouped_efficiency.2d3d", "grouped_efficiency.2d2d")
        )
        assert f"{b200.name}](gpus/" in grouped and f"({rho})" in grouped
    for word in (
        "Routing is balanced",
        "G = 1 is the dense layer",
        "<code>torch.&#95;grouped_mm</code>",
    ):
        assert word in grouped, word
    for word in ("Random Hadamard transform", "Stochastic rounding", "16 × 16 weight blocks"):
        assert word in nvfp4, word
    first = next(
        g
        for g in bundled.values()
        if calibration_of(g, bundled).values["grouped_efficiency.2d3d"].basis.value == "measured"
    )
    example = site_paths.grouped_result_page(first.name, Mode.TRAINING, "mxfp8_cublas")
    assert f"]({example.removeprefix('generated/')})" in grouped


def test_cached_results_are_the_computed_ones(specs, results, tmp_path) -> None:
    from site_gen.cache import BuildCache

    one = {name: g for name, g in specs.items() if name == "Test B200"}
    db = SpecDatabase(one, "one")
    calibrations = {"Test B200": calibration_of(specs["Test B200"], specs)}
    keys = {"Test B200": calibration_digest(calibrations["Test B200"])}
    cache = BuildCache(root=tmp_path, enabled=True)
    first = gather_grouped(db, calibrations, keys, cache)
    assert cache.misses[CACHE_KIND] == 2 * len(first) and not cache.hits[CACHE_KIND]
    again = BuildCache(root=tmp_path, enabled=True)
    second = gather_grouped(db, calibrations, keys, again)
    assert again.hits[CACHE_KIND] == 2 * len(first) and not again.misses[CACHE_KIND]
    for key, result in first.items():
        cached = second[key]
        assert cached.capability == result.capability and cached.latex == result.latex
        for r, c in ((result, cached), (result.torchao, cached.torchao)):
            for mine, theirs in zip(r.times, c.times, strict=True):
                assert mine.skipped == theirs.skipped
                for k, v in mine.terms.items():
                    assert (theirs.terms[k] == v).all()
    # A changed calibration is another key: nothing stale is reused.
    other = {"Test B200": "another digest"}
    third = BuildCache(root=tmp_path, enabled=True)
    gather_grouped(db, calibrations, other, third)
    assert third.misses[CACHE_KIND] == len(first)  # the calibrated ones only


def test_grouped_and_nvfp4_permalinks_follow_the_site_url_within_one_process(monkeypatch):
    # One process can build sites for two URLs (the build-safety tests do): formulas
    # cached for the first must not carry its URL into the second site's pages.
    from roofline.publish.cite import SITE_URL_ENV
    from site_gen.markup.grouped_formulas import grouped_formulas, nvfp4_training_formulas

    for url in ("https://first.example/", "https://second.example/docs/"):
        monkeypatch.setenv(SITE_URL_ENV, url)
        formulas = [*grouped_formulas().values(), *nvfp4_training_formulas().values()]
        assert formulas and all(f.url.startswith(url) for f in formulas)
