"""The site's tables show the decision layer's values (roofline.guidance), formatted by units."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

from roofline import guidance, units
from roofline.recipes import RECIPE_LIST, Mode
from roofline.specs import load_specs

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
    """A cell's visible text: link targets and emphasis dropped."""
    return html.unescape(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell).replace("**", ""))


def _fmt_m(value: float | None) -> str:
    grid = guidance.BREAK_EVEN_M_GRID
    return units.break_even_m(value, grid[0], grid[-1])


def test_home_best_table_is_guidance_best_recipe(pages):
    rows = _rows(pages["generated/_snippets/home_matrix.md.txt"], "| GPU | best training")
    assert len(rows) == len(SPECS)
    for row, gpu in zip(rows, SPECS.values(), strict=True):
        g = guidance.gpu_guidance(gpu)
        for cell, mode in zip(row[1:], (Mode.TRAINING, Mode.INFERENCE), strict=True):
            name, speedup = g.best_canonical[mode]
            want = "stay in bf16" if name is None else f"{name}, {units.speedup(speedup)}"
            assert _text(cell) == want
            # the same rule evaluated directly at the canonical shape
            assert guidance.best_recipe(gpu, mode, *guidance.CANONICAL_SHAPE)[0] == name


@pytest.mark.parametrize("gpu_name", list(SPECS))
@pytest.mark.parametrize("mode", [Mode.TRAINING, Mode.INFERENCE])
def test_gpu_page_break_even_and_ranking_are_guidance(pages, gpu_name, mode):
    gpu = SPECS[gpu_name]
    slug = gpu_name.lower().replace(" ", "-")
    text = pages[f"generated/gpus/{slug}/index.md"]
    g = guidance.gpu_guidance(gpu)
    section = text[text.index(f"#### Break-even M ({mode.value})"):]
    recipes = [r.name for r in RECIPE_LIST if mode in r.plans]
    break_even = _rows(section, "| recipe | support |")
    assert [_text(r[0]) for r in break_even] == recipes
    for row, recipe in zip(break_even, recipes, strict=True):
        result = g.recipes.get((mode, recipe))
        want = [units.MISSING if result is None else _fmt_m(result.break_even[kn])
                for kn in guidance.BREAK_EVEN_KN]  # fmt: skip
        assert [_text(c) for c in row[2:]] == want, recipe
    ranked = _rows(section, "| rank | recipe |")
    computable = [r for r in recipes if (mode, r) in g.recipes]
    llama = [g.recipes[(mode, r)].llama_speedup for r in computable]
    order = [computable[i] for i in guidance.rank_order(llama)]
    assert [_text(r[1]) for r in ranked[: len(order)]] == order
    for row, recipe in zip(ranked[: len(order)], order, strict=True):
        assert row[3] == units.speedup(g.recipes[(mode, recipe)].llama_speedup)


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
    from roofline import notes

    text = pages["generated/methodology.md"]
    for note in (*notes.DEVIATIONS, *notes.LIMITATIONS):
        assert f"**{note.title}.**" in html.unescape(text), note.title
