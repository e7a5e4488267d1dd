"""The site's tables show the decision layer's values (roofline.analysis.guidance), formatted by units."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

from roofline import units
from roofline.analysis import guidance
from roofline.analysis.error_bands import model_band
from roofline.evaluate import calibration_of
from roofline.model.compiled import compile_model
from roofline.recipes import RECIPE_LIST, Mode, get_recipe
from roofline.specs import load_specs
from roofline.symbols import CALIBRATION_SYMBOLS

ROOT = Path(__file__).resolve().parent.parent
SPECS = load_specs(ROOT / "tests" / "data" / "site_small_specs.toml")


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    from site_gen.build import generate_docs

    return generate_docs(SPECS)[0]


def _rows(text: str, header_start: str) -> list[list[str]]:
    """Body rows (cells stripped) of the first Markdown table whose header starts so."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line[1:-1])])
    return rows


def _text(cell: str) -> str:
    """A cell's visible text: link targets, emphasis and word-break hints dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell).replace("**", "")
    return html.unescape(text.replace("<wbr>", ""))


def _fmt_m(value: float | None) -> str:
    grid = guidance.BREAK_EVEN_M_GRID
    return units.break_even_m(value, grid[0], grid[-1])


def _without_range(text: str) -> str:
    """A calibrated cell without its plausible range: ``rowwise, 1.50× (1.4–1.6×)``."""
    return re.sub(r" \([^)]*\)$", "", text)


def _band(gpu, mode: Mode, recipe: str) -> str:
    """``±23%`` (``*`` on a fallback): roofline.analysis.error_bands' band of the calibrated model."""
    model = compile_model(mode, recipe, calibrated=True).model
    mkn = float(guidance.CANONICAL_M * guidance.CANONICAL_KN**2)  # the site's numbers' size
    band = model_band(gpu, calibration_of(gpu, SPECS), model, mkn)
    return f"±{band.fraction:.0%}" + ("*" if band.fallback else "")


def test_home_best_table_is_guidance_best_recipe(pages):
    rows = _rows(pages["generated/_snippets/home_matrix.md.txt"], "| GPU | best training")
    assert len(rows) == len(SPECS)
    for row, gpu in zip(rows, SPECS.values(), strict=True):
        calibrated = guidance.gpu_guidance(gpu, calibrated=True, specs=SPECS)
        torchao = guidance.gpu_guidance(gpu)
        for i, mode in enumerate((Mode.TRAINING, Mode.INFERENCE)):
            cells = row[1 + 2 * i : 3 + 2 * i]
            for cell, g, strip in zip(
                cells, (calibrated, torchao), (_without_range, str), strict=True
            ):
                name, speedup = g.best_canonical[mode]
                want = "stay in bf16" if name is None else f"{name}, {units.speedup(speedup)}"
                if name is not None and g.calibrated:  # with its cross-validated band
                    want += " " + _band(gpu, mode, name)
                assert strip(_text(cell)) == want, (gpu.name, mode, g.calibrated)
                # the same rule evaluated directly at the canonical shape
                best = guidance.best_recipe(
                    gpu, mode, *guidance.CANONICAL_SHAPE, calibrated=g.calibrated, specs=SPECS
                )
                assert best[0] == name


@pytest.mark.parametrize("gpu_name", list(SPECS))
@pytest.mark.parametrize("mode", [Mode.TRAINING, Mode.INFERENCE])
def test_gpu_page_break_even_and_ranking_are_guidance(pages, gpu_name, mode):
    """The GPU page's tables are the calibrated decision layer, torchao's beside it."""
    gpu = SPECS[gpu_name]
    slug = gpu_name.lower().replace(" ", "-")
    text = pages[f"generated/gpus/{slug}/index.md"]
    g = guidance.gpu_guidance(gpu, calibrated=True, specs=SPECS)
    t = guidance.gpu_guidance(gpu)
    section = text[text.index(f"#### Break-even M ({mode.value})") :]
    recipes = [r.name for r in RECIPE_LIST if mode in r.plans]
    break_even = _rows(section, "| recipe | support |")
    assert [_text(r[0]) for r in break_even] == recipes
    for row, recipe in zip(break_even, recipes, strict=True):
        result, reference = g.recipes.get((mode, recipe)), t.recipes.get((mode, recipe))
        want = [
            units.MISSING if result is None else _fmt_m(result.break_even[kn])
            for kn in guidance.BREAK_EVEN_KN
        ]
        want.append(
            units.MISSING
            if reference is None
            else _fmt_m(reference.break_even[guidance.CANONICAL_KN])
        )
        assert [_text(c) for c in row[2:]] == want, recipe
    ranked = _rows(section, "| rank | recipe |")
    computable = [r for r in recipes if (mode, r) in g.recipes]
    llama = [g.recipes[(mode, r)].llama_speedup for r in computable]
    order = [computable[i] for i in guidance.rank_order(llama)]
    assert [_text(r[1]) for r in ranked[: len(order)]] == order
    for row, recipe in zip(ranked[: len(order)], order, strict=True):
        assert row[3] == units.speedup(g.recipes[(mode, recipe)].llama_speedup)
        assert row[4] == units.speedup(t.recipes[(mode, recipe)].llama_speedup)


