"""Citable formulas: ids stable across builds, changed by a formula change, CLI = page."""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

import pytest

from roofline.cli import main
from roofline.model.terms import Quantity
from roofline.publish import cite
from roofline.recipes import Mode

ROOT = Path(__file__).resolve().parent.parent

# Prints {anchor: citation id} of every formula on the equation index, in a fresh process
# (no cache shared with the caller); with "patch", memory time counts every byte twice.
_IDS = """
import json, sys
if sys.argv[1] == "patch":
    import roofline.model.torchao as f
    original = f.memory_time
    f.memory_time = lambda b: original(2 * b)
from site_gen.markup.formulas import equation_index
print(json.dumps({x.anchor: x.citation_id for _, fs in equation_index() for x in fs}))
"""


def _ids(mode: str) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", _IDS, mode], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def first_build() -> dict[str, str]:
    return _ids("plain")


def test_ids_are_stable_across_builds(first_build: dict[str, str]) -> None:
    assert first_build == _ids("plain")
    assert len(first_build) > 200
    assert all(cid.startswith(anchor + "@") for anchor, cid in first_build.items())
    assert "f-training-rowwise-speedup" in first_build
    assert "f-inference-rowwise-fused-bf16-overhead" in first_build
    assert "f-model-gemm-compute" in first_build


def test_ids_change_when_a_formula_changes(first_build: dict[str, str]) -> None:
    patched = _ids("patch")
    assert patched.keys() == first_build.keys()  # anchors are names: links keep working
    changed = {a for a in first_build if patched[a] != first_build[a]}
    assert "f-training-rowwise-overhead" in changed  # uses memory time
    assert "f-model-gemm-memory" in changed
    unchanged = set(first_build) - changed
    # Formulas without a memory term keep their id.
    assert {"f-model-gemm-compute", "f-training-rowwise-structured"} <= unchanged


def test_hash_is_of_the_latex() -> None:
    a = cite.citation_id("f-x", "y", r"\frac{1}{2}")
    assert a == cite.citation_id("f-x", "y", r"\frac{1}{2}")
    assert a != cite.citation_id("f-x", "y", r"\frac{1}{3}")
    assert len(a.split("@")[1]) == cite.HASH_DIGITS


def test_cli_cite_prints_the_page_snippet(capsys: pytest.CaptureFixture[str]) -> None:
    from roofline.specs import load_specs
    from site_gen.build import generate_docs

    assert (
        main(
            [
                "latex",
                "--mode",
                "inference",
                "--recipe",
                "rowwise",
                "--quantity",
                "bf16_overhead",
                "--fusion",
                "--symbolic",
                "--cite",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    expected = cite.symbolic_total(Mode.INFERENCE, "rowwise", Quantity.BF16_OVERHEAD, True)
    assert printed == expected.snippet
    assert printed.startswith("[Roofline Atlas `f-inference-rowwise-fused-bf16-overhead@")
    assert "\n$$\nT_{\\mathrm{act}}^{\\mathrm{bf16}} = " in printed and printed.endswith("$$\n")
    pages, _ = generate_docs(load_specs(ROOT / "tests/data/site_small_specs.toml"))
    assert html.escape(printed) in pages["generated/_snippets/equations.md.txt"]
    # Instantiated: the GPU x recipe page's Cite button.
    specs = str(ROOT / "tests/data/site_small_specs.toml")
    assert (
        main(["latex", "--gpu", "Test H100", "--specs", specs, "--recipe", "rowwise", "--cite"])
        == 0
    )
    printed = capsys.readouterr().out
    assert (
        "generated/gpus/test-h100/training-rowwise/#f-test-h100-training-rowwise-speedup" in printed
    )
    assert html.escape(printed) in pages["generated/gpus/test-h100/training-rowwise.md"]


def test_site_url_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cite.SITE_URL_ENV, "https://example.org/atlas")
    assert cite.equations_url("f-a") == "https://example.org/atlas/equations/#f-a"
