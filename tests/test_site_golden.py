"""Golden tests of the generated Markdown for a small spec file.

Regenerate the goldens after an intended change with::

    .venv/bin/python -m tests.test_site_golden --regenerate
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "golden"
SPECS = "tests/data/site_small_specs.toml"  # relative: the Specs page quotes it
REGENERATE = ".venv/bin/python -m tests.test_site_golden --regenerate"
SUFFIXES = (".md", ".txt", "/nav.json")  # exports (CSV, JSON, data/) are tested apart


def generated_text() -> dict[str, str]:
    """The generated Markdown pages, snippets and nav of the small spec file."""
    import os

    from roofline.specs import load_specs
    from site_gen.build import generate_docs

    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        pages, _plots = generate_docs(load_specs(SPECS))
    finally:
        os.chdir(cwd)
    return {p: t for p, t in pages.items() if p.endswith(SUFFIXES)}


def regenerate() -> None:
    """Rewrite tests/golden/ from the current generator."""
    import shutil

    shutil.rmtree(GOLDEN_DIR, ignore_errors=True)
    for path, text in generated_text().items():
        target = GOLDEN_DIR / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    print(f"wrote {GOLDEN_DIR}")


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return generated_text()


def test_golden_files_match(pages: dict[str, str]) -> None:
    expected = {
        str(p.relative_to(GOLDEN_DIR)): p.read_text("utf-8")
        for p in GOLDEN_DIR.rglob("*")
        if p.is_file()
    }
    hint = f"if the change is intended, regenerate with: {REGENERATE}"
    assert sorted(pages) == sorted(expected), f"generated file list differs; {hint}"
    for path, text in pages.items():
        assert text == expected[path], f"{path} differs from tests/golden/{path}; {hint}"


def test_every_gpu_has_pages(pages: dict[str, str]) -> None:
    assert "generated/gpus/test-h100/index.md" in pages
    assert "generated/gpus/test-b200/training-mxfp8_cublas.md" in pages
    # Recipes the hardware lacks are still listed, marked, not dropped.
    h100_fp4 = pages["generated/gpus/test-h100/inference-nvfp4.md"]
    assert "Not computable on this GPU" in h100_fp4
    hypothetical = pages["generated/gpus/test-h100/training-mxfp8_cublas.md"]
    assert "Hypothetical estimate" in hypothetical


def test_gpu_titles_contain_gpu_name(pages: dict[str, str]) -> None:
    for path, text in pages.items():
        if path.startswith("generated/gpus/test-b200/") and path.endswith(".md"):
            assert 'title: "Test B200' in text.splitlines()[1], path


def test_formula_anchors_and_copy_payload(pages: dict[str, str]) -> None:
    text = pages["generated/gpus/test-b200/training-rowwise.md"]
    assert 'id="f-test-b200-training-rowwise-speedup"' in text
    assert 'id="f-training-rowwise-structured"' in text
    assert 'class="ra-copy"' in text and "data-latex=" in text


def test_validation_page_is_in_the_goldens(pages: dict[str, str]) -> None:
    """The Validation page and the calibrated model's formulas are golden-tested too (the
    golden comparison above covers every generated page; this pins that they exist)."""
    text = pages["generated/validation.md"]
    assert "## Held out: never used to fit" in text and "## Fitted on" in text
    assert "## Calibration parameters" in text
    assert "## Calibrated model" in pages["generated/_snippets/equations.md.txt"]
    assert "## Calibrated model" in pages["generated/methodology.md"]


if __name__ == "__main__":
    if "--regenerate" in sys.argv:
        regenerate()
    else:
        print(f"usage: {REGENERATE}")