@pytest.mark.parametrize("gpu_name", list(SPECS))
def test_gpu_recipe_headline_leads_with_the_calibrated_model(pages, gpu_name):
    gpu = SPECS[gpu_name]
    slug = gpu_name.lower().replace(" ", "-")
    text = pages[f"generated/gpus/{slug}/training-rowwise.md"]
    rows = _rows(text, "| model |")
    assert [r[0] for r in rows[:2]] == ["calibrated model", "torchao model"]
    recipe = get_recipe("rowwise")
    for row, calibrated in zip(rows, (True, False), strict=False):
        g = guidance.recipe_guidance(gpu, Mode.TRAINING, recipe, calibrated=calibrated, specs=SPECS)
        assert _text(row[1]) == units.speedup(g.canonical_speedup)
        assert _text(row[3]) == units.speedup(g.llama_speedup)
        assert _text(row[4]) == _fmt_m(g.break_even[guidance.CANONICAL_KN])


def test_gpu_pages_say_where_the_calibration_comes_from(pages):
    for gpu in SPECS.values():
        slug = gpu.name.lower().replace(" ", "-")
        text = pages[f"generated/gpus/{slug}/index.md"]
        calibration = calibration_of(gpu, SPECS)
        assert "## Calibrated model parameters" in text
        if guidance.has_calibration_data(calibration):
            assert "**Calibrated model.** Measured:" in text
            assert "Efficiencies assumed: these estimates" not in text
        else:
            warning = text[text.index('!!! warning "Efficiencies assumed: these estimates') :]
            warning = warning[: warning.index("## Specification")]
            latex = {hw.spec_key: hw.latex for hw in CALIBRATION_SYMBOLS}
            for key in calibration.assumed():
                assert f"${latex[key]}$" in warning, key
            # every line of the admonition is indented: it cannot leak out of the box
            body = [line for line in warning.splitlines()[1:] if line.strip()]
            assert all(line.startswith("    ") for line in body)


def test_best_of_and_pick_best_agree():
    stack = np.array([[0.5, 1.2, 1.3, 2.0], [0.9, 1.2, 1.4, 1.0]])
    index, best = guidance.best_of(stack)
    assert index.tolist() == [-1, 0, 1, 0]  # a tie goes to the first candidate
    assert best.tolist() == [1.0, 1.2, 1.4, 2.0]
    assert guidance.pick_best({"a": 1.2, "b": 1.2}) == ("a", 1.2)
    assert guidance.pick_best({"a": 0.9}) == (None, 1.0)
    assert guidance.pick_best({}) == (None, 1.0)
    assert guidance.rank_order([1.0, 3.0, 2.0, 3.0]) == [1, 3, 2, 0]


def test_units_are_the_sites_formats():
    assert units.speedup(1.234) == "1.23×" and units.speedup(None) == "—"
    assert units.break_even_m(None, 16, 262144) == "never (≤ 262,144)"
    assert units.break_even_m(float("-inf"), 16, 262144) == "< 16"
    assert units.break_even_m(4095.6, 16, 262144) == "4,096"
    assert units.format_value(1979e12, "FLOP/s") == "1,979 TFLOP/s"
    assert units.format_value(3.35e12, "bytes/s") == "3.35 TB/s"
    assert units.format_value(2e-6, "s") == "2 µs"
    assert units.format_value(0.78, "1") == "0.78"
    assert units.tflops(None) == "—"


def test_methodology_lists_every_note(pages):
    from roofline.publish import notes

    text = pages["generated/methodology.md"]
    for note in (*notes.DEVIATIONS, *notes.LIMITATIONS):
        assert f"**{note.title}.**" in html.unescape(text), note.title


def test_site_spread_is_the_decision_layers_corners():
    """A headline's plausible range on the site is the extent of the decision layer's
    values over the nominal parameters and every corner of the assumed ranges."""
    from site_gen.gather.dense import gather_one

    bundled = load_specs(None)
    gpu = next(
        g for g in bundled.values() if guidance.calibration_corners(calibration_of(g, bundled))
    )
    calibration = calibration_of(gpu, bundled)
    recipe = guidance.native_recipes(gpu, Mode.TRAINING)[0]
    result = gather_one(gpu, Mode.TRAINING, recipe, calibration)
    runs = [
        guidance.recipe_guidance(gpu, Mode.TRAINING, recipe, calibration=c)
        for c in (calibration, *guidance.calibration_corners(calibration))
    ]
    for key, values in (
        ("canonical", [r.canonical_speedup for r in runs]),
        ("llama", [r.llama_speedup for r in runs]),
    ):
        assert result.spread[key] == pytest.approx((min(values), max(values)), rel=1e-12)
    ends = [
        np.inf
        if r.break_even[guidance.CANONICAL_KN] is None
        else r.break_even[guidance.CANONICAL_KN]
        for r in runs
    ]
    low, high = result.spread["break_even"]
    assert (np.inf if low is None else low) == pytest.approx(min(ends), rel=1e-12)
    assert (np.inf if high is None else high) == pytest.approx(max(ends), rel=1e-12)
